"""Retention: expire old memories by category, archive them first, reclaim the space.

Policy (config `[retention]`): core and project forever, daily 90 days, conversation
30 days. Pinned memories and those written by a commit trigger never expire. The
turns and tool calls of captured sessions age with the conversation memories.

Ages are counted in calendar days of the configured time zone (default
America/New_York, where the nightly job runs at 03:00): a conversation memory kept
30 days goes at the first run on or after local midnight 30 days after the day it
was made, whatever daylight saving time did in between.

`plan` is the dry run. `apply` writes every expired row to a gzipped JSONL archive
next to brain.db (one file per run, mode 0600; `maxmem import FILE` restores the
memories), deletes them in batches, one transaction each, through Brain's delete
path (keyword index, vectors and the change log follow), prunes archives older
than `archive_days`, and runs VACUUM when the free pages reach `vacuum_share` of
the file.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from datetime import datetime, time, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .clock import UTC, iso, parse_days
from .config import zone
from .errors import ConfigError, InvalidInput, MaxmemError
from .health import record_run
from .memory import CATEGORIES, Memory

if TYPE_CHECKING:  # pragma: no cover
    from .brain import Brain

log = logging.getLogger("maxmem")

DEFAULT_DAYS: dict[str, int | None] = {"core": None, "project": None, "daily": 90, "conversation": 30}
ARCHIVE_DAYS = 730
TIMEZONE = "America/New_York"
BATCH_SIZE = 500
VACUUM_SHARE = 0.25
TRANSCRIPT_CATEGORY = "conversation"


# Never expire: pinned, or written by a commit trigger (source or metadata says so).
PROTECTED = "(pinned = 1 OR source = 'trigger' OR json_extract(metadata, '$.trigger') IS NOT NULL)"
EXPIRED_SQL = f"""
SELECT * FROM memories
WHERE category = ? AND created_at < ? AND NOT {PROTECTED}
ORDER BY created_at ASC, id ASC
LIMIT ?
"""
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
        count, size, embedded = brain.db.execute(CATEGORY_SIZE_SQL, (category, None)).fetchone()
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
            n, size, embedded = brain.db.execute(EXPIRED_SIZE_SQL, (category, limits[category])).fetchone()
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


class Archive:
    """The gzipped JSONL file of one run, created on the first write, 0600 from the start."""

    def __init__(self, folder: Path, stem: str, now: datetime) -> None:
        self.folder = folder
        self.path = folder / f"{stem}.retention-{now.astimezone(UTC).strftime('%Y%m%dT%H%M%SZ')}.jsonl.gz"
        self.count = 0
        self._raw: Any = None
        self._gz: gzip.GzipFile | None = None
        self._text: io.TextIOWrapper | None = None

    def _open(self) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path, n = self.path, 1
        while True:
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
                break
            except FileExistsError:
                n += 1
                path = self.path.with_name(self.path.name.replace(".jsonl.gz", f"-{n}.jsonl.gz"))
        self.path = path
        self._raw = os.fdopen(fd, "wb")
        self._gz = gzip.GzipFile(fileobj=self._raw, mode="wb")
        self._text = io.TextIOWrapper(self._gz, encoding="utf-8")

    def write(self, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        if self._text is None:
            self._open()
        assert self._text is not None and self._gz is not None
        for record in records:
            self._text.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.count += len(records)
        # On disk before the rows are deleted: a crash can repeat a row in the next
        # archive, never lose one.
        self._text.flush()
        self._gz.flush(zlib_sync_flush())
        self._raw.flush()
        os.fsync(self._raw.fileno())

    def close(self) -> None:
        if self._text is not None:
            self._text.close()
            self._raw.close()
            self._text = None


def zlib_sync_flush() -> int:
    import zlib

    return zlib.Z_SYNC_FLUSH


def _file_size(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def apply(brain: Brain, policy: Policy | None = None) -> dict[str, Any]:
    """Archive and delete every expired row, prune old archives, reclaim space."""
    policy = policy or load_policy(brain.config)
    now = brain.clock.now()
    limits = cutoffs(policy, now)
    path = Path(brain.path)
    in_memory = str(path) == ":memory:"
    folder = policy.archive_dir or (Path.cwd() if in_memory else path.parent)
    archive = Archive(folder, "brain" if in_memory else path.stem, now)
    size_before = 0 if in_memory else _file_size(path)
    deleted = {c: 0 for c in CATEGORIES}
    transcripts = {"turns": 0, "tool_calls": 0}
    try:
        for category in CATEGORIES:
            if limits[category]:
                deleted[category] = _expire_category(brain, archive, category, limits[category], policy.batch_size)
        if limits[TRANSCRIPT_CATEGORY] and _has_table(brain, "turns"):
            transcripts = _expire_transcripts(brain, archive, limits[TRANSCRIPT_CATEGORY], policy.batch_size)
    except MaxmemError as exc:
        record_run(brain.db, "retention", False, str(exc), brain.clock)
        raise
    finally:
        archive.close()
    pruned = [str(p) for p in _prune_archives(brain, policy, now)]
    vacuumed = False if in_memory else _reclaim(brain, policy.vacuum_share)
    size_after = 0 if in_memory else _file_size(path)
    report = {
        "now": iso(now),
        "archive": str(archive.path) if archive.count else None,
        "archived": archive.count,
        "deleted": deleted,
        "deleted_total": sum(deleted.values()),
        "transcripts": transcripts,
        "archives_pruned": pruned,
        "vacuumed": vacuumed,
        "size_before": size_before,
        "size_after": size_after,
    }
    log.info("%s", summary(report))
    record_run(brain.db, "retention", True, summary(report), brain.clock)  # for `maxmem doctor`
    return report


def _expire_category(brain: Brain, archive: Archive, category: str, limit: str, batch: int) -> int:
    total = 0
    while True:
        with brain.db.atomic():
            rows = brain.db.rows(EXPIRED_SQL, (category, limit, batch))
            if not rows:
                return total
            memories = [Memory.from_row(r) for r in rows]
            archive.write([_as_record(m) for m in memories])
            brain.forget_many(memories, raw_turns=False)  # the turns expire below, archived
            _compact_changes(brain, [m.uid for m in memories], archive.path.name)
        total += len(memories)


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


def _expire_transcripts(brain: Brain, archive: Archive, limit: str, batch: int) -> dict[str, int]:
    counts = {"turns": 0, "tool_calls": 0}
    calls_table = _has_table(brain, "tool_calls")
    while True:
        with brain.db.atomic():
            turns = brain.db.rows(EXPIRED_TURNS_SQL, (limit, batch))
            calls: list[dict[str, Any]] = []
            if calls_table:
                if turns:
                    ids = ",".join(str(int(t["id"])) for t in turns)
                    calls = brain.db.rows(CALLS_OF_TURNS_SQL.format(ids=ids))
                else:
                    calls = brain.db.rows(ORPHAN_CALLS_SQL, (limit, batch))
            if not turns and not calls:
                return counts
            archive.write([{"_table": "tool_calls", **c} for c in calls] + [{"_table": "turns", **t} for t in turns])
            if calls:
                brain.db.executemany(
                    "DELETE FROM tool_calls WHERE session_id = ? AND call_id = ?",
                    [(c["session_id"], c["call_id"]) for c in calls],
                )
            if turns:
                brain.db.executemany("DELETE FROM turns WHERE id = ?", [(t["id"],) for t in turns])
        counts["turns"] += len(turns)
        counts["tool_calls"] += len(calls)


_ARCHIVE_NAME = re.compile(r"\.retention-(\d{8}T\d{6}Z)(?:-\d+)?\.jsonl\.gz$")


def _archives(brain: Brain, policy: Policy) -> list[tuple[Path, datetime]]:
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
    return [p for p, made in _archives(brain, policy) if made < oldest_kept]


def _prune_archives(brain: Brain, policy: Policy, now: datetime) -> list[Path]:
    pruned = []
    for archive_path in _expired_archives(brain, policy, now):
        try:
            archive_path.unlink()
            pruned.append(archive_path)
        except OSError as exc:
            log.warning("cannot remove old archive %s: %s", archive_path, exc.strerror)
    return pruned


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
    text += f"; archived {report['archived']} rows" + (f" to {report['archive']}" if report["archive"] else "")
    if report["archives_pruned"]:
        text += f"; pruned {len(report['archives_pruned'])} old archive(s)"
    freed = report["size_before"] - report["size_after"]
    if report["vacuumed"]:
        text += f"; vacuumed, freed {freed / 1e6:.1f} MB"
    return text


def plan_summary(result: Mapping[str, Any]) -> list[str]:
    """The dry run as lines of text."""
    lines = [f"dry run at {result['now']} ({result['timezone']}): "
             f"{result['expired']} memories would go, {result['expired_bytes'] / 1e6:.2f} MB "
             "(run with --apply to archive and delete them)"]
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
        count, size, _ = brain.db.execute(CATEGORY_SIZE_SQL, (category, None)).fetchone()
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
