"""`maxmem daemon`: the cron jobs on a schedule, for machines without cron.

Each job is a name, a schedule and a function that opens brain.db, does its work
and returns a one-line summary. A failing job is logged and retried at its next
time; it never stops the daemon or the other jobs.

Jobs are listed in `default_jobs`. Capture is there; retention (03:00
America/New_York) and sync add themselves in the marked place.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import schedule

from .backup import create_backup, keep_count
from .brain import Brain
from .capture import CaptureSettings, run_capture
from .config import Config
from .doctor import run_checks
from .errors import ConfigError, MaxmemError
from .retention import TIMEZONE, apply, daily_at, load_policy, summary
from .sync.postgres import batch_size_from, export, resolve_dsn, sync_interval, target_name

log = logging.getLogger("maxmem")


@dataclass(frozen=True)
class Job:
    name: str
    when: Callable[[schedule.Scheduler], schedule.Job]  # e.g. lambda s: s.every(2).hours
    run: Callable[[], str]  # does the work, returns a one-line summary
    description: str = ""


def capture_job(config: Config, env: Mapping[str, str]) -> Job:
    settings = CaptureSettings.from_config(config, env)  # read the roots once, at start

    def run() -> str:
        with Brain.open(config.db_path, config=config) as brain:
            return run_capture(brain, settings=settings).summary()

    minutes = max(1, round(settings.interval_hours * 60))
    return Job("capture", lambda s: s.every(minutes).minutes, run,
               f"transcripts into conversation memories every {settings.interval_hours:g} h")


def retention_job(config: Config) -> Job:
    load_policy(config)  # a bad [retention] section stops the daemon at start, not at 03:00
    section = config.section("retention")
    at, tz = daily_at(section.get("schedule", "03:00")), str(section.get("timezone", TIMEZONE))

    def run() -> str:
        with Brain.open(config.db_path, config=config) as brain:
            return summary(apply(brain))

    return Job("retention", lambda s: s.every().day.at(at, tz), run,
               f"archive and delete expired memories daily at {at} {tz}")


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

    return Job("sync", lambda s: s.every(minutes).minutes, run,
               f"export to PostgreSQL {target_name(dsn)} every {minutes} min")


def backup_job(config: Config) -> Job:
    """A checked, rotated backup daily at [backup] schedule (04:00, local time)."""
    keep_count(config)  # a bad [backup] section stops the daemon at start
    at = str(config.section("backup").get("schedule", "04:00")).strip()
    if not re.match(r"^(?:[01]\d|2[0-3]):[0-5]\d$", at):
        raise ConfigError(f"[backup] schedule = {at!r} must be a time of day like 04:00")

    def run() -> str:
        result = create_backup(config.db_path, config=config)
        return (f"backup: {result.memories} memories to {result.path}"
                + (f", {len(result.removed)} old backup(s) removed" if result.removed else ""))

    return Job("backup", lambda s: s.every().day.at(at), run, f"checked, rotated backup daily at {at}")


def embed_job(config: Config) -> Job:
    """Vectors for memories stored while the embedding API failed, hourly."""

    def run() -> str:
        with Brain.open(config.db_path, config=config) as brain:
            if brain.embedder is None or not brain.pending_count():
                return "embed: nothing pending"
            done = brain.embed_pending()
            return f"embed: {done} memories embedded, {brain.pending_count()} still pending"

    return Job("embed", lambda s: s.every().hour, run, "backfill pending embeddings every hour")


def doctor_job(config: Config) -> Job:
    """`maxmem doctor` hourly: a check that needs attention is logged as an error."""

    def run() -> str:
        failing = [c for c in run_checks(config)["checks"] if not c["ok"]]
        if failing:
            raise MaxmemError("; ".join(f"{c['name']}: {c['detail']}" for c in failing))
        return "doctor: every check ok"

    return Job("doctor", lambda s: s.every().hour, run, "health checks every hour")


def default_jobs(config: Config, env: Mapping[str, str]) -> list[Job]:
    """The jobs `maxmem daemon` runs."""
    jobs = [capture_job(config, env), retention_job(config)]
    # ---- more jobs go here, e.g. --------------------------------------------------
    sync = sync_job(config, env)
    if sync is not None:
        jobs.append(sync)
    jobs += [embed_job(config), backup_job(config), doctor_job(config)]
    # -------------------------------------------------------------------------------
    return jobs


def run_job(job: Job) -> str | None:
    """Run one job now; log and return its summary (None when it failed)."""
    try:
        summary = job.run()
    except Exception as exc:  # a bad run must not kill the daemon
        log.error("%s failed: %s", job.name, exc)
        log.debug("%s failed", job.name, exc_info=True)
        return None
    log.info("%s", summary)
    return summary


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
