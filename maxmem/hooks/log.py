"""hook.log: one line per hook run, in maxmem's state folder (0600).

Lines are written as given: whoever writes one has redacted it first (cli/hooks.py
and the warm recall server do).
"""

from __future__ import annotations

from pathlib import Path

from ..clock import Clock, iso
from ..files import secure_create

HOOK_LOG = "hook.log"


def append_hook_log(folder: Path, line: str, ok: bool) -> None:
    """Append the line to hook.log; a log that cannot be written is not an error."""
    path = folder / HOOK_LOG
    try:
        secure_create(path)
        with open(path, "a", encoding="utf-8", errors="backslashreplace") as handle:  # an argv's stray byte too
            handle.write(f"{iso(Clock().now())} {'ok' if ok else 'FAIL'} {' '.join(line.split())}\n")
    except OSError:
        pass
