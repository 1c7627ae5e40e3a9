"""`maxmem daemon`: the scheduled jobs, run on their schedules or at a scheduler's tick.

The jobs and when they run are declared once, in `maxmem.jobs.table.JOBS`; here each
gets the function that opens brain.db, does its work and returns a one-line
summary (`RUNNERS`). A failing job is logged and retried at its next time; it never
stops the daemon or the other jobs.

`maxmem daemon` runs them with the `schedule` library (`entry` turns a job's `when`
into a schedule entry). `maxmem daemon --once --if-due`, run by any scheduler's tick
(cron, a systemd timer, launchd), runs only the jobs that are due from their last
success recorded in brain.db (maxmem.jobs.due), so retention runs once per New York day
after 03:00 there whatever the machine's zone, and a night missed asleep is caught
up at the next tick. An every-tick job (embed) runs at each tick, right after
capture (capture stores without vectors), within its [embed] max_seconds budget.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import schedule

from ..backup import create_backup
from ..brain import Brain
from ..capture import agents_folders, run_capture
from ..clock import Clock
from ..config import Config
from ..doctor import run_checks
from ..errors import MaxmemError
from ..retention.report import summary
from ..retention.run import apply
from ..store.db import Database
from ..store.migrations import migrate
from ..sync import folder
from ..sync.pgconnect import batch_size_from, resolve_dsn, target_name
from ..sync.pgpush import push
from . import due
from . import table as job_table
from .runs import job_name, last_runs, record_run

log = logging.getLogger("maxmem")



@dataclass(frozen=True)
class Job:
    name: str
    when: job_table.When  # from maxmem.jobs.table: due.Daily, due.Every or EVERY_TICK
    run: Callable[[], str]  # does the work, returns a one-line summary
    description: str = ""
    records: bool = True  # the job records its own runs (health.record_run); else run_due does

    @property
    def due(self) -> due.Schedule | None:
        """For --if-due: when it is due from its last success; None: at every tick."""
        return job_table.due_schedule(self.when)


def entry(when: job_table.When, scheduler: schedule.Scheduler) -> schedule.Job:
    """The `schedule` library's entry for a job's `when`: a daily time in its zone, or a period."""
    if isinstance(when, due.Daily):
        return scheduler.every().day.at(when.at.strftime("%H:%M"), job_table.zone_name(when))
    interval = timedelta(minutes=job_table.TICK_MINUTES) if isinstance(when, job_table.EveryTick) else when.interval
    return scheduler.every(max(1, round(interval.total_seconds()))).seconds


def capture_run(config: Config, env: Mapping[str, str]) -> Callable[[], str]:
    settings = agents_folders(config.capture, env)  # read the roots once, at start

    def run() -> str:

        with Brain.open(config.db_path, config=config) as brain:
            return run_capture(brain, settings=settings).summary()

    return run


def retention_run(config: Config, env: Mapping[str, str]) -> Callable[[], str]:
    def run() -> str:

        with Brain.open(config.db_path, config=config) as brain:
            return summary(apply(brain))

    return run


def sync_run(config: Config, env: Mapping[str, str]) -> Callable[[], str]:
    dsn, size = resolve_dsn(None, config), batch_size_from(config)

    def run() -> str:

        with Brain.open(config.db_path, embedder="none", config=config) as brain:
            return push(brain, dsn, batch_size=size).summary()

    return run


def folder_run(config: Config, env: Mapping[str, str]) -> Callable[[], str]:
    settings = folder.FolderSettings.from_config(config, env)  # a bad [sync.folder] stops the daemon at start

    def run() -> str:

        with Brain.open(config.db_path, config=config) as brain:
            report = folder.sync(brain, settings)
        if report.failures:
            raise MaxmemError(f"{report.summary()}; {'; '.join(report.failures)}")
        return report.summary()

    return run


def backup_run(config: Config, env: Mapping[str, str]) -> Callable[[], str]:
    def run() -> str:

        result = create_backup(config.db_path, config=config)
        return (f"backup: {result.memories} memories to {result.path}"
                + (f", {len(result.removed)} old backup(s) removed" if result.removed else ""))

    return run


def embed_run(config: Config, env: Mapping[str, str]) -> Callable[[], str]:
    """Vectors for the memories stored without one (what capture and the hooks stored,
    what was stored while the API was down), [embed] max_seconds at most a run; a
    backlog bigger than one budget goes on at the next tick."""
    seconds, size = config.embed.max_seconds, config.embed.batch_size

    def run() -> str:

        with Brain.open(config.db_path, config=config) as brain:
            if brain.embedder is None:
                return "embed: no embedder configured; memories stay keyword-only"
            if not brain.pending_count():
                return "embed: nothing pending"
            return brain.embed_pending(max_seconds=seconds, batch_size=size).summary()

    return run


def doctor_run(config: Config, env: Mapping[str, str] | None = None,
               schedules: Mapping[str, due.Schedule] | None = None) -> Callable[[], str]:
    """`maxmem doctor`: a check that needs attention is raised, so it is logged as an error."""

    def run() -> str:
        failing = [c for c in run_checks(config, env=env, schedules=schedules)["checks"] if not c["ok"]]
        if failing:
            raise MaxmemError("; ".join(f"{c['name']}: {c['detail']}" for c in failing))
        return "doctor: every check ok"

    return run


# What each job in maxmem.jobs.table.JOBS runs (doctor's is built last, by `default_jobs`).
RUNNERS: dict[str, Callable[[Config, Mapping[str, str]], Callable[[], str]]] = {
    "capture": capture_run, "embed": embed_run, "retention": retention_run, "sync": sync_run,
    "sync-folder": folder_run, "backup": backup_run,
}


def instance_name(declared: job_table.Declared, config: Config, env: Mapping[str, str]) -> str:
    """The name its runs are recorded under: "sync:me@db.lan:5432/brain" for sync, per target."""
    if declared.name == "sync":
        return job_name("sync", target_name(resolve_dsn(None, config)))
    return declared.name


def describe(declared: job_table.Declared, when: job_table.When) -> str:
    return f"{declared.what}, {when.describe()}"


def build(declared: job_table.Declared, config: Config, env: Mapping[str, str],
          run: Callable[[], str] | None = None) -> Job:
    """A job of the table with its runner; its schedule read from the config first, so a
    bad key stops the daemon at start."""
    run = run or RUNNERS[declared.name](config, env)
    when = declared.when(config)
    return Job(instance_name(declared, config, env), when, run, describe(declared, when), records=declared.records)


def capture_job(config: Config, env: Mapping[str, str]) -> Job:
    return build(job_table.BY_NAME["capture"], config, env)


def embed_job(config: Config) -> Job:
    return build(job_table.BY_NAME["embed"], config, {})


def retention_job(config: Config) -> Job:
    return build(job_table.BY_NAME["retention"], config, {})


def sync_job(config: Config, env: Mapping[str, str]) -> Job | None:
    """Push to PostgreSQL every [sync.postgres] interval_minutes (15), when a DSN is set."""
    declared = job_table.BY_NAME["sync"]
    return build(declared, config, env) if declared.enabled(config, env) else None


def backup_job(config: Config) -> Job:
    return build(job_table.BY_NAME["backup"], config, {})


def doctor_job(config: Config, env: Mapping[str, str] | None = None,
               schedules: Mapping[str, due.Schedule] | None = None) -> Job:
    return build(job_table.BY_NAME["doctor"], config, env or {}, doctor_run(config, env, schedules))


def default_jobs(config: Config, env: Mapping[str, str]) -> list[Job]:
    """The jobs `maxmem daemon` runs: maxmem.jobs.table.JOBS that this config enables, in order."""
    built = [build(d, config, env) for d in job_table.enabled(config, env) if d.name != "doctor"]
    # The doctor job checks brain.db and the jobs' runs, not the scheduler's own log
    # (the tick it runs in has not written its line yet): no env, no loop checks.
    return [*built, doctor_job(config, None, {job.name: job.due for job in built if job.due is not None})]


EVERY_TICK_DUE = {"due": True, "at": None, "reason": "runs at every tick"}


def listing(config: Config, env: Mapping[str, str], runs: Mapping[str, Mapping[str, Any]],
            now: datetime) -> list[dict[str, Any]]:
    """`maxmem jobs`: every job of the table, when it runs (and in which zone), whether
    this config runs it, its last run (`health.last_runs`) and when it is next due."""
    rows = []
    for declared in job_table.JOBS:
        on = declared.enabled(config, env)
        name = instance_name(declared, config, env) if on else declared.name
        when = declared.when(config)
        run = runs.get(name) or {}
        schedule_ = job_table.due_schedule(when)
        status = due.check(schedule_, run.get("last_ok"), now) if on and schedule_ is not None else None
        rows.append({
            "name": name, "what": declared.what, "runs": declared.runs, "enabled": on,
            "off": "" if on else f"needs {declared.needs}",
            "when": job_table.every_text(when), "zone": job_table.zone_name(when),
            "last_run": run.get("at"), "last_ok": run.get("ok") if run.get("at") else None,
            "last_success": run.get("last_ok"), "last_detail": run.get("detail") or "",
            "next_due": status.to_dict() if status else (EVERY_TICK_DUE if on else None),
        })
    return rows


def job_schedules(config: Config, env: Mapping[str, str]) -> dict[str, due.Schedule]:
    """job name -> when it is due (maxmem.jobs.due), as the daemon runs it; empty when the
    config cannot make the jobs (that config error is the daemon's to report)."""
    try:
        return {job.name: job.due for job in default_jobs(config, env) if job.due is not None}
    except MaxmemError:
        return {}


def run_job(job: Job, config: Config | None = None) -> str | None:
    """Run one job now; log and return its summary (None when it failed). Given the config,
    a job that does not record its own runs is recorded in its brain.db (so doctor sees
    the daemon's ticks as it sees the scheduler's)."""
    summary, error = _run(job)
    if config is not None and not job.records:
        db = Database(Path(config.db_path).expanduser(), busy_timeout_ms=config.busy_timeout_ms, key=config.key)
        try:
            record_run(db, job.name, error is None, summary or error or "")
        finally:
            db.close()
    return summary


@dataclass(frozen=True)
class Outcome:
    job: str
    status: str  # ran, failed, not-due, busy
    detail: str


def run_due(jobs: Sequence[Job], config: Config, lock_dir: Path | None = None,
            clock: Clock | None = None, if_due: bool = True) -> list[Outcome]:
    """Run, one after the other, the jobs that are due now (all of them if not `if_due`).

    A job that is still running in another process (an earlier tick, the daemon) holds
    its lock in `lock_dir`, and is skipped ("busy"). Jobs that do not record their own
    runs are recorded here, so their due time moves on.
    """

    clock = clock or Clock()
    db = Database(Path(config.db_path).expanduser(), busy_timeout_ms=config.busy_timeout_ms, key=config.key)
    outcomes: list[Outcome] = []
    try:
        migrate(db, clock)  # a first tick on a new machine: the jobs create brain.db anyway
        for job in jobs:
            if if_due and job.due is not None:
                status = due.status_for(job.due, last_runs(db), job.name, clock)
                if not status.due:
                    log.debug("%s: not due: %s", job.name, status.reason)
                    outcomes.append(Outcome(job.name, "not-due", status.reason))
                    continue
            with _job_lock(lock_dir, job.name) as held:
                if not held:
                    log.info("%s: still running in another process; skipped", job.name)
                    outcomes.append(Outcome(job.name, "busy", "still running in another process"))
                    continue
                summary, error = _run(job)
            if not job.records:
                record_run(db, job.name, error is None, summary or error or "", clock)
            outcomes.append(Outcome(job.name, "ran" if error is None else "failed",
                                    (summary if error is None else error) or ""))
    finally:
        db.close()
    return outcomes


class _job_lock:
    """flock on lock_dir/<job>.lock, not waiting; a context manager giving whether it is held."""

    def __init__(self, lock_dir: Path | None, name: str) -> None:
        self.path = lock_dir / f"{name.replace('/', '_').replace(':', '_')}.lock" if lock_dir else None
        self.fd: int | None = None

    def __enter__(self) -> bool:
        if self.path is None:
            return True

        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self.fd)
            self.fd = None
            return False
        return True

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the lock
            self.fd = None


def _run(job: Job) -> tuple[str | None, str | None]:
    """(summary, None) or (None, the one-line reason it failed); never raises."""
    try:
        summary = job.run()
    except Exception as exc:  # a bad run must not stop the other jobs
        log.error("%s failed: %s", job.name, exc)
        log.debug("%s failed", job.name, exc_info=True)
        return None, str(exc) or exc.__class__.__name__
    log.info("%s", summary)
    return summary, None


def run_daemon(jobs: Sequence[Job], stop: threading.Event | None = None, run_now: bool = True,
               scheduler: schedule.Scheduler | None = None, config: Config | None = None) -> None:
    """Run `jobs` on their schedules until `stop` is set (Ctrl-C in the CLI).

    run_now: run every job once at start (a daemon started after a reboot catches up).
    """
    stop = stop or threading.Event()
    scheduler = scheduler or schedule.Scheduler()
    for job in jobs:
        entry(job.when, scheduler).do(run_job, job, config).tag(job.name)
        log.info("daemon: %s — %s", job.name, job.description or "scheduled")
    if run_now:
        for job in jobs:
            if stop.is_set():
                return
            run_job(job, config)
    while not stop.is_set():
        scheduler.run_pending()
        idle = scheduler.idle_seconds
        stop.wait(timeout=max(1.0, min(60.0, idle if idle is not None else 60.0)))
