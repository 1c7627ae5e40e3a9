"""When a scheduled job is due: decided by maxmem, not by the scheduler's clock.

cron on Debian and Ubuntu ignores `CRON_TZ`, launchd has no time zone key, and a
laptop that sleeps through 03:00 misses a fixed-time job. So every scheduler only
*ticks* (hourly, or every 15 minutes) and each job asks here whether it is due:

    Daily(time(3, 0), ZoneInfo("America/New_York"))   # once per New York day, after 03:00 there
    Every(timedelta(hours=2))                          # two hours after the last success

A job is due when its last *successful* run (``last_ok:<job>`` in brain.db,
written by `health.record_run`) is older than the latest slot. For `Daily` the
slot is the most recent 03:00 on the zone's wall clock, computed in that zone
whatever the machine's own zone is; across a DST change it is still one instant a
day. A night missed while asleep leaves last_ok before the slot, so the next tick
catches up; a run after the slot makes the job not due until the next day's slot.
For `Every` the slot is `interval` after the last success, less a small tolerance
so a tick a few seconds early does not skip a whole period.

The clock is injected (a `Clock`); nothing here reads the system time or zone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, time, timedelta, tzinfo
from typing import Any

from ..clock import UTC, Clock, iso, parse_time, zone
from ..errors import ConfigError, MaxmemError
from ..settings import time_of_day

# An Every job may run this early (at most): ticks and run times jitter by seconds to minutes.
MAX_TOLERANCE = timedelta(minutes=15)
TOLERANCE_SHARE = 0.1


@dataclass(frozen=True)
class Daily:
    """Once per calendar day of `tz`, at or after `at` on its wall clock."""

    at: time
    tz: tzinfo

    def slot(self, now: datetime) -> datetime:
        """The latest instant <= now that reads `at` in `tz` (a UTC datetime)."""
        local = now.astimezone(self.tz)
        for days in (0, 1, 2):  # 2: a wall time skipped by a DST jump can land after now
            day = local.date() - timedelta(days=days)
            candidate = datetime.combine(day, self.at, tzinfo=self.tz).astimezone(UTC)
            if candidate <= now:
                return candidate
        raise AssertionError("unreachable: a day ago is always in the past")

    def next_slot(self, now: datetime) -> datetime:
        local = now.astimezone(self.tz)
        for days in (0, 1, 2):
            day = local.date() + timedelta(days=days)
            candidate = datetime.combine(day, self.at, tzinfo=self.tz).astimezone(UTC)
            if candidate > now:
                return candidate
        raise AssertionError("unreachable")

    def describe(self) -> str:
        return f"daily at {self.at.strftime('%H:%M')} {getattr(self.tz, 'key', None) or self.tz}"


@dataclass(frozen=True)
class Every:
    """Every `interval` after the last success."""

    interval: timedelta

    @property
    def tolerance(self) -> timedelta:
        return min(MAX_TOLERANCE, self.interval * TOLERANCE_SHARE)

    def describe(self) -> str:
        minutes = self.interval.total_seconds() / 60
        if minutes % 60 == 0:
            return f"every {minutes / 60:g} h"
        return f"every {minutes:g} min"


Schedule = Daily | Every


@dataclass(frozen=True)
class Due:
    """Whether a job is due now, why, and when it is (or was) due."""

    due: bool
    at: datetime  # when it became, or will become, due
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"due": self.due, "at": iso(self.at), "reason": self.reason}


def check(schedule: Schedule, last_ok: str | datetime | None, now: datetime) -> Due:
    """Is a job with this schedule, last successful at `last_ok`, due at `now`?"""
    now = parse_time(now)
    last = _time_or_none(last_ok)
    if isinstance(schedule, Daily):
        slot = schedule.slot(now)
        if last is None:
            return Due(True, slot, f"never run; {schedule.describe()}")
        if last < slot:
            return Due(True, slot, f"last success {iso(last)} is before today's slot {iso(slot)}")
        upcoming = schedule.next_slot(now)
        return Due(False, upcoming, f"done for today (last success {iso(last)}); next {iso(upcoming)}")
    if last is None:
        return Due(True, now, f"never run; {schedule.describe()}")
    next_at = last + schedule.interval
    if now >= next_at - schedule.tolerance:
        return Due(True, next_at, f"last success {iso(last)}, {schedule.describe()}")
    return Due(False, next_at, f"last success {iso(last)}; next at {iso(next_at)}")


def overdue(schedule: Schedule, last_ok: str | datetime | None, now: datetime,
            grace: timedelta) -> bool:
    """Due for longer than `grace`: the scheduler that should run it is not ticking."""
    status = check(schedule, last_ok, now)
    return status.due and _time_or_none(last_ok) is not None and now - status.at > grace


def _time_or_none(value: str | datetime | None) -> datetime | None:
    if value is None or value == "":
        return None
    try:
        return parse_time(value)
    except MaxmemError:
        return None  # an unreadable record counts as never run: the job runs and rewrites it


def daily(at: Any, tz: Any, where: str) -> Daily:
    """A Daily from config values ("03:00", "America/New_York"); ConfigError names `where`."""
    text = time_of_day(at, f"{where} schedule")
    return Daily(time(int(text[:2]), int(text[3:])), zone(tz, f"{where} timezone"))


def every(minutes: float, where: str) -> Every:
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or minutes <= 0:
        raise ConfigError(f"{where} interval must be a positive number of minutes, not {minutes!r}")
    return Every(timedelta(minutes=float(minutes)))


def status_for(schedule: Schedule, runs: Mapping[str, Mapping[str, Any]], job: str,
               clock: Clock) -> Due:
    """`check` with the job's last success taken from `health.last_runs(db)`."""
    return check(schedule, (runs.get(job) or {}).get("last_ok"), clock.now())
