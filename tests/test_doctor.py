"""maxmem doctor: job runs and their age, sizes and growth, permissions; exit codes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import HashEmbedder, run_cli

from maxmem import Brain, Config, FixedClock, InvalidInput
from maxmem.doctor import run_checks
from maxmem.jobs.runs import job_name, last_runs, record_run


@pytest.fixture(autouse=True)
def own_home(tmp_path, monkeypatch):
    """`maxmem doctor` reads the agents' folders and the job logs under HOME: a temp one."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENCLAW_STATE_DIR",
                "MAXMEM_LOG_DIR"):
        monkeypatch.delenv(var, raising=False)


def checks(report: dict) -> dict[str, dict]:
    return {c["name"]: c for c in report["checks"]}


def test_record_run_keeps_the_last_run_and_the_last_success(brain, clock):
    record_run(brain.db, "capture", True, "3 files", clock)
    clock.advance(hours=2)
    record_run(brain.db, "capture", False, "PostgreSQL said:\nline two with postgresql://u:hunter2@h/db", clock)
    run = last_runs(brain.db)["capture"]
    assert run["ok"] is False and run["at"] == "2026-11-30T14:00:00.000Z"
    assert run["last_ok"] == "2026-11-30T12:00:00.000Z"
    assert "\n" not in run["detail"] and "hunter2" not in run["detail"]
    with pytest.raises(InvalidInput):
        record_run(brain.db, "Capture; DROP TABLE", True)
    assert job_name("sync", "me@db.example:5432/brain") == "sync:me@db.example:5432/brain"
    record_run(brain.db, job_name("sync", "we ird\u00e9@h/db"), True, "", clock)


def config_for(path: Path, **tables) -> Config:
    return Config.from_tables(tables, db_path=path, embedder="none")


def test_job_ages_failures_and_required_jobs(tmp_path):
    path = tmp_path / "brain.db"
    clock = FixedClock("2026-11-30T12:00:00Z")
    with Brain.open(path, embedder=HashEmbedder(), clock=clock) as brain:
        brain.remember("something")
        record_run(brain.db, "capture", True, "capture: 2 files", clock)
        record_run(brain.db, "retention", True, "retention: 0 deleted", clock)
        record_run(brain.db, job_name("sync", "me@pg/brain"), False, "PostgreSQL is down", clock)
    report = run_checks(config_for(path), clock=FixedClock("2026-11-30T15:00:00Z"))
    c = checks(report)
    assert c["last capture"]["ok"] and c["last capture"]["detail"].startswith("ok 3.0 h ago")
    assert c["last retention"]["ok"]
    sync = c["last sync:me@pg/brain"]
    assert sync["ok"] and sync["level"] == "warn" and "failed once" in sync["detail"]  # once: a WARN
    assert "PostgreSQL is down" in sync["detail"] and "FAIL after 3 in a row" in sync["detail"]
    assert "last sync" not in c  # it runs per target
    assert c["last backup"]["ok"] and c["last backup"]["detail"] == "never run"
    assert report["ok"] and report["warnings"] == 1
    with Brain.open(path, embedder=HashEmbedder(), clock=clock) as brain:
        for _ in range(2):
            record_run(brain.db, job_name("sync", "me@pg/brain"), False, "PostgreSQL is down", clock)
    report = run_checks(config_for(path), clock=FixedClock("2026-11-30T15:00:00Z"))
    sync = checks(report)["last sync:me@pg/brain"]
    assert not sync["ok"] and sync["level"] == "fail" and "failed 3 times in a row" in sync["detail"]
    assert not report["ok"]

    later = run_checks(config_for(path, doctor={"required": ["backup"], "max_age_hours": {"retention": 100}}),
                       clock=FixedClock("2026-12-01T12:00:00Z"))
    c = checks(later)
    assert c["last backup"]["detail"] == "never run: schedule  maxmem backup"
    fresh = tmp_path / "fresh.db"
    Brain.open(fresh, embedder=HashEmbedder(), clock=clock).close()
    hints = checks(run_checks(config_for(fresh, doctor={"required": ["retention", "sync"]}), clock=clock))
    assert hints["last retention"]["detail"] == "never run: schedule  maxmem retain --apply"
    assert hints["last sync"]["detail"] == "never run: schedule  maxmem sync postgres"
    assert not c["last capture"]["ok"] and "older than 6 h" in c["last capture"]["detail"]
    assert c["last retention"]["ok"]  # 24 h old, 100 allowed
    assert not c["last backup"]["ok"] and "maxmem backup" in c["last backup"]["detail"]


def test_sizes_and_growth_per_category_come_from_the_change_log(tmp_path):
    path = tmp_path / "brain.db"
    clock = FixedClock("2026-11-20T12:00:00Z")
    with Brain.open(path, embedder=HashEmbedder(), clock=clock) as brain:
        brain.remember_many([{"content": f"old core {i}", "category": "core"} for i in range(4)])
        clock.advance(days=9)
        brain.remember_many([{"content": f"new daily {i}", "category": "daily",
                              "created_at": "2020-01-01"} for i in range(3)])  # back-dated, written now
        clock.advance(hours=12)
        brain.remember("today's project note", category="project")
        brain.forget(brain.list(category="core", limit=1)[0].id)
    report = run_checks(config_for(path), clock=clock)
    cats = report["sizes"]["categories"]
    assert cats["core"] == {**cats["core"], "memories": 3, "added_1d": 0, "added_7d": 0, "deleted_7d": 1}
    assert cats["daily"]["memories"] == 3 and cats["daily"]["added_7d"] == 3 and cats["daily"]["added_1d"] == 3
    assert cats["project"]["added_1d"] == 1 and cats["project"]["text_bytes"] == len("today's project note")
    assert report["sizes"]["db_bytes"] > 0


def test_doctor_after_real_jobs_and_its_exit_code(tmp_path, capsys, monkeypatch):
    from maxmem.backup import create_backup
    from maxmem.capture import run_capture
    from maxmem.errors import MaxmemError
    from maxmem.retention.policy import load_policy
    from maxmem.retention.run import apply
    from maxmem.settings import RetentionSettings
    from maxmem.sync.pgpush import push

    path = tmp_path / "brain.db"
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"role": "user", "content": "hello there"}) + "\n")
    with Brain.open(path, embedder="none") as brain:
        run_capture(brain, paths=[transcript], format="jsonl")
        apply(brain, load_policy(RetentionSettings(archive_dir=tmp_path / "arch")))
    create_backup(path, config=Config())
    code, out, err = run_cli(["--db", str(path), "--embedder", "none", "doctor", "--json"], capsys)
    report = json.loads(out)
    c = checks(report)
    assert code == 0, out
    assert c["last capture"]["ok"] and "capture: 1 files" in c["last capture"]["detail"]
    assert c["last retention"]["ok"] and c["last backup"]["ok"]
    assert set(report["runs"]) == {"capture", "retention", "backup", "integrity"}  # doctor ran the full check

    with Brain.open(path, embedder="none") as brain:
        with pytest.raises(MaxmemError):
            push(brain, "postgresql://me:pw-Never-Shown@127.0.0.1:9/brain?connect_timeout=2")
    code, out, err = run_cli(["--db", str(path), "--embedder", "none", "doctor"], capsys)
    assert code == 0  # one failure: a WARN, not an alert
    line = next(line for line in out.splitlines() if "last sync:" in line)
    assert line.startswith("WARN last sync:me@127.0.0.1:9/brain: failed once") and "pw-Never-Shown" not in out
    with Brain.open(path, embedder="none") as brain:
        for _ in range(2):
            with pytest.raises(MaxmemError):
                push(brain, "postgresql://me:pw-Never-Shown@127.0.0.1:9/brain?connect_timeout=2")
    code, out, err = run_cli(["--db", str(path), "--embedder", "none", "doctor"], capsys)
    assert code == 1
    line = next(line for line in out.splitlines() if "last sync:" in line)
    assert line.startswith("FAIL last sync:me@127.0.0.1:9/brain: failed 3 times in a row")
    assert any(line.startswith("size: brain.db") for line in out.splitlines())


def test_loose_permissions_need_attention(tmp_path, capsys):
    path = tmp_path / "private" / "brain.db"
    with Brain.open(path, embedder="none") as brain:
        brain.remember("x")
    os.chmod(path, 0o644)
    code, out, err = run_cli(["--db", str(path), "--embedder", "none", "doctor"], capsys)
    assert code == 1 and "FAIL permissions: readable by others: brain.db 0o644" in out


def test_doctor_on_a_missing_or_unreadable_database(tmp_path, capsys):
    code, out, err = run_cli(["--db", str(tmp_path / "none.db"), "doctor"], capsys)
    assert code == 1 and "does not exist" in out and err == ""
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"x" * 8192)
    code, out, err = run_cli(["--db", str(bad), "doctor", "--json"], capsys)
    assert code == 1 and json.loads(out)["checks"][0]["name"] == "database"


def test_doctor_on_a_damaged_page_reports_instead_of_crashing(tmp_path, capsys):
    path = tmp_path / "brain.db"
    with Brain.open(path, embedder=HashEmbedder()) as brain:
        brain.remember_many([{"content": f"note {i} " + "words " * 40, "category": "daily"} for i in range(300)])
    damaged = tmp_path / "damaged.db"
    for page in range(1, 40, 3):  # one page turned to garbage, wherever it falls
        shutil.copy(path, damaged)
        with open(damaged, "r+b") as f:
            f.seek(4096 * page)
            f.write(b"\xff" * 4096)
        code, out, err = run_cli(["--db", str(damaged), "--embedder", "none", "doctor"], capsys)
        assert code == 1 and "Traceback" not in err, (page, err)
        assert "FAIL integrity" in out or "FAIL database" in out, (page, out)


def test_the_daemon_backs_up_daily_and_checks_health_hourly(tmp_path):
    from maxmem.errors import ConfigError
    from maxmem.jobs.daemon import backup_job, default_jobs, doctor_job, embed_job, run_job

    path = tmp_path / "brain.db"
    with Brain.open(path, embedder="none") as brain:
        brain.remember("x")
    config = Config.from_tables({"backup": {"keep": 2}}, db_path=path, embedder="none")
    names = [j.name for j in default_jobs(config, {})]
    assert names[:2] == ["capture", "embed"] and names[-2:] == ["backup", "doctor"]  # embed right after capture
    assert run_job(embed_job(config)) == "embed: no embedder configured; memories stay keyword-only"
    for _ in range(3):
        assert run_job(backup_job(config)).startswith("backup: 1 memories to ")
    assert len(list((tmp_path / "backups").glob("brain-*.db"))) == 2
    assert run_job(doctor_job(config)) == "doctor: every check ok"
    os.chmod(path, 0o644)
    assert run_job(doctor_job(config)) is None  # logged as an error, the daemon goes on
    with pytest.raises(ConfigError, match=r"^\[backup\] schedule = '25:00' must be a time of day like 03:00$"):
        Config.from_tables({"backup": {"schedule": "25:00"}})


@pytest.mark.parametrize("hours, level", [(0.2, "ok"), (5, "warn"), (30, "fail")])
def test_memories_waiting_for_a_vector_alarm_only_when_the_wait_is_long(tmp_path, hash_embedder, hours, level):
    """Capture stores first and embeds later: a short wait is normal, hours are a WARN,
    a day is a FAIL (embedding failing or not running)."""
    from datetime import timedelta

    from maxmem.doctor import check_pending

    now = FixedClock("2026-11-30T12:00:00Z").now()
    with Brain.open(tmp_path / "b.db", embedder="none", clock=FixedClock(now - timedelta(hours=hours))) as b:
        b.remember("stored while no model was at hand")
    with Brain.open(tmp_path / "b.db", embedder=hash_embedder, clock=FixedClock(now)) as b:
        found = check_pending(b, now)
        assert found["level"] == level and "1 memories waiting for a vector" in found["detail"], found
    with Brain.open(tmp_path / "b.db", embedder="none", clock=FixedClock(now)) as b:
        assert check_pending(b, now)["level"] == "ok"  # no embedder: keyword only, nothing to wait for
