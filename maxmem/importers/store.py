"""What an import does with the items it read: add what is new, update the memory of
an edited item, leave the rest alone, and record which item became which memory
(table agent_imports) so that the next import knows them again.

An item is known again by its place in its file (file, heading path, its rank among
the blocks under those headings; a database row by its id) and by the hash of its text,
matched in this order:

1. the same place and the same text: unchanged;
2. the same text at another place of the file (a block inserted above it, a heading
   renamed): unchanged, recorded at its new place;
3. a database row's id, or text close to a recorded item that found no match (difflib
   ratio ≥ 0.6): edited, its memory is updated;
4. the same place with other text (rewritten in place): edited, updated;
5. anything else is new, and is added; its exact text already stored in its
   category counts as unchanged.

A recorded item nothing matches is gone from its file: it is reported and its memory
kept (forget it with `maxmem forget` if it should go); it is known again only by its
text (step 2). A memory forgotten in brain.db is not brought back while its item is
unchanged; edited, the item is added anew. The record holds hashes and places, never
text, so a forget leaves no copy of the memory here.

Each file is written in one transaction (the updates, the new memories, the record);
new memories are stored without waiting for the embedder (`maxmem embed`, or the next
tick, gives them their vectors), updated ones are embedded before the transaction.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..brain import Brain
from ..clock import iso
from ..errors import MaxmemError
from ..memory import Memory, check_content
from ..retention.policy import cutoffs, load_policy
from ..store.records import MAX_AHEAD, content_hash
from .common import Item, Reading, SourceFile

FILE_SQL = "SELECT item, path, line, sha256, uid, gone_at FROM agent_imports WHERE source = ? AND path = ?"
PATHS_SQL = "SELECT DISTINCT path FROM agent_imports WHERE source = ? AND gone_at IS NULL"
MEMORIES_SQL = "SELECT * FROM memories WHERE uid IN ({marks})"
RECORD_SQL = (
    "INSERT INTO agent_imports (source, item, path, line, sha256, uid, imported_at, gone_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, NULL) ON CONFLICT (source, item) DO UPDATE SET path = excluded.path, "
    "line = excluded.line, sha256 = excluded.sha256, uid = excluded.uid, gone_at = NULL"
)
FORGET_RECORD_SQL = "DELETE FROM agent_imports WHERE source = ? AND item = ?"
GONE_SQL = "UPDATE agent_imports SET gone_at = ? WHERE source = ? AND item = ?"
SIMILAR = 0.6
# Pairs compared in step 3 at most (a file rewritten wholesale falls back to step 4 alone).
MAX_PAIRS = 2_000
LABEL_CHARS = 200  # a memory's `source` is at most this long


@dataclass(frozen=True)
class Recorded:
    """What an earlier import recorded of one item."""

    item: str
    path: str
    line: int | None
    sha256: str
    uid: str
    gone_at: str | None


@dataclass(frozen=True)
class Step:
    """What the import does with one item: add, update, unchanged, skip, or gone (its
    memory stays); with the record it matched and the memory it has."""

    action: str
    item: Item | None
    recorded: Recorded | None = None
    memory: Memory | None = None
    reason: str | None = None
    preview: str = ""  # the item's text as it would be stored (secrets out), for the dry run

    @property
    def rerecord(self) -> bool:
        """Whether the record must change though the memory does not (moved, came back)."""
        r, item = self.recorded, self.item
        return r is not None and item is not None and (
            r.item != item.key or r.line != item.line or r.gone_at is not None or r.sha256 != item.sha)


@dataclass
class FileReport:
    """One file of an import: what happened to each of its items."""

    path: str
    shown: str
    steps: list[Step] = field(default_factory=list)
    error: str | None = None
    skipped: str | None = None
    vanished: bool = False  # a file an earlier import read that is no longer there

    def count(self, action: str) -> int:
        return sum(1 for s in self.steps if s.action == action)


_ACTION_OF = {"add": "added", "update": "updated", "unchanged": "unchanged", "skip": "skipped", "gone": "gone"}


@dataclass
class ImportReport:
    """What `import --from` did (or, with dry_run, would do)."""

    source: str
    root: str
    files: list[FileReport]
    notes: list[str] = field(default_factory=list)
    dry_run: bool = False
    expiring: int = 0  # daily memories added that retention's next run archives

    def totals(self) -> dict[str, int]:
        return {name: sum(f.count(a) for f in self.files) for a, name in _ACTION_OF.items()}

    @property
    def failed(self) -> list[FileReport]:
        return [f for f in self.files if f.error]

    def summary(self) -> str:
        t = self.totals()
        read = sum(1 for f in self.files if not (f.error or f.skipped or f.vanished))
        if self.dry_run:
            line = (f"{self.source} (dry run): would add {t['added']}, would update {t['updated']}, "
                    f"{t['unchanged']} unchanged, {t['skipped']} skipped, from {read} file(s)")
        else:
            line = (f"{self.source}: {t['added']} added, {t['updated']} updated, {t['unchanged']} unchanged, "
                    f"{t['skipped']} skipped, from {read} file(s)")
        if t["gone"]:
            line += f"; {t['gone']} no longer in their files (their memories are kept)"
        if self.failed:
            line += f"; {len(self.failed)} file(s) could not be read"
        return line

    def lines(self, show_steps: bool = False) -> list[str]:
        """The summary, then each file left out on purpose, then (show_steps, the dry run)
        each item that is not unchanged, then the notes. (The files that could not be
        read are in `failed`, for the caller to report as errors.)"""
        out = [self.summary()]
        out += [f"left out: {f.shown}: {f.skipped}" for f in self.files if f.skipped]
        for f in self.files:
            for step in f.steps:
                if (show_steps and step.action != "unchanged") or step.action == "gone":
                    out.append(describe(step, f.shown))
        if self.expiring:
            out.append(f"note: {self.expiring} daily memor{'y is' if self.expiring == 1 else 'ies are'} older than "
                       "daily retention keeps: the next retention run archives them (pin them, or move them "
                       "with  maxmem update ID -c project , to keep them)")
        out += [f"note: {n}" for n in self.notes]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "root": self.root, "dry_run": self.dry_run, **self.totals(),
                "expiring": self.expiring, "notes": self.notes,
                "files": [{"path": f.path, "error": f.error, "skipped": f.skipped,
                           **{name: f.count(a) for a, name in _ACTION_OF.items()},
                           "items": [step_dict(s) for s in f.steps]} for f in self.files]}


def describe(step: Step, shown: str) -> str:
    item, where = step.item, shown
    if item is not None and item.line:
        where = f"{shown}:{item.line}"
    elif step.recorded is not None and step.recorded.line:
        where = f"{shown}:{step.recorded.line}"
    text = " ".join((step.preview if item else step.memory.content if step.memory else "").split())
    text = text[:100] + ("…" if len(text) > 100 else "")
    memory = f" #{step.memory.id}" if step.memory is not None else ""
    kind = f" {item.category}/{item.kind}" if item is not None else ""
    reason = f" ({step.reason})" if step.reason else ""
    verb = {"add": "add", "update": "update", "unchanged": "same", "skip": "skip", "gone": "gone"}[step.action]
    return f"{verb:<6}{memory}{kind} {where}: {text}{reason}"


def step_dict(step: Step) -> dict[str, Any]:
    item = step.item
    return {"action": step.action, "line": item.line if item else (step.recorded.line if step.recorded else None),
            "key": item.key if item else (step.recorded.item if step.recorded else None),
            "id": step.memory.id if step.memory else None, "uid": step.memory.uid if step.memory else None,
            "category": item.category if item else None, "kind": item.kind if item else None,
            "reason": step.reason}


# -- planning ------------------------------------------------------------------------


def run(brain: Brain, reading: Reading, shown: Callable[[Path | str], str], *, dry_run: bool = False,
        under: Path | None = None) -> ImportReport:
    """Plan every file of `reading` against brain.db and (unless dry_run) apply it, one
    transaction a file. `under`: recorded files outside it are not this import's to
    call gone (an import of one folder of notes)."""
    report = ImportReport(reading.source, shown(reading.root), [], list(reading.notes), dry_run)
    planned: set[tuple[str, str]] = set()  # (content hash, category) of what this run adds
    read_paths = set()
    for file in reading.files:
        read_paths.add(str(file.path))
        entry = FileReport(str(file.path), shown(file.path), error=file.error, skipped=file.skipped)
        report.files.append(entry)
        if file.error or file.skipped:
            continue
        try:
            entry.steps = plan(brain, reading.source, file, planned)
            if not dry_run:
                apply(brain, reading.source, str(file.path), entry.steps, shown(file.path))
        except MaxmemError as exc:
            entry.error, entry.steps = str(exc), []
    for path in _vanished(brain, reading.source, read_paths, under):
        entry = FileReport(path, shown(path), vanished=True)
        entry.steps = plan(brain, reading.source, SourceFile(Path(path)), planned)
        if entry.steps:
            report.files.append(entry)
            if not dry_run:
                apply(brain, reading.source, path, entry.steps, entry.shown)
    report.expiring = _expiring(brain, report)
    return report


def plan(brain: Brain, source: str, file: SourceFile, planned: set[tuple[str, str]]) -> list[Step]:
    """The step for each item of `file` and for each recorded item it no longer has."""
    recorded = {r["item"]: Recorded(**r) for r in brain.db.rows(FILE_SQL, (source, str(file.path)))}
    memories = {m.uid: m for m in map(Memory.from_row, brain.db.rows_in(
        MEMORIES_SQL, [r.uid for r in recorded.values()]))}
    steps: list[Step] = []
    live: list[Item] = []
    previews: dict[str, str] = {}
    for item in file.items:
        reason = item.skip or _unstorable(brain, item)
        previews[item.key] = _preview(brain, item)
        if reason:
            steps.append(Step("skip", item, reason=reason, preview=previews[item.key]))
        else:
            live.append(item)
    pairs, new, left = match(live, recorded, memories)
    fresh: list[tuple[Item, Recorded | None]] = [(item, recorded.get(item.key)) for item in new]
    for item, matched, edited in pairs:
        memory = memories.get(matched.uid)
        if memory is None and not edited:
            steps.append(Step("skip", item, matched, reason="forgotten in brain.db: not brought back",
                              preview=previews[item.key]))
        elif memory is None:
            fresh.append((item, matched))  # edited after its memory was forgotten: new again
        else:
            steps.append(Step("update" if edited else "unchanged", item, matched, memory, preview=previews[item.key]))
    for item, record in fresh:
        key = (content_hash(_stored_text(brain, item)), item.category)
        existing = brain.rows.find_exact(*key)
        if existing is not None or key in planned:
            steps.append(Step("unchanged", item, record, existing,
                              reason="already in brain.db" if existing else "the same text as another item",
                              preview=previews[item.key]))
        else:
            planned.add(key)
            steps.append(Step("add", item, record, preview=previews[item.key]))
    # A gone item whose memory was forgotten too is only noted in the record.
    steps += [Step("gone", None, r, memories.get(r.uid)) for r in left if r.gone_at is None]
    return steps


def match(items: list[Item], recorded: Mapping[str, Recorded], memories: Mapping[str, Memory]
          ) -> tuple[list[tuple[Item, Recorded, bool]], list[Item], list[Recorded]]:
    """(item, its record, whether it was edited) pairs, the new items, the records left."""
    free = dict(recorded)
    pairs: list[tuple[Item, Recorded, bool]] = []
    rest: list[Item] = []
    for item in items:  # 1. same place, same text
        record = free.get(item.key)
        if record is not None and record.sha256 == item.sha:
            pairs.append((item, free.pop(item.key), False))
        else:
            rest.append(item)
    by_text: dict[str, list[Recorded]] = {}
    for record in free.values():
        by_text.setdefault(record.sha256, []).append(record)
    unmatched = []
    for item in rest:  # 2. same text elsewhere in the file (gone items come back this way)
        if by_text.get(item.sha):
            record = by_text[item.sha].pop(0)
            pairs.append((item, free.pop(record.item), False))
        else:
            unmatched.append(item)
    placed = []
    for item in unmatched:  # a database row keeps its id when edited: same key, edited
        record = free.get(item.key) if item.stable else None
        if record is not None and record.gone_at is None:
            pairs.append((item, free.pop(item.key), True))
        else:
            placed.append(item)
    unmatched = placed
    present = [r for r in free.values() if r.gone_at is None]
    taken_items: set[int] = set()
    if unmatched and present and len(unmatched) * len(present) <= MAX_PAIRS:  # 3. close text: edited
        scored = sorted(((_likeness(item.text, memories[r.uid].content), n, r.item)
                         for n, item in enumerate(unmatched) for r in present if r.uid in memories), reverse=True)
        for score, n, key in scored:
            if score < SIMILAR:
                break
            if n not in taken_items and key in free:
                taken_items.add(n)
                pairs.append((unmatched[n], free.pop(key), True))
    new: list[Item] = []
    for n, item in enumerate(unmatched):  # 4. same place, other text; 5. new
        if n in taken_items:
            continue
        record = free.get(item.key)
        if record is not None and record.gone_at is None:
            pairs.append((item, free.pop(item.key), True))
        else:
            new.append(item)
    return pairs, new, list(free.values())


def _likeness(a: str, b: str) -> float:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return matcher.ratio() if matcher.real_quick_ratio() >= SIMILAR and matcher.quick_ratio() >= SIMILAR else 0.0


def _stored_text(brain: Brain, item: Item) -> str:
    """The content as the write path will store it (checked, secrets out)."""
    text = check_content(item.text)
    return brain.redacting.redact(text)[0] if brain.redacting is not None else text


def _preview(brain: Brain, item: Item) -> str:
    try:
        return _stored_text(brain, item)
    except MaxmemError:
        return ""


def _unstorable(brain: Brain, item: Item) -> str | None:
    """Why the write path would refuse this item (so that one item never fails its file)."""
    try:
        stored = _stored_text(brain, item)
    except MaxmemError as exc:
        return str(exc)
    if not stored.strip():
        return "nothing is left once its secrets are taken out"
    if item.created_at and item.created_at > iso(brain.clock.now() + MAX_AHEAD):
        return f"dated {item.created_at[:10]}, in the future"
    return None


def _vanished(brain: Brain, source: str, read: set[str], under: Path | None) -> list[str]:
    """Recorded files of `source` that were not read and no longer exist."""
    out = []
    for (path,) in brain.db.execute(PATHS_SQL, (source,)):
        if path in read or Path(path).exists():
            continue
        if under is None or Path(path).is_relative_to(under.resolve()) or Path(path).is_relative_to(under):
            out.append(path)
    return out


def _expiring(brain: Brain, report: ImportReport) -> int:
    limit = cutoffs(load_policy(brain.config.retention), brain.clock.now()).get("daily")
    if limit is None:
        return 0
    return sum(1 for f in report.files for s in f.steps if s.action == "add" and s.item is not None
               and s.item.category == "daily" and (s.item.created_at or "9") < limit)


# -- applying ------------------------------------------------------------------------


def apply(brain: Brain, source: str, path: str, steps: list[Step], shown: str) -> None:
    """Write one file's steps in one transaction."""
    updates = [s for s in steps if s.action == "update"]
    adds = [s for s in steps if s.action == "add"]
    # Embedded before the transaction opens: a slow model must not hold the write lock.
    brain.prefetch_vectors([{"content": s.item.text, "title": s.item.title} for s in updates if s.item])
    now = iso(brain.clock.now())
    with brain.db.atomic():
        for step in updates:
            assert step.item is not None and step.memory is not None
            brain.update(step.memory.id, content=step.item.text, title=step.item.title,
                         source=label(source, shown, step.item),
                         metadata={**step.memory.metadata, "imported_from": provenance(source, path, step.item)})
            _record(brain, source, path, step.item, step.memory.uid, now, step.recorded)
        # One memory per item (never folded into another's): editing the item later
        # updates exactly its memory.
        stored = brain.remember_many([memory_of(source, path, shown, s.item) for s in adds if s.item], embed=False,
                                     near=False)
        for step, memory in zip(adds, stored):
            assert step.item is not None
            _record(brain, source, path, step.item, memory.uid, now, step.recorded)
        for step in steps:
            if step.action == "gone" and step.recorded is not None:
                brain.db.execute(GONE_SQL, (now, source, step.recorded.item))
            elif step.action in ("unchanged", "skip") and step.item is not None:
                uid = _known_uid(brain, step)
                if uid is not None and (step.recorded is None or step.rerecord):
                    _record(brain, source, path, step.item, uid, now, step.recorded)


def _known_uid(brain: Brain, step: Step) -> str | None:
    """The memory an unchanged or skipped item stands for, if it has one."""
    if step.memory is not None:
        return step.memory.uid
    if step.recorded is not None:
        return step.recorded.uid
    if step.action == "unchanged" and step.item is not None:  # the same text as an item added just now
        found = brain.rows.find_exact(content_hash(_stored_text(brain, step.item)), step.item.category)
        return found.uid if found else None
    return None


def _record(brain: Brain, source: str, path: str, item: Item, uid: str, now: str, old: Recorded | None) -> None:
    if old is not None and old.item != item.key:
        brain.db.execute(FORGET_RECORD_SQL, (source, old.item))
    brain.db.execute(RECORD_SQL, (source, item.key, path, item.line, item.sha, uid, now))


def memory_of(source: str, path: str, shown: str, item: Item) -> dict[str, Any]:
    """The new memory an item becomes."""
    return {"content": item.text, "title": item.title, "category": item.category, "kind": item.kind,
            "tags": list(item.tags), "importance": item.importance, "created_at": item.created_at,
            "source": label(source, shown, item),
            "metadata": {"imported_from": provenance(source, path, item)}}


def provenance(source: str, path: str, item: Item) -> dict[str, Any]:
    """Where a memory was read: the source, the file, the line, the headings above it."""
    return {"source": source, "file": path, "line": item.line, "section": item.section, "item": item.key,
            **{k: v for k, v in item.details.items() if v not in (None, "", [], {})}}


def label(source: str, shown: str, item: Item) -> str:
    """A memory's `source`: the agent, then the file and the line (or row) it was read from."""
    text = f"{source}:{shown}" + (f":{item.line}" if item.line else f"#{item.key}")
    return text if len(text) <= LABEL_CHARS else text[:60] + "…" + text[-(LABEL_CHARS - 61):]
