"""Retention: expire old memories by category, archive them first, reclaim the space.

Policy (config `[retention]`): core and project forever, daily 90 days, conversation
30 days. Pinned memories and those written by a commit trigger never expire. The
turns and tool calls of captured sessions age with the conversation memories.

Ages are counted in calendar days of the configured time zone (default
America/New_York, where the nightly job runs at 03:00): a conversation memory kept
30 days goes at the first run on or after local midnight 30 days after the day it
was made, whatever daylight saving time did in between.

`plan` is the dry run. `apply` works in batches: each batch's expired rows go to a
gzipped JSONL archive next to brain.db (one file per batch, mode 0600, written
whole, fsynced and read back before it is renamed into place: archive.py; `maxmem
import FILE` restores the memories), and only then are they deleted, in one
transaction, through Brain's delete path (keyword index, vectors and the change log
follow). A run killed anywhere leaves every row in brain.db or in a complete archive
(or both: the next run finishes the batch without archiving it twice; see `resume`).
It then prunes archives older than `archive_days`, and runs VACUUM when the free
pages reach `vacuum_share` of the file. `check_archives` is what `maxmem doctor`
reports about interrupted runs and damaged archives.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from datetime import datetime, time, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import archive
from .clock import UTC, iso, parse_days
from .config import zone
from .errors import ConfigError, EncryptionKeyError, InvalidInput, MaxmemError
from .health import record_run
from .jobs import NEW_YORK
from .keys import Key
from .memory import CATEGORIES, Memory

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: one run at a time is then the user's care
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:  # pragma: no cover
    from .brain import Brain

log = logging.getLogger("maxmem")

DEFAULT_DAYS: dict[str, int | None] = {"core": None, "project": None, "daily": 90, "conversation": 30}
ARCHIVE_DAYS = 730
TIMEZONE = NEW_YORK  # the zone of retention's day, and of its daily run (maxmem.jobs)
BATCH_SIZE = 500
VACUUM_SHARE = 0.25
TRANSCRIPT_CATEGORY = "conversation"


# Never expire: pinned, or written by a commit trigger (source or metadata says so).
PROTECTED = "(pinned = 1 OR source = 'trigger' OR json_extract(metadata, '$.trigger') IS NOT NULL)"
CATEGORY_SIZE_SQL = """
SELECT count(*), coalesce(sum(length(CAST(content AS BLOB)) + length(CAST(coalesce(title, '') AS BLOB))
       + length(tags) + length(metadata)), 0), sum(embedded_at IS NOT NULL)
FROM memories WHERE category = ? AND created_at < coalesce(?, '9999')
"""
EXPIRED_SIZE_SQL = f"""
SELECT count(*), coalesce(sum(length(CAST(content AS BLOB)) + length(CAST(coalesce(title, '') AS BLOB))
       + length(tags) + length(metadata)), 0), sum(embedded_at IS NOT NULL)
FROM memories WHERE category = ? AND created_at < ? AND NOT {PROTECTED}
"""
PROTECTED_SQL = f"SELECT count(*) FROM memories WHERE category = ? AND created_at < ? AND {PROTECTED}"
OLDEST_SQL = f"""
SELECT id, category, kind, created_at, title, content FROM memories
WHERE category = ? AND created_at < ? AND NOT {PROTECTED}
ORDER BY created_at ASC, id ASC LIMIT ?
"""
GROWTH_SQL = """
SELECT category, substr(created_at, 1, 7) AS month, count(*) AS memories,
       coalesce(sum(length(CAST(content AS BLOB))), 0) AS bytes
FROM memories WHERE created_at >= ?
GROUP BY 1, 2 ORDER BY 2, 1
"""
EXPIRED_TURNS_SQL = "SELECT * FROM turns WHERE created_at < ? ORDER BY created_at, id LIMIT ?"
CALLS_OF_TURNS_SQL = "SELECT * FROM tool_calls WHERE turn_id IN ({ids})"
ORPHAN_CALLS_SQL = """
SELECT * FROM tool_calls
WHERE turn_id IS NULL AND coalesce(started_at, finished_at) < ? LIMIT ?
"""


# -- durations and policy -------------------------------------------------------


def daily_at(value: Any) -> str:
    """The daemon's "HH:MM" for `[retention] schedule`."""
    text = str(value).strip()
    if not re.match(r"^(?:[01]\d|2[0-3]):[0-5]\d$", text):
        raise ConfigError(f"[retention] schedule = {value!r} must be a time of day like 03:00")
    return text


@dataclass(frozen=True)
class Policy:
    """How long each category is kept (days; None = forever) and how a run behaves."""

    days: Mapping[str, float | None] = field(default_factory=lambda: dict(DEFAULT_DAYS))
    archive_days: float | None = ARCHIVE_DAYS
    timezone: tzinfo = field(default_factory=lambda: zone(TIMEZONE))
    batch_size: int = BATCH_SIZE
    vacuum_share: float = VACUUM_SHARE
    archive_dir: Path | None = None


def load_policy(config: Any = None) -> Policy:
    """The policy from `[retention]` of the config (or a plain mapping).

    ```toml
    [retention]
    daily = "90d"            # days, a duration (12w, 2y) or "forever"
    conversation = 30
    archive_days = "2y"      # how long archives are kept
    timezone = "America/New_York"
    batch_size = 500
    vacuum_share = 0.25      # VACUUM when free pages reach this share of the file
    archive_dir = "~/memory-archives"   # default: next to brain.db
    ```
    """
    section: Mapping[str, Any] = {}
    if config is not None:
        section = config.section("retention") if hasattr(config, "section") else config
    known = {*CATEGORIES, "archive_days", "timezone", "batch_size", "vacuum_share", "archive_dir", "schedule"}
    for key in section:
        if key not in known:
            raise ConfigError(f"[retention]: unknown setting {key!r} (known: {', '.join(sorted(known))})")
    days = {c: (parse_days(section[c], f"[retention] {c}") if c in section else DEFAULT_DAYS[c]) for c in CATEGORIES}
    archive_days = (parse_days(section["archive_days"], "[retention] archive_days")
                    if "archive_days" in section else ARCHIVE_DAYS)
    try:
        batch_size = int(section.get("batch_size", BATCH_SIZE))
        vacuum_share = float(section.get("vacuum_share", VACUUM_SHARE))
    except (TypeError, ValueError):
        raise ConfigError("[retention] batch_size must be a whole number and vacuum_share a number") from None
    if not 1 <= batch_size <= 100_000:
        raise ConfigError("[retention] batch_size must be from 1 to 100000")
    if not 0 < vacuum_share <= 1:
        raise ConfigError("[retention] vacuum_share must be in (0, 1]")
    archive_dir = Path(str(section["archive_dir"])).expanduser() if section.get("archive_dir") else None
    if "schedule" in section:
        daily_at(section["schedule"])
    return Policy(days, archive_days, zone(section.get("timezone", TIMEZONE)), batch_size, vacuum_share, archive_dir)


def cutoff(days: float | None, now: datetime, tz: tzinfo) -> datetime | None:
    """The first moment that is still kept: local midnight `days` calendar days ago.

    Whole days count in the local calendar (so a DST change does not move the
    boundary by an hour); a fractional policy (36h) counts exact hours.
    """
    if days is None:
        return None
    if days != int(days):
        return now - timedelta(days=days)
    local_day = now.astimezone(tz).date() - timedelta(days=int(days))
    return datetime.combine(local_day, time(0), tzinfo=tz).astimezone(UTC)


def cutoffs(policy: Policy, now: datetime) -> dict[str, str | None]:
    return {c: (iso(t) if (t := cutoff(policy.days.get(c), now, policy.timezone)) else None) for c in CATEGORIES}


# -- the dry run ------------------------------------------------------------------


def _vector_bytes(brain: Brain) -> int:
    dim = brain.db.get_meta("embedder_dim")
    return 4 * int(dim) if dim and str(dim).isdigit() else 0


def _has_table(brain: Brain, name: str) -> bool:
    return brain.db.table_exists(name)


def plan(brain: Brain, policy: Policy | None = None, oldest: int = 5) -> dict[str, Any]:
    """What `apply` would do now: per category counts and sizes, and the oldest items to go."""
    policy = policy or load_policy(brain.config)
    now = brain.clock.now()
    limits = cutoffs(policy, now)
    per_vector = _vector_bytes(brain)
    categories: dict[str, Any] = {}
    going: list[dict[str, Any]] = []
    for category in CATEGORIES:
        count, size, embedded = brain.db.execute(CATEGORY_SIZE_SQL, (category, None)).fetchone() or (0, 0, 0)
        entry: dict[str, Any] = {
            "keep_days": policy.days.get(category),
            "cutoff": limits[category],
            "count": int(count),
            "bytes": int(size) + per_vector * int(embedded or 0),
            "expired": 0,
            "expired_bytes": 0,
            "protected": 0,
        }
        if limits[category]:
            n, size, embedded = brain.db.execute(EXPIRED_SIZE_SQL, (category, limits[category])).fetchone() or (0, 0, 0)
            entry["expired"] = int(n)
            entry["expired_bytes"] = int(size) + per_vector * int(embedded or 0)
            entry["protected"] = int(brain.db.scalar(PROTECTED_SQL, (category, limits[category])))
            for row in brain.db.rows(OLDEST_SQL, (category, limits[category], oldest)):
                going.append({
                    "id": row["id"], "category": row["category"], "kind": row["kind"],
                    "created_at": row["created_at"], "text": _snippet(row["title"], row["content"]),
                })
        categories[category] = entry
    going.sort(key=lambda r: r["created_at"])
    result = {
        "now": iso(now),
        "timezone": str(policy.timezone),
        "categories": categories,
        "expired": sum(c["expired"] for c in categories.values()),
        "expired_bytes": sum(c["expired_bytes"] for c in categories.values()),
        "oldest": going[:oldest],
        "transcripts": _transcript_counts(brain, limits[TRANSCRIPT_CATEGORY]),
        "archives_to_prune": [str(p) for p in _expired_archives(brain, policy, now)],
        "interrupted": [str(p) for p in pending(brain.db)],
    }
    return result


def _snippet(title: str | None, content: str, width: int = 80) -> str:
    text = " ".join(f"{title} — {content}".split()) if title else " ".join(content.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _transcript_counts(brain: Brain, limit: str | None) -> dict[str, int]:
    if not limit or not _has_table(brain, "turns"):
        return {}
    turns = int(brain.db.scalar("SELECT count(*) FROM turns WHERE created_at < ?", (limit,)))
    calls = 0
    if _has_table(brain, "tool_calls"):
        calls = int(brain.db.scalar(
            "SELECT count(*) FROM tool_calls WHERE turn_id IN (SELECT id FROM turns WHERE created_at < ?) "
            "OR (turn_id IS NULL AND coalesce(started_at, finished_at) < ?)",
            (limit, limit),
        ))
    return {"turns": turns, "tool_calls": calls}


# -- applying ---------------------------------------------------------------------
#
# Each batch: (1) journal the archive it is about to write (meta key
# retention_pending:<name>, its own small transaction); (2) in one write transaction,
# select the batch, write its archive whole (archive.write: temporary, fsync, read back,
# rename, fsync the folder), delete the rows and drop the journal key. A run killed
# before the rename leaves the rows in brain.db (and maybe a temporary, removed by the
# next run); killed after it, a complete archive holding rows still in brain.db, which
# the next run finds through the journal and deletes without archiving them again.

PENDING = "retention_pending:"
PENDING_SQL = "SELECT key, value FROM meta WHERE key >= ? AND key < ? ORDER BY key"
# Left out when a resumed run compares a row with its archived copy: a search between
# the kill and the re-run counts a recall, which does not make it another memory.
UNCOMPARED = ("last_recalled_at", "recall_count", "embedded_at")


class Names:
    """The archive files of one run: <stem>.retention-<UTC time>.jsonl.gz, then -2, -3, …"""

    def __init__(self, folder: Path, stem: str, now: datetime) -> None:
        self.first = folder / f"{stem}.retention-{now.astimezone(UTC).strftime('%Y%m%dT%H%M%SZ')}.jsonl.gz"
        self.n = 1

    def next(self) -> Path:
        while True:
            path = self.first if self.n == 1 else self.first.with_name(
                self.first.name.replace(".jsonl.gz", f"-{self.n}.jsonl.gz"))
            self.n += 1
            if not path.exists() and not archive.temporary(path).exists():
                return path


@contextlib.contextmanager
def run_lock(folder: Path, stem: str) -> Iterator[None]:
    """One retention run at a time per brain and archive folder (a lock file held for the run)."""
    lock = folder / f".{stem}.retention.lock"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o600)
    except OSError as exc:
        raise MaxmemError(f"cannot use {folder} as the archive folder ({exc.strerror}): "
                          "check [retention] archive_dir") from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise MaxmemError(
                    f"another retention run is under way for {folder / stem} (it holds {lock}): "
                    "let it finish, then run again"
                ) from None
        yield
    finally:
        os.close(fd)


def _file_size(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def archive_place(brain: Brain, policy: Policy) -> tuple[Path, str]:
    """The folder of this brain's archives and the stem of their names."""
    path = Path(brain.path)
    in_memory = str(path) == ":memory:"
    folder = policy.archive_dir or (Path.cwd() if in_memory else path.parent)
    return folder, "brain" if in_memory else path.stem


def apply(brain: Brain, policy: Policy | None = None) -> dict[str, Any]:
    """Archive and delete every expired row, prune old archives, reclaim space.

    First finishes what an interrupted run left (see `pending`).
    """
    policy = policy or load_policy(brain.config)
    now = brain.clock.now()
    limits = cutoffs(policy, now)
    path = Path(brain.path)
    in_memory = str(path) == ":memory:"
    folder, stem = archive_place(brain, policy)
    size_before = 0 if in_memory else _file_size(path)
    written: list[Path] = []
    try:
        # An in-memory brain is this process's alone: no other run can share it.
        with contextlib.nullcontext() if in_memory else run_lock(folder, stem):
            resumed = resume(brain)
            names = Names(folder, stem, now)
            deleted, transcripts = _expire(brain, names, written, limits, policy.batch_size)
    except MaxmemError as exc:
        record_run(brain.db, "retention", False, str(exc), brain.clock)
        raise
    pruned = [str(p) for p in _prune_archives(brain, policy, now)]
    vacuumed = False if in_memory else _reclaim(brain, policy.vacuum_share)
    size_after = 0 if in_memory else _file_size(path)
    report = {
        "now": iso(now),
        "archive": str(written[0]) if written else None,  # the first archive of the run
        "archives": [str(p) for p in written],  # one per batch
        "archived": sum(deleted.values()) + transcripts["turns"] + transcripts["tool_calls"],
        "deleted": deleted,
        "deleted_total": sum(deleted.values()),
        "transcripts": transcripts,
        "resumed": resumed,
        "archives_pruned": pruned,
        "vacuumed": vacuumed,
        "size_before": size_before,
        "size_after": size_after,
    }
    log.info("%s", summary(report))
    record_run(brain.db, "retention", True, summary(report), brain.clock)  # for `maxmem doctor`
    return report


def _reserve(brain: Brain, names: Names) -> Path:
    """Journal the next archive name (committed before the archive exists)."""
    path = names.next()
    with brain.db.atomic():
        brain.db.set_meta(PENDING + path.name, str(path))
    return path


def _batch(brain: Brain, names: Names, written: list[Path],
           select: Callable[[], list[dict[str, Any]]], delete: Callable[[list[dict[str, Any]], str], None]) -> int:
    """One batch as the comment above says; the number of rows archived and deleted."""
    if not select():  # nothing (more) to do: no journal entry, no write at all
        return 0
    path = _reserve(brain, names)
    try:
        with brain.db.atomic():
            records = select()
            if records:
                archive.write(path, records, key=brain.db.key)  # sealed when brain.db is encrypted
                delete(records, path.name)
            brain.db.execute("DELETE FROM meta WHERE key = ?", (PENDING + path.name,))
    except BaseException:
        if not path.exists():  # nothing was archived: the journal entry has nothing to finish
            _drop_journal_entry(brain, path.name)
        raise
    if records:
        written.append(path)
    return len(records)


def _drop_journal_entry(brain: Brain, name: str) -> None:
    try:
        with brain.db.atomic():
            brain.db.execute("DELETE FROM meta WHERE key = ?", (PENDING + name,))
    except MaxmemError as exc:  # the next run clears it: the archive does not exist
        log.debug("journal entry %s stays until the next run: %s", name, exc)


def _expire(brain: Brain, names: Names, written: list[Path], limits: Mapping[str, str | None],
            batch: int) -> tuple[dict[str, int], dict[str, int]]:
    """Every expired row, in batches of up to `batch` memories and `batch` turns (with
    their tool calls), one archive each: a nightly run usually writes one file."""
    deleted = {c: 0 for c in CATEGORIES}
    transcripts = {"turns": 0, "tool_calls": 0}
    chosen = [(c, t) for c, t in limits.items() if t is not None]
    where = " OR ".join("(category = ? AND created_at < ?)" for _ in chosen)
    memories_sql = (f"SELECT * FROM memories WHERE ({where}) AND NOT {PROTECTED} "
                    "ORDER BY created_at ASC, id ASC LIMIT ?") if chosen else ""
    memory_params = [value for pair in chosen for value in pair]
    turn_limit = limits.get(TRANSCRIPT_CATEGORY)
    turns_table = turn_limit is not None and _has_table(brain, "turns")
    calls_table = turns_table and _has_table(brain, "tool_calls")

    def select() -> list[dict[str, Any]]:
        records = [_as_record(Memory.from_row(r))
                   for r in (brain.db.rows(memories_sql, [*memory_params, batch]) if chosen else [])]
        if turns_table:
            turns = brain.db.rows(EXPIRED_TURNS_SQL, (turn_limit, batch))
            calls: list[dict[str, Any]] = []
            if calls_table:
                if turns:
                    ids = ",".join(str(int(t["id"])) for t in turns)
                    calls = brain.db.rows(CALLS_OF_TURNS_SQL.format(ids=ids))
                calls += brain.db.rows(ORPHAN_CALLS_SQL, (turn_limit, batch))
            records += [{"_table": "tool_calls", **c} for c in calls] + [{"_table": "turns", **t} for t in turns]
        return records

    def delete(records: list[dict[str, Any]], archive_name: str) -> None:
        memories = [Memory(**r) for r in records if "_table" not in r]
        _delete_memories(brain, memories, archive_name)
        _delete_transcript_rows(brain, [r for r in records if "_table" in r])
        for memory in memories:
            deleted[memory.category] += 1
        for record in records:
            if "_table" in record:
                transcripts[record["_table"]] += 1

    while _batch(brain, names, written, select, delete):
        pass
    return deleted, transcripts


def _delete_memories(brain: Brain, memories: list[Memory], archive_name: str) -> None:
    if memories:
        brain.forget_many(memories, raw_turns=False)  # the turns expire on their own, archived
        _compact_changes(brain, [m.uid for m in memories], archive_name)


def _compact_changes(brain: Brain, uids: list[str], archive_name: str) -> None:
    """Expired content leaves the change log too: earlier versions of each uid go, and
    its delete entry (id, uid, category, kind: no content) says where the archived copy
    is. The exporter reads only seq and uid (a gap in seq is fine); `maxmem history`,
    by id or uid, then shows the deletion."""
    marks = ",".join("?" * len(uids))
    brain.db.execute(f"DELETE FROM changes WHERE op = 'upsert' AND uid IN ({marks})", uids)
    brain.db.execute(
        f"UPDATE changes SET data = json_set(json_remove(data, '$.forgotten'), '$.expired', 1, '$.archive', ?) "
        f"WHERE op = 'delete' AND uid IN ({marks})",
        [archive_name, *uids],
    )


_MEMORY_FIELDS = tuple(f.name for f in dataclass_fields(Memory))


def _as_record(memory: Memory) -> dict[str, Any]:
    """Memory.to_dict without its deep copy: the same keys, what `maxmem import` reads."""
    return {name: getattr(memory, name) for name in _MEMORY_FIELDS}


def _delete_transcript_rows(brain: Brain, records: list[dict[str, Any]]) -> None:
    calls = [(r["session_id"], r["call_id"]) for r in records if r["_table"] == "tool_calls"]
    turns = [(r["id"],) for r in records if r["_table"] == "turns"]
    if calls:
        brain.db.executemany("DELETE FROM tool_calls WHERE session_id = ? AND call_id = ?", calls)
    if turns:
        brain.db.executemany("DELETE FROM turns WHERE id = ?", turns)


# -- interrupted runs -----------------------------------------------------------------


def pending(db: Any) -> list[Path]:
    """The archives that runs were interrupted while writing (journal entries in meta)."""
    if not db.table_exists("meta"):
        return []
    return [Path(r["value"]) for r in db.rows(PENDING_SQL, (PENDING, PENDING[:-1] + ";"))]


def resume(brain: Brain) -> dict[str, Any]:
    """Finish what interrupted runs left: where the journaled archive exists and is whole,
    delete the rows it holds that are still in brain.db and unchanged (a changed row stays,
    for a later run to archive as it is now); where it was never written, forget it."""
    done: dict[str, Any] = {"archives": [], "memories": 0, "turns": 0, "tool_calls": 0, "kept": 0}
    for path in pending(brain.db):
        with brain.db.atomic():
            archive.temporary(path).unlink(missing_ok=True)
            if path.exists():
                found = _read_whole(path, brain.config.key)
                if found is not None:
                    counts = _delete_archived(brain, found, path.name)
                    for key, n in counts.items():
                        done[key] += n
                    done["archives"].append(str(path))
            brain.db.execute("DELETE FROM meta WHERE key = ?", (PENDING + path.name,))
    if done["archives"]:
        log.info("retention: finished the interrupted run of %s (%d memories deleted, %d changed since, kept)",
                 ", ".join(done["archives"]), done["memories"], done["kept"])
    return done


def _read_whole(path: Path, key: Key | None) -> list[dict[str, Any]] | None:
    try:
        reading = archive.read(path, key=key)
    except (InvalidInput, EncryptionKeyError) as exc:
        log.warning("retention: %s cannot be read (%s): its rows stay in brain.db", path, exc)
        return None
    if not reading.complete:
        log.warning("retention: %s: its rows stay in brain.db", reading.note())
        return None
    return reading.records


def _comparable(record: Mapping[str, Any]) -> str:
    return json.dumps({k: v for k, v in record.items() if k not in UNCOMPARED}, sort_keys=True,
                      ensure_ascii=False)


def _delete_archived(brain: Brain, records: list[dict[str, Any]], archive_name: str) -> dict[str, int]:
    """Delete the rows of `records` still in brain.db exactly as archived."""
    counts = {"memories": 0, "turns": 0, "tool_calls": 0, "kept": 0}
    by_table: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {}
    for record in records:
        by_table.setdefault(record.get("_table") or "memories", {})[archive.record_key(record)] = record
    memories = by_table.get("memories", {})
    gone: list[Memory] = []
    for start in range(0, len(memories), 400):
        chunk = [key[1] for key in list(memories)[start : start + 400]]
        for row in brain.db.rows(f"SELECT * FROM memories WHERE uid IN ({','.join('?' * len(chunk))})", chunk):
            memory = Memory.from_row(row)
            if _comparable(_as_record(memory)) == _comparable(memories[("memories", memory.uid)]):
                gone.append(memory)
            else:
                counts["kept"] += 1
    _delete_memories(brain, gone, archive_name)
    counts["memories"] = len(gone)
    rest: list[dict[str, Any]] = []
    for table, sql in (("turns", "SELECT * FROM turns WHERE id = ?"),
                       ("tool_calls", "SELECT * FROM tool_calls WHERE session_id = ? AND call_id = ?")):
        if not by_table.get(table) or not _has_table(brain, table):
            continue
        for key, record in by_table[table].items():
            found = brain.db.one(sql, key[1:])
            if found is None:
                continue
            if _comparable({"_table": table, **found}) == _comparable(json.loads(json.dumps(record))):
                rest.append(record)
                counts[table] += 1
            else:
                counts["kept"] += 1
    _delete_transcript_rows(brain, rest)
    return counts


_ARCHIVE_NAME = re.compile(r"\.retention-(\d{8}T\d{6}Z)(?:-\d+)?\.jsonl\.gz$")


def archives(brain: Brain, policy: Policy) -> list[tuple[Path, datetime]]:
    """This brain's retention archives with the time in their names, oldest first."""
    path = Path(brain.path)
    if str(path) == ":memory:" and policy.archive_dir is None:
        return []
    folder = policy.archive_dir or path.parent
    stem = "brain" if str(path) == ":memory:" else path.stem
    found = []
    for candidate in folder.glob(f"{stem}.retention-*.jsonl.gz") if folder.exists() else ():
        match = _ARCHIVE_NAME.search(candidate.name)
        if match:
            found.append((candidate, datetime.strptime(match.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)))
    return sorted(found, key=lambda item: item[1])


def _expired_archives(brain: Brain, policy: Policy, now: datetime) -> list[Path]:
    if policy.archive_days is None:
        return []
    oldest_kept = now - timedelta(days=policy.archive_days)
    return [p for p, made in archives(brain, policy) if made < oldest_kept]


def _prune_archives(brain: Brain, policy: Policy, now: datetime) -> list[Path]:
    pruned = []
    for archive_path in _expired_archives(brain, policy, now):
        try:
            archive_path.unlink()
            pruned.append(archive_path)
        except OSError as exc:
            log.warning("cannot remove old archive %s: %s", archive_path, exc.strerror)
    return pruned


# -- archive health (maxmem doctor) ---------------------------------------------------


def _finding(ok: bool, detail: str) -> dict[str, Any]:
    return {"name": "retention archives", "ok": ok, "detail": detail}


def check_archives(brain: Brain, policy: Policy | None = None) -> list[dict[str, Any]]:
    """What `maxmem doctor` reports about retention: an interrupted run (until a run
    finishes it), a leftover temporary, and each archive that is not whole (until
    `repair_archives` rewrites it); else one ok line. Reads and parses every archive,
    streaming (measured: 0.95 s for 200 archives holding 100,000 rows). Writes nothing."""
    policy = policy or load_policy(brain.config)
    found: list[dict[str, Any]] = []
    journaled = pending(brain.db)
    for path in journaled:
        state = ("after writing it, before deleting its rows from brain.db" if path.exists()
                 else "before it was written whole (its rows are still in brain.db)")
        found.append(_finding(False, f"a retention run was interrupted at {path} {state}: "
                                     "run  maxmem retain --apply  to finish it"))
    folder, stem = archive_place(brain, policy)
    if str(brain.path) != ":memory:" or policy.archive_dir is not None:
        covered = {archive.temporary(p) for p in journaled}
        for leftover in sorted(folder.glob(f".{stem}.retention-*.jsonl.gz{archive.TEMPORARY_SUFFIX}")):
            if leftover not in covered:
                found.append(_finding(False, f"{leftover} was left by an interrupted retention run and holds "
                                             "nothing that is not in brain.db: the next  maxmem retain --apply  "
                                             "removes it"))
    files = archives(brain, policy)
    for path, _ in files:
        result = archive.check(path, brain.config.key)
        if isinstance(result, str):
            found.append(_finding(False, f"retention archive {path} cannot be read: {result}"))
        elif not result.complete:
            found.append(_finding(False, f"{result.note()}: the memories in it may exist nowhere else; "
                                         f"restore them with  maxmem import {path}, and rewrite the archive "
                                         "whole with its complete lines (retention.repair_archives)"))
    if not found:
        found.append(_finding(True, f"{len(files)} archive(s) in {folder}, all complete"
                              if files else "no retention archive yet"))
    return found


def repair_archives(brain: Brain, policy: Policy | None = None) -> list[dict[str, Any]]:
    """Rewrite each archive that is not whole as a complete one holding its complete lines
    (archive.write: verified, renamed over it); the damaged file stays beside it as
    <name>.damaged. Returns one entry per archive repaired: path, lines, lost_bytes."""
    policy = policy or load_policy(brain.config)
    repaired = []
    for path, _ in archives(brain, policy):
        reading = archive.check(path, brain.config.key)
        if isinstance(reading, str) or reading.complete:
            continue  # an unreadable line is not a cut-off end: left for a person to look at
        reading = archive.read(path, key=brain.config.key)
        damaged = path.with_name(path.name + ".damaged")
        if not damaged.exists():
            os.link(path, damaged)
        archive.write(path, reading.records, replace=True)
        repaired.append({"path": str(path), "lines": reading.lines, "lost_bytes": reading.lost_bytes,
                         "damaged_copy": str(damaged)})
        log.info("retention: rewrote %s whole with its %d complete lines", path, reading.lines)
    return repaired


def _compact_vectors(brain: Brain, share: float) -> bool:
    """Rebuild the vec0 table when `share` of its slots belong to deleted rows.

    vec0 never reuses the slot of a deleted vector and VACUUM does not compact its
    chunks (measured: 10,000 vectors, 8,000 deleted, still 10,240 slots), so a
    retention run that expires most vectors frees nothing without this.
    """
    if not _has_table(brain, "memories_vec") or not _has_table(brain, "memories_vec_chunks"):
        return False
    slots = int(brain.db.scalar("SELECT coalesce(sum(size), 0) FROM memories_vec_chunks") or 0)
    live = int(brain.db.scalar("SELECT count(*) FROM memories_vec_rowids") or 0)
    if not slots or (slots - live) / slots < share:
        return False
    ddl = brain.db.scalar("SELECT sql FROM sqlite_master WHERE name = 'memories_vec'")
    with brain.db.atomic():
        brain.db.execute("CREATE TEMP TABLE retention_vectors AS SELECT rowid AS id, embedding FROM memories_vec")
        brain.db.execute("DROP TABLE memories_vec")
        brain.db.execute(ddl)
        brain.db.execute("INSERT INTO memories_vec (rowid, embedding) "
                         "SELECT id, embedding FROM retention_vectors ORDER BY id")
        brain.db.execute("DROP TABLE temp.retention_vectors")
    log.info("rebuilt the vector table: %d live vectors in %d slots", live, slots)
    return True


def _reclaim(brain: Brain, share: float) -> bool:
    """VACUUM when the free pages reach `share` of the file (deletes leave them free)."""
    _compact_vectors(brain, share)
    pages = int(brain.db.scalar("PRAGMA page_count") or 0)
    free = int(brain.db.scalar("PRAGMA freelist_count") or 0)
    if not pages or free / pages < share:
        return False
    brain.db.execute("VACUUM")
    brain.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return True


def summary(report: Mapping[str, Any]) -> str:
    """One line for cron logs."""
    parts = [f"{c} {n}" for c, n in report["deleted"].items() if n]
    text = f"retention: deleted {report['deleted_total']} memories"
    if parts:
        text += f" ({', '.join(parts)})"
    turns = report.get("transcripts") or {}
    if turns.get("turns") or turns.get("tool_calls"):
        text += f", {turns.get('turns', 0)} turns and {turns.get('tool_calls', 0)} tool calls"
    files = report.get("archives") or ([report["archive"]] if report.get("archive") else [])
    text += f"; archived {report['archived']} rows"
    if len(files) == 1:
        text += f" to {files[0]}"
    elif files:
        text += f" to {len(files)} files ({files[0]} … {Path(files[-1]).name})"
    resumed = report.get("resumed") or {}
    if resumed.get("archives"):
        text += (f"; finished an interrupted run ({resumed['memories']} memories already archived "
                 f"in {len(resumed['archives'])} file(s), now deleted)")
    if report["archives_pruned"]:
        text += f"; pruned {len(report['archives_pruned'])} old archive(s)"
    freed = report["size_before"] - report["size_after"]
    if report["vacuumed"]:
        text += f"; vacuumed, freed {freed / 1e6:.1f} MB"
    return text


def plan_summary(result: Mapping[str, Any]) -> list[str]:
    """The dry run as lines of text."""
    lines = [(f"dry run at {result['now']} ({result['timezone']}): "
              f"{result['expired']} memories would go, {result['expired_bytes'] / 1e6:.2f} MB "
              "(run with --apply to archive and delete them)")]
    for category, c in result["categories"].items():
        keep = "forever" if c["keep_days"] is None else f"{c['keep_days']:g} days"
        line = f"  {category:<12} keep {keep:<10} {c['count']:>7} memories {c['bytes'] / 1e6:>8.2f} MB"
        if c["cutoff"]:
            line += f"   expired {c['expired']:>6} ({c['expired_bytes'] / 1e6:.2f} MB), before {c['cutoff'][:10]}"
            if c["protected"]:
                line += f", {c['protected']} pinned/trigger kept"
        lines.append(line)
    if result["transcripts"]:
        t = result["transcripts"]
        lines.append(f"  transcripts: {t['turns']} turns and {t['tool_calls']} tool calls would go")
    if result["oldest"]:
        lines.append("  oldest that would go:")
        for item in result["oldest"]:
            lines.append(f"    #{item['id']} {item['created_at'][:10]} {item['category']}/{item['kind']}: "
                         f"{item['text']}")
    for archive_path in result.get("interrupted", []):
        lines.append(f"  an interrupted run was writing {archive_path}: --apply finishes it first")
    for archive_path in result["archives_to_prune"]:
        lines.append(f"  old archive that would be removed: {archive_path}")
    return lines


# -- growth -----------------------------------------------------------------------


def growth(brain: Brain, months: int = 6) -> dict[str, Any]:
    """Memories and bytes created per category per month, for the last `months` months."""
    if not 1 <= int(months) <= 120:
        raise InvalidInput("months must be from 1 to 120")
    now = brain.clock.now()
    first = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    for _ in range(int(months) - 1):
        first = (first - timedelta(days=1)).replace(day=1)
    rows = brain.db.rows(GROWTH_SQL, (iso(first),))
    month_names = sorted({r["month"] for r in rows})
    table: dict[str, dict[str, dict[str, int]]] = {c: {} for c in CATEGORIES}
    for row in rows:
        table[row["category"]][row["month"]] = {"memories": row["memories"], "bytes": row["bytes"]}
    totals = {}
    for category in CATEGORIES:
        count, size, _ = brain.db.execute(CATEGORY_SIZE_SQL, (category, None)).fetchone() or (0, 0, 0)
        totals[category] = {"memories": int(count), "bytes": int(size)}
    return {"since": iso(first), "months": month_names, "per_month": table, "totals": totals}


def growth_lines(result: Mapping[str, Any]) -> list[str]:
    months = result["months"]
    lines = [f"memories created per month since {result['since'][:10]} (and total now):"]
    lines.append(f"  {'category':<13}" + "".join(f"{m:>9}" for m in months) + f"{'total':>10}")
    for category, per in result["per_month"].items():
        cells = "".join(f"{per.get(m, {}).get('memories', 0):>9}" for m in months)
        lines.append(f"  {category:<13}{cells}{result['totals'][category]['memories']:>10}")
    return lines
