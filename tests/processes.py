"""The processes a test left behind, found by their command lines in /proc."""

from __future__ import annotations

import os
from pathlib import Path


def processes_naming(home: Path, word: bytes = b"") -> list[int]:
    """The ids of the processes (this one aside) whose command line names this test's
    HOME, and `word` when given."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if word in cmdline and str(home).encode() in cmdline:
            found.append(int(entry.name))
    return found
