"""`maxmem daemon`: the cron jobs on a schedule, for machines without cron.

Each job is a name, a schedule and a function that opens brain.db, does its work
and returns a one-line summary. A failing job is logged and retried at its next
time; it never stops the daemon or the other jobs.

Jobs are listed in `default_jobs`. Each also carries a `due` schedule
(maxmem.due): `maxmem daemon --once --if-due`, run by any scheduler's tick (cron,
a systemd timer, launchd), runs only the jobs that are due from their last success
recorded in brain.db, so retention runs once per New York day after 03:00 there
whatever the machine's zone, and a night missed asleep is caught up at the next tick.
The embed job has none: it runs at every tick, right after capture (capture stores
without vectors), within its [embed] max_seconds budget.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import schedule

from . import due
from .backup import create_backup, keep_count
from .brain import EMBED_BATCH, Brain
from .capture import CaptureSettings, run_capture
from .clock import Clock
from .config import Config
from .db import Database
from .doctor import run_checks
from .errors import ConfigError, MaxmemError
from .health import job_name, last_runs, record_run
from .migrations import migrate
from .retention import TIMEZONE, apply, daily_at, load_policy, summary
from .sync.postgres import batch_size_from, export, resolve_dsn, sync_interval, target_name

log = logging.getLogger("maxmem")

EMBED_SECONDS = 600.0  # [embed] max_seconds: one run's share of a 15-minute tick
EMBED_EVERY_MINUTES = 15  # the long-running daemon's embed job, like a scheduler's tick


@dataclass(frozen=True)
class Job:
    name: str
    when: Callable[[schedule.Scheduler], schedule.Job]  # e.g. lambda s: s.every(2).hours
    run: Callable[[], str]  # does the work, returns a one-line summary
    description: str = ""
    due: due.Schedule | None = None  # for --if-due: when it is due from its last success
    records: bool = True  # the job records its own runs (health.record_run); else run_due does


def capture_job(config: Config, env: Mapping[str, str]) -> Job:

    settings = CaptureSettings.from_config(config, env)  # read the roots once, at start

    def run() -> str:

        with Brain.open(config.db_path, config=config) as brain:
            return run_capture(brain, settings=settings).summary()

    minutes = max(1, round(settings.interval_hours * 60))
    return Job("capture", lambda s: s.every(minutes).minutes, run,
               f"transcripts into conversation memories every {settings.interval_hours:g} h",
               due=due.every(minutes, "[capture] interval_hours"))


def retention_job(config: Config) -> Job:

    load_policy(config)  # a bad [retention] section stops the daemon at start, not at 03:00
    section = config.section("retention")
    at, tz = daily_at(section.get("schedule", "03:00")), str(section.get("timezone", TIMEZONE))

    def run() -> str:

        with Brain.open(config.db_path, config=config) as brain:
            return summary(apply(brain))

    return Job("retention", lambda s: s.every().day.at(at, tz), run,
               f"archive and delete expired memories daily at {at} {tz}",
               due=due.daily(at, tz, "[retention]"))


def sync_job(config: Config, env: Mapping[str, str]) -> Job | None:
    """Export to PostgreSQL every [sync.postgres] interval_minutes (15), when a DSN is set."""

    section = config.section("sync.postgres")
    if not (env.get("MAXMEM_PG_DSN") or section.get("dsn")):
        return None
    dsn = resolve_dsn(None, env.get("MAXMEM_PG_DSN"), config)
    minutes, size = sync_interval(config), batch_size_from(config)

    def run() -> str:

        with Brain.open(config.db_path, embedder="none", config=config) as brain:
            return export(brain, dsn, batch_size=size).summary()

    return Job(job_name("sync", target_name(dsn)), lambda s: s.every(minutes).minutes, run,
               f"export to PostgreSQL {target_name(dsn)} every {minutes} min",
               due=due.every(minutes, "[sync.postgres] interval_minutes"))


def backup_job(config: Config) -> Job:
    """A checked, rotated backup daily at [backup] schedule (04:00) in [backup] timezone
    (default: [retention] timezone, America/New_York, so it follows retention)."""

    keep_count(config)  # a bad [backup] section stops the daemon at start
    at = str(config.section("backup").get("schedule", "04:00")).strip()
    tz = config.section("backup").get("timezone") or config.section("retention").get("timezone", TIMEZONE)
    when = due.daily(at, tz, "[backup]")

    def run() -> str:

        result = create_backup(config.db_path, config=config)
        return (f"backup: {result.memories} memories to {result.path}"
                + (f", {len(result.removed)} old backup(s) removed" if result.removed else ""))

    return Job("backup", lambda s: s.every().day.at(at, str(tz)), run,
               f"checked, rotated backup {when.describe()}", due=when)


def embed_budget(config: Config) -> tuple[float, int]:
    """[embed] max_seconds (600) and batch_size (32): the embed step's time budget per
    run and its batch; ConfigError names a bad value."""
    section = config.section("embed")
    seconds, size = section.get("max_seconds", EMBED_SECONDS), section.get("batch_size", EMBED_BATCH)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
        raise ConfigError(f"[embed] max_seconds = {seconds!r} must be a positive number of seconds")
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= 100_000:
        raise ConfigError(f"[embed] batch_size = {size!r} must be a whole number from 1 to 100000")
    return float(seconds), size


def embed_job(config: Config) -> Job:
    """Vectors for the memories stored without one (what capture and the hooks stored,
    what was stored while the API was down), [embed] max_seconds at most a run.

    It has no due schedule: `daemon --once --if-due` runs it at every tick, right after
    capture (a tick with nothing pending costs a count), and a backlog bigger than one
    budget goes on at the next tick. The long-running daemon runs it every 15 minutes.
    """
    seconds, size = embed_budget(config)  # a bad [embed] section stops the daemon at start

    def run() -> str:

        with Brain.open(config.db_path, config=config) as brain:
            if brain.embedder is None:
                return "embed: no embedder configured; memories stay keyword-only"
            if not brain.pending_count():
                return "embed: nothing pending"
            return brain.embed_pending(max_seconds=seconds, batch_size=size).summary()

    return Job("embed", lambda s: s.every(EMBED_EVERY_MINUTES).minutes, run,
               f"vectors for new memories after capture, at most {seconds:g} s a run", records=False)


def doctor_job(config: Config, env: Mapping[str, str] | None = None,
               schedules: Mapping[str, due.Schedule] | None = None) -> Job:
    """`maxmem doctor` hourly: a check that needs attention is logged as an error."""

    def run() -> str:
        failing = [c for c in run_checks(config, env=env, schedules=schedules)["checks"] if not c["ok"]]
        if failing:
            raise MaxmemError("; ".join(f"{c['name']}: {c['detail']}" for c in failing))
        return "doctor: every check ok"

    return Job("doctor", lambda s: s.every().hour, run, "health checks every hour",
               due=due.every(60, "doctor"), records=False)


def default_jobs(config: Config, env: Mapping[str, str]) -> list[Job]:
    """The jobs `maxmem daemon` runs."""
    # embed right after capture: what capture stored gets its vectors in the same tick
    jobs = [capture_job(config, env), embed_job(config), retention_job(config)]
    # ---- more jobs go here, e.g. --------------------------------------------------
    sync = sync_job(config, env)
    if sync is not None:
        jobs.append(sync)
    jobs += [backup_job(config)]
    # -------------------------------------------------------------------------------
    # The doctor job checks brain.db and the jobs' runs, not the scheduler's own log
    # (the tick it runs in has not written its line yet): no env, no loop checks.
    return [*jobs, doctor_job(config, None, {job.name: job.due for job in jobs if job.due is not None})]


def job_schedules(config: Config, env: Mapping[str, str]) -> dict[str, due.Schedule]:
    """job name -> when it is due (maxmem.due), as the daemon runs it; empty when the
    config cannot make the jobs (that config error is the daemon's to report)."""
    try:
        return {job.name: job.due for job in default_jobs(config, env) if job.due is not None}
    except MaxmemError:
        return {}


def run_job(job: Job) -> str | None:
    """Run one job now; log and return its summary (None when it failed)."""
    return _run(job)[0]


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
    db = Database(Path(config.db_path).expanduser(), busy_timeout_ms=config.busy_timeout_ms)
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
               scheduler: schedule.Scheduler | None = None) -> None:
    """Run `jobs` on their schedules until `stop` is set (Ctrl-C in the CLI).

    run_now: run every job once at start (a daemon started after a reboot catches up).
    """
    stop = stop or threading.Event()
    scheduler = scheduler or schedule.Scheduler()
    for job in jobs:
        job.when(scheduler).do(run_job, job).tag(job.name)
        log.info("daemon: %s — %s", job.name, job.description or "scheduled")
    if run_now:
        for job in jobs:
            if stop.is_set():
                return
            run_job(job)
    while not stop.is_set():
        scheduler.run_pending()
        idle = scheduler.idle_seconds
        stop.wait(timeout=max(1.0, min(60.0, idle if idle is not None else 60.0)))
