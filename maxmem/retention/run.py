"""A retention run: every expired row archived, then deleted, in batches (`apply`); what an
interrupted run left is finished by the next (`resume`)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import archive
from ..clock import iso
from ..errors import EncryptionKeyError, InvalidInput, MaxmemError
from ..jobs.runs import record_run
from ..keys import Key
from ..memory import CATEGORIES, Memory
from ..store import fetched
from .archives import PENDING, Names, archive_place, pending, prune_archives
from .policy import PROTECTED, TRANSCRIPT_CATEGORY, Policy, cutoffs, load_policy
from .report import summary
from .vacuum import reclaim

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: one run at a time is then the user's care
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:  # pragma: no cover
    from ..brain import Brain

log = logging.getLogger("maxmem")

EXPIRED_TURNS_SQL = "SELECT * FROM turns WHERE created_at < ? ORDER BY created_at, id LIMIT ?"
CALLS_OF_TURNS_SQL = "SELECT * FROM tool_calls WHERE turn_id IN ({ids})"
ORPHAN_CALLS_SQL = """
SELECT * FROM tool_calls
WHERE turn_id IS NULL AND coalesce(started_at, finished_at) < ? LIMIT ?
"""

# Each batch: (1) journal the archive it is about to write (meta key
# retention_pending:<name>, its own small transaction); (2) in one write transaction,
# select the batch, write its archive whole (archive.write: temporary, fsync, read back,
# rename, fsync the folder), delete the rows and drop the journal key. A run killed
# before the rename leaves the rows in brain.db (and maybe a temporary, removed by the
# next run); killed after it, a complete archive holding rows still in brain.db, which
# the next run finds through the journal and deletes without archiving them again.

# Left out when a resumed run compares a row with its archived copy: a search between
# the kill and the re-run counts a recall, which does not make it another memory.
UNCOMPARED = ("last_recalled_at", "recall_count", "embedded_at")


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


def apply(brain: Brain, policy: Policy | None = None) -> dict[str, Any]:
    """Archive and delete every expired row, prune old archives, reclaim space.

    First finishes what an interrupted run left (see `pending`).
    """
    policy = policy or load_policy(brain.config.retention)
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
    with brain.db.atomic():  # the searches a `get` followed, kept as long as conversations
        fetched.prune(brain.db, now, policy.days.get(TRANSCRIPT_CATEGORY))
    pruned = [str(p) for p in prune_archives(brain, policy, now)]
    vacuumed = False if in_memory else reclaim(brain, policy.vacuum_share)
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
    log.debug("%s", summary(report))  # the caller prints or logs it (the daemon: once)
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
    turns_table = turn_limit is not None and brain.db.table_exists("turns")
    calls_table = turns_table and brain.db.table_exists("tool_calls")

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
        _prune_changes(brain, [m.uid for m in memories], archive_name)


def _prune_changes(brain: Brain, uids: list[str], archive_name: str) -> None:
    """Expired content leaves the change log too: earlier versions of each uid go, and
    its delete entry (id, uid, category, kind: no content) says where the archived copy
    is. The PostgreSQL push reads only seq and uid (a gap in seq is fine); `maxmem history`,
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
        if not by_table.get(table) or not brain.db.table_exists(table):
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
