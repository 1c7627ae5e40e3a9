"""Agents' hooks given what a careless user or another program on the machine may give
them: the installed `maxmem hook …` under `env -i` (cron's and a harness's bare
environment) in a far time zone, exiting 0 whatever happens, with one line in hook.log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

MAXMEM = Path(sys.executable).parent / "maxmem"

pytestmark = pytest.mark.skipif(not MAXMEM.is_file(), reason="the maxmem entry point is not installed")


def run(home: Path, *args: str, stdin: bytes = b"{}") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["env", "-i", f"HOME={home}", "TZ=Pacific/Kiritimati", str(MAXMEM),
                           "--db", str(home / "brain.db"), "hook", *args],
                          input=stdin, capture_output=True, timeout=120)


def log_lines(home: Path) -> list[str]:
    path = home / ".local" / "state" / "maxmem" / "hook.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


@pytest.mark.parametrize("args", [
    ("user-prompt", "--budget", "abc"),  # the CLI's parse
    ("user-prompt", "--budget", "inf"),  # the prompt hook's short path, then the CLI's
    ("user-prompt", "--budget", "nan"),
    ("user-prompt", "--budget", "-1"),
    ("pre-compact", "--budget", "0"),  # exit 2 here would block the compaction
    ("stop", "--budget-tokens", "many"),
    ("session-start", "--harnes", "codex"),  # a typo: an unknown option
    (),  # no event at all
])
def test_a_command_line_the_hook_cannot_read_exits_0_and_logs_why(tmp_path, args):
    payload = json.dumps({"prompt": "which database did we pick for the project?", "session_id": "s"}).encode()
    done = run(tmp_path, *args, stdin=payload)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"" and b"Traceback" not in done.stderr
    (line,) = log_lines(tmp_path)
    assert " FAIL hook " in line and "failed:" in line


def test_a_transcript_path_with_escape_sequences_reaches_hook_log_inert(tmp_path):
    hostile = str(tmp_path / "x\x1b]0;pwned\x07\x1b[2J\u202e.jsonl")
    for event, harness in (("stop", "claude-code"), ("session-end", "codex")):
        done = run(tmp_path, event, "--harness", harness, "--budget", "30",
                   stdin=json.dumps({"transcript_path": hostile, "session_id": "\x1b[31m"}).encode())
        assert done.returncode == 0 and done.stdout == b""
    text = (tmp_path / ".local" / "state" / "maxmem" / "hook.log").read_text(encoding="utf-8")
    assert len(text.splitlines()) == 2
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "x\\x1b]0;pwned\\x07\\x1b[2J\\u202e.jsonl" in text  # shown, escaped


def test_a_transcript_of_one_endless_line_stops_the_capture_hook_at_its_deadline(tmp_path):
    """32 GB with no newline (sparse: no disk used): the capture stops at the hook's own
    deadline, saying so, instead of being cut off by the backstop alarm a second later
    (and the next run looks on from where it stopped: the cursor keeps how far it looked)."""
    transcript = tmp_path / "endless.jsonl"
    with open(transcript, "wb") as handle:
        handle.truncate(32 << 30)
    for _ in range(2):
        done = run(tmp_path, "stop", "--harness", "claude-code", "--budget", "0.5",
                   stdin=json.dumps({"transcript_path": str(transcript), "session_id": "s"}).encode())
        assert done.returncode == 0 and done.stdout == b""
    lines = log_lines(tmp_path)
    assert len(lines) == 2
    for line in lines:
        assert " ok hook stop" in line and "stopped at its time budget" in line and "failed" not in line, line
    from maxmem.store.db import Database

    db = Database(tmp_path / "brain.db", readonly=True)
    try:
        (state,) = [json.loads(r["state"]) for r in db.rows("SELECT state FROM capture_files")]
    finally:
        db.close()
    assert state["scanned_to"] > 0  # how far the runs looked, kept: the next run reads on from there


def _small_memory() -> None:  # the hook under a 4 GB address space: an endless read fails in it
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@pytest.mark.parametrize("event", ["user-prompt", "stop", "session-start"])
def test_an_endless_stdin_is_read_no_further_than_a_harness_could_send(tmp_path, event):
    with open("/dev/zero", "rb") as zeros:
        done = subprocess.run(["env", "-i", f"HOME={tmp_path}", "TZ=Pacific/Kiritimati", str(MAXMEM),
                               "--db", str(tmp_path / "brain.db"), "hook", event, "--budget", "30"],
                              stdin=zeros, capture_output=True, timeout=120, preexec_fn=_small_memory)
    assert done.returncode == 0 and done.stdout == b"", done.stderr[-500:]
    assert b"Traceback" not in done.stderr
    (line,) = log_lines(tmp_path)
    assert " ok hook " in line


@pytest.mark.parametrize(("event", "option"), [("user-prompt", "--config"), ("stop", "--config"),
                                               ("session-start", "--db"), ("stop", "--log-file")])
def test_a_fifo_given_as_a_file_is_one_log_line_and_exit_0(tmp_path, event, option):
    """A named pipe no one writes to, as the config, brain.db or the log file: the hook
    exits 0 at once, hook.log saying why (opening it would wait for a writer for ever)."""
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = subprocess.run(["env", "-i", f"HOME={tmp_path}", str(MAXMEM), option, str(fifo), "hook", event,
                           "--budget", "5"], input=b"{}", capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stdout == b"" and b"Traceback" not in done.stderr
    (line,) = log_lines(tmp_path)
    assert " FAIL hook " in line and "is a FIFO (named pipe), not a regular file" in line, line
