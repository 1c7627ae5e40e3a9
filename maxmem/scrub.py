"""`maxmem scrub`: today's redaction rules over what is already stored.

A secret stored by an older maxmem (before a rule for its shape existed) or while
`redact_on_remember` was off is still in brain.db, its history and its copies. Scrub
runs the current rules ([redact] in the config, docs/redact.md) over every place
maxmem keeps text and takes out what they find:

- memories: content, title, tags, metadata, source and agent, through `Brain.update` (so the keyword
  index follows by its triggers, the neighbour windows are rebuilt, and the new text
  is re-embedded, or left pending as any write whose embedding fails); a memory that
  is nothing but `<private>` text is forgotten;
- the neighbour windows (`memories.context`) that still quote a secret;
- the change log's snapshots (`history`), rewritten in place;
- the captured turns, tool calls and sessions (capture/store.py RAW_TEXT);
- the words of your searches kept for `maxmem tune` (store/fetched.py);
- the embeddings cache: the vectors of texts that changed are dropped (their key is a
  fingerprint of the old text);
- the retention archives (rewritten whole and verified, archive.write) and the
  backups maxmem manages (each scrubbed the same way, then made self-contained again,
  its time kept so rotation keeps its order).

Then the keyword index is optimized (FTS5 secure-delete already took the tokens out;
optimize merges its segments), brain.db is vacuumed (PRAGMA secure_delete zeroes
freed pages; VACUUM drops them) and the WAL truncated. The report counts what was
found per place and kind, never the text; `dry_run` writes nothing and counts the same.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import apsw

from . import archive
from .backup import backup_dir, connect, managed_backups
from .brain import Brain
from .capture.store import RAW_TEXT, raw_texts, rewrite_raw
from .embeddings import identity
from .errors import MaxmemError
from .keys import Key, is_encrypted
from .memory import MAX_TAG_CHARS
from .redact import Redactor
from .retention.archives import archives
from .retention.policy import load_policy
from .store import changes, fetched
from .store.db import Database
from .store.records import embed_text

log = logging.getLogger("maxmem")

MARKS = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")
# The fields of an archived or logged row that hold text, by table.
TEXT_FIELDS = {"memories": ("title", "content", "tags", "metadata", "source", "agent", "context"), **RAW_TEXT}
MEMORY_FIELDS = ("title", "content", "tags", "metadata", "source", "agent")
MEMORIES_PAGE = ("SELECT id, title, content, tags, metadata, source, agent FROM memories "
                 "WHERE id > ? ORDER BY id LIMIT 500")
CONTEXT_PAGE = "SELECT id, context FROM memories WHERE context IS NOT NULL AND id > ? ORDER BY id LIMIT 500"
OPTIMIZE_FTS = "INSERT INTO memories_fts (memories_fts) VALUES ('optimize')"
# Places in the order the report names them.
PLACES = ("memories", "neighbour windows", "change log", "turns", "tool calls", "sessions", "searches")
TABLE_PLACE = {"turns": "turns", "tool_calls": "tool calls", "sessions": "sessions"}


@dataclass
class Found:
    """Secrets found in one file, by place and kind (counts only)."""

    places: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, place: str, kinds: Counter[str]) -> None:
        if kinds:
            self.places.setdefault(place, Counter()).update(kinds)

    @property
    def total(self) -> int:
        return sum(sum(c.values()) for c in self.places.values())

    def to_dict(self) -> dict[str, dict[str, int]]:
        order = [p for p in PLACES if p in self.places] + sorted(set(self.places) - set(PLACES))
        return {p: dict(sorted(self.places[p].items())) for p in order}


@dataclass
class FileScrub:
    """What scrub found in one archive or backup and what it did with it."""

    path: str
    found: dict[str, dict[str, int]]
    total: int
    action: str  # clean, rewritten, would-rewrite, skipped: <why>


@dataclass
class ScrubReport:
    dry_run: bool
    found: dict[str, dict[str, int]]  # in brain.db: place -> kind -> count
    memories_changed: int = 0
    memories_forgotten: int = 0
    reembedded: int = 0
    pending: int = 0
    cache_texts_dropped: int = 0
    failed: list[str] = field(default_factory=list)
    archives: list[FileScrub] = field(default_factory=list)
    backups: list[FileScrub] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Every secret found, in brain.db, the archives and the backups."""
        return (sum(sum(k.values()) for k in self.found.values())
                + sum(f.total for f in self.archives) + sum(f.total for f in self.backups))

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total": self.total}


def kinds(before: Any, after: Any, count: int) -> Counter[str]:
    """The kinds of the `count` secrets taken out between `before` and `after`: the
    markers that appeared; `<private>` spans leave none and count as "private"."""
    if not count:
        return Counter()
    new = Counter(MARKS.findall(str(after)))
    new.subtract(Counter(MARKS.findall(str(before))))
    found = +new
    rest = count - sum(found.values())
    if rest > 0:
        found["private"] += rest
    return found


def clean_fields(redactor: Redactor, row: Mapping[str, Any],
                 names: tuple[str, ...]) -> tuple[dict[str, Any], Counter[str]]:
    """The `names` fields of `row` that change once redacted (new values), and the kinds."""
    changed: dict[str, Any] = {}
    found: Counter[str] = Counter()
    for name in names:
        value = row.get(name)
        if value is None:
            continue
        cleaned, count = redactor.redact_value(value) if not isinstance(value, str) else redactor.redact_json(value)
        if count:
            changed[name] = cleaned
            found.update(kinds(value, cleaned, count))
    return changed, found


# -- brain.db ------------------------------------------------------------------------

def _pages(db: Database, sql: str) -> Iterator[dict[str, Any]]:
    last = 0
    while rows := db.rows(sql, (last,)):
        yield from rows
        last = rows[-1]["id"]


def _parsed(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "tags": json.loads(row["tags"] or "[]"), "metadata": json.loads(row["metadata"] or "{}")}


def memory_plan(db: Database, redactor: Redactor, found: Found) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(stored memory, its redacted fields) of each memory holding a secret."""
    plan = []
    for row in _pages(db, MEMORIES_PAGE):
        memory = _parsed(row)
        changed, kinds_found = clean_fields(redactor, memory, MEMORY_FIELDS)
        if "tags" in changed:  # as records.check_record cuts them: a marker can be the longer
            changed["tags"] = [t[:MAX_TAG_CHARS] for t in changed["tags"]]
        if changed:
            plan.append((memory, changed))
            found.add("memories", kinds_found)
    return plan


def windows_with_secrets(db: Database, redactor: Redactor) -> tuple[list[int], Counter[str]]:
    """Memories whose neighbour window (memories.context) quotes a secret."""
    ids, found = [], Counter[str]()
    for row in _pages(db, CONTEXT_PAGE):
        cleaned, count = redactor.redact(row["context"])
        if count:
            ids.append(row["id"])
            found.update(kinds(row["context"], cleaned, count))
    return ids, found


def scrub_log(db: Database, redactor: Redactor, found: Found, dry_run: bool) -> None:
    """The change log's snapshots, rewritten without their secrets."""
    rewrites = []
    for seq, snapshot in changes.snapshots(db):
        changed, kinds_found = clean_fields(redactor, snapshot, TEXT_FIELDS["memories"])
        if changed:
            rewrites.append((seq, {**snapshot, **changed}))
            found.add("change log", kinds_found)
    if rewrites and not dry_run:
        with db.atomic():
            for seq, snapshot in rewrites:
                changes.rewrite(db, seq, snapshot)


def scrub_raw(db: Database, redactor: Redactor, found: Found, dry_run: bool) -> None:
    """The captured turns, tool calls and sessions."""
    for table in RAW_TEXT:
        if not db.table_exists(table):
            continue
        rewrites = []
        for rowid, values in raw_texts(db, table):
            changed, kinds_found = clean_fields(redactor, values, RAW_TEXT[table])
            if changed:
                rewrites.append((rowid, changed))
                found.add(TABLE_PLACE[table], kinds_found)
        if rewrites and not dry_run:
            with db.atomic():
                for rowid, changed in rewrites:
                    rewrite_raw(db, table, rowid, changed)


def scrub_searches(db: Database, redactor: Redactor, found: Found, dry_run: bool) -> None:
    """The words of the searches kept for tune."""
    rewrites = []
    for table, row_id, query in fetched.queries(db):
        cleaned, count = redactor.redact(query)
        if count:
            rewrites.append((table, row_id, cleaned))
            found.add("searches", kinds(query, cleaned, count))
    if rewrites and not dry_run:
        with db.atomic():
            for table, row_id, cleaned in rewrites:
                fetched.rewrite_query(db, table, row_id, cleaned)


def rewrite_memories(brain: Brain, plan: list[tuple[dict[str, Any], dict[str, Any]]],
                     report: ScrubReport) -> None:
    """Each planned memory written again through Brain (index, windows, vectors follow)."""
    old_texts = []
    for memory, changed in plan:
        try:
            if not str(changed.get("content", memory["content"])).strip():
                brain.forget(memory["id"])  # nothing but <private> text
                report.memories_forgotten += 1
                continue
            updated = brain.update(memory["id"], **changed)
        except MaxmemError as exc:
            report.failed.append(f"#{memory['id']}: {exc}")
            continue
        old_texts.append(embed_text(memory["title"], memory["content"]))
        report.memories_changed += 1
        if updated.embedded_at is not None:
            report.reembedded += 1
        else:
            report.pending += 1
    if old_texts:
        with brain.db.atomic():
            brain.vectors.forget_texts(old_texts)
    report.cache_texts_dropped = len(set(old_texts))


def reclaim(db: Database) -> None:
    """Merge the keyword index, drop freed pages, empty the WAL."""
    with db.atomic():
        db.execute(OPTIMIZE_FTS)
    db.execute("VACUUM")
    if db.scalar("PRAGMA journal_mode") == "wal":
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def scrub_brain(brain: Brain, dry_run: bool = False) -> ScrubReport:
    """Scrub one brain.db (not its archives or backups: see `scrub`)."""
    redactor, db, found = brain.redactor, brain.db, Found()
    scrub_raw(db, redactor, found, dry_run)
    scrub_searches(db, redactor, found, dry_run)
    scrub_log(db, redactor, found, dry_run)
    plan = memory_plan(db, redactor, found)
    stale, window_kinds = windows_with_secrets(db, redactor)
    found.add("neighbour windows", window_kinds)
    report = ScrubReport(dry_run, {})
    if not dry_run and found.total:
        rewrite_memories(brain, plan, report)
        stale, _ = windows_with_secrets(db, redactor)  # windows of memories no write touched
        if stale:
            with db.atomic():
                brain.rows.refresh(stale, expand=False)
        reclaim(db)
    elif dry_run:
        report.memories_changed = len(plan)
        report.cache_texts_dropped = len({embed_text(m["title"], m["content"]) for m, _ in plan})
    report.found = found.to_dict()
    return report


# -- archives and backups ----------------------------------------------------------------

def scrub_archive(path: Path, redactor: Redactor, dry_run: bool, key: Key | None = None) -> FileScrub:
    """One retention archive: its records redacted, the file written again whole (sealed
    again with `key` when it was sealed)."""
    try:
        reading = archive.read(path, key=key)
    except MaxmemError as exc:
        return FileScrub(str(path), {}, 0, f"skipped: {exc}")
    found, records = Found(), []
    for record in reading.records:
        table = record.get("_table") or "memories"
        changed, kinds_found = clean_fields(redactor, record, TEXT_FIELDS.get(table, ()))
        found.add(TABLE_PLACE.get(table, table), kinds_found)
        records.append({**record, **changed})
    if not found.total:
        return FileScrub(str(path), {}, 0, "clean")
    if not reading.complete:
        return FileScrub(str(path), found.to_dict(), found.total,
                         "skipped: damaged (maxmem retain --repair-archives first)")
    if not dry_run:
        archive.write(path, records, replace=True, key=key if reading.sealed else None)
    return FileScrub(str(path), found.to_dict(), found.total, "would-rewrite" if dry_run else "rewritten")


def scrub_backup(path: Path, brain: Brain, dry_run: bool) -> FileScrub:
    """One backup: scrubbed like brain.db, then self-contained again with its old time."""
    try:
        if dry_run:
            copy = Brain(Database(path, readonly=True, key=brain.config.key), brain.config, None, brain.clock)
        else:
            copy = Brain.open(path, embedder=_embedder_for(path, brain), config=brain.config,
                              clock=brain.clock, check_embedder=False)
    except MaxmemError as exc:
        return FileScrub(str(path), {}, 0, f"skipped: {exc}")
    stat = path.stat()
    try:
        result = scrub_brain(copy, dry_run)
    finally:
        copy.db.close()
    if not dry_run and result.total:
        conn = connect(path, brain.config.key if is_encrypted(path) else None)
        try:
            conn.execute("PRAGMA journal_mode=DELETE")  # no -wal beside a backup (backup.py)
        finally:
            conn.close()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # rotation goes by time
    action = "clean" if not result.total else ("would-rewrite" if dry_run else "rewritten")
    return FileScrub(str(path), result.found, result.total, action)


def _embedder_for(path: Path, brain: Brain) -> Any:
    """The brain's embedder when the backup holds its vectors, else none (pending)."""
    if brain.embedder is None:
        return "none"
    conn = connect(path, brain.config.key if is_encrypted(path) else None, apsw.SQLITE_OPEN_READONLY)
    try:
        rows = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchall()
    except apsw.Error:
        rows = []
    finally:
        conn.close()
    return brain.embedder if rows and rows[0][0] == identity(brain.embedder) else "none"


def scrub(brain: Brain, dry_run: bool = False, copies: bool = True) -> ScrubReport:
    """Scrub brain.db and, with `copies`, its retention archives and managed backups."""
    report = scrub_brain(brain, dry_run)
    if copies and str(brain.path) != ":memory:":
        policy = load_policy(brain.config.retention)
        report.archives = [scrub_archive(p, brain.redactor, dry_run, brain.config.key)
                           for p, _ in archives(brain, policy)]
        report.backups = [scrub_backup(p, brain, dry_run)
                          for p in managed_backups(backup_dir(brain.config, Path(brain.path)))]
    log.info("scrub%s: %d secret(s) found", " (dry run)" if dry_run else "", report.total)
    return report


def report_lines(report: ScrubReport) -> list[str]:
    """The report as lines for people: counts per place and kind, never the text."""
    verb = "would remove" if report.dry_run else "removed"
    lines = [f"scrub {verb} {report.total} secret(s)" + (" (dry run: nothing changed)" if report.dry_run else "")]
    for place, found in report.found.items():
        lines.append(f"  brain.db {place}: " + ", ".join(f"{k} {n}" for k, n in found.items()))
    if report.memories_changed or report.memories_forgotten:
        what = "would change" if report.dry_run else "changed"
        lines.append(f"  memories {what}: {report.memories_changed}"
                     + (f" (re-embedded {report.reembedded}, pending {report.pending})" if not report.dry_run else "")
                     + (f", forgotten {report.memories_forgotten}" if report.memories_forgotten else "")
                     + f"; cached vectors of {report.cache_texts_dropped} old text(s) dropped")
    for kind, files in (("archive", report.archives), ("backup", report.backups)):
        for f in files:
            if f.total or f.action.startswith("skipped"):
                lines.append(f"  {kind} {f.path}: {f.total} ({f.action})")
    lines += [f"  failed {line}" for line in report.failed]
    return lines
