"""Time in one format everywhere: aware UTC datetimes, stored as fixed-width ISO-8601 text.

"YYYY-MM-DDTHH:MM:SS.mmmZ" sorts as text in the same order as time, so SQL range
filters and ORDER BY work on the stored strings directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .errors import ConfigError, InvalidInput

UTC = UTC
MAX_DAYS = 36_525  # the longest finite duration: 100 years
FOREVER = ("forever", "never", "inf", "infinite", "none")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(h|d|w|y)?\s*$", re.IGNORECASE)
_UNIT_DAYS = {"h": 1 / 24, "d": 1, "w": 7, "y": 365}


class Clock:
    """The source of "now". Tests pass a FixedClock; nothing else calls datetime.now()."""

    def now(self) -> datetime:
        return datetime.now(UTC)


@dataclass
class FixedClock(Clock):
    """A clock that stands still until moved: for tests and reproducible jobs."""

    at: datetime

    def __post_init__(self) -> None:
        self.at = parse_time(self.at)

    def now(self) -> datetime:
        return self.at

    def advance(self, **delta: float) -> None:
        self.at = self.at + timedelta(**delta)


def iso(dt: datetime) -> str:
    """Format an aware datetime as fixed-width UTC ISO-8601 with milliseconds."""
    dt = dt.astimezone(UTC)
    # Not strftime: its %Y gives "999", not "0999", and the text must keep its width.
    return (f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:"
            f"{dt.second:02d}.{dt.microsecond // 1000:03d}Z")


def parse_time(value: str | datetime | date | int | float) -> datetime:
    """Read a time the way users and transcripts write it; naive times are taken as UTC.

    Accepts datetimes, dates, epoch seconds or milliseconds, and ISO-8601 or other
    unambiguous date strings.
    """
    if isinstance(value, datetime):
        try:
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        except OverflowError:  # 0001-01-01T00:00+05:00 is before the first representable UTC time
            raise InvalidInput(f"time out of range: {value.isoformat()}") from None
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, bool):
        raise InvalidInput(f"not a time: {value!r}")
    if isinstance(value, (int, float)):
        seconds = value / 1000 if abs(value) > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            raise InvalidInput(f"not a time: {value!r}") from None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise InvalidInput("empty time: give a date like 2026-11-30 or 2026-11-30T09:00:00Z")
        try:
            return parse_time(datetime.fromisoformat(text.replace("Z", "+00:00")))
        except ValueError:
            pass
        try:
            from dateutil import parser as date_parser

            return parse_time(date_parser.parse(text))
        except (ValueError, OverflowError, TypeError):
            raise InvalidInput(
                f"cannot read {text[:60]!r} as a time: use ISO-8601, e.g. 2026-11-30T09:00:00Z"
            ) from None
    raise InvalidInput(f"not a time: {value!r}")


def to_iso(value: str | datetime | date | int | float) -> str:
    """parse_time then iso: the stored form of any accepted time."""
    return iso(parse_time(value))


def parse_days(value: Any, where: str) -> float | None:
    """Days from 90, "90d", "12w", "2y", "36h"; None for "forever"."""
    if value is None or (isinstance(value, str) and value.strip().lower() in FOREVER):
        return None
    if isinstance(value, bool):
        raise ConfigError(f"{where} = {value!r}: give days (90), a duration (90d, 12w, 2y) or \"forever\"")
    if isinstance(value, (int, float)):
        days = float(value)
    else:
        match = _DURATION.match(str(value))
        if not match:
            raise ConfigError(f"{where} = {value!r}: give days (90), a duration (90d, 12w, 2y) or \"forever\"")
        days = float(match.group(1)) * _UNIT_DAYS[(match.group(2) or "d").lower()]
    if days <= 0:
        raise ConfigError(f"{where} = {value!r} must be more than 0 (or \"forever\")")
    if not days <= MAX_DAYS:  # NaN too; beyond this no date can be computed
        raise ConfigError(f"{where} = {value!r}: at most {MAX_DAYS} days (100 years), or \"forever\"")
    return days


def zone(name: Any, where: str = "[retention] timezone") -> tzinfo:
    """The time zone called `name` (an IANA name like America/New_York, or UTC);
    ConfigError naming `where` when there is none."""
    if str(name).upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"{where} {name!r} is not a time zone name like America/New_York") from None


def parse_since(value: Any, now: datetime) -> datetime:
    """A start time from "1d", "12h", "2w" (back from now) or a time ("2026-11-01")."""
    if isinstance(value, str) and _DURATION.match(value) and not value.strip().isdigit():
        try:
            days = parse_days(value, "--since")
        except ConfigError as exc:
            raise InvalidInput(str(exc)) from None
        return now - timedelta(days=days or 0)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 100_000:
        return now - timedelta(days=float(value))
    return parse_time(value)
