"""When each job last ran, and whether it worked: what `maxmem doctor` reports ages from.

Every job (capture, retention, triggers, sync, backup, embed) ends with one call:

    record_run(brain.db, "capture", ok=True, detail="3 files, 41 turns")

which keeps, in the `meta` table,
- `last_run:<job>`  JSON {"at": ISO time, "ok": bool, "detail": one line}: the latest run;
- `last_ok:<job>`   ISO time of the latest run that worked;
- `last_fail:<job>` JSON {"at", "detail", "streak"}: the latest failure and how many
  runs in a row have failed since the last success (0 once one works again).

A job with several targets adds a suffix, `job_name("sync", target)`: "sync:me@pg/brain". The detail is redacted
and cut to one line, so an error that quoted a DSN never leaves its password in
brain.db. Recording is best effort: a busy or broken database must not turn a
job's own success or failure into a different error.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime
from typing import Any

from ..clock import Clock, iso, parse_time
from ..errors import InvalidInput, MaxmemError
from ..redact import redact
from ..store.db import Database

log = logging.getLogger("maxmem")

JOB = re.compile(r"^[a-z][a-z0-9_-]{0,31}(?::[A-Za-z0-9_.@/:+-]{1,160})?$")
RUN_PREFIX = "last_run:"
OK_PREFIX = "last_ok:"
FAIL_PREFIX = "last_fail:"
MAX_DETAIL = 300


def check_job(job: str) -> str:
    if not isinstance(job, str) or not JOB.match(job):
        raise InvalidInput(
            f"job name {job!r} is not allowed: use a lowercase word, optionally ':target'"
        )
    return job


def job_name(job: str, target: str) -> str:
    """"sync:maxmem@db.example:5432/brain": a job run per target, as record_run accepts it."""
    return f"{job}:{re.sub(r'[^A-Za-z0-9_.@/:+-]', '_', target)[:160] or '_'}"


def one_line(text: str, limit: int = MAX_DETAIL) -> str:
    """The detail as stored: secrets redacted, one line, at most `limit` characters."""
    cleaned, _ = redact(str(text))
    cleaned = " ".join(cleaned.split())
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def record_run(
    db: Database, job: str, ok: bool, detail: str = "", clock: Clock | None = None
) -> bool:
    """Record that `job` just ran (ok or not). Returns False if it could not be recorded."""
    check_job(job)
    at = iso((clock or Clock()).now())
    value = json.dumps({"at": at, "ok": bool(ok), "detail": one_line(detail)}, ensure_ascii=False)
    try:
        with db.atomic():
            db.set_meta(RUN_PREFIX + job, value)
            failure = _failure(db.get_meta(FAIL_PREFIX + job))
            if ok:
                db.set_meta(OK_PREFIX + job, at)
                if failure.get("streak"):
                    db.set_meta(FAIL_PREFIX + job, json.dumps({**failure, "streak": 0}, ensure_ascii=False))
            else:
                streak = int(failure.get("streak") or 0) + 1
                db.set_meta(FAIL_PREFIX + job, json.dumps(
                    {"at": at, "detail": one_line(detail), "streak": streak}, ensure_ascii=False))
    except MaxmemError as exc:
        log.warning("could not record the %s run in %s: %s", job, db.path, exc)
        return False
    return True


def _failure(value: str | None) -> dict[str, Any]:
    try:
        data = json.loads(value) if value else {}
    except json.JSONDecodeError:
        data = {}
    return data if isinstance(data, dict) else {}


def last_runs(db: Database) -> dict[str, dict[str, Any]]:
    """job -> {"at", "ok", "detail", "last_ok", "last_fail"} for every job that ever
    recorded a run; last_fail is {"at", "detail", "streak"} or None."""
    runs: dict[str, dict[str, Any]] = {}
    if not db.table_exists("meta"):
        return runs
    rows = db.rows(
        "SELECT key, value FROM meta WHERE key >= ? AND key < ? OR key >= ? AND key < ? "
        "OR key >= ? AND key < ?",
        (RUN_PREFIX, RUN_PREFIX[:-1] + ";", OK_PREFIX, OK_PREFIX[:-1] + ";",
         FAIL_PREFIX, FAIL_PREFIX[:-1] + ";"),
    )
    for row in rows:
        key, value = row["key"], row["value"]
        if key.startswith(FAIL_PREFIX):
            job = key[len(FAIL_PREFIX):]
            runs.setdefault(job, {"at": None, "ok": False, "detail": "", "last_ok": None})[
                "last_fail"] = _failure(value) or None
        elif key.startswith(RUN_PREFIX):
            job = key[len(RUN_PREFIX):]
            try:
                data = json.loads(value)
            except json.JSONDecodeError:
                data = {"at": None, "ok": False, "detail": "unreadable record"}
            runs.setdefault(job, {"last_ok": None, "last_fail": None}).update(
                at=data.get("at"), ok=bool(data.get("ok")), detail=data.get("detail", "")
            )
        else:
            job = key[len(OK_PREFIX):]
            runs.setdefault(job, {"at": None, "ok": False, "detail": "", "last_fail": None})["last_ok"] = value
    return runs


def age_hours(when: str | None, now: datetime) -> float | None:
    """Hours from an ISO time to `now`; None when there is no time."""
    if not when:
        return None
    try:
        return (now - parse_time(when)).total_seconds() / 3600
    except MaxmemError:
        return None


def format_age(hours: float | None) -> str:
    if hours is None:
        return "never"
    if hours < 1:
        return f"{max(0, round(hours * 60))} min ago"
    if hours < 48:
        return f"{hours:.1f} h ago"
    return f"{hours / 24:.1f} days ago"
