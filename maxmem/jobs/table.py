"""The scheduled jobs, each declared once: its name, when it runs, what it runs.

    name       when (default; the config keys that move it)                   runs
    capture    every 2 h ([capture] interval_hours)                           maxmem capture
    embed      every tick, right after capture (15 min in the daemon)         maxmem embed
    retention  daily at 03:00 America/New_York ([retention] schedule, timezone) maxmem retain --apply
    sync       every 15 min ([sync.postgres] interval_minutes), with a DSN    maxmem sync postgres
    sync-folder every 15 min ([sync.folder] interval_minutes), with a dir     maxmem sync folder
    backup     daily at 04:00 in retention's zone ([backup] schedule, timezone) maxmem backup
    doctor     every hour                                                     maxmem doctor

`JOBS` is that table. Everything that schedules or checks a job reads it: the
`schedule`-based `maxmem daemon`, `maxmem daemon --once --if-due` (the one tick
cron, systemd and launchd run every `TICK_MINUTES`), `maxmem doctor` (how old a
job's last success may be, the command that runs it) and `maxmem jobs`. A job's
`when` is read from the config (`job.when(config)`): a `due.Daily` or `due.Every`
(maxmem.jobs.due decides from the last success recorded in brain.db whether it is due),
or `EVERY_TICK` for a job that runs at every tick.

A daily time is read on the wall clock of the zone named beside it, never the
machine's: retention and backups follow America/New_York whatever zone the machine
(or cron) is in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..config import Config
from . import due

TICK_MINUTES = 15  # every scheduler's tick; the daemon's period for an every-tick job
DOCTOR_MINUTES = 60


@dataclass(frozen=True)
class EveryTick:
    """At every scheduler tick (`maxmem daemon --once --if-due` always runs it); the
    long-running daemon runs it every TICK_MINUTES."""

    def describe(self) -> str:
        return f"every tick ({TICK_MINUTES} min)"


EVERY_TICK = EveryTick()
When = due.Daily | due.Every | EveryTick


@dataclass(frozen=True)
class Declared:
    """One job as declared in `JOBS`."""

    name: str
    runs: str  # the command that does the same work by hand
    what: str  # one line for a person
    when: Callable[[Config], When]  # its schedule, from the config (ConfigError names a bad key)
    max_age_hours: float | None = None  # doctor: FAIL when its last success is older ([doctor] max_age_hours)
    records: bool = True  # the job records its own runs (runs.record_run); else the tick does
    enabled: Callable[[Config, Mapping[str, str]], bool] = lambda config, env: True
    needs: str = ""  # what `enabled` asks for, said when the job is off


def capture_every(config: Config) -> due.Every:
    return due.every(max(1, round(config.capture.interval_hours * 60)), "[capture] interval_hours")


def retention_daily(config: Config) -> due.Daily:
    return due.daily(config.retention.schedule, config.retention.timezone, "[retention]")


def backup_daily(config: Config) -> due.Daily:
    """[backup] schedule in [backup] timezone (default: retention's zone, so it follows retention)."""
    return due.daily(config.backup.schedule, config.backup.timezone or config.retention.timezone, "[backup]")


def sync_configured(config: Config, env: Mapping[str, str]) -> bool:
    """A PostgreSQL DSN is set (MAXMEM_PG_DSN, or dsn under [sync.postgres]: load_config reads both)."""
    return bool(config.sync_postgres.dsn)


def folder_configured(config: Config, env: Mapping[str, str]) -> bool:
    """A sync folder is set (dir under [sync.folder]; `maxmem sync folder DIR` sets it)."""
    return bool(config.sync_folder.dir)


# In the order a tick runs them: embed right after capture, so what capture stored gets
# its vectors in the same tick; doctor last, after the others have recorded their runs.
JOBS: tuple[Declared, ...] = (
    Declared("capture", "maxmem capture", "transcripts into conversation memories",
             capture_every, max_age_hours=6),
    Declared("embed", "maxmem embed --max-seconds 600", "vectors for the memories stored without one",
             lambda config: EVERY_TICK, records=False),
    Declared("retention", "maxmem retain --apply", "archive and delete expired memories",
             retention_daily, max_age_hours=36),
    Declared("sync", "maxmem sync postgres", "push the changes to PostgreSQL",
             lambda config: due.every(config.sync_postgres.interval_minutes, "[sync.postgres] interval_minutes"),
             max_age_hours=6, enabled=sync_configured,
             needs="a PostgreSQL DSN (MAXMEM_PG_DSN, or dsn under [sync.postgres])"),
    Declared("sync-folder", "maxmem sync folder", "exchange changes with your other machines through the synced folder",
             lambda config: due.every(config.sync_folder.interval_minutes, "[sync.folder] interval_minutes"),
             max_age_hours=6, enabled=folder_configured,
             needs="a sync folder (maxmem sync folder DIR, or dir under [sync.folder])"),
    Declared("backup", "maxmem backup", "a checked, rotated copy of brain.db",
             backup_daily, max_age_hours=36),
    Declared("doctor", "maxmem doctor", "health checks; a check that needs attention is logged",
             lambda config: due.every(DOCTOR_MINUTES, "doctor"), records=False),
)
BY_NAME = {job.name: job for job in JOBS}


def declared(name: str) -> Declared:
    """The job called `name` ("sync:me@db/brain" is the sync job)."""
    return BY_NAME[name.split(":")[0]]


def enabled(config: Config, env: Mapping[str, str]) -> list[Declared]:
    """The jobs this config runs, in tick order (sync only with a DSN, sync-folder with a folder)."""
    return [job for job in JOBS if job.enabled(config, env)]


def due_schedule(when: When) -> due.Schedule | None:
    """What `--if-due` checks against the last success; None: due at every tick."""
    return None if isinstance(when, EveryTick) else when


def every_text(when: When) -> str:
    """When it runs, without the zone: "daily at 03:00", "every 2 h", "every tick (15 min)"."""
    if isinstance(when, due.Daily):
        return f"daily at {when.at.strftime('%H:%M')}"
    return when.describe()


def zone_name(when: When) -> str | None:
    """The zone a daily time is read in (None for an interval)."""
    if isinstance(when, due.Daily):
        return str(getattr(when.tz, "key", None) or when.tz)
    return None


def max_age_hours() -> dict[str, float]:
    """job -> hours after which doctor fails a job whose last success is older."""
    return {job.name: job.max_age_hours for job in JOBS if job.max_age_hours is not None}


def commands() -> dict[str, str]:
    """job -> the command that runs it by hand."""
    return {job.name: job.runs for job in JOBS}
