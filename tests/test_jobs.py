"""The one job table (maxmem.jobs.table): what the daemon schedules, what `--if-due` runs at a
given clock time, what doctor and `maxmem jobs` read, with the machine in a zone far
from New York."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from datetime import time as wall
from zoneinfo import ZoneInfo

import pytest
import schedule
from test_cli import run

from maxmem import Brain, Config, FixedClock
from maxmem.doctor import DEFAULT_MAX_AGE_HOURS, JOB_COMMANDS
from maxmem.errors import ConfigError
from maxmem.jobs import table as job_table
from maxmem.jobs.daemon import RUNNERS, default_jobs, entry, job_schedules, listing, run_due
from maxmem.jobs.due import Daily, Every
from maxmem.jobs.runs import last_runs, record_run

NY = ZoneInfo("America/New_York")
DSN = {"MAXMEM_PG_DSN": "postgresql://me@db.lan:5432/brain"}


def with_dsn(config: Config) -> Config:
    """The config with a DSN, as load_config reads it with MAXMEM_PG_DSN set."""
    return config.with_(sync_postgres=replace(config.sync_postgres, dsn=DSN["MAXMEM_PG_DSN"]))


@pytest.fixture(autouse=True)
def far_from_new_york(monkeypatch):
    """The machine's zone is Auckland (UTC+13 in December): none of this may depend on it."""
    monkeypatch.setenv("TZ", "Pacific/Auckland")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def env(tmp_path):
    return {"OPENCLAW_STATE_DIR": str(tmp_path / "oc"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
            "CODEX_HOME": str(tmp_path / "codex")}


def ny(y, m, d, hh, mm=0):
    return datetime(y, m, d, hh, mm, tzinfo=NY).astimezone(UTC)


def entries(jobs):
    """(name, period in seconds or None, daily time, zone) of each job's `schedule` entry."""
    out = []
    for job in jobs:
        e = entry(job.when, schedule.Scheduler())
        daily = e.unit == "days"
        out.append((job.name, None if daily else e.interval * {"seconds": 1, "minutes": 60}[e.unit],
                    e.at_time.strftime("%H:%M") if daily else None,
                    str(e.at_time_zone) if daily and e.at_time_zone else None))
    return out


def test_each_job_is_declared_once_and_the_daemon_runs_them_in_the_tables_order(tmp_path, env):
    names = [job.name for job in job_table.JOBS]
    assert names == ["capture", "embed", "retention", "sync", "sync-folder", "backup", "doctor"]
    assert set(RUNNERS) | {"doctor"} == set(names)  # every declared job has its runner, no other
    config = Config(db_path=tmp_path / "brain.db")
    assert [j.name for j in default_jobs(config, env)] == ["capture", "embed", "retention", "backup", "doctor"]
    assert [j.name for j in default_jobs(with_dsn(config), env)] == [
        "capture", "embed", "retention", "sync:me@db.lan:5432/brain", "backup", "doctor"]
    shared = Config.from_tables({"sync": {"folder": {"dir": str(tmp_path)}}}, db_path=tmp_path / "brain.db")
    assert [(j.name, j.when.describe()) for j in default_jobs(shared, env) if j.name.startswith("sync")] == [
        ("sync-folder", "every 15 min")]
    # doctor reads its freshness limits and its hints from the same table
    assert DEFAULT_MAX_AGE_HOURS == {"capture": 6, "retention": 36, "sync": 6, "sync-folder": 6, "backup": 36}
    assert JOB_COMMANDS["retention"] == "maxmem retain --apply" and set(JOB_COMMANDS) == set(names)


def test_the_daemons_schedule_entries(tmp_path, env):
    config = Config(db_path=tmp_path / "brain.db")
    assert entries(default_jobs(with_dsn(config), env)) == [
        ("capture", 7200, None, None),
        ("embed", 900, None, None),
        ("retention", None, "03:00", "America/New_York"),
        ("sync:me@db.lan:5432/brain", 900, None, None),
        ("backup", None, "04:00", "America/New_York"),
        ("doctor", 3600, None, None),
    ]
    moved = Config.from_tables({
        "capture": {"interval_hours": 0.5}, "retention": {"schedule": "02:30", "timezone": "Europe/Paris"},
        "backup": {"schedule": "05:15"}, "sync": {"postgres": {"interval_minutes": 7}}}, db_path=tmp_path / "brain.db")
    assert entries(default_jobs(with_dsn(moved), env)) == [
        ("capture", 1800, None, None),
        ("embed", 900, None, None),
        ("retention", None, "02:30", "Europe/Paris"),
        ("sync:me@db.lan:5432/brain", 420, None, None),
        ("backup", None, "05:15", "Europe/Paris"),  # backups follow retention's zone
        ("doctor", 3600, None, None),
    ]
    own_zone = Config.from_tables({"backup": {"timezone": "Asia/Tokyo"}}, db_path=tmp_path / "brain.db")
    assert entries(default_jobs(own_zone, env))[3] == ("backup", None, "04:00", "Asia/Tokyo")


def test_the_daemons_daily_entry_fires_at_new_york_time_on_an_auckland_machine(tmp_path, env):
    """`schedule` works in the machine's local time: its next run, read in New York, is 03:00."""
    config = Config(db_path=tmp_path / "brain.db")
    retention = next(j for j in default_jobs(config, env) if j.name == "retention")
    scheduler = schedule.Scheduler()
    entry(retention.when, scheduler).do(lambda: None)
    next_run = scheduler.jobs[0].next_run.astimezone()  # naive local (Auckland) -> aware
    assert next_run.astimezone(NY).time() == wall(3, 0)
    assert timedelta(0) < next_run - datetime.now().astimezone() <= timedelta(days=1)


def test_what_a_tick_runs_at_given_clock_times(tmp_path, env):
    """The real jobs' due schedules, with stand-in work, ticked at chosen New York times
    (December: 03:00 New York is 08:00 UTC, 21:00 in Auckland)."""
    config = Config(db_path=tmp_path / "brain.db", embedder="none")
    schedules = {j.name: j for j in default_jobs(config, env)}
    ran: list[str] = []
    jobs = [type(j)(j.name, j.when, (lambda name=j.name: ran.append(name) or f"{name}: ok"), records=False)
            for j in schedules.values()]

    def tick(at):
        ran.clear()
        run_due(jobs, config, lock_dir=tmp_path / "locks", clock=FixedClock(at))
        return list(ran)

    assert tick(ny(2026, 12, 3, 2, 0)) == ["capture", "embed", "retention", "backup", "doctor"]  # never run
    assert tick(ny(2026, 12, 3, 2, 15)) == ["embed"]  # an every-tick job; the others are not due
    assert tick(ny(2026, 12, 3, 3, 0)) == ["embed", "retention", "doctor"]  # 03:00 New York; an hour on
    assert tick(ny(2026, 12, 3, 3, 15)) == ["embed"]
    assert tick(ny(2026, 12, 3, 4, 0)) == ["capture", "embed", "backup", "doctor"]  # 2 h on; 04:00 backup
    assert tick(ny(2026, 12, 3, 23, 45)) == ["capture", "embed", "doctor"]  # New York's evening: no daily job
    assert tick(ny(2026, 12, 4, 0, 30)) == ["embed"]  # doctor 45 min after its last run: not yet
    assert tick(ny(2026, 12, 4, 2, 59)) == ["capture", "embed", "doctor"]  # retention: still yesterday's slot
    assert tick(ny(2026, 12, 4, 3, 1)) == ["embed", "retention"]


def test_the_due_schedules_doctor_checks_come_from_the_same_table(tmp_path, env):
    config = Config(db_path=tmp_path / "brain.db")
    assert job_schedules(with_dsn(config), env) == {
        "capture": Every(timedelta(hours=2)), "retention": Daily(wall(3, 0), NY),
        "sync:me@db.lan:5432/brain": Every(timedelta(minutes=15)), "backup": Daily(wall(4, 0), NY),
        "doctor": Every(timedelta(hours=1))}  # embed: at every tick, never overdue
    # A bad schedule stops the config being read at all: no job runs on a guess.
    with pytest.raises(ConfigError, match=r"^\[retention\] schedule = '3 am' must be a time of day like 03:00$"):
        Config.from_tables({"retention": {"schedule": "3 am"}})
    with pytest.raises(ConfigError, match=r"^\[sync.postgres\] interval_minutes = 0 must be a whole number from 1 "):
        Config.from_tables({"sync": {"postgres": {"interval_minutes": 0}}})


def test_listing_says_last_run_and_next_due(tmp_path, env):
    config = Config(db_path=tmp_path / "brain.db", embedder="none")
    with Brain.open(config.db_path, embedder="none") as brain:
        record_run(brain.db, "retention", True, "retention: deleted 0", FixedClock(ny(2026, 12, 3, 3, 5)))
        record_run(brain.db, "capture", False, "disk full", FixedClock(ny(2026, 12, 3, 9)))
        runs = last_runs(brain.db)
    rows = {r["name"]: r for r in listing(config, env, runs, ny(2026, 12, 3, 10))}
    assert list(rows) == ["capture", "embed", "retention", "sync", "sync-folder", "backup", "doctor"]
    assert rows["retention"]["when"] == "daily at 03:00" and rows["retention"]["zone"] == "America/New_York"
    assert rows["retention"]["next_due"] == {"due": False, "at": "2026-12-04T08:00:00.000Z",
                                             "reason": rows["retention"]["next_due"]["reason"]}
    assert rows["capture"]["last_ok"] is False and rows["capture"]["next_due"]["due"] is True
    assert rows["embed"]["next_due"]["reason"] == "runs at every tick"
    assert rows["sync"]["enabled"] is False and rows["sync"]["next_due"] is None and "DSN" in rows["sync"]["off"]
    assert rows["sync-folder"]["enabled"] is False and "sync folder DIR" in rows["sync-folder"]["off"]
    assert rows["backup"]["last_run"] is None and rows["backup"]["next_due"]["due"] is True


def test_maxmem_jobs_lists_the_table_as_text_and_json(tmp_path):
    db = str(tmp_path / "brain.db")
    r = run("--db", db, "jobs")  # no brain.db yet: listed, nothing created
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["JOB", "WHEN", "ZONE", "LAST", "RUN", "NEXT", "DUE"]
    assert [line.split()[0] for line in lines[1:]] == ["capture", "embed", "retention", "sync", "sync-folder",
                                                       "backup", "doctor"]
    assert lines[3].split() == ["retention", "daily", "at", "03:00", "America/New_York", "never", "now"]
    assert not (tmp_path / "brain.db").exists()
    assert run("--db", db, "--embedder", "none", "daemon", "--once", "--job", "retention").exit_code == 0
    rows = json.loads(run("--db", db, "jobs", "--json").stdout)
    retention = next(row for row in rows if row["name"] == "retention")
    assert retention["last_ok"] is True and retention["runs"] == "maxmem retain --apply"
    assert retention["next_due"]["due"] is False
    assert datetime.fromisoformat(retention["next_due"]["at"]).astimezone(NY).time() == wall(3, 0)
    assert run("--db", db, "jobs", "extra").exit_code == 2
