"""Retention's policy: how long each category is kept (`[retention]`), and the first moment
each category still keeps (`cutoff`), counted in calendar days of the policy's time zone."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta, tzinfo
from pathlib import Path
from typing import Any

from ..clock import UTC, iso, parse_days
from ..config import zone
from ..errors import ConfigError
from ..jobs.table import NEW_YORK
from ..memory import CATEGORIES

DEFAULT_DAYS: dict[str, int | None] = {"core": None, "project": None, "daily": 90, "conversation": 30}
ARCHIVE_DAYS = 730
TIMEZONE = NEW_YORK  # the zone of retention's day, and of its daily run (maxmem.jobs)
BATCH_SIZE = 500
VACUUM_SHARE = 0.25
TRANSCRIPT_CATEGORY = "conversation"

# Never expire: pinned, or written by a commit trigger (source or metadata says so).
PROTECTED = "(pinned = 1 OR source = 'trigger' OR json_extract(metadata, '$.trigger') IS NOT NULL)"


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
