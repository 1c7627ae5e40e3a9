"""The change log: every write to a memory, in order (`changes`: seq, uid, op, at, data).

It feeds the PostgreSQL push (which reads seq and uid) and `history` (which reads
the snapshots). A snapshot holds the whole memory as written; forgetting erases the
snapshots of the forgotten memory and leaves a delete entry that only names it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from ..errors import NotFound
from .db import Database

LOG_SQL = "INSERT INTO changes (uid, op, at, data) VALUES (?, ?, ?, ?)"
ERASE_SQL = "UPDATE changes SET data = NULL WHERE uid IN ({marks})"
VERSIONS_SQL = "SELECT seq, op, at, data FROM changes WHERE uid = ? ORDER BY seq"
SNAPSHOTS_SQL = "SELECT seq, data FROM changes WHERE data IS NOT NULL AND seq > ? ORDER BY seq LIMIT 500"
REWRITE_SQL = "UPDATE changes SET data = ? WHERE seq = ?"
UID_OF_ID_SQL = "SELECT uid FROM changes WHERE json_extract(data, '$.id') = ? ORDER BY seq DESC LIMIT 1"
# Fields that change with every write and say nothing about what was changed.
BOOKKEEPING = ("updated_at", "embedded_at")


def log(db: Database, op: str, at: str, snapshots: Sequence[dict[str, Any]]) -> None:
    """One entry per snapshot (each has at least its uid); inside the caller's transaction."""
    db.executemany(LOG_SQL, [(s["uid"], op, at, json.dumps(s, ensure_ascii=False)) for s in snapshots])


def erase(db: Database, uids: Sequence[str]) -> None:
    """Drop the snapshots of these memories (their entries stay, so sync sees the seq)."""
    db.execute_in(ERASE_SQL, uids)


def snapshots(db: Database) -> Iterator[tuple[int, dict[str, Any]]]:
    """(seq, snapshot) of every entry that still holds one, oldest first."""
    last = 0
    while rows := db.rows(SNAPSHOTS_SQL, (last,)):
        for row in rows:
            try:
                snapshot = json.loads(row["data"])
            except ValueError:
                snapshot = None
            if isinstance(snapshot, dict):
                yield row["seq"], snapshot
        last = rows[-1]["seq"]


def rewrite(db: Database, seq: int, snapshot: dict[str, Any]) -> None:
    """Replace the snapshot of one entry (scrub: the same write without its secrets)."""
    db.execute(REWRITE_SQL, (json.dumps(snapshot, ensure_ascii=False), int(seq)))


def uid_of_id(db: Database, memory_id: int) -> str | None:
    """The uid a deleted memory had under this id, from the change log."""
    uid = db.scalar(UID_OF_ID_SQL, (int(memory_id),))
    return str(uid) if uid else None


def history(db: Database, uid: str) -> list[dict[str, Any]]:
    """Every recorded version of the memory `uid`, oldest first: its own number (1, 2,
    3, …), the change-log seq, the op, when, the fields it changed and the snapshot. A
    write that changed none of its fields (a vector added, the same text stored again)
    is no version of its own (the change log keeps it, for sync); a forgotten memory's
    versions, whose snapshots are erased, all stay."""
    versions: list[dict[str, Any]] = []
    previous: dict[str, Any] = {}
    for row in db.rows(VERSIONS_SQL, (uid,)):
        data = json.loads(row["data"]) if row["data"] else {}
        changed = sorted(
            k for k in set(data) | set(previous)
            if data.get(k) != previous.get(k) and k not in BOOKKEEPING
        )
        if data and versions and not changed and row["op"] == versions[-1]["op"]:
            continue  # (a forgotten memory's versions keep no snapshot to compare: each stays)
        versions.append({"version": len(versions) + 1, "seq": row["seq"], "op": row["op"], "at": row["at"],
                         "changed": changed if previous else [], "memory": data})
        previous = data
    if not versions:
        raise NotFound(f"no recorded history for {uid!r}: see  maxmem list")
    return versions
