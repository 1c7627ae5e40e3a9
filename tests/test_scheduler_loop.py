"""The loop says when it is not running: setup refuses a scheduler it cannot activate
here (before writing anything) and names the one that works; doctor fails when no tick
has run for longer than the tick interval allows; jobs.log has each line once.

Each case is a temp HOME driven by the installed `maxmem` with a PATH of the test's
own making (what is on it is what the machine has)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest

from maxmem import Brain, FixedClock
from maxmem.clock import Clock
from maxmem.doctor import check_pending
from maxmem.jobs.runs import record_run
from maxmem.store.db import Database

MAXMEM = Path(sys.executable).parent / "maxmem"
pytestmark = pytest.mark.skipif(not MAXMEM.is_file(), reason="the maxmem entry point is not installed")


def bin_with(folder: Path, **programs: str) -> Path:
    """A PATH folder holding only sh and the named programs (name -> shell script body)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("sh", "cat", "date", "mkdir"):
        (folder / name).symlink_to(f"/bin/{name}" if Path(f"/bin/{name}").exists() else f"/usr/bin/{name}")
    for name, body in programs.items():
        (folder / name).write_text(f"#!/bin/sh\n{body}\n")
        (folder / name).chmod(0o755)
    return folder


def fake_crontab(table: Path) -> str:
    """A `crontab` keeping the user crontab in a file (-l prints it, - replaces it)."""
    return (f'if [ "$1" = "-l" ]; then [ -f "{table}" ] && exec cat "{table}"; echo "no crontab for you" >&2; '
            f'exit 1; fi\nexec cat > "{table}"')


def maxmem(home: Path, *args: str, path: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    base = {"HOME": str(home), "PATH": str(path) if path else "/usr/bin:/bin", **env}
    return subprocess.run([str(MAXMEM), *args], env=base, capture_output=True, text=True, timeout=120)


def written(home: Path) -> list[Path]:
    return [p for p in home.rglob("*") if p.is_file()]


def test_setup_systemd_without_a_user_bus_writes_nothing_and_names_cron(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    crontab_file = tmp_path / "crontab.txt"
    path = bin_with(tmp_path / "bin", systemctl='echo "Failed to connect to bus: No medium found" >&2; exit 1',
                    crontab=fake_crontab(crontab_file))
    done = maxmem(home, "setup", "systemd", path=path, XDG_RUNTIME_DIR=str(tmp_path))
    assert done.returncode == 1 and done.stdout == "", done.stdout
    assert done.stderr.strip() == ("maxmem: error: setup systemd: no user systemd bus (Failed to connect to bus: "
                                   "No medium found): nothing was written; here use maxmem setup cron")
    assert written(home) == []
    dry = maxmem(home, "setup", "systemd", "--dry-run", path=path, XDG_RUNTIME_DIR=str(tmp_path))
    assert dry.returncode == 0 and "setup systemd would stop here and write nothing" in dry.stdout, dry.stdout
    cron = maxmem(home, "setup", "cron", path=path)
    assert cron.returncode == 0, cron.stderr
    assert "maxmem-jobs-cron" in crontab_file.read_text()


def test_setup_cron_without_crontab_writes_nothing_and_names_the_daemon(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    path = bin_with(tmp_path / "bin")  # neither systemctl nor crontab: a bare container
    for target in ("cron", "systemd"):
        done = maxmem(home, "setup", target, path=path)
        assert done.returncode == 1, done.stdout
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"maxmem: error: setup {target}: no ") and "nothing was written" in line
        assert "daemon kept running by a supervisor of your own" in line and str(MAXMEM) in line
    assert written(home) == []
    assert not (home / ".local" / "share" / "maxmem" / "bin" / "maxmem-jobs-cron").exists()


def test_setup_into_a_home_it_cannot_write_says_so_in_one_line(tmp_path, other_user):
    place = Path(tempfile.mkdtemp(prefix="maxmem-rohome-"))
    try:
        place.chmod(0o755)
        home = place / "home"
        home.mkdir(mode=0o555)  # not the other user's to write: as a read-only disk is to anyone
        crontab_file = place / "crontab.txt"
        path = bin_with(place / "bin", crontab=fake_crontab(crontab_file))
        done = other_user.run(["setup", "cron"], {"HOME": str(home), "PATH": f"{path}:/usr/bin:/bin"}, timeout=120)
        assert done.returncode == 1, done.stdout
        (line,) = done.stderr.splitlines()
        assert line.startswith("maxmem: error: setup cron: cannot write ") and "nothing was written" in line, line
        assert "(permission denied)" in line or "(its disk is mounted read-only)" in line
        assert not crontab_file.exists() and written(home) == []
    finally:
        home.chmod(0o755)
        subprocess.run(["rm", "-rf", str(place)], check=False)


def init(home: Path) -> Path:
    assert maxmem(home, "--embedder", "none", "init").returncode == 0
    return home / ".config" / "maxmem" / "brain.db" if (home / ".config" / "maxmem" / "brain.db").exists() \
        else next(home.rglob("brain.db"))


def doctor_line(home: Path, path: Path | None = None) -> tuple[int, str]:
    report = maxmem(home, "--embedder", "none", "doctor", "--json", path=path)
    checks = json.loads(report.stdout)["checks"]
    (check,) = [c for c in checks if c["name"] == "scheduler"]
    return report.returncode, f"{check['level']} {check['detail']}"


def test_doctor_fails_when_the_tick_stopped_and_says_how_to_start_one_here(tmp_path):
    home = tmp_path / "home"
    db = init(home)
    path = bin_with(tmp_path / "bin")
    code, line = doctor_line(home, path)
    assert code == 0 and line.startswith("warn no tick has run yet: start one:  ") and "daemon" in line, line
    database = Database(db)
    try:
        record_run(database, "embed", True, "embed: nothing pending", FixedClock(Clock().now() - timedelta(hours=3)))
    finally:
        database.close()
    code, line = doctor_line(home, path)
    assert code == 1, line
    assert line.startswith("fail no tick for 3.0 h (one every 15 min): the scheduler is not running"), line
    assert "kept running by a supervisor of your own" in line
    tick = maxmem(home, "--embedder", "none", "daemon", "--once", "--if-due", path=path)
    assert tick.returncode == 0, tick.stderr
    code, line = doctor_line(home, path)
    assert code == 0 and line.startswith("ok last tick 0 min ago"), line


def test_the_cron_tick_writes_each_line_of_jobs_log_once(tmp_path):
    home = tmp_path / "home"
    init(home)
    log = tmp_path / "state" / "jobs.log"
    log.parent.mkdir()
    script = Path(__file__).resolve().parent.parent / "scripts" / "maxmem-jobs-cron"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "MAXMEM_BIN": str(MAXMEM), "MAXMEM_LOG_DIR": str(log.parent)}
    done = subprocess.run([str(script), "--embedder", "none"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, log.read_text()
    text = log.read_text()
    bodies = [line.split(" ", 3)[-1] for line in text.splitlines()]
    assert "embed: no embedder configured; memories stay keyword-only" in text
    assert len(bodies) == len(set(bodies)), text
    assert text.count("no embedder configured") == 1, text


def test_doctor_warns_of_memories_waiting_for_a_vector_over_an_hour(tmp_path, hash_embedder):
    clock = FixedClock(Clock().now() - timedelta(minutes=70))
    with Brain.open(tmp_path / "b.db", embedder="none", clock=clock) as brain:
        brain.remember("the quince tree flowers in April")
    with Brain.open(tmp_path / "b.db", embedder=hash_embedder, check_embedder=False) as brain:
        check = check_pending(brain, Clock().now())
    assert check["level"] == "warn" and "waiting for a vector, the oldest stored 1.2 h ago" in check["detail"]


def test_the_long_running_daemon_records_its_ticks_as_the_scheduler_does(tmp_path):
    from maxmem.config import load_config
    from maxmem.jobs.daemon import default_jobs, run_job
    from maxmem.jobs.runs import last_runs

    db = tmp_path / "brain.db"
    Brain.open(db, embedder="none").close()
    config = load_config(env={"HOME": str(tmp_path)}, db_path=db, embedder="none")
    (embed,) = [job for job in default_jobs(config, {"HOME": str(tmp_path)}) if job.name == "embed"]
    assert not embed.records  # the tick records it, not the job
    assert run_job(embed, config) == "embed: no embedder configured; memories stay keyword-only"
    database = Database(db)
    try:
        assert last_runs(database)["embed"]["ok"] is True
    finally:
        database.close()
