"""How often each memory is recalled, recorded off the search path.

Every search notes the memories it returned (`recall_count`, `last_recalled_at`: the
core budget and `maxmem core review` learn from them). Writing them at once would
turn every read into a write: it cost 0.5–1.2 ms of a search's p50 at 100k memories,
doubled its p95, made searches wait for writers' locks and changed a brain.db that was
only read. So a search only counts, in memory; the counts are written in one small
transaction at most every FLUSH_SECONDS (by the next search after that), and when
the brain is closed; the memories a Brain hands out count them in meanwhile (`seen`).
A flush never waits for a lock: when another process is writing,
the counts wait for the next flush (and those of a process that ends while brain.db
is locked are lost: they are statistics, not memories). The searches and the fetches
that follow them (fetched.py) are kept and written the same way, in the same transaction.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime

import apsw

from ..clock import Clock
from ..errors import DatabaseError
from ..memory import Memory
from .db import Database
from .fetched import Fetches

log = logging.getLogger("maxmem")

FLUSH_SECONDS = 5.0
RECALLED_SQL = (
    "UPDATE memories SET recall_count = recall_count + ?, "
    "last_recalled_at = max(coalesce(last_recalled_at, ''), ?) WHERE id = ?"
)


class Usage:
    """Recall counts, searches and fetches not yet written, and when they were last written."""

    def __init__(self, flush_seconds: float = FLUSH_SECONDS) -> None:
        self.flush_seconds = flush_seconds
        self.counts: Counter[int] = Counter()
        self.last_at: dict[int, str] = {}
        self.fetches = Fetches()
        self.flushed = time.monotonic()

    def note(self, ids: Iterable[int], at: str) -> None:
        for memory_id in ids:
            self.counts[int(memory_id)] += 1
            self.last_at[int(memory_id)] = at

    def seen(self, memory: Memory) -> Memory:
        """`memory` with the recalls not yet written counted in: a brain sees its own use."""
        count = self.counts.get(memory.id)
        if not count:
            return memory
        last = max(memory.last_recalled_at or "", self.last_at[memory.id])
        return replace(memory, recall_count=memory.recall_count + count, last_recalled_at=last)

    def due(self) -> bool:
        return (bool(self.counts) or bool(self.fetches)) and time.monotonic() - self.flushed >= self.flush_seconds

    def flush(self, db: Database, busy_timeout_ms: int, redact: Callable[[str], str] = str,
              now: datetime | None = None, keep_days: float | None = None) -> bool:
        """Write the counts, searches and fetches in one transaction unless brain.db is
        locked; True if written. `redact` cleans a search's query before it is written;
        `now` and `keep_days` prune the fetched searches (fetched.prune)."""
        if not self.counts and not self.fetches:
            return True
        rows = [(n, self.last_at[i], i) for i, n in sorted(self.counts.items())]
        db.conn.set_busy_timeout(0)
        try:
            answered = self.fetches.answered(db)
            if rows or self.fetches.searches or answered:
                with db.atomic():
                    if rows:
                        db.executemany(RECALLED_SQL, rows)
                    if self.fetches.searches or answered:
                        self.fetches.write(db, answered, redact, now or Clock().now(), keep_days)
        except (DatabaseError, apsw.BusyError):
            log.debug("recall counts kept for later: brain.db is busy")
            return False
        finally:
            db.conn.set_busy_timeout(busy_timeout_ms)
        self.counts.clear()
        self.last_at.clear()
        self.fetches.clear()
        self.flushed = time.monotonic()
        return True
