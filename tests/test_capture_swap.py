"""A transcript swapped for a named pipe between capture's look at it and its open: the
open never waits for a writer, the file is refused in one line and the others are kept.

The swap is made at the two moments capture looks before it opens: after its stat
(when the cursor is read) and after it hashed the file's first line (before the reader
opens it again). A real FIFO no one writes to is put in the file's place; an alarm
fails the test if capture waits on it.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from maxmem import Brain
from maxmem.capture import job, run_capture
from maxmem.capture import store as cursors

ALARM_SECONDS = 20


class Hang(BaseException):
    """Capture waited on the FIFO (a BaseException: capture's fail-open handler does not take it)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise Hang()


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "transcripts"
    folder.mkdir()
    (folder / "a-kept.jsonl").write_text(
        '{"role": "user", "content": "Which port is postgres on?"}\n'
        '{"role": "assistant", "content": "5432, see docker ps."}\n', encoding="utf-8")
    swapped = folder / "b-swapped.jsonl"
    swapped.write_text('{"role": "user", "content": "Where are the backups?"}\n', encoding="utf-8")
    return folder, swapped


def _swap(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


@pytest.mark.parametrize("moment", ["after-stat", "after-head"])
def test_a_transcript_swapped_for_a_fifo_is_refused_in_one_line_never_waited_on(tmp_path, monkeypatch, moment):
    folder, swapped = _folder(tmp_path)
    if moment == "after-stat":  # capture's stat saw a file; its cursor is read next, then it opens
        real = cursors.get_cursor

        def get_cursor(db: Any, path: str) -> Any:
            if path == str(swapped) and not swapped.is_fifo():
                _swap(swapped)
            return real(db, path)

        monkeypatch.setattr(cursors, "get_cursor", get_cursor)
    else:  # capture opened the file and hashed its first line; the reader opens it again
        real_head = job.head_hash

        def head_hash(stream: Any) -> str:
            found = real_head(stream)
            if not swapped.is_fifo() and _opening(stream, swapped):
                _swap(swapped)
            return found

        monkeypatch.setattr(job, "head_hash", head_hash)
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(ALARM_SECONDS)
    try:
        with Brain.open(tmp_path / "brain.db", embedder="none") as brain:
            report = run_capture(brain, paths=[folder])
            texts = {row["text"] for row in brain.db.rows("SELECT text FROM turns")}
    except Hang:
        pytest.fail(f"capture waited on the FIFO swapped in {moment}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert swapped.is_fifo()  # the swap happened
    failed = [d for d in report.details if d.status == "error"]
    assert [d.path for d in failed] == [str(swapped)], report.details
    assert failed[0].note is not None and "\n" not in failed[0].note
    assert "is a FIFO (named pipe), not a regular file: give the path of a transcript" in failed[0].note
    assert texts == {"Which port is postgres on?", "5432, see docker ps."}  # the other file, whole
    assert report.errors == 1 and report.new_turns == 2


def _opening(stream: Any, path: Path) -> bool:
    """Whether `stream` is open on `path` (the file capture hashed is the one to swap)."""
    try:
        return os.path.samestat(os.fstat(stream.fileno()), os.stat(path))
    except OSError:
        return False
