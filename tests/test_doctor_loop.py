"""maxmem doctor knows the loop: failing jobs, capture never run beside transcripts,
wiring that points at a maxmem that is gone, a scheduled job that could not start.
Each case is a temp HOME driven by the installed `maxmem` under `env -i`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from agent_layout import claude_home, codex_home

MAXMEM = Path(sys.executable).parent / "maxmem"
ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(not MAXMEM.is_file(), reason="the maxmem entry point is not installed")


def maxmem(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MAXMEM), *args], env={"HOME": str(home)}, capture_output=True, text=True,
                          timeout=120)


def lines(out: str, prefix: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(prefix)]


def test_capture_failing_three_times_is_a_fail_with_its_reason(tmp_path):
    home = tmp_path / "home"
    rollouts = home / ".codex" / "sessions" / "2026" / "11" / "28"
    rollouts.mkdir(parents=True)
    (rollouts / "rollout-2026-11-28T10-00-00-aaaa.jsonl.zst").write_bytes(b"not zstd at all" * 10)
    assert maxmem(home, "--embedder", "none", "init").returncode == 0
    for attempt in range(1, 4):
        done = maxmem(home, "--embedder", "none", "capture")
        assert done.returncode == 1, done.stdout + done.stderr
        report = maxmem(home, "--embedder", "none", "doctor")
        (line,) = lines(report.stdout, "WARN last capture") or lines(report.stdout, "FAIL last capture")
        if attempt < 3:
            assert line.startswith("WARN last capture: failed") and report.returncode == 0, report.stdout
    assert report.returncode == 1
    assert line.startswith("FAIL last capture: failed 3 times in a row") and "1 files failed" in line


def test_transcripts_and_no_capture_is_a_warn(tmp_path):
    home = tmp_path / "home"
    claude_home(home)
    assert maxmem(home, "--embedder", "none", "init").returncode == 0
    report = maxmem(home, "--embedder", "none", "doctor")
    assert report.returncode == 0, report.stdout
    (line,) = lines(report.stdout, "WARN capture")
    assert "never run, and 1 transcripts wait in" in line and ".claude/projects" in line
    assert maxmem(home, "--embedder", "none", "capture").returncode == 0
    assert not lines(maxmem(home, "--embedder", "none", "doctor").stdout, "WARN capture")


def test_wiring_that_points_at_a_missing_maxmem_is_a_fail(tmp_path):
    home = tmp_path / "home"
    claude_home(home)
    moved = tmp_path / "old-venv" / "bin" / "maxmem"
    moved.parent.mkdir(parents=True)
    moved.write_text(f"#!/bin/sh\nexec {MAXMEM} \"$@\"\n")
    moved.chmod(0o755)
    assert maxmem(home, "setup", "claude-code", "--maxmem", str(moved)).returncode == 0
    assert maxmem(home, "--embedder", "none", "init").returncode == 0
    report = maxmem(home, "--embedder", "none", "doctor")
    assert not lines(report.stdout, "FAIL wiring"), report.stdout
    moved.unlink()  # the old venv is gone
    report = maxmem(home, "--embedder", "none", "doctor")
    assert report.returncode == 1
    (first, *_) = lines(report.stdout, "FAIL wiring")
    assert f"claude-code runs {moved}, which does not exist" in first and "maxmem setup claude-code" in first


def test_wiring_written_but_not_active_is_a_warn(tmp_path):
    """Codex hooks nobody trusted yet, a hooks flag set false, Claude Code's
    disableAllHooks: each a WARN that says what to do (no codex on PATH here: doctor
    reads config.toml)."""
    home = tmp_path / "home"
    claude_home(home)
    codex_home(home)
    assert maxmem(home, "--embedder", "none", "init").returncode == 0
    assert maxmem(home, "setup", "claude-code").returncode == 0
    assert maxmem(home, "setup", "codex").returncode == 0
    report = maxmem(home, "--embedder", "none", "doctor")
    (untrusted,) = [line for line in lines(report.stdout, "WARN wiring") if "not trusted" in line]
    assert "SessionStart" in untrusted and "UserPromptSubmit" in untrusted and "Trust all and continue" in untrusted
    assert report.returncode == 0  # a WARN, not a FAIL

    config = home / ".codex" / "config.toml"
    text = config.read_text()
    state = "\n".join(f'[hooks.state."{config}:{event}:0:0"]\ntrusted_hash = "sha256:{n:064x}"\n'
                      for n, event in enumerate(["session_start", "user_prompt_submit", "pre_compact", "stop"]))
    config.write_text(text.replace("hooks = true # added by maxmem setup", "hooks = false") + "\n" + state)
    settings = home / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace('"model": "opus"', '"model": "opus", "disableAllHooks": true'))
    report = maxmem(home, "--embedder", "none", "doctor")
    warns = lines(report.stdout, "WARN wiring")
    assert not any("not trusted" in line for line in warns), warns
    assert any("hooks is false" in line for line in warns), warns
    assert any("disableAllHooks" in line and "settings.json" in line for line in warns), warns


def test_a_scheduled_tick_that_could_not_start_maxmem_is_a_fail(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    assert maxmem(home, "--embedder", "none", "init").returncode == 0
    logs = home / ".local" / "state" / "maxmem"
    script = ROOT / "maxmem" / "data" / "scripts" / "maxmem-jobs-cron"
    done = subprocess.run(["/bin/sh", str(script)], capture_output=True, text=True, timeout=60,
                          env={"HOME": str(home), "MAXMEM_BIN": str(tmp_path / "gone" / "maxmem")})
    assert done.returncode == 127
    report = maxmem(home, "--embedder", "none", "doctor")
    assert report.returncode == 1
    (line,) = lines(report.stdout, "FAIL log jobs.log")
    assert "exit 127" in line and "not found" in line and str(logs / "jobs.log") in line

    ok = subprocess.run(["/bin/sh", str(script), "--embedder", "none"], capture_output=True, text=True,
                        timeout=120, env={"HOME": str(home), "MAXMEM_BIN": str(MAXMEM)})
    assert ok.returncode == 0, (logs / "jobs.log").read_text()
    assert not lines(maxmem(home, "--embedder", "none", "doctor").stdout, "FAIL log")
    assert os.stat(logs / "jobs.log").st_mode & 0o077 == 0
