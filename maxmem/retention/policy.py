"""Retention's policy: how long each category is kept (`[retention]`), and the first moment
each category still keeps (`cutoff`), counted in calendar days of the policy's time zone."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta, tzinfo
from pathlib import Path

from ..clock import UTC, iso, zone
from ..memory import CATEGORIES
from ..settings import RetentionSettings

DEFAULTS = RetentionSettings()
DEFAULT_DAYS: dict[str, float | None] = {c: getattr(DEFAULTS, c) for c in CATEGORIES}
TRANSCRIPT_CATEGORY = "conversation"

# Never expire: pinned, or written by a commit trigger (source or metadata says so).
PROTECTED = "(pinned = 1 OR source = 'trigger' OR json_extract(metadata, '$.trigger') IS NOT NULL)"


@dataclass(frozen=True)
class Policy:
    """How long each category is kept (days; None = forever) and how a run behaves."""

    days: Mapping[str, float | None] = field(default_factory=lambda: dict(DEFAULT_DAYS))
    archive_days: float | None = DEFAULTS.archive_days
    timezone: tzinfo = field(default_factory=lambda: zone(DEFAULTS.timezone))
    batch_size: int = DEFAULTS.batch_size
    vacuum_share: float = DEFAULTS.vacuum_share
    archive_dir: Path | None = None


def load_policy(settings: RetentionSettings | None = None) -> Policy:
    """The policy of `[retention]` (the config's `retention`, read and checked with it)."""
    settings = settings or DEFAULTS
    return Policy({c: getattr(settings, c) for c in CATEGORIES}, settings.archive_days, zone(settings.timezone),
                  settings.batch_size, settings.vacuum_share, settings.archive_dir)


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
