"""`maxmem import --format markdown`: a workspace's files merged into brain.db, a round trip.

A bullet whose uid brain.db has is compared with what was exported (`rev`) and with
brain.db now: edited in Markdown only, the memory is updated (content, title,
category, kind, tags, pin, importance, status) through `Brain.update` — a new version
in its history; edited in both places, it is reported as a conflict and left alone.
Bullets without a uid are new memories. With `delete_missing`, memories the export
wrote (listed in its `.maxmem-export.json`) whose bullets are gone are forgotten —
unless brain.db changed them since, which is a conflict too.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..clock import iso
from ..errors import InvalidInput
from ..files import read_regular
from ..memory import Memory
from .export import MANIFEST
from .parse import DAILY_DIR, MEMORY_FILE, Bullet, exported_at, file_date, parse_bullets
from .render import EDITABLE, editable, markdown_rev, markdown_state, state_rev

if TYPE_CHECKING:  # pragma: no cover
    from ..brain import Brain

# What the last import that changed a memory read from its bullet (rev) in which export.
SYNC_KEY = "markdown_sync"
MAX_MARKDOWN_BYTES = 64 << 20  # a larger MEMORY.md is no memory file: refused, not read on
MEMORIES_BY_UID_SQL = "SELECT * FROM memories WHERE uid IN ({marks})"
DELETED_SQL = "SELECT DISTINCT uid FROM changes WHERE op = 'delete' AND uid IN ({marks})"
IMPORTED_SQL = "SELECT 1 FROM markdown_imports WHERE path = ? AND sha256 = ?"
RECORD_IMPORT_SQL = (
    "INSERT INTO markdown_imports (path, sha256, imported_at, added, existing) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (path, sha256) DO UPDATE SET imported_at = excluded.imported_at, added = excluded.added, "
    "existing = excluded.existing"
)
UID_EXISTS_SQL = "SELECT uid FROM memories WHERE uid IN ({marks})"
# One pass over the imported memories per import run (not per file or per item).
IMPORT_KEYS_SQL = (
    "SELECT json_extract(metadata, '$.import_key') FROM memories "
    "WHERE source = 'import' AND json_extract(metadata, '$.import_key') IS NOT NULL"
)


@dataclass
class ImportReport:
    files: list[dict[str, Any]]
    # Bullets left as brain.db has them: changed in both places since the export, or a
    # uid found twice; each with its uid, id, file, line and reason.
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    forgotten: list[int] = field(default_factory=list)  # ids, with delete_missing

    def total(self, key: str) -> int:
        return sum(f.get(key, 0) for f in self.files)

    def describe(self) -> str:
        unchanged = sum(1 for f in self.files if f["skipped"])
        text = (f"imported {len(self.files)} file(s): {self.total('added')} memories added, "
                f"{self.total('updated')} updated, {self.total('existing')} already present, "
                f"{unchanged} file(s) unchanged since their last import")
        if self.forgotten:
            text += f", {len(self.forgotten)} forgotten (gone from the folder)"
        if self.conflicts:
            text += f"; {len(self.conflicts)} conflict(s) not applied"
        return text

    def lines(self) -> list[str]:
        return [self.describe(), *(f"conflict: {c['file']} line {c['line']}: #{c['id']} ({c['uid']}) {c['reason']}"
                                   for c in self.conflicts)]

    def to_dict(self) -> dict[str, Any]:
        return {"files": self.files, "conflicts": self.conflicts, "forgotten": self.forgotten}


def markdown_files(pattern: str | Path) -> list[Path]:
    """The files a GLOB (or a workspace directory, or one file) names, in a stable order."""
    text = os.path.expanduser(str(pattern))
    path = Path(text)
    if path.is_dir():
        found = [path / MEMORY_FILE] if (path / MEMORY_FILE).is_file() else []
        found += sorted(p for p in (path / DAILY_DIR).glob("*.md") if p.is_file()) \
            if (path / DAILY_DIR).is_dir() else []
    elif path.is_file():
        found = [path]
    else:
        found = sorted(Path(p) for p in glob.glob(text, recursive=True) if Path(p).is_file())
    found = [p for p in found if p.suffix.lower() == ".md"]
    if not found:
        raise InvalidInput(f"no Markdown files match {str(pattern)!r}")
    return found


def import_markdown(brain: Brain, pattern: str | Path, *, tz: tzinfo = UTC,
                    delete_missing: bool = False) -> ImportReport:
    """Bring MEMORY.md / memory/YYYY-MM-DD.md files in, each file in one transaction.

    A bullet whose uid brain.db has and that an export wrote (it has a `rev`) is a
    round trip: edited in the file only, the memory is updated; edited in both places
    since the export, it is a conflict (reported, brain.db kept). Other bullets are new
    memories, stored unless already present (same uid, or the same text from the same
    file); a uid forgotten in brain.db since its export is not brought back. A file
    without exported bullets that was imported with the same content is skipped.
    Every file imported is recorded in `markdown_imports`. `delete_missing` (PATTERN a
    folder an export wrote): forget the memories it exported whose bullets are gone.
    """
    files = markdown_files(pattern)
    manifest = _manifest(Path(os.path.expanduser(str(pattern)))) if delete_missing else None
    report = ImportReport([])
    known_keys: set[str] | None = None  # read once, on the first file that is not skipped
    seen: dict[str, tuple[str, int]] = {}  # uid -> (file, line) of the bullet that has it
    for path in files:
        try:
            raw = read_regular(path, MAX_MARKDOWN_BYTES, "a Markdown file")  # a FIFO swapped in: refused
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"cannot read {path}: {exc}") from None
        sha = hashlib.sha256(raw).hexdigest()
        where = str(path.resolve())
        entry: dict[str, Any] = {"path": str(path), "added": 0, "updated": 0, "existing": 0, "skipped": False}
        report.files.append(entry)
        relative = _workspace_relative(path)
        bullets = parse_bullets(text, path=relative, tz=tz)
        bullets = _first_of_each_uid(bullets, relative, seen, report)
        round_trip = [b for b in bullets if b.rev and b.memory.get("uid")]
        if not round_trip and brain.db.one(IMPORTED_SQL, (where, sha)):
            entry["skipped"] = True
            continue
        stored = {m.uid: m for m in map(Memory.from_row, brain.db.rows_in(
            MEMORIES_BY_UID_SQL, [b.memory["uid"] for b in round_trip]))}
        conflicts = len(report.conflicts)
        changes = _edits(brain, [b for b in round_trip if b.memory["uid"] in stored], stored,
                         exported_at(text) or "", relative, report)
        entry["existing"] += (sum(1 for b in round_trip if b.memory["uid"] in stored) - len(changes)
                              - (len(report.conflicts) - conflicts))
        fresh = [b for b in bullets if b.memory.get("uid") not in stored]
        fresh = _not_forgotten(brain, fresh, relative, report)
        items = [b.memory for b in fresh]
        fallback_time = None
        if file_date(path) is None:  # MEMORY.md: undated bullets take the file's date
            # (never later than the brain's now: a file saved "in the future" by a clock)
            fallback_time = iso(min(datetime.fromtimestamp(path.stat().st_mtime, UTC), brain.clock.now()))
        for item in items:
            item["metadata"]["import_key"] = _import_key(relative, item)
            item["source"] = "import"
            if "created_at" not in item and fallback_time:
                item["created_at"] = fallback_time
        if known_keys is None:
            known_keys = {row[0] for row in brain.db.execute(IMPORT_KEYS_SQL)}
        # Embed before the write transaction opens: a slow API must not hold the lock.
        brain.prefetch_vectors([*_not_yet_stored(brain, items, known_keys),
                                *({"content": f.get("content", m.content), "title": f.get("title", m.title)}
                                  for m, f in changes)])
        with brain.db.atomic():
            for memory, fields in changes:
                brain.update(memory.id, **fields)
            entry["updated"] = len(changes)
            new = _not_yet_stored(brain, items, known_keys)
            entry["existing"] += len(items) - len(new)
            # One memory per bullet (never folded into another's): the round trip edits it.
            added = brain.remember_many(new, embed=False, near=False) if new else []
            # remember_many returns the memory already stored for a text it has seen
            entry["added"] = sum(
                1 for item, memory in zip(new, added)
                if memory.metadata.get("import_key") == item["metadata"]["import_key"]
            )
            entry["existing"] += len(new) - entry["added"]
            known_keys.update(item["metadata"]["import_key"] for item in new)
            brain.db.execute(RECORD_IMPORT_SQL, (where, sha, iso(brain.clock.now()),
                                                 entry["added"], entry["existing"]))
    if manifest is not None:
        report.forgotten = _forget_missing(brain, manifest, seen, report)
    return report


def _first_of_each_uid(bullets: list[Bullet], relative: str, seen: dict[str, tuple[str, int]],
                       report: ImportReport) -> list[Bullet]:
    """The bullets whose uid no earlier bullet had; a copy is reported and left out."""
    out = []
    for bullet in bullets:
        uid = bullet.memory.get("uid")
        if uid and uid in seen:
            first = seen[uid]
            report.conflicts.append({"uid": uid, "id": None, "file": relative, "line": bullet.line,
                                     "reason": f"repeats the uid of {first[0]} line {first[1]}; left out"})
            continue
        if uid:
            seen[uid] = (relative, bullet.line)
        out.append(bullet)
    return out


def _base(memory: Memory, rev: str | None, export: str) -> str | None:
    """What the bullet showed when brain.db and the file last agreed: the export's rev,
    or, when an import from this same export changed the memory since, what it read."""
    sync = memory.metadata.get(SYNC_KEY)
    if isinstance(sync, dict) and sync.get("export") == export and isinstance(sync.get("rev"), str):
        return str(sync["rev"])
    return rev


def _edits(brain: Brain, bullets: list[Bullet], stored: Mapping[str, Memory], export: str,
           relative: str, report: ImportReport) -> list[tuple[Memory, dict[str, Any]]]:
    """The updates the edited bullets ask for; conflicts go to the report."""
    changes = []
    for bullet in bullets:
        memory = stored[bullet.memory["uid"]]
        shown = editable(bullet.memory)
        shown_rev, base = state_rev(shown), _base(memory, bullet.rev, export)
        if shown_rev == base:
            continue  # not edited in the file
        now = markdown_state(memory)
        if shown_rev == state_rev(now):
            continue  # already what the file says
        if state_rev(now) != base:
            report.conflicts.append({
                "uid": memory.uid, "id": memory.id, "file": relative, "line": bullet.line,
                "reason": "was changed in brain.db and in the file since the export; brain.db's kept "
                          f"(see  maxmem history {memory.id} , then edit one side)"})
            continue
        fields = {k: shown[k] for k in EDITABLE if shown[k] != now[k]}
        fields["metadata"] = {**memory.metadata, SYNC_KEY: {"rev": shown_rev, "export": export}}
        changes.append((memory, fields))
    return changes


def _not_forgotten(brain: Brain, bullets: list[Bullet], relative: str, report: ImportReport) -> list[Bullet]:
    """Exported bullets whose memory was forgotten (or expired) in brain.db since stay
    gone; edited in the file since, they are a conflict."""
    exported = [b.memory["uid"] for b in bullets if b.rev and b.memory.get("uid")]
    gone = {row[0] for row in brain.db.each_in(DELETED_SQL, exported)} if exported else set()
    out = []
    for bullet in bullets:
        uid = bullet.memory.get("uid")
        if bullet.rev and uid in gone:
            if state_rev(editable(bullet.memory)) != bullet.rev:
                report.conflicts.append({"uid": uid, "id": None, "file": relative, "line": bullet.line,
                                         "reason": "was forgotten in brain.db and edited in the file since "
                                                   "the export; not brought back (remove the uid to add it anew)"})
            continue
        out.append(bullet)
    return out


def _manifest(root: Path) -> dict[str, Any]:
    path = root / MANIFEST
    if not root.is_dir() or not path.is_file():
        raise InvalidInput(f"--delete-missing needs the folder a maxmem export wrote (with its {MANIFEST}); "
                           f"{root} has none")
    try:
        data = json.loads(read_regular(path, MAX_MARKDOWN_BYTES, f"the export's {MANIFEST}").decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("memories"), dict):
        raise InvalidInput(f"{path} is not a maxmem export manifest")
    return data


def _forget_missing(brain: Brain, manifest: Mapping[str, Any], seen: Mapping[str, tuple[str, int]],
                    report: ImportReport) -> list[int]:
    """Forget the memories the export wrote whose bullets are gone, unless brain.db
    changed them since (a conflict)."""
    gone = {uid: info for uid, info in manifest["memories"].items() if uid not in seen}
    stored = [Memory.from_row(r) for r in brain.db.rows_in(MEMORIES_BY_UID_SQL, list(gone))]
    export = str(manifest.get("exported_at") or "")
    doomed = []
    for memory in stored:
        info = gone[memory.uid] if isinstance(gone[memory.uid], dict) else {}
        if markdown_rev(memory) == _base(memory, info.get("rev"), export):
            doomed.append(memory)
        else:
            report.conflicts.append({
                "uid": memory.uid, "id": memory.id, "file": str(info.get("file") or "?"), "line": 0,
                "reason": "is gone from the folder but was changed in brain.db since the export; kept"})
    if doomed:
        brain.forget_many(doomed)
    return [m.id for m in doomed]


def _workspace_relative(path: Path) -> str:
    if file_date(path) is not None and path.parent.name == DAILY_DIR:
        return f"{DAILY_DIR}/{path.name}"
    return path.name


def _import_key(relative: str, item: Mapping[str, Any]) -> str:
    """The same text from the same file is one memory, unless the bullets carry their uids
    (an export's: a core and a project memory may say the same thing)."""
    basis = "\x1f".join([relative, item.get("title") or "", item["content"], *filter(None, [item.get("uid")])])
    return hashlib.sha256(basis.encode("utf-8")).hexdigest()[:32]


def _not_yet_stored(brain: Brain, items: list[dict[str, Any]],
                    known_keys: set[str]) -> list[dict[str, Any]]:
    have_uids = {row[0] for row in brain.db.each_in(UID_EXISTS_SQL, [i["uid"] for i in items if i.get("uid")])}
    out, seen = [], set()
    for item in items:
        key = item["metadata"]["import_key"]
        if item.get("uid") in have_uids or key in known_keys or key in seen:
            continue
        seen.add(key)
        out.append(item)
    return out
