"""A capture process killed with SIGKILL mid-run loses nothing and duplicates nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from maxmem import Brain
from maxmem.capture import CaptureSettings, run_capture
from maxmem.store.db import Database

CHILD = """
import sys
from maxmem import Brain
from maxmem.capture import CaptureSettings, run_capture
with Brain.open(sys.argv[1], embedder="none") as brain:
    run_capture(brain, paths=[sys.argv[2]], format="openclaw",
                settings=CaptureSettings(window_bytes=int(sys.argv[3]), settle_seconds=0))
"""


def write_transcript(path: Path, turns: int) -> None:
    lines = [json.dumps({"type": "session", "version": 3, "id": "killed-session",
                         "timestamp": "2026-11-28T09:00:00.000Z", "cwd": "/w"})]
    for i in range(turns):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"turn {i}: " + " ".join(f"word{(i * 7 + j) % 997}" for j in range(30))
        content = text if role == "user" else [{"type": "text", "text": text}]
        lines.append(json.dumps({"type": "message", "id": f"k{i:07d}", "parentId": None,
                                 "timestamp": f"2026-11-28T{9 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
                                 "message": {"role": role, "content": content}}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def progress(db_path: Path) -> int:
    try:
        db = Database(db_path, readonly=True)
    except Exception:
        return 0
    try:
        if not db.table_exists("capture_files"):
            return 0
        return int(db.scalar("SELECT coalesce(max(byte_offset), 0) FROM capture_files") or 0)
    except Exception:
        return 0
    finally:
        db.close()


@pytest.mark.slow
def test_sigkill_mid_run_then_rerun_finds_every_turn_exactly_once(tmp_path):
    turns = 3000
    transcript = tmp_path / "killed.jsonl"
    write_transcript(transcript, turns)
    size = transcript.stat().st_size
    db_path = tmp_path / "brain.db"
    Brain.open(db_path, embedder="none").close()  # migrate before the child starts
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(db_path), str(transcript), "16384"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    killed_at = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and child.poll() is None:
        offset = progress(db_path)
        if offset > size // 4:  # a few windows committed, more to come
            os.kill(child.pid, signal.SIGKILL)
            killed_at = offset
            break
        time.sleep(0.005)
    child.wait(timeout=30)
    assert killed_at, f"the child finished before it could be killed: {child.stderr.read().decode()[-500:]}"
    assert child.returncode == -signal.SIGKILL
    partial = progress(db_path)
    assert 0 < partial < size, "the kill must land mid-run for this test to mean anything"

    with Brain.open(db_path, embedder="none") as brain:
        report = run_capture(brain, paths=[transcript], format="openclaw",
                             settings=CaptureSettings(window_bytes=16384, settle_seconds=0))
        assert report.errors == 0
        keys = [row[0] for row in brain.db.execute("SELECT key FROM turns ORDER BY seq")]
        assert keys == [f"k{i:07d}" for i in range(turns)]  # every turn, once, in order
        memories = brain.list(category="conversation", limit=100000, order="oldest")
        covered = sorted({seq for m in memories
                          for seq in range(m.metadata["turn_range"][0], m.metadata["turn_range"][1] + 1)})
        assert covered == list(range(1, turns + 1))
        assert len({m.content for m in memories}) == len(memories)
        assert brain.db.scalar("SELECT byte_offset FROM capture_files") == size
        assert run_capture(brain, paths=[transcript], format="openclaw").new_turns == 0
