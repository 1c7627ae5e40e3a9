"""The bottom of the write path: memory rows with their change log, neighbour windows
and vectors, kept consistent inside the caller's transaction.

Brain checks the input (records.py), decides duplicates (curation.py), embeds outside
any transaction (search/vectors.py), opens the transaction and calls one method here.
The keyword index follows the rows by triggers (migrations.py); the vectors and the
neighbours' windows (search/neighbours.py) are derived state kept up to date here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..clock import Clock, iso
from ..memory import Memory
from ..search import neighbours
from ..search.vectors import VectorStore
from . import changes, fetched
from .db import Database
from .records import FIELDS, NEIGHBOUR_FIELDS, column_value, embed_text, row_values

INSERT_SQL = (
    f"INSERT INTO memories (id, {', '.join(FIELDS)}, context) "
    f"VALUES ({', '.join('?' * (len(FIELDS) + 2))})"
)
REPLACE_SQL = f"UPDATE memories SET {', '.join(f'{k} = ?' for k in FIELDS)} WHERE id = ?"
# The highest id ever given (meta 'last_id', migration 0007) and the stored ones.
NEXT_ID_SQL = """
SELECT max(coalesce((SELECT max(id) FROM memories), 0),
           coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'last_id'), 0)) + 1
"""
NOTE_ID_SQL = """
INSERT INTO meta (key, value) VALUES ('last_id', ?1)
ON CONFLICT (key) DO UPDATE SET value = max(CAST(value AS INTEGER), ?1)
"""
GET_MANY_SQL = "SELECT * FROM memories WHERE id IN ({marks})"
EXACT_SQL = "SELECT * FROM memories WHERE content_hash = ? AND category = ? ORDER BY id LIMIT 1"
EXISTING_SQL = "SELECT content_hash, category, min(id) FROM memories WHERE content_hash IN ({marks}) GROUP BY 1, 2"
WINDOWS_SQL = "SELECT id, context, embedded_at FROM memories WHERE id IN ({marks})"
SAME_TEXT_SQL = "SELECT id, content_hash, title FROM memories WHERE content_hash IN ({marks})"

@dataclass(frozen=True)
class Inserted:
    """The id each record ended up as (a new row, or the row already holding its text
    in its category), and the Memory of each new row."""

    ids: list[int]
    fresh: dict[int, Memory]


class Rows:
    """The memories table of one brain.db, with everything derived from it."""

    def __init__(self, db: Database, vectors: VectorStore, clock: Clock) -> None:
        self.db = db
        self.vectors = vectors
        self.clock = clock

    # -- reading ------------------------------------------------------------
    def get_many(self, ids: Sequence[int]) -> list[Memory]:
        """The memories of `ids` that exist, in the order of `ids`."""
        found = {row["id"]: Memory.from_row(row) for row in self.db.rows_in(GET_MANY_SQL, [int(i) for i in ids])}
        return [found[int(i)] for i in ids if int(i) in found]

    def find_exact(self, content_hash: str, category: str) -> Memory | None:
        """The oldest memory of `category` whose content has this hash."""
        row = self.db.one(EXACT_SQL, (content_hash, category))
        return Memory.from_row(row) if row else None

    def existing_ids(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """(content hash, category) -> id of the memory already holding that text there."""
        wanted = set(keys)
        found = {(h, c): i for h, c, i in self.db.each_in(EXISTING_SQL, [h for h, _ in keys])}
        return {k: v for k, v in found.items() if k in wanted}

    def next_id(self) -> int:
        """The id for a new memory: above every id brain.db ever gave, so a forgotten
        memory's id never names another one ("forget 12" sent twice forgets one memory)."""
        return int(self.db.scalar(NEXT_ID_SQL))

    def note_id(self, memory_id: int) -> None:
        self.db.execute(NOTE_ID_SQL, (int(memory_id),))

    # -- the change log -------------------------------------------------------
    def log(self, ids: Sequence[int], op: str, snapshots: Sequence[dict[str, Any]] | None = None) -> None:
        if snapshots is None:
            snapshots = [m.to_dict() for m in self.get_many(ids)]
        changes.log(self.db, op, iso(self.clock.now()), snapshots)

    # -- writing ------------------------------------------------------------
    def insert(self, records: list[dict[str, Any]], vectors: Sequence[Any]) -> Inserted:
        """Insert the records not already stored (same text in the same category, in
        brain.db or earlier in `records`), each with its vector when it has one."""
        existing = self.existing_ids([(r["content_hash"], r["category"]) for r in records])
        next_id = self.next_id()
        rows, new_vectors, ids, seen = [], {}, [], dict(existing)
        fresh: dict[int, Memory] = {}
        now = iso(self.clock.now())
        for record, vector in zip(records, vectors):
            key = (record["content_hash"], record["category"])
            if key in seen:
                ids.append(seen[key])
                continue
            memory_id = seen[key] = next_id
            next_id += 1
            ids.append(memory_id)
            if vector is not None:
                record["embedded_at"] = now
                new_vectors[memory_id] = vector
            rows.append(row_values(memory_id, record))
            fresh[memory_id] = Memory(id=memory_id, **{k: record[k] for k in FIELDS})
        if rows:
            self._insert_rows(rows, fresh, new_vectors)
        return Inserted(ids, fresh)

    def _insert_rows(self, rows: list[list[Any]], fresh: dict[int, Memory], own: dict[int, np.ndarray]) -> None:
        # New rows go in with their neighbours' text (one pass through the keyword index);
        # stored neighbours whose window they enter are updated after.
        pending = {
            m.id: neighbours.Pending(m.category, m.session_id, m.created_at, m.content)
            for m in fresh.values()
            if neighbours.in_session(m.category, m.session_id)
        }
        windows = neighbours.plan(self.db, list(pending), pending=pending) if pending else []
        text = {w.id: w.text for w in windows if w.id in pending}
        self.db.executemany(INSERT_SQL, [[*row, text.get(row[0])] for row in rows])
        self.note_id(max(fresh))
        self.log(list(fresh), "upsert", [m.to_dict() for m in fresh.values()])
        blended = self._apply(windows, own, logged=fresh)
        if own:
            self.vectors.store(list(own), np.vstack([blended.get(i, v) for i, v in own.items()]))

    def change(self, old: Memory, changed: Mapping[str, Any], vector: Any, reembed: bool) -> None:
        """Write the `changed` fields of `old` (a new text has `reembed`, and its new
        vector if one could be made)."""
        moved = bool(changed.keys() & NEIGHBOUR_FIELDS)
        near = neighbours.around(self.db, [old.id]) if moved else set()
        if reembed or moved:  # its vector may stop being its text's own vector
            self.vectors.keep_held([old.id])
        assignments = ", ".join(f"{k} = ?" for k in changed)
        values = [column_value(k, v) for k, v in changed.items()]
        self.db.execute(f"UPDATE memories SET {assignments} WHERE id = ?", [*values, old.id])
        if reembed:
            self.vectors.drop([old.id])
        own = {old.id: vector} if reembed and vector is not None else {}
        blended = self.refresh([old.id, *near], own, logged=[old.id]) if moved else {}
        if own:
            self.vectors.store([old.id], blended.get(old.id, vector).reshape(1, -1))
        self.log([old.id], "upsert")

    def replace(self, old_id: int, record: Mapping[str, Any], vector: Any) -> set[int]:
        """Overwrite every field of a stored memory (an import of a newer version).
        Returns its neighbours before, whose windows the caller refreshes at the end."""
        near = neighbours.around(self.db, [old_id])
        self.vectors.keep_held([old_id])
        self.db.execute(REPLACE_SQL, [*(column_value(k, record[k]) for k in FIELDS), old_id])
        self.vectors.drop([old_id])
        if vector is not None:
            self.vectors.store([old_id], vector.reshape(1, -1))
        self.log([old_id], "upsert")
        return near

    def add(self, memory_id: int, record: Mapping[str, Any], vector: Any) -> None:
        """Insert one row under a chosen id (an import keeping its ids)."""
        self.db.execute(INSERT_SQL, [*row_values(memory_id, record), None])
        self.note_id(memory_id)
        if vector is not None:
            self.vectors.store([memory_id], vector.reshape(1, -1))
        self.log([memory_id], "upsert")

    def mark_embedded(self, vectors: Mapping[int, np.ndarray]) -> None:
        """Store the first vectors of memories stored pending (embed_pending)."""
        ids = list(vectors)
        self.vectors.drop(ids)
        self.db.executemany("UPDATE memories SET embedded_at = ? WHERE id = ?",
                            [(iso(self.clock.now()), i) for i in ids])
        blended = self.refresh(ids, vectors)
        self.vectors.store(ids, np.vstack([blended.get(i, v) for i, v in vectors.items()]))
        self.log(ids, "upsert")  # a new vector is a change too: the PostgreSQL push sends it

    def delete(self, memories: Sequence[Memory]) -> None:
        """Delete rows, vectors and keyword entries; the change log keeps no copy.

        Forgetting must really forget (a secret remembered by mistake, say): earlier
        snapshots of the memory in `changes` lose their data, the delete entry keeps
        only what sync and `history` need to name it, the embeddings cache drops the
        vector (and text hash) of a text no other memory has, and the bytes freed are
        overwritten: PRAGMA secure_delete (db.py) and FTS5's secure-delete option
        (migration 0006). Brain.forget_many then empties the WAL.
        """
        ids = [m.id for m in memories]
        changes.erase(self.db, [m.uid for m in memories])
        self.log(ids, "delete", [
            {"id": m.id, "uid": m.uid, "category": m.category, "kind": m.kind, "forgotten": True}
            for m in memories
        ])
        near = neighbours.around(self.db, ids)
        self.vectors.forget_texts(self._unshared_texts(memories))
        self.vectors.drop(ids)
        self.db.executemany("DELETE FROM memories WHERE id = ?", [(i,) for i in ids])
        fetched.forget(self.db, ids)  # the searches you answered with them
        if near:  # their windows and blends held the forgotten text
            self.refresh(near, expand=False)

    def _unshared_texts(self, memories: Sequence[Memory]) -> list[str]:
        """The embedded texts of `memories` that no memory outside them has."""
        ids = {m.id for m in memories}
        still_used = {(row[1], row[2]) for row in self.db.each_in(SAME_TEXT_SQL, [m.content_hash for m in memories])
                      if row[0] not in ids}
        return [embed_text(m.title, m.content) for m in memories if (m.content_hash, m.title) not in still_used]

    # -- neighbour windows ----------------------------------------------------
    def refresh(self, ids: Iterable[int], own: Mapping[int, np.ndarray] | None = None, expand: bool = True,
                logged: Iterable[int] = ()) -> dict[int, np.ndarray]:
        """Bring the windows of `ids` (and, with `expand`, of their neighbours) up to
        date: the neighbours' text, and the stored vectors blended from the own vectors.

        `own` holds the new own vectors of memories the caller is about to store: their
        blended vectors are returned for it to store. Other memories whose blend changed
        are re-stored here. Own vectors come from the embeddings cache (never the
        embedder); a neighbour without one is left out of the blend.
        """
        return self._apply(neighbours.plan(self.db, ids, expand), own or {}, logged)

    def _apply(self, windows: Sequence[neighbours.Window], own: Mapping[int, np.ndarray],
               logged: Iterable[int]) -> dict[int, np.ndarray]:
        """Store planned windows and re-blended vectors (see refresh)."""
        if not windows:
            return {}
        current = {row[0]: (row[1], row[2]) for row in self.db.each_in(WINDOWS_SQL, [w.id for w in windows])}
        retexted = {w.id for w in windows if w.id in current and current[w.id][0] != w.text}
        self.db.executemany("UPDATE memories SET context = ? WHERE id = ?",
                            [(w.text, w.id) for w in windows if w.id in retexted])
        # Memories changed here that the caller does not log (`logged`, `own`) are logged
        # here, so that the PostgreSQL push sends their new window and vector.
        unlogged = retexted - set(own) - set(logged)
        blended: dict[int, np.ndarray] = {}
        if self.vectors.embedder is not None:
            blended, restored = self._reblend(windows, current, retexted, own)
            unlogged |= restored - set(logged)
        if unlogged:
            self.log(sorted(unlogged), "upsert")
        return blended

    def _reblend(self, windows: Sequence[neighbours.Window], current: Mapping[int, tuple[Any, Any]],
                 retexted: set[int], own: Mapping[int, np.ndarray]) -> tuple[dict[int, np.ndarray], set[int]]:
        """The blends of the caller's own vectors (returned), and the stored blends of
        the others re-stored here (their ids returned too)."""
        in_session = {w.id for w in windows if w.text is not None}
        # A memory that left its session gets its own vector back (blend of no neighbours).
        leaving = {w.id for w in windows if w.text is None and w.id in retexted}
        wanted = (in_session | leaving | {n for w in windows for n in w.neighbours}) - set(own)
        mixed = neighbours.blend_many({**self.vectors.own(wanted), **own}, windows)
        blended = {i: v for i, v in mixed.items() if i in own}
        restore = {w.id: mixed[w.id] for w in windows if w.id in mixed and w.id not in own
                   and (w.id in in_session or w.id in leaving) and current.get(w.id, (None, None))[1]}
        self.vectors.replace(restore)
        return blended, set(restore)
