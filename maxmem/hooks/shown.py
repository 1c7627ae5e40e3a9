"""Which memories an agent session has been shown already, so none is shown twice.

The session-start brief and every prompt's recall add the ids they printed; the next
prompt's recall leaves them out. One small JSON file per session, in maxmem's state
folder (`shown/`, 0600), written whole or not at all (files.write_private: a hook
killed mid-write leaves the previous list). Files of sessions untouched for KEEP_DAYS go.
An unreadable file counts as an empty list: at worst a memory is shown once more.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from pathlib import Path

from ..files import write_private

KEEP_DAYS = 7
MAX_IDS = 2000  # per session: the oldest go first


def shown_path(folder: Path, session_id: str) -> Path:
    digest = hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:32]
    return folder / "shown" / f"{digest}.json"


def shown_ids(folder: Path, session_id: str | None) -> frozenset[int]:
    """The ids shown in session `session_id` so far (none without a session id)."""
    return frozenset(_ordered(shown_path(folder, session_id))) if session_id else frozenset()


def add_shown(folder: Path, session_id: str | None, ids: Iterable[int]) -> None:
    """Add `ids` to what session `session_id` has been shown."""
    new = [int(i) for i in ids]
    if not session_id or not new:
        return
    path = shown_path(folder, session_id)
    fresh = set(new)
    known = [i for i in _ordered(path) if i not in fresh]
    write_private(path, lambda handle: json.dump({"session_id": session_id, "ids": (known + new)[-MAX_IDS:]}, handle))
    forget_old(path.parent)


def _ordered(path: Path) -> list[int]:
    """The ids in a session's file, oldest first; none for a missing or unreadable one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [i for i in data.get("ids", []) if isinstance(i, int)]
    except (OSError, ValueError, AttributeError, TypeError):
        return []


def forget_old(folder: Path, keep_days: float = KEEP_DAYS) -> int:
    """Remove the lists of sessions untouched for `keep_days`; how many went."""
    cutoff = time.time() - keep_days * 86400
    gone = 0
    for path in folder.glob("*.json"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                gone += 1
        except OSError:
            continue
    return gone
