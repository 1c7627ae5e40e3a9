"""Folder sync's record of concurrent edits (`sync_conflicts`): one row per field two
machines changed without seeing each other's change, with the stamp of the write kept
and of the one dropped. Read by `maxmem doctor`; written by the sync ledger.

And its quarantine: the files of the folder, or records in them, that folder sync
refused for good (damaged, not what the format holds), each with why, kept in meta
until the file leaves the folder or changes."""

from __future__ import annotations

import json
from typing import Any

from .db import Database
from .hlc import machine_of, time_of

MACHINE_META = "sync_machine"  # meta key: this brain's machine id, once it has synced a folder
QUARANTINE_META = "sync_quarantine"  # meta key: {path: {"reason", "records", "at", "size", "mtime_ns"}} (JSON)
CONFLICTS_SQL = "SELECT uid, field, kept, lost, at FROM sync_conflicts ORDER BY at DESC, uid LIMIT ?"
CONFLICT_COUNT_SQL = "SELECT count(*) FROM sync_conflicts"


def synced(db: Database) -> bool:
    """This brain has synced a folder (it has a machine id)."""
    return bool(db.get_meta(MACHINE_META))


def conflicts(db: Database, limit: int = 5) -> tuple[int, list[dict[str, Any]]]:
    """How many concurrent edits sync resolved, and the latest few: the memory, the
    field, the machine and time of the write kept and of the one dropped."""
    if not db.table_exists("sync_conflicts"):
        return 0, []
    latest = [{"uid": r["uid"], "field": r["field"], "at": r["at"],
               "kept": {"machine": machine_of(r["kept"]), "written": time_of(r["kept"]).isoformat()},
               "lost": {"machine": machine_of(r["lost"]), "written": time_of(r["lost"]).isoformat()}}
              for r in db.rows(CONFLICTS_SQL, (limit,))]
    return int(db.scalar(CONFLICT_COUNT_SQL)), latest


def quarantined(db: Database) -> dict[str, dict[str, Any]]:
    """The files of the sync folder refused in whole or in part, by path: why
    ("reason"), how many records ("records", 0 for the whole file), when ("at")."""
    text = db.get_meta(QUARANTINE_META)
    return json.loads(text) if text else {}


def set_quarantined(db: Database, found: dict[str, dict[str, Any]]) -> None:
    db.set_meta(QUARANTINE_META, json.dumps(found, sort_keys=True))
