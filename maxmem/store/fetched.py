"""Searches followed by a `get`: questions your own use of search answers.

A search you ran (`maxmem search`, the MCP tool `search`, `Brain.search`) and a memory
it returned that you fetched by id soon after (`maxmem get`, the MCP tool `get` or
resource `memory://{id}`, OpenClaw's `memory_get`) make one question and its answer:
`maxmem tune` asks it (its source "fetched"). The prompt hook's recall is not a search of yours (it searches with
`track=False`): it is never recorded.

Nothing is written on the search path: like the recall counts, searches and fetches
are kept in memory and written with them, in the same small transaction
(store/usage.py). A search's query is redacted before it is written. The searches
stay in `recent_searches` only WINDOW (long enough for a `get` in another process,
`maxmem search` then `maxmem get`, to find them there); a pair stays in `fetched`
as long as `conversation` memories do ([retention] conversation) and at most KEPT
pairs. Neither table is exported, synced or pushed: they stay in brain.db.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..clock import iso, parse_time
from .db import Database

# How long after a search a `get` of one of its hits counts as answering it.
WINDOW = timedelta(minutes=5)
KEPT = 2000  # pairs kept at most (tune asks at most 2,000 questions)
PENDING = 256  # searches and fetches kept in memory at most while brain.db cannot be written
MAX_QUERY_CHARS = 400  # a longer search is not kept (tune asks nothing longer)

ADD_SEARCH_SQL = "INSERT INTO recent_searches (at, query, ids) VALUES (?, ?, ?)"
# The latest search within WINDOW before a fetch that returned the fetched memory.
ANSWERED_SQL = """
SELECT s.query FROM recent_searches s, json_each(s.ids) j
WHERE j.value = ?1 AND s.at <= ?2 AND s.at >= ?3
ORDER BY s.at DESC, s.id DESC LIMIT 1
"""
ADD_PAIR_SQL = """
INSERT INTO fetched (at, query, memory_id) VALUES (?, ?, ?)
ON CONFLICT (query, memory_id) DO UPDATE SET at = max(at, excluded.at)
"""
# The tables holding a search's words (scrub runs today's rules over them).
QUERY_TABLES = ("recent_searches", "fetched")
QUERIES_SQL = "SELECT id, query FROM {table} ORDER BY id"
# A pair whose words become another pair's once scrubbed merges into it.
REWRITE_QUERY_SQL = "UPDATE OR REPLACE {table} SET query = ? WHERE id = ?"
FORGET_SQL = "DELETE FROM fetched WHERE memory_id IN ({marks})"
OLD_SEARCHES_SQL = "DELETE FROM recent_searches WHERE at < ?"
OLD_PAIRS_SQL = "DELETE FROM fetched WHERE at < ?"
OVER_CAP_SQL = "DELETE FROM fetched WHERE id NOT IN (SELECT id FROM fetched ORDER BY at DESC, id DESC LIMIT ?)"
# The pairs whose memory is still there and current, newest first.
PAIRS_SQL = """
SELECT f.query, f.memory_id FROM fetched f JOIN memories m ON m.id = f.memory_id
WHERE m.superseded_by IS NULL ORDER BY f.at DESC, f.id DESC LIMIT ?
"""


@dataclass(frozen=True)
class Search:
    at: str
    query: str
    ids: tuple[int, ...]
    seq: int = 0  # its place among this process's searches: a fetch answers only those before it


@dataclass(frozen=True)
class Get:
    at: str
    memory_id: int
    after: int  # the seq of the last search before it


@dataclass(frozen=True)
class Pair:
    at: str
    query: str
    memory_id: int


def storable(text: str) -> bool:
    """Whether SQLite can hold `text`: a search's words with a lone surrogate (an
    undecodable byte let through) are searched, never kept."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Fetches:
    """The searches and fetches not yet written (at most PENDING of each)."""

    def __init__(self) -> None:
        self.searches: deque[Search] = deque(maxlen=PENDING)
        self.gets: deque[Get] = deque(maxlen=PENDING)
        self.seq = 0

    def __bool__(self) -> bool:
        return bool(self.searches or self.gets)

    def searched(self, query: str, ids: Iterable[int], at: str) -> None:
        hits, words = tuple(int(i) for i in ids), query.strip()
        self.seq += 1
        if hits and words and len(words) <= MAX_QUERY_CHARS and storable(words):  # a longer one is no question (tune)
            self.searches.append(Search(at, words, hits, self.seq))

    def got(self, ids: Iterable[int], at: str) -> None:
        self.gets.extend(Get(at, int(i), self.seq) for i in ids)

    def answered(self, db: Database) -> list[Pair]:
        """The pairs the fetches make with the latest search of the WINDOW before each
        that returned the memory: one kept here, else one written (only read: a `get`
        that answers no search writes nothing)."""
        out = []
        for get in self.gets:
            since = iso(parse_time(get.at) - WINDOW)
            mine = [s for s in self.searches if s.seq <= get.after and s.at >= since and get.memory_id in s.ids]
            query = mine[-1].query if mine else db.scalar(ANSWERED_SQL, (get.memory_id, get.at, since))
            if query is not None:
                out.append(Pair(get.at, str(query), get.memory_id))
        return out

    def write(self, db: Database, answered: Iterable[Pair], redact: Callable[[str], str], now: datetime,
              keep_days: float | None) -> None:
        """Write the searches (their queries redacted) and the `answered` pairs, then
        prune: inside the caller's transaction."""
        if self.searches:
            db.executemany(ADD_SEARCH_SQL, [(s.at, redact(s.query), json.dumps(s.ids)) for s in self.searches])
        pairs = [(p.at, redact(p.query), p.memory_id) for p in answered]
        if pairs:
            db.executemany(ADD_PAIR_SQL, pairs)
        prune(db, now, keep_days)

    def clear(self) -> None:
        self.searches.clear()
        self.gets.clear()


def prune(db: Database, now: datetime, keep_days: float | None) -> None:
    """Forget the searches older than WINDOW, the pairs older than `keep_days` (None:
    none by age) and all but the KEPT newest pairs."""
    db.execute(OLD_SEARCHES_SQL, (iso(now - WINDOW),))
    if keep_days is not None:
        db.execute(OLD_PAIRS_SQL, (iso(now - timedelta(days=keep_days)),))
    db.execute(OVER_CAP_SQL, (KEPT,))


def forget(db: Database, memory_ids: Sequence[int]) -> None:
    """Drop the pairs of forgotten memories (their searches' words go with them)."""
    db.execute_in(FORGET_SQL, [int(i) for i in memory_ids])


def queries(db: Database) -> list[tuple[str, int, str]]:
    """(table, row id, words) of every search kept."""
    return [(table, int(i), str(q)) for table in QUERY_TABLES if db.table_exists(table)
            for i, q in db.execute(QUERIES_SQL.format(table=table))]


def rewrite_query(db: Database, table: str, row_id: int, query: str) -> None:
    """Replace a kept search's words (inside the caller's transaction)."""
    if table not in QUERY_TABLES:
        raise ValueError(f"not a table of searches: {table}")
    db.execute(REWRITE_QUERY_SQL.format(table=table), (query, row_id))


def pairs(db: Database, limit: int = KEPT) -> list[tuple[str, int]]:
    """(query, memory id): each search followed by a `get` of a memory it returned,
    newest first (a memory forgotten or superseded since is left out)."""
    return [(str(q), int(i)) for q, i in db.execute(PAIRS_SQL, (limit,))]
