"""Neighbours: a conversation memory is read together with the turns around it.

A turn of a conversation ("Yeah, I play clarinet!") rarely names what it is about;
the turns around it do ("You play any instruments?"). So each `conversation` memory
with a `session_id` is indexed with the text of the memories just before and after
it in the same session (`memories.context`, a low-weight column of the keyword
index), and its stored vector is its own embedding blended with theirs. The keyword
index also reads every memory's date written out ("8 May 2023", see migration
0005_session_context), so a question naming a date matches what was said that day.

Measured on LoCoMo-10 with bench/locomo.py (docs/design.md, "Neighbours").

This is derived state (the `context` column holds the neighbours' text). After a
write, store/rows.py asks `plan()` which memories need a new window (the written ones and
the neighbours whose window they entered or left), stores the text and re-blends the
vectors from the embeddings cache, so a neighbour arriving never calls the embedder,
and a forgotten memory's text leaves its neighbours' windows too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..store.db import Database

# Neighbours taken on each side, within the same session.
NEIGHBOURS = 2
# Characters of neighbouring text kept on each side (the nearest ones): a window of
# short chat turns fits whole, of long captured chunks only the part next to the memory.
CONTEXT_CHARS = 400
# Weight of the neighbours' mean in the stored vector (the memory's own: 1 - this).
BLEND = 0.4
# Only pieces of one dialogue are read with their neighbours; notes, decisions and
# facts stand on their own.
CATEGORY = "conversation"

# `+category`: look the session up by its index (memories_session), not by scanning
# every conversation memory in the category index.
SESSION_SQL = """
SELECT created_at, id, content FROM memories
WHERE session_id = ? AND +category = 'conversation'
ORDER BY created_at, id
"""


class Pending(NamedTuple):
    """A row about to be inserted, as `plan` needs it."""

    category: str
    session_id: str | None
    created_at: str
    content: str


@dataclass
class Window:
    """The neighbours one memory should be read with now."""

    id: int
    text: str | None          # for memories.context (None: not part of a session)
    neighbours: list[int]     # whose own vectors are blended into its vector


def in_session(category: str, session_id: str | None) -> bool:
    """Whether a memory is read with its session neighbours."""
    return category == CATEGORY and bool(session_id)


def plan(
    db: Database,
    ids: Iterable[int],
    expand: bool = True,
    pending: Mapping[int, Pending] | None = None,
) -> list[Window]:
    """The windows to store for `ids` and, with `expand`, for their neighbours.

    expand=True after a memory was written or moved (its new neighbours' windows
    changed); expand=False for a known list (the former neighbours of a removed one).
    `pending` holds rows about to be inserted (by id), taken as if already stored.
    """
    pending = pending or {}
    wanted = sorted({int(i) for i in ids})
    out: dict[int, Window] = {}
    sessions: dict[str, set[int]] = {}
    chosen = set(wanted)
    found = [(i, p.category, p.session_id) for i, p in pending.items() if i in chosen]
    stored = [i for i in wanted if i not in pending]
    found += db.each_in("SELECT id, category, session_id FROM memories WHERE id IN ({marks})", stored)
    for memory_id, category, session_id in found:
        if session_id is not None and in_session(category, session_id):
            sessions.setdefault(session_id, set()).add(memory_id)
        else:
            out[memory_id] = Window(memory_id, None, [])
    joining: dict[str, list[tuple[str, int, str]]] = {}
    for memory_id, p in pending.items():
        if in_session(p.category, p.session_id) and p.session_id in sessions:
            joining.setdefault(p.session_id, []).append((p.created_at, memory_id, p.content))
    for session_id, changed in sessions.items():
        rows = [(r[0], r[1], r[2]) for r in db.execute(SESSION_SQL, (session_id,))]
        rows = sorted(rows + joining.get(session_id, []))
        order = [r[1] for r in rows]
        text = {r[1]: r[2] for r in rows}
        touched = window_of(order, changed) if expand else changed & set(order)
        for pos, memory_id in enumerate(order):
            if memory_id in touched:
                before, after = neighbours(order, pos)
                out[memory_id] = Window(
                    memory_id,
                    context_text([text[i] for i in before], [text[i] for i in after]),
                    before + after,
                )
    return [out[i] for i in sorted(out)]


def around(db: Database, ids: Iterable[int]) -> set[int]:
    """The session neighbours of `ids` (not `ids` themselves): whose context names them.

    Call before removing or moving memories, then `plan(db, result, expand=False)`.
    """
    wanted = sorted({int(i) for i in ids})
    found: set[int] = set()
    sessions: set[str] = set()
    sessions.update(row[0] for row in db.each_in(
        "SELECT DISTINCT session_id FROM memories WHERE id IN ({marks}) "
        "AND +category = 'conversation' AND session_id IS NOT NULL", wanted))
    for session_id in sessions:
        order = [r[1] for r in db.execute(SESSION_SQL, (session_id,))]
        found |= window_of(order, set(wanted))
    return found - set(wanted)


def window_of(order: Sequence[int], changed: set[int]) -> set[int]:
    """Ids of `order` (a session in time order) within NEIGHBOURS of a changed id, and those."""
    touched: set[int] = set()
    for pos, memory_id in enumerate(order):
        if memory_id in changed:
            touched.update(order[max(0, pos - NEIGHBOURS):pos + NEIGHBOURS + 1])
    return touched


def neighbours(order: Sequence[int], pos: int) -> tuple[list[int], list[int]]:
    """The ids just before and just after position `pos`, nearest first."""
    before = list(order[max(0, pos - NEIGHBOURS):pos])[::-1]
    after = list(order[pos + 1:pos + 1 + NEIGHBOURS])
    return before, after


def context_text(before: Sequence[str], after: Sequence[str]) -> str:
    """The nearest neighbouring text on each side (texts nearest first), in reading order."""
    return " ".join(p for p in (_nearest(before, from_end=True), _nearest(after, from_end=False)) if p)


def _nearest(texts: Sequence[str], from_end: bool) -> str:
    """Up to CONTEXT_CHARS of `texts` (nearest first), cut on the side away from the memory."""
    kept: list[str] = []
    budget = CONTEXT_CHARS
    for text in texts:
        if budget <= 0:
            break
        text = " ".join(text.split())
        if len(text) > budget:
            text = text[-budget:] if from_end else text[:budget]
            space = text.find(" ") if from_end else text.rfind(" ")
            if space > 0:
                text = text[space + 1:] if from_end else text[:space]
        kept.append(text)
        budget -= len(text) + 1
    if from_end:
        kept.reverse()
    return " ".join(kept)


def blend(own: np.ndarray, neighbour_vectors: Sequence[np.ndarray]) -> np.ndarray:
    """Own vector and the neighbours' mean, mixed and brought back to unit length."""
    own = np.asarray(own, dtype=np.float32)
    if not neighbour_vectors:
        return own
    mixed = (1.0 - BLEND) * own + BLEND * np.mean(np.vstack(neighbour_vectors), axis=0)
    norm = float(np.linalg.norm(mixed))
    return (mixed / norm).astype(np.float32) if norm > 0 else own


def blend_many(vectors: Mapping[int, np.ndarray], windows: Sequence[Window]) -> dict[int, np.ndarray]:
    """`blend` for every window whose memory has a vector, in a few array operations.

    Neighbours without a vector are left out of their mean.
    """
    ids = [w.id for w in windows if w.id in vectors]
    if not ids:
        return {}
    keys = list(vectors)
    row = {k: n for n, k in enumerate(keys)}
    matrix = np.vstack([vectors[k] for k in keys]).astype(np.float32)
    out: dict[int, np.ndarray] = {}
    groups: dict[int, list[tuple[int, list[int]]]] = {}
    for w in windows:
        if w.id in vectors:
            present = [row[n] for n in w.neighbours if n in row]
            groups.setdefault(len(present), []).append((w.id, present))
    for count, members in groups.items():
        own = matrix[[row[i] for i, _ in members]]
        if count:
            mean = matrix[np.array([p for _, p in members])].mean(axis=1)
            mixed = (1.0 - BLEND) * own + BLEND * mean
            norms = np.linalg.norm(mixed, axis=1, keepdims=True)
            own = np.where(norms > 0, mixed / np.where(norms > 0, norms, 1), own)
        out.update(zip([i for i, _ in members], own.astype(np.float32)))
    return out
