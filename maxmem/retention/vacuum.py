"""Reclaiming the space a retention run freed: the vector table rebuilt when most of its
slots belong to deleted rows, VACUUM when the free pages reach a share of the file."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..brain import Brain

log = logging.getLogger("maxmem")


def _rebuild_vectors(brain: Brain, share: float) -> bool:
    """Rebuild the vec0 table when `share` of its slots belong to deleted rows.

    vec0 never reuses the slot of a deleted vector and VACUUM does not compact its
    chunks (measured: 10,000 vectors, 8,000 deleted, still 10,240 slots), so a
    retention run that expires most vectors frees nothing without this.
    """
    if not brain.db.table_exists("memories_vec") or not brain.db.table_exists("memories_vec_chunks"):
        return False
    slots = int(brain.db.scalar("SELECT coalesce(sum(size), 0) FROM memories_vec_chunks") or 0)
    live = int(brain.db.scalar("SELECT count(*) FROM memories_vec_rowids") or 0)
    if not slots or (slots - live) / slots < share:
        return False
    ddl = brain.db.scalar("SELECT sql FROM sqlite_master WHERE name = 'memories_vec'")
    with brain.db.atomic():
        brain.db.execute("CREATE TEMP TABLE retention_vectors AS SELECT rowid AS id, embedding FROM memories_vec")
        brain.db.execute("DROP TABLE memories_vec")
        brain.db.execute(ddl)
        brain.db.execute("INSERT INTO memories_vec (rowid, embedding) "
                         "SELECT id, embedding FROM retention_vectors ORDER BY id")
        brain.db.execute("DROP TABLE temp.retention_vectors")
    log.info("rebuilt the vector table: %d live vectors in %d slots", live, slots)
    return True


def reclaim(brain: Brain, share: float) -> bool:
    """VACUUM when the free pages reach `share` of the file (deletes leave them free)."""
    _rebuild_vectors(brain, share)
    pages = int(brain.db.scalar("PRAGMA page_count") or 0)
    free = int(brain.db.scalar("PRAGMA freelist_count") or 0)
    if not pages or free / pages < share:
        return False
    brain.db.execute("VACUUM")
    brain.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return True
