"""What brain.db knows of each database it pushes to, without a connection: the
cursor, the backlog of changes past it, and the last run (`sync_targets`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..store.db import Database
from .pgconnect import target_name

if TYPE_CHECKING:  # pragma: no cover
    from ..brain import Brain

STATE_SQL = "SELECT * FROM sync_targets WHERE target = ?"


def local_cursor(db: Database, target: str) -> int:
    row = db.one(STATE_SQL, (target,))
    return int(row["cursor"]) if row else 0


def backlog(db: Database, cursor: int) -> int:
    return int(db.scalar("SELECT count(*) FROM changes WHERE seq > ?", (cursor,)))


@dataclass
class TargetStatus:
    target: str
    cursor: int
    backlog: int
    last_run_at: str | None
    last_ok_at: str | None
    last_error: str | None
    last_upserted: int | None
    last_deleted: int | None
    last_seconds: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def status(brain: Brain, dsn: str | None = None) -> list[TargetStatus]:
    """Cursor, backlog and last run of each database this brain pushes to (no connection).

    `dsn`, the configured target, is listed even before its first run.
    """
    db = brain.db
    rows = db.rows("SELECT * FROM sync_targets ORDER BY target")
    if dsn is not None and target_name(dsn) not in {r["target"] for r in rows}:
        rows.append({"target": target_name(dsn), "cursor": 0})  # configured, never synced
    out = []
    for row in rows:
        cursor = int(row.get("cursor") or 0)
        out.append(TargetStatus(
            row["target"], cursor, backlog(db, cursor), row.get("last_run_at"), row.get("last_ok_at"),
            row.get("last_error"), row.get("last_upserted"), row.get("last_deleted"),
            row.get("last_seconds"),
        ))
    return out
