"""`maxmem capture`, `maxmem daemon` and the scheduler's tick script, as a user runs them."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import schedule
from test_capture import home  # noqa: F401  (the fixture)
from test_capture_readers import FIXTURES
from test_cli import run

from maxmem.jobs.daemon import Job, run_daemon
from maxmem.jobs.due import Every

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "maxmem-jobs-cron"


def agent_env(home: Path, tmp_path: Path) -> dict[str, str]:
    """The agents' variables pointing at the fixture homes; HOME empty so ~ finds nothing."""
    fake_home = tmp_path / "empty-home"
    fake_home.mkdir(exist_ok=True)
    return {"OPENCLAW_STATE_DIR": str(home / "openclaw"), "CLAUDE_CONFIG_DIR": str(home / "claude-code"),
            "CODEX_HOME": str(home / "codex"), "HOME": str(fake_home)}


def test_capture_path_json_then_nothing_new(tmp_path):
    db = str(tmp_path / "b.db")
    r = run("--db", db, "--embedder", "none", "capture", "--path", str(FIXTURES), "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["files"] == 3 and data["new_turns"] == 38 and data["memories"] > 0 and data["errors"] == 0
    assert {d["format"] for d in data["details"]} == {"openclaw", "claude-code", "codex"}
    r = run("--db", db, "--embedder", "none", "capture", "--path", str(FIXTURES))
    assert r.exit_code == 0
    assert r.stdout.startswith("capture: 3 files") and "added 0 turns and 0 memories" in r.stdout
    assert len(r.stdout.strip().splitlines()) == 1  # one line


def test_capture_dry_run_lists_files_and_writes_nothing(tmp_path):
    db = str(tmp_path / "b.db")
    r = run("--db", db, "--embedder", "none", "capture", "--path", str(FIXTURES), "--dry-run")
    assert r.exit_code == 0, r.output
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 4 and all(line.startswith("would-read") for line in lines[:3])
    assert "would add 38 turns" in lines[-1]
    r = run("--db", db, "--embedder", "none", "stats", "--json")
    assert json.loads(r.stdout)["memories"] == 0


def test_capture_default_roots_come_from_the_agents_variables(tmp_path, home, monkeypatch):
    for name, value in agent_env(home, tmp_path).items():
        monkeypatch.setenv(name, value)
    db = str(tmp_path / "b.db")
    r = run("--db", db, "--embedder", "none", "capture", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["new_turns"] == 38


def test_capture_usage_and_file_errors(tmp_path):
    db = str(tmp_path / "b.db")
    r = run("--db", db, "--embedder", "none", "capture", "--format", "codex")
    assert r.exit_code == 2 and "--path" in r.stderr
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "conversations.json").write_text("[{]", encoding="utf-8")
    (folder / "ok.jsonl").write_text('{"role": "user", "content": "kept"}\n', encoding="utf-8")
    r = run("--db", db, "--embedder", "none", "capture", "--path", str(folder))
    assert r.exit_code == 1
    assert "1 files failed" in r.stdout and "added 1 turns" in r.stdout
    assert r.stderr.count("\n") == 1 and "conversations.json" in r.stderr and "Traceback" not in r.stderr


def test_daemon_once_runs_capture(tmp_path, home, monkeypatch):
    for name, value in agent_env(home, tmp_path).items():
        monkeypatch.setenv(name, value)
    db = str(tmp_path / "b.db")
    r = run("--db", db, "--embedder", "none", "daemon", "--once")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("capture: 3 files") and "added 38 turns" in r.stdout


def test_daemon_runs_jobs_on_schedule_and_survives_a_failing_one():
    ran: list[str] = []
    stop = threading.Event()

    def good() -> str:
        ran.append("good")
        if ran.count("good") >= 2:
            stop.set()
        return "good ran"

    def bad() -> str:
        ran.append("bad")
        raise RuntimeError("disk on fire")

    second = Every(timedelta(seconds=1))
    jobs = [Job("bad", second, bad), Job("good", second, good)]
    thread = threading.Thread(target=run_daemon, args=(jobs, stop), kwargs={"scheduler": schedule.Scheduler()})
    thread.start()
    thread.join(timeout=20)
    stop.set()
    assert not thread.is_alive()
    assert ran[:2] == ["bad", "good"]  # both run at start
    assert ran.count("good") == 2 and ran.count("bad") >= 1  # the schedule went on after the failure


def _wrapper(tmp_path: Path) -> Path:
    """MAXMEM_BIN: this test's interpreter running the package from the source tree."""
    wrapper = tmp_path / "maxmem-bin"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m maxmem "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def test_the_tick_script_reads_the_env_file_logs_and_skips_a_job_still_running(tmp_path, home):
    logs = tmp_path / "logs"
    env_file = tmp_path / "maxmem.env"
    env_file.write_text(f"MAXMEM_DB={tmp_path / 'cron-brain.db'}\nMAXMEM_EMBEDDER=none\n")
    env = {**os.environ, **agent_env(home, tmp_path), "HOME": str(tmp_path), "MAXMEM_BIN": str(_wrapper(tmp_path)),
           "MAXMEM_LOG_DIR": str(logs), "MAXMEM_ENV_FILE": str(env_file)}
    # While another process runs capture (it holds its lock), the tick skips it at once.
    (logs / "locks").mkdir(parents=True)
    with open(logs / "locks" / "capture.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        first = subprocess.run([str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stdout + first.stderr
    log = (logs / "jobs.log").read_text()
    assert "capture: still running in another process; skipped" in log and "added 38 turns" not in log
    assert (tmp_path / "cron-brain.db").exists()  # MAXMEM_DB came from the env file

    second = subprocess.run([str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stdout + second.stderr
    log = (logs / "jobs.log").read_text()
    assert "added 38 turns" in log and log.count("jobs: exit 0") == 2
