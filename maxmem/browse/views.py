"""What each maxmem page shows, read from a Brain: plain data, no HTTP, no HTML.

These run in the Brain's own process (worker.py) and return plain data the server
renders. Every page reads inside one short read transaction (`snapshot`): the page
shows the brain as of that read, and a writer (capture, the agent, retention) is
never blocked, since in WAL mode readers and the one writer do not wait for each
other. Reading writes nothing: searches are not counted as recalls (`track=False`),
a person looking is not the agent remembering. `tend` is the one writer, and it
writes through the Brain API only (pin, update, supersede, forget).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from ..brain import Brain
from ..clock import Clock, iso, parse_time
from ..config import Config
from ..doctor import run_checks
from ..errors import InvalidInput, NotFound
from ..jobs.daemon import job_schedules
from ..jobs.runs import age_hours, format_age, last_runs
from ..memory import CATEGORIES, Memory, parse_pairs
from ..retention.policy import PROTECTED, Policy, cutoff, load_policy
from ..review import budget_check
from ..search.hybrid import MODES
from ..store.db import Database

# Events of the timeline, by the memories' own times; see `timeline`.
CREATED_SQL = "SELECT created_at, source FROM memories WHERE created_at >= ? AND created_at < ?"
RESOLVED_SQL = "SELECT id, resolved_at FROM memories WHERE resolved_at >= ? AND resolved_at < ?"
EXPIRING_COUNT_SQL = f"""
SELECT count(*) FROM memories
WHERE category = ? AND created_at >= ? AND created_at < ? AND NOT {PROTECTED}
"""
EXPIRING_SQL = f"""
SELECT * FROM memories
WHERE category = ? AND created_at >= ? AND created_at < ? AND NOT {PROTECTED}
ORDER BY created_at, id LIMIT ?
"""
DAY_SQL = """
SELECT * FROM memories WHERE created_at >= ? AND created_at < ? AND source = ?
ORDER BY created_at, id LIMIT ?
"""
DAY_CREATED_SQL = "SELECT * FROM memories WHERE created_at >= ? AND created_at < ? ORDER BY created_at, id LIMIT ?"
DAY_RESOLVED_SQL = """
SELECT * FROM memories WHERE resolved_at >= ? AND resolved_at < ? ORDER BY resolved_at, id LIMIT ?
"""
OVERVIEW_SQL = """
SELECT category, count(*) AS memories, sum(embedded_at IS NULL) AS pending, sum(pinned) AS pinned
FROM memories GROUP BY category
"""
SESSION_SQL = ("SELECT id, format, agent, title, cwd, source_file, started_at, updated_at, turn_count "
               "FROM sessions WHERE id = ?")
TURN_RANGE_SQL = "SELECT count(*) FROM turns WHERE session_id = ? AND seq >= ? AND seq <= ?"

DAY_LIST_LIMIT = 200
MAX_LIMIT = 100
MAX_DAYS = 366
EVENTS = ("created", "captured", "committed", "resolved", "expiring")
EVENT_SOURCES = {"captured": "capture", "committed": "trigger"}
SOURCE_EVENTS = {source: event for event, source in EVENT_SOURCES.items()}


@contextlib.contextmanager
def snapshot(db: Database) -> Iterator[None]:
    """One read transaction: every query inside sees the same state of brain.db.

    BEGIN (deferred) takes no lock until the first read, and a reader never blocks the
    writer in WAL mode; the transaction ends as soon as the page's data is read.
    """
    db.execute("BEGIN")
    try:
        yield
    finally:
        db.execute("COMMIT")


def snippet(memory: Memory, width: int = 200) -> str:
    text = " ".join(memory.content.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def memory_row(memory: Memory) -> dict[str, Any]:
    """A memory as a line of a list: what the templates show of it."""
    return {
        "id": memory.id, "uid": memory.uid, "category": memory.category, "kind": memory.kind,
        "title": memory.title, "snippet": snippet(memory), "created_at": memory.created_at,
        "day": memory.created_at[:10], "pinned": memory.pinned, "status": memory.status,
        "tags": list(memory.tags), "importance": memory.importance,
    }


# -- search --------------------------------------------------------------------


@dataclass
class SearchForm:
    """The search page's form, as `maxmem search` takes the same things."""

    query: str = ""
    limit: int = 10
    mode: str = "hybrid"
    explain: bool = False
    include_superseded: bool = False
    filters: dict[str, Any] = field(default_factory=dict)
    # what was typed, to fill the form again
    fields: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_args(cls, args: Mapping[str, Sequence[str]]) -> SearchForm:
        """Query-string values (each a list, as a form sends them); InvalidInput names
        the field that is wrong."""

        def one(name: str) -> str:
            values = args.get(name) or [""]
            return values[-1].strip()

        def many(name: str) -> list[str]:
            return [v.strip() for value in args.get(name, []) for v in value.split(",") if v.strip()]

        limit_text = one("limit") or "10"
        try:
            limit = int(limit_text)
        except ValueError:
            raise InvalidInput(f"limit must be a whole number, not {limit_text!r}") from None
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be from 1 to {MAX_LIMIT}")
        mode = one("mode") or "hybrid"
        if mode not in MODES:
            raise InvalidInput(f"mode must be one of {', '.join(MODES)}")
        importance = one("min_importance")
        try:
            min_importance = float(importance) if importance else None
        except ValueError:
            raise InvalidInput(f"min_importance must be a number from 0 to 1, not {importance!r}") from None
        filters: dict[str, Any] = {
            "category": many("category") or None,
            "kind": many("kind") or None,
            "tags": many("tag") or None,
            "since": one("since") or None,
            "until": one("until") or None,
            "min_importance": min_importance,
            "metadata": parse_pairs(args.get("meta", []), "metadata filter"),
            "status": many("status") or None,
            "agent": one("agent") or None,
            "session_id": one("session") or None,
        }
        fields: dict[str, Any] = {name: one(name) for name in ("q", "limit", "mode", "kind", "tag", "since", "until",
                                               "min_importance", "agent", "session")}
        fields.update(category=many("category"), status=many("status"),
                      meta="\n".join(v for v in args.get("meta", []) if v.strip()))
        return cls(one("q"), limit, mode, bool(one("explain")), bool(one("include_superseded")),
                   {k: v for k, v in filters.items() if v is not None}, fields)


def search(brain: Brain, form: SearchForm) -> dict[str, Any]:
    """The hits of `Brain.search` for the form, as `maxmem search` ranks them, with the
    explain view's parts (each hit's vector and keyword sides, the plan)."""
    started = time.perf_counter()
    with snapshot(brain.db):
        hits = brain.search(form.query, limit=form.limit, mode=form.mode,
                            include_superseded=form.include_superseded, explain=True,
                            track=False, **form.filters)
    plan = hits.plan
    return {
        "hits": [
            {"rank": rank, "score": hit.score, "relevance": hit.relevance, "vector_score": hit.vector_score,
             "keyword_score": hit.keyword_score, "explain": hit.explain,
             "memory": memory_row(hit.memory)}
            for rank, hit in enumerate(hits, start=1)
        ],
        "json_hits": [hit.to_dict() for hit in hits],
        "plan": {"mode": plan.mode, "match": plan.match, "where": plan.where,
                 "params": list(plan.params), "vector_candidates": plan.vector_candidates,
                 "keyword_candidates": plan.keyword_candidates, "note": plan.note,
                 "best_relevance": plan.best_relevance, "min_relevance": plan.min_relevance},
        "weights": {"vector": brain.config.vector_weight, "keyword": brain.config.keyword_weight},
        "seconds": time.perf_counter() - started,
        "warnings": list(brain.warnings),
    }


# -- one memory ----------------------------------------------------------------


def memory_page(brain: Brain, ref: str, related: int = 5) -> dict[str, Any]:
    """A memory in full: fields, provenance, its versions, and the memories nearest it
    (opening it counts as a `get` of yours for `maxmem tune`)."""
    with snapshot(brain.db):
        memory = brain.get(ref)
        try:
            versions = brain.history(memory.id)
        except NotFound:  # a memory from before the change log kept every write
            versions = []
        successor = _linked(brain, memory.superseded_by)
        predecessors = [m for m in (_linked(brain, uid) for uid in memory.metadata.get("supersedes", [])) if m]
        provenance = _provenance(brain.db, memory)
    # Opening a memory is a fetch of yours, as `maxmem get` is: one a search of yours
    # returned minutes before makes that search a question for `maxmem tune`. Counted
    # outside the snapshot, where its batch may be written.
    brain.get(memory.id, track=True)
    # Outside the snapshot: similar() may embed the memory's text once and cache it.
    near = [
        {**memory_row(m), "similarity": similarity}
        for m, similarity in brain.similar(memory.content, title=memory.title, limit=related + 1,
                                           include_superseded=True)
        if m.id != memory.id
    ][:related]
    return {
        "memory": memory.to_dict(),
        "row": memory_row(memory),
        "versions": [
            {"seq": v["seq"], "op": v["op"], "at": v["at"],
             "changed": [f for f in v["changed"] if f != "content_hash"],  # follows content
             "content": (v["memory"] or {}).get("content"), "fields": _version_fields(v["memory"] or {})}
            for v in reversed(versions)
        ],
        "successor": memory_row(successor) if successor else None,
        "predecessors": [memory_row(m) for m in predecessors],
        "provenance": provenance,
        "related": near,
        "categories": CATEGORIES,
    }


def _linked(brain: Brain, uid: Any) -> Memory | None:
    if not isinstance(uid, str) or not uid:
        return None
    try:
        return brain.get(uid)
    except (NotFound, InvalidInput):
        return None


def _version_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    keep = ("category", "kind", "title", "tags", "importance", "status", "pinned", "superseded_by")
    return {k: data.get(k) for k in keep if k in data}


def _provenance(db: Database, memory: Memory) -> dict[str, Any]:
    """Where a memory came from: its source, the session and transcript, the turns."""
    meta = memory.metadata
    session_id = memory.session_id or meta.get("session_id")
    session = db.one(SESSION_SQL, (session_id,)) if session_id and db.table_exists("sessions") else None
    turns = meta.get("turn_range")
    turn_range = None
    if (isinstance(turns, list) and len(turns) == 2 and all(isinstance(t, int) for t in turns)
            and session_id):
        stored = int(db.scalar(TURN_RANGE_SQL, (session_id, turns[0], turns[1])) or 0)
        turn_range = {"first": turns[0], "last": turns[1], "stored": stored}
    return {
        "source": memory.source, "agent": memory.agent, "session_id": session_id,
        "session": session, "transcript": meta.get("source_file") or (session or {}).get("source_file"),
        "format": meta.get("format") or (session or {}).get("format"),
        "turn_range": turn_range,
        "source_turns": [str(t) for t in meta.get("source_turns", [])][:50],
        "trigger": meta.get("trigger"),
    }


# -- timeline ------------------------------------------------------------------


def day_bounds(day: date, policy: Policy) -> tuple[str, str]:
    """A local calendar day (the retention time zone) as UTC ISO bounds [start, end)."""
    tz = policy.timezone
    start = datetime(day.year, day.month, day.day, tzinfo=tz)
    following = day + timedelta(days=1)
    end = datetime(following.year, following.month, following.day, tzinfo=tz)
    return iso(start), iso(end)


def local_day(value: str, policy: Policy) -> date:
    return parse_time(value).astimezone(policy.timezone).date()


def expiring_window(category: str, day: date, today: date, now: datetime,
                    policy: Policy) -> tuple[str, str] | None:
    """The created_at range of the `category` memories that retention removes on `day`.

    Retention keeps what was created at or after `cutoff(days, now)`; what it keeps on
    the day before but not on `day` goes on `day`. Today's window is everything past
    the cutoff now, what `maxmem retain` would remove if it ran now (overdue included).
    Times of day are taken at noon, which is exact for whole-day policies.
    """
    days = policy.days.get(category)
    if days is None:
        return None
    tz = policy.timezone

    def at(d: date) -> datetime:
        return datetime(d.year, d.month, d.day, 12, tzinfo=tz)

    end = cutoff(days, now if day == today else at(day), tz)
    start = "" if day == today else iso(cutoff(days, at(day - timedelta(days=1)), tz))  # type: ignore[arg-type]
    assert end is not None
    return start, iso(end)


def timeline(brain: Brain, days: int = 14, ahead: int = 7) -> dict[str, Any]:
    """Per local day: memories created (any source), captured (from transcripts),
    committed (commit triggers) and resolved over the last `days` days, and those
    retention will remove, today and `ahead` days on."""
    if not 1 <= days <= MAX_DAYS or not 0 <= ahead <= MAX_DAYS:
        raise InvalidInput(f"days must be from 1 to {MAX_DAYS}")
    policy = load_policy(brain.config.retention)
    now = brain.clock.now()
    today = now.astimezone(policy.timezone).date()
    first = today - timedelta(days=days - 1)
    counts: dict[date, dict[str, int]] = {}

    def bump(day: date, event: str, n: int = 1) -> None:
        counts.setdefault(day, dict.fromkeys(EVENTS, 0))[event] += n

    since, until = day_bounds(first, policy)[0], day_bounds(today, policy)[1]
    with snapshot(brain.db):
        for row in brain.db.rows(CREATED_SQL, (since, until)):
            day = local_day(row["created_at"], policy)
            bump(day, "created")
            if row["source"] in SOURCE_EVENTS:
                bump(day, SOURCE_EVENTS[row["source"]])
        for row in brain.db.rows(RESOLVED_SQL, (since, until)):
            bump(local_day(row["resolved_at"], policy), "resolved")
        for offset in range(ahead + 1):
            day = today + timedelta(days=offset)
            for category in CATEGORIES:
                window = expiring_window(category, day, today, now, policy)
                if window:
                    bump(day, "expiring", int(brain.db.scalar(EXPIRING_COUNT_SQL, (category, *window))))
    rows = []
    for offset in range(ahead, -days, -1):
        day = today + timedelta(days=offset)
        rows.append({"day": day.isoformat(), "today": day == today, "future": day > today,
                     **counts.get(day, dict.fromkeys(EVENTS, 0))})
    return {"rows": rows, "today": today.isoformat(), "timezone": str(policy.timezone),
            "keep_days": dict(policy.days), "days": days, "ahead": ahead,
            "totals": {e: sum(r[e] for r in rows) for e in EVENTS}}


def timeline_day(brain: Brain, day_text: str, limit: int = DAY_LIST_LIMIT) -> dict[str, Any]:
    """The memories behind one day of the timeline, by event."""
    try:
        day = date.fromisoformat(day_text)
    except ValueError:
        raise InvalidInput(f"day must be a date like 2026-11-28, not {day_text[:40]!r}") from None
    policy = load_policy(brain.config.retention)
    now = brain.clock.now()
    today = now.astimezone(policy.timezone).date()
    start, end = day_bounds(day, policy)
    events: dict[str, list[dict[str, Any]]] = {}
    with snapshot(brain.db):
        events["created"] = [memory_row(Memory.from_row(r))
                             for r in brain.db.rows(DAY_CREATED_SQL, (start, end, limit))]
        for event, source in EVENT_SOURCES.items():
            rows = brain.db.rows(DAY_SQL, (start, end, source, limit))
            events[event] = [memory_row(Memory.from_row(r)) for r in rows]
        events["resolved"] = [memory_row(Memory.from_row(r))
                              for r in brain.db.rows(DAY_RESOLVED_SQL, (start, end, limit))]
        expiring: list[dict[str, Any]] = []
        if day >= today:
            for category in CATEGORIES:
                window = expiring_window(category, day, today, now, policy)
                if window:
                    expiring += [memory_row(Memory.from_row(r))
                                 for r in brain.db.rows(EXPIRING_SQL, (category, *window, limit))]
        events["expiring"] = expiring[:limit]
    return {"day": day.isoformat(), "today": today.isoformat(), "timezone": str(policy.timezone),
            "events": events, "limit": limit}


# -- overview and jobs ---------------------------------------------------------


def overview(brain: Brain, recent: int = 10) -> dict[str, Any]:
    """The first page: what is in the brain, what came in lately, how the jobs are."""
    now = brain.clock.now()
    with snapshot(brain.db):
        per = {c: {"memories": 0, "pending": 0, "pinned": 0} for c in CATEGORIES}
        for row in brain.db.rows(OVERVIEW_SQL):
            per[row["category"]] = {"memories": row["memories"], "pending": row["pending"] or 0,
                                    "pinned": row["pinned"] or 0}
        latest = [memory_row(m) for m in brain.list(limit=recent)]
        runs = last_runs(brain.db)
        vectors_from = brain.db.get_meta("embedder")
        changes = int(brain.db.scalar("SELECT coalesce(max(seq), 0) FROM changes") or 0)
    path = Path(brain.path)
    wal = Path(f"{path}-wal")
    return {
        "path": str(path),
        "categories": per,
        "memories": sum(c["memories"] for c in per.values()),
        "pending": sum(c["pending"] for c in per.values()),
        "pinned": sum(c["pinned"] for c in per.values()),
        "db_bytes": path.stat().st_size if path.exists() else 0,
        "wal_bytes": wal.stat().st_size if wal.exists() else 0,
        "embedder": _embedder_name(brain),
        "vectors_from": vectors_from,
        "changes": changes,
        "recent": latest,
        "runs": job_rows(runs, now),
        "now": iso(now),
    }


def _embedder_name(brain: Brain) -> str:
    embedder = brain.embedder
    if embedder is None:
        return "none (keyword-only search)"
    return f"{embedder.provider}:{embedder.model}"


def job_rows(runs: Mapping[str, Mapping[str, Any]], now: datetime) -> list[dict[str, Any]]:
    return [
        {"job": job, "ok": bool(run.get("ok")), "at": run.get("at"),
         "age": format_age(age_hours(run.get("at"), now)), "detail": run.get("detail") or "",
         "last_ok": run.get("last_ok"), "last_ok_age": format_age(age_hours(run.get("last_ok"), now))}
        for job, run in sorted(runs.items())
    ]


def jobs(config: Config, embedder: str | None) -> dict[str, Any]:
    """The jobs' last runs and every check of `maxmem doctor` (run_checks, which opens
    its own connection and reads the whole file for the integrity check)."""
    started = time.perf_counter()
    report = run_checks(config, embedder=embedder, extra=[budget_check], env=os.environ,
                        schedules=job_schedules(config, os.environ))
    return {
        "ok": bool(report.get("ok")),
        "checks": list(report.get("checks", [])),
        "runs": job_rows(report.get("runs", {}), Clock().now()),
        "backups": report.get("backups"),
        "sizes": report.get("sizes"),
        "seconds": time.perf_counter() - started,
    }


INTERNAL_TABLES_SQL = r"""
SELECT name FROM sqlite_master
WHERE type = 'table' AND (name LIKE 'memories\_vec\_%' ESCAPE '\' OR name = 'vector_codes'
                          OR name LIKE 'memories\_spaced%' ESCAPE '\')
"""


def internal_tables(brain: Brain) -> list[str]:
    """The vector index's own tables (vec0's shadow tables, the int8 codes) and the
    keyword index of spaceless scripts (memories_spaced and its shadow tables)."""
    return [r["name"] for r in brain.db.rows(INTERNAL_TABLES_SQL)]


# -- tending -------------------------------------------------------------------

ACTIONS = ("pin", "unpin", "category", "edit", "supersede", "forget")


def tend(brain: Brain, ref: str, action: str, form: Mapping[str, str]) -> tuple[str, str]:
    """One change through the Brain API: (what was done, the page to show next)."""
    memory = brain.get(ref)
    page = f"/maxmem/memory/{memory.id}"
    if action in ("pin", "unpin"):
        brain.pin(memory.id, action == "pin")
        return f"#{memory.id} {'pinned' if action == 'pin' else 'unpinned'}", page
    if action == "category":
        category = form.get("category", "")
        if category not in CATEGORIES:
            raise InvalidInput(f"category must be one of {', '.join(CATEGORIES)}")
        brain.update(memory.id, category=category)
        return f"#{memory.id} moved to {category}", page
    if action == "edit":
        fields: dict[str, Any] = {"content": form.get("content", "").replace("\r\n", "\n")}
        if "title" in form:
            fields["title"] = form["title"].strip() or None
        brain.update(memory.id, **fields)
        return f"#{memory.id} edited", page
    if action == "supersede":
        newer = form.get("by", "").strip().lstrip("#")
        if not newer:
            raise InvalidInput("give the id of the memory that replaces this one")
        brain.supersede(memory.id, newer)
        return f"#{memory.id} superseded by #{brain.get(newer).id}", page
    if action == "forget":
        if form.get("confirm") != "yes":
            raise InvalidInput("tick the box to confirm: forgetting deletes the memory everywhere")
        brain.forget(memory.id)
        return f"#{memory.id} forgotten", "/"
    raise InvalidInput(f"unknown action {action!r}: use one of {', '.join(ACTIONS)}")
