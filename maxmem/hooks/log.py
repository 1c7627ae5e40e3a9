"""hook.log: one line per hook run, in maxmem's state folder (0600).

Whoever writes a line has redacted it first (cli/hooks.py and the warm recall server
do); it is written on one line, inert (a path or id a harness gave may hold escape
sequences, and the log is read in a terminal). Each ends with the hook process's wall time so far,
from the moment it was started (what the harness waits for, interpreter start and
imports included), where the system tells it (/proc on Linux).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..clock import Clock, iso
from ..files import secure_create
from ..inert import inert

HOOK_LOG = "hook.log"


def process_seconds() -> float | None:
    """Seconds since this process started (fork, not exec: the harness's wait), from
    /proc; None where there is no /proc."""
    try:
        stat = Path("/proc/self/stat").read_text()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        started = int(stat[stat.rindex(")") + 2:].split()[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    return max(0.0, uptime - started)


def append_hook_log(folder: Path, line: str, ok: bool) -> None:
    """Append the line, and the process's wall time, to hook.log; a log that cannot be
    written is not an error."""
    path = folder / HOOK_LOG
    wall = process_seconds()
    tail = f" [wall {wall:.2f} s]" if wall is not None else ""
    try:
        secure_create(path)
        with open(path, "a", encoding="utf-8", errors="backslashreplace") as handle:  # an argv's stray byte too
            handle.write(f"{iso(Clock().now())} {'ok' if ok else 'FAIL'} {inert(' '.join(line.split()))}{tail}\n")
    except OSError:
        pass
