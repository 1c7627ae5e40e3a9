"""Hybrid search: FTS5 keyword candidates + vector candidates, filtered first, fused.

Vector search has three stages so that 100k memories answer faster than an exact
numpy scan held in RAM: the sign bits and int8 codes of every centred vector live in
RAM (`VectorIndex`, 432 bytes a memory at 384-d); Hamming distance on the bits keeps
a tenth, int8 dot products estimate the cosine of those and keep the pool, and after
fusion the head of the ranking is rescored exactly against the float32 vectors in
the sqlite-vec table (a point lookup there costs 25-50 µs, so only the head is). The
cosine is taken around the stored vectors' mean (the quantizer's centre): see
centred_cosine. Keyword candidates come from FTS5 bm25. Both lists are taken after
the filters, then each score is scaled to 0–1 over the candidates and fused:
score = vector_weight × vector + keyword_weight × keyword (less a small penalty for a
memory that is itself a question). What the two sides see of a conversation memory
includes its session neighbours (session_context.py); the query is embedded without
its closing question mark. Measured on LoCoMo: docs/notes/issue-8.md.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from .clock import to_iso
from .db import Database, check_identifier
from .errors import InvalidInput
from .memory import CATEGORIES, STATUSES, clean_text

MODES = ("hybrid", "keyword", "vector")

# Words that carry no topic in a question; dropped from the keyword query unless
# nothing else is left.
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his how
    i if in into is it its itself just me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves s t don didn doesn isn wasn aren weren""".split()
)
WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_TERMS = 64


@dataclass
class Filters:
    """What a memory must match to be a candidate at all."""

    category: str | Sequence[str] | None = None
    kind: str | Sequence[str] | None = None
    tags: Sequence[str] | None = None
    since: Any = None
    until: Any = None
    min_importance: float | None = None
    metadata: dict[str, Any] | None = None
    status: str | Sequence[str] | None = None
    agent: str | None = None
    session_id: str | None = None
    include_superseded: bool = False
    max_importance: float | None = None

    def is_empty(self) -> bool:
        """True when only the default (no superseded memories) applies.

        Then the vector stage runs over the whole index and drops the few superseded
        candidates afterwards, instead of first listing every allowed id.
        """
        return not (
            self.category or self.kind or self.tags or self.status or self.agent
            or self.session_id or self.metadata or self.include_superseded
            or self.since is not None or self.until is not None
            or self.min_importance is not None or self.max_importance is not None
        )

    def where(self) -> tuple[str, list[Any]]:
        """SQL over the memories table aliased `m`, with bound parameters only."""
        clauses: list[str] = []
        params: list[Any] = []

        def one_of(column: str, value: str | Sequence[str], allowed: Sequence[str] | None = None) -> None:
            if not isinstance(value, (str, list, tuple, set, frozenset)):
                raise InvalidInput(f"{column} filter must be text or a list of text, not {type(value).__name__}")
            values = [value] if isinstance(value, str) else list(value)
            if not values:
                return
            for v in values:
                if not isinstance(v, str) or not v:
                    raise InvalidInput(f"{column} filter must be text, not {v!r}")
                if allowed and v not in allowed:
                    raise InvalidInput(f"unknown {column} {v!r}: use one of {', '.join(allowed)}")
            clauses.append(f"m.{column} IN ({','.join('?' * len(values))})")
            params.extend(values)

        if self.category:
            one_of("category", self.category, CATEGORIES)
        if self.kind:
            one_of("kind", self.kind)
        if self.status:
            one_of("status", self.status, STATUSES)
        elif not self.include_superseded:
            clauses.append("m.status != 'superseded'")
        tags = [self.tags] if isinstance(self.tags, str) else self.tags or ()
        if not isinstance(tags, (list, tuple, set, frozenset)) or not all(isinstance(t, str) for t in tags):
            raise InvalidInput("the tags filter must be a list of text")
        for tag in tags:
            clauses.append("EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ?)")
            params.append(tag)
        if self.since is not None:
            clauses.append("m.created_at >= ?")
            params.append(to_iso(self.since))
        if self.until is not None:
            clauses.append("m.created_at < ?")
            params.append(to_iso(self.until))
        if self.min_importance is not None:
            clauses.append("m.importance >= ?")
            params.append(_importance(self.min_importance, "min_importance"))
        if self.max_importance is not None:
            clauses.append("m.importance <= ?")
            params.append(_importance(self.max_importance, "max_importance"))
        for column, value in (("agent", self.agent), ("session_id", self.session_id)):
            if value:
                if not isinstance(value, str):
                    raise InvalidInput(f"the {column} filter must be text, not {type(value).__name__}")
                clauses.append(f"m.{column} = ?")
                params.append(value)
        for key, value in (self.metadata or {}).items():
            check_identifier(key, "metadata key")
            if value is not None and not isinstance(value, (str, int, float)):
                raise InvalidInput(f"metadata filter {key!r} must be a plain value, not {type(value).__name__}")
            if isinstance(value, bool):
                value = int(value)
            elif isinstance(value, int) and not -(2**63) <= value < 2**63:
                value = float(value)  # SQLite keeps integers this large as REAL too
            clauses.append(f"json_extract(m.metadata, '$.{key}') = ?")
            params.append(value)
        # Text as it is stored: a lone surrogate or NUL in a filter cannot be bound as UTF-8.
        params = [clean_text(p) if isinstance(p, str) else p for p in params]
        return " AND ".join(clauses) or "1", params


def _importance(value: Any, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{what} must be a number from 0 to 1, not {value!r}"[:200]) from None
    if isinstance(value, bool) or number != number:
        raise InvalidInput(f"{what} must be a number from 0 to 1, not {value!r}")
    return number


def keyword_terms(text: str) -> list[str]:
    """The words of a question worth matching, lowercased, in order, without repeats."""
    words = [w.lower() for w in WORD.findall(text)]
    kept = [w for w in words if w not in STOP_WORDS] or words
    seen: dict[str, None] = {}
    for w in kept:
        seen.setdefault(w, None)
    return list(seen)[:MAX_QUERY_TERMS]


def checked_query(query: object) -> str:
    """A search query as text, or InvalidInput: an empty query is a mistake (an unset
    shell variable, say), not a request for everything (`maxmem list` is that)."""
    if not isinstance(query, str):
        raise InvalidInput("the search query must be text")
    query = query.replace("\x00", " ")
    if not query.strip():
        raise InvalidInput("the search query is empty: give some words to look for")
    return query


def vector_query(text: str) -> str:
    """The text a query is embedded as: without its closing question marks.

    A question mark pulls the query's vector toward stored questions rather than the
    statements that answer them (LoCoMo, docs/notes/issue-8.md: vector-only R@10 60.8
    -> 63.3 over categories 1-4).
    """
    return text.rstrip().rstrip("?？").rstrip() or text


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression that any user text is safe in: quoted terms joined by OR.

    OR, not AND: a natural question must find memories that share some of its words;
    bm25 ranks those sharing more, rarer words first.
    """
    terms = keyword_terms(text)
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


# bm25 column weights: title, content, tags, context (the memory's date written out and,
# for a conversation memory, its neighbours' text: see session_context.py). The context
# counts less than the memory's own words; the weight was chosen on LoCoMo's tuning pair
# (docs/notes/issue-8.md).
BM25_WEIGHTS = (2.0, 1.0, 1.5, 0.5)

KEYWORD_SQL = """
SELECT m.id AS id, -bm25(memories_fts, {w}) AS score
FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
WHERE memories_fts MATCH ? AND {where}
ORDER BY bm25(memories_fts, {w})
LIMIT ?
"""
# Without filters, FTS5 ranks on its own and the few superseded hits are dropped after.
KEYWORD_SQL_UNFILTERED = """
SELECT rowid AS id, -bm25(memories_fts, {w}) AS score
FROM memories_fts WHERE memories_fts MATCH ?
ORDER BY bm25(memories_fts, {w})
LIMIT ?
"""


def keyword_candidates(db: Database, query: str, filters: Filters, limit: int) -> dict[int, float]:
    """id -> positive bm25 score (higher is better), best `limit` among the filtered."""
    match = fts_query(query)
    if match is None:
        return {}
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    if filters.is_empty():
        sql = KEYWORD_SQL_UNFILTERED.format(w=weights)
        found = {row[0]: float(row[1]) for row in db.execute(sql, [match, limit])}
        return _only_matching(db, found, filters)
    where, params = filters.where()
    sql = KEYWORD_SQL.format(w=weights, where=where)
    return {row[0]: float(row[1]) for row in db.execute(sql, [match, *params, limit])}


# -- vectors ------------------------------------------------------------------

@dataclass
class Quantizer:
    """How stored vectors are compressed for the in-RAM candidate stages.

    Embedding models put every vector in one narrow cone, so bits and int8 codes are
    taken around `center` (the mean of the stored vectors), with one int8 step per
    dimension (`scale`). In a design-time measurement on 5,882 real e5 vectors, sign bits
    around zero kept 45% of the exact top-10 among 100 candidates, around the centre 93%.
    """

    center: np.ndarray
    scale: np.ndarray

    @classmethod
    def fit(cls, vectors: np.ndarray) -> "Quantizer":
        vectors = np.asarray(vectors, dtype=np.float32)
        center = vectors.mean(axis=0)
        spread = np.abs(vectors - center).max(axis=0)
        spread[spread == 0] = 1.0
        return cls(center.astype(np.float32), (spread / 127.0).astype(np.float32))

    @classmethod
    def identity(cls, dim: int) -> "Quantizer":
        return cls(np.zeros(dim, np.float32), np.full(dim, 1.0 / 127.0, np.float32))

    def bits(self, vectors: np.ndarray) -> np.ndarray:
        """Sign bits of the centred vectors, padded to whole 64-bit words: (n, words) uint64."""
        return _sign_bits(np.atleast_2d(np.asarray(vectors, dtype=np.float32)) - self.center)

    def codes(self, vectors: np.ndarray) -> np.ndarray:
        """int8 codes of the centred vectors: (n, dim)."""
        return self.encode(vectors)[1]

    def encode(self, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(bits, codes) of many vectors, centring them once (the bulk-insert path)."""
        centred = np.atleast_2d(np.asarray(vectors, dtype=np.float32)) - self.center
        bits = _sign_bits(centred)
        centred /= self.scale
        np.rint(centred, out=centred)
        np.clip(centred, -127, 127, out=centred)
        return bits, centred.astype(np.int8)

    def to_meta(self) -> str:
        return np.concatenate([self.center, self.scale]).astype(np.float32).tobytes().hex()

    @classmethod
    def from_meta(cls, raw: str) -> "Quantizer":
        both = np.frombuffer(bytes.fromhex(raw), dtype=np.float32)
        half = len(both) // 2
        return cls(both[:half].copy(), both[half:].copy())


def _sign_bits(centred: np.ndarray) -> np.ndarray:
    packed = np.packbits(centred > 0, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


# The Hamming stage keeps this many memories per bit of a vector (38: a tenth at 384-d, a
# fortieth at 1536-d): more bits sort better.
COARSE_BITS = 38
COARSE_MIN = 20  # … and at least this many per memory wanted
# Bytes of float32 rows widened at a time by VectorIndex._approx (fits a CPU cache).
APPROX_BLOCK_BYTES = 1 << 20


class VectorIndex:
    """Sign bits and int8 codes of every stored vector, in RAM, for the candidate stages.

    Appends and removals are buffered and folded in at the next search, so that a loop
    of single `remember` calls does not copy the whole matrix each time.
    """

    def __init__(self, words: int, dim: int) -> None:
        self.words, self.dim = words, dim
        self.ids = np.zeros(0, dtype=np.int64)
        self.bits = np.zeros((words, 0), dtype=np.uint64)  # word-major: one row per 64 bits
        self.codes = np.zeros((0, dim), dtype=np.int8)
        self._added: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._removed: set[int] = set()

    def __len__(self) -> int:
        self._fold()
        return len(self.ids)

    def add(self, ids: Sequence[int], bits: np.ndarray, codes: np.ndarray) -> None:
        ids_arr = np.asarray(ids, dtype=np.int64)
        if len(ids_arr):
            self._fold_removals()
            self._added.append((
                ids_arr,
                np.asarray(bits, dtype=np.uint64).reshape(len(ids_arr), self.words),
                np.asarray(codes, dtype=np.int8).reshape(len(ids_arr), self.dim),
            ))

    def remove(self, ids: Iterable[int]) -> None:
        self._fold()
        self._removed.update(int(i) for i in ids)

    def _fold_removals(self) -> None:
        if self._removed:
            keep = ~np.isin(self.ids, np.fromiter(self._removed, dtype=np.int64))
            self.ids, self.bits, self.codes = self.ids[keep], self.bits[:, keep], self.codes[keep]
            self._removed.clear()

    def _fold(self) -> None:
        self._fold_removals()
        if self._added:
            ids = np.concatenate([self.ids, *(a[0] for a in self._added)])
            bits = np.hstack([self.bits, *(a[1].T for a in self._added)])
            codes = np.vstack([self.codes, *(a[2] for a in self._added)])
            self._added.clear()
            # A re-added id (an update) keeps only its newest entry; ids stay sorted.
            _, last = np.unique(ids[::-1], return_index=True)
            keep = len(ids) - 1 - last
            self.ids, self.bits, self.codes = ids[keep], np.ascontiguousarray(bits[:, keep]), codes[keep]

    def candidates(
        self, query: np.ndarray, quantizer: Quantizer, count: int, allowed: np.ndarray | None = None,
        centred: bool = False,
    ) -> dict[int, float]:
        """About the `count` nearest memories, with their approximate cosine similarity.

        Two stages: Hamming distance on the sign bits keeps a tenth of the memories at
        384-d (a fortieth at 1536-d; at least 20 × count), int8 dot products over
        those keep `count`. The int8
        estimate is within about 0.005 of the exact cosine.
        """
        self._fold()
        ids, rows = self.ids, None
        if allowed is not None:
            rows = np.flatnonzero(np.isin(ids, allowed))
            ids = ids[rows]
        if len(ids) == 0:
            return {}
        bits = self.bits if rows is None else self.bits[:, rows]
        # More bits sort better: a tenth of the memories at 384-d, a fortieth at 1536-d.
        coarse = min(len(ids), max(COARSE_MIN * count, len(ids) * COARSE_BITS // self.dim))
        if coarse < len(ids):
            near = _nearest(_hamming(bits, quantizer.bits(query)[0]), coarse)
        else:
            near = np.arange(len(ids))
        code_rows = near if rows is None else rows[near]
        scores = self._approx(code_rows, query, quantizer, centred)
        if len(scores) > count:
            best = np.argpartition(-scores, count - 1)[:count]
            near, scores = near[best], scores[best]
        return dict(zip(ids[near].tolist(), scores.tolist()))

    def approximate(
        self, wanted: Sequence[int], query: np.ndarray, quantizer: Quantizer, centred: bool = False
    ) -> dict[int, float]:
        """Approximate cosine (or centred cosine) of the query to each wanted id that has a vector."""
        self._fold()
        wanted_arr = np.asarray(list(wanted), dtype=np.int64)
        if not len(wanted_arr) or not len(self.ids):
            return {}
        pos = np.searchsorted(self.ids, wanted_arr).clip(0, len(self.ids) - 1)
        present = self.ids[pos] == wanted_arr
        scores = self._approx(pos[present], query, quantizer, centred)
        return dict(zip(wanted_arr[present].tolist(), scores.tolist()))

    def _approx(self, rows: np.ndarray, query: np.ndarray, quantizer: Quantizer, centred: bool = False) -> np.ndarray:
        """Cosine estimates (with `centred`, centred cosine: see centred_cosine) from the
        int8 codes of `rows`.

        Block by block through two small buffers that stay in the CPU cache: gathering
        and widening all the rows at once (15 MB at 100k, 384-d) was slower (3.4 vs 2.7 ms
        for a tenth of 100k rows, bench/vector_stages.py; more under memory pressure).
        """
        q, center = np.asarray(query, dtype=np.float32), quantizer.center
        weights, offset = q * quantizer.scale, float(q @ center)
        out = np.empty(len(rows), dtype=np.float32)
        center_weights, center_dots = center * quantizer.scale, np.empty(len(rows) if centred else 0, np.float32)
        block = max(64, APPROX_BLOCK_BYTES // (4 * self.dim))
        gathered = np.empty((min(block, len(rows)), self.dim), dtype=np.int8)
        widened = np.empty(gathered.shape, dtype=np.float32)
        for start in range(0, len(rows), block):
            size = min(block, len(rows) - start)
            np.take(self.codes, rows[start : start + size], axis=0, out=gathered[:size])
            widened[:size] = gathered[:size]
            np.matmul(widened[:size], weights, out=out[start : start + size])
            if centred:  # each row's dot product with the centre, while the block is in cache
                np.matmul(widened[:size], center_weights, out=center_dots[start : start + size])
        if centred:
            return centred_cosine(out + offset, center_dots + float(center @ center), q, center)
        return out + offset


def _hamming(bits: np.ndarray, query_bits: np.ndarray) -> np.ndarray:
    """Hamming distance of each memory to the query. The bits are stored word-major
    (words, n), so each word is one contiguous pass: about 3 times faster than row-major
    (bench/vector_stages.py)."""
    distance = np.bitwise_count(bits[0] ^ query_bits[0]).astype(np.uint16)
    for word in range(1, len(bits)):
        distance += np.bitwise_count(bits[word] ^ query_bits[word])
    return distance


def _nearest(distance: np.ndarray, count: int) -> np.ndarray:
    """Positions of the `count` smallest distances (ties at the cut taken in order).

    Distances are small integers, so a histogram finds the cut: a third to a half of the
    time of an argpartition over 100k (bench/vector_stages.py).
    """
    cut = int(np.searchsorted(np.cumsum(np.bincount(distance)), count))
    below = np.flatnonzero(distance < cut)
    return np.concatenate([below, np.flatnonzero(distance == cut)[: count - len(below)]])


def decode_vector(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)


def centred_cosine(dots: np.ndarray, center_dots: np.ndarray, query: np.ndarray, center: np.ndarray) -> np.ndarray:
    """Cosine of the query to each stored vector d, both taken around the stored vectors'
    mean c: (d−c)·(q−c) / (|d−c| |q−c|), from d·q (`dots`) and d·c (`center_dots`) of unit
    vectors.

    An embedding model's vectors all lean one way (LoCoMo's turns are about 0.8 apart),
    so a plain cosine partly measures how typical a memory is; around the mean it
    measures what the memory is about (LoCoMo, docs/notes/issue-8.md "Session 2 levers":
    vector-only R@10 63.3 -> 67.9, hybrid 78.9 -> 80.4). A centre of zeros leaves the
    plain cosine.
    """
    cc, qc = float(center @ center), float(query @ center)
    norms = np.sqrt(np.maximum((1.0 - 2.0 * center_dots + cc) * (1.0 - 2.0 * qc + cc), 1e-12))
    return (dots - center_dots - qc + cc) / norms


def exact_similarities(
    db: Database, ids: Iterable[int], query: np.ndarray, center: np.ndarray | None = None
) -> dict[int, float]:
    """Cosine similarity of the query to each stored vector (unit vectors: a dot product);
    with `center`, the centred cosine (see centred_cosine)."""
    out: dict[int, float] = {}
    ids = [int(i) for i in ids]
    if not ids:
        return out
    found_ids, rows = [], []
    for memory_id in ids:
        blob = db.scalar("SELECT embedding FROM memories_vec WHERE rowid = ?", (memory_id,))
        if blob is not None:
            found_ids.append(memory_id)
            rows.append(decode_vector(blob))
    if rows:
        matrix, query = np.vstack(rows), query.astype(np.float32)
        sims = matrix @ query
        if center is not None:
            sims = centred_cosine(sims, matrix @ center, query, center)
        out = dict(zip(found_ids, sims.tolist()))
    return out


def allowed_ids(db: Database, filters: Filters) -> np.ndarray:
    where, params = filters.where()
    rows = db.execute(f"SELECT m.id FROM memories m WHERE {where}", params).fetchall()
    return np.array([row[0] for row in rows], dtype=np.int64)


# -- fusion -------------------------------------------------------------------

@dataclass
class Scored:
    id: int
    score: float
    vector_score: float | None
    keyword_score: float | None
    raw_vector: float | None = None
    raw_keyword: float | None = None
    penalty: float = 0.0  # taken off for a memory that is a question (ASKING_PENALTY)


def scale(values: dict[int, float]) -> dict[int, float]:
    """Min-max to 0–1 over the candidates (one candidate, or all equal: 1.0)."""
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    if high - low < 1e-12:
        return {k: 1.0 for k in values}
    return {k: (v - low) / (high - low) for k, v in values.items()}


# Taken off the hybrid score of a memory that is itself a question ("What do you
# play?"): it shares a question's words and shape but holds no answer. Chosen on
# LoCoMo's tuning pair (docs/notes/issue-8.md: R@5 +1.7, R@10 +0.9 over all ten).
ASKING_PENALTY = 0.06
QUESTIONS_SQL = (
    "SELECT id FROM memories WHERE id IN ({ids}) "
    "AND (rtrim(content) LIKE '%?' OR rtrim(content) LIKE '%？')"
)


def questions(db: Database, ids: Iterable[int]) -> set[int]:
    """The memories among `ids` whose text ends with a question mark."""
    wanted = [int(i) for i in ids]
    found: set[int] = set()
    for start in range(0, len(wanted), 400):
        chunk = wanted[start : start + 400]
        found.update(row[0] for row in db.execute(QUESTIONS_SQL.format(ids=",".join("?" * len(chunk))), chunk))
    return found


def fuse(
    vector: dict[int, float],
    keyword: dict[int, float],
    vector_weight: float,
    keyword_weight: float,
    unembedded: set[int] | frozenset[int] = frozenset(),
    asking: set[int] | frozenset[int] = frozenset(),
) -> list[Scored]:
    """score = wv·vector + wk·keyword, each min-max scaled over the union of candidates,
    minus ASKING_PENALTY for a memory that is a question (`asking`).

    A candidate absent from a list scores 0 on that side. Every keyword candidate gets an
    exact vector similarity before this (see hybrid_search), so only true non-matches of
    the keyword query score 0 there. A memory still waiting for its vector (`unembedded`)
    has no vector side at all: its keyword score stands for both sides, so an embedding
    outage does not bury what was stored during it.
    """
    total = vector_weight + keyword_weight
    wv, wk = vector_weight / total, keyword_weight / total
    v_scaled, k_scaled = scale(vector), scale(keyword)
    out = []
    for memory_id in set(vector) | set(keyword):
        ks = k_scaled.get(memory_id, 0.0) if keyword or wk else None
        if memory_id in unembedded:
            vs = None
            score = (wv + wk) * (ks or 0.0)
        else:
            vs = v_scaled.get(memory_id, 0.0) if vector else None
            score = wv * (vs or 0.0) + wk * (ks or 0.0)
        penalty = ASKING_PENALTY if memory_id in asking else 0.0
        out.append(Scored(memory_id, score - penalty, vs, ks, vector.get(memory_id), keyword.get(memory_id),
                          penalty))
    out.sort(key=lambda s: (-s.score, -s.id))
    return out


@dataclass
class SearchPlan:
    """How one search ran: for --explain and for the "keyword-only" notice (Brain.search
    sets `note`: it knows why there are no vectors)."""

    mode: str
    match: str | None
    where: str
    params: list[Any] = field(default_factory=list)
    vector_candidates: int = 0
    keyword_candidates: int = 0
    note: str | None = None
    # The best hit's relevance and the threshold it was held to (Brain.search).
    best_relevance: float | None = None
    min_relevance: float | None = None


# Runs the keyword query of a hybrid search beside its vector stages (hybrid_search),
# from this many stored vectors: at 100k it saves a sixth of a search, at 10k nothing
# beyond noise (bench/vector_stages.py: 17.6 vs 21.3 ms, 5.2 vs 5.5 ms).
_WORKERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="maxmem-keyword")
KEYWORD_THREAD_FROM = 30_000


def hybrid_search(
    db: Database,
    query: str,
    query_vector: np.ndarray | None,
    index: VectorIndex | None,
    quantizer: Quantizer | None,
    filters: Filters,
    limit: int,
    vector_weight: float,
    keyword_weight: float,
    mode: str = "hybrid",
    pool: int | None = None,
    rescore: int = 10,
) -> tuple[list[Scored], SearchPlan]:
    """The best `limit` memories among those matching `filters`."""
    if mode not in MODES:
        raise InvalidInput(f"search mode must be one of {', '.join(MODES)}")
    pool = pool or max(50, 5 * limit)
    where, params = filters.where()
    plan = SearchPlan(mode=mode, match=fts_query(query), where=where, params=params)
    use_vectors = query_vector is not None and index is not None and mode != "keyword"
    if mode == "vector" and not use_vectors:
        raise InvalidInput("vector search needs an embedder: configure one or use mode keyword")

    keyword: dict[int, float] = {}
    vector: dict[int, float] = {}
    unembedded: set[int] = set()
    exact: dict[int, float] = {}
    if not use_vectors and mode != "vector":
        keyword = keyword_candidates(db, query, filters, pool)
    if use_vectors:
        assert query_vector is not None and index is not None and quantizer is not None
        allowed = None if filters.is_empty() else allowed_ids(db, filters)
        # In a big brain the keyword query (SQLite, which releases the GIL) runs on a
        # worker thread while the vector stages (numpy) run here: a search costs the
        # slower of the two, not their sum. Nothing here touches the database until it
        # is done. In a small one the hand-over costs more than it saves.
        threaded = mode != "vector" and len(index) >= KEYWORD_THREAD_FROM
        job = _WORKERS.submit(keyword_candidates, db, query, filters, pool) if threaded else None
        try:
            vector = index.candidates(query_vector, quantizer, pool + 8, allowed, centred=True)
        finally:
            keyword = job.result() if job else {}
        if mode != "vector" and not threaded:
            keyword = keyword_candidates(db, query, filters, pool)
        if allowed is None:
            vector = _only_matching(db, vector, filters)
        vector = dict(sorted(vector.items(), key=lambda kv: -kv[1])[:pool])
        if mode == "hybrid":
            missing = [i for i in keyword if i not in vector]
            found = index.approximate(missing, query_vector, quantizer, centred=True)
            vector.update(found)
            unembedded = {i for i in missing if i not in found}
    plan.vector_candidates, plan.keyword_candidates = len(vector), len(keyword)
    asking = questions(db, set(vector) | set(keyword)) if mode == "hybrid" and ASKING_PENALTY else set()

    def ranked() -> list[Scored]:
        if mode == "keyword" or not use_vectors:
            return fuse({}, keyword, 0.0, 1.0)
        if mode == "vector":
            return fuse(vector, {}, 1.0, 0.0)
        return fuse(vector, keyword, vector_weight, keyword_weight, unembedded, asking)

    fused = ranked()
    if use_vectors:
        # The candidates were ranked on int8 estimates; the head is rescored exactly
        # against the float32 vectors in sqlite-vec and ranked again.
        head = [s.id for s in fused[: limit + rescore] if s.id not in unembedded]
        exact = exact_similarities(db, head, query_vector, quantizer.center)  # type: ignore[arg-type, union-attr]
        vector.update(exact)
        fused = ranked()
    return fused[:limit], plan


def _only_matching(db: Database, scores: dict[int, float], filters: Filters) -> dict[int, float]:
    """Drop candidates that fail the default filter (superseded memories)."""
    if not scores:
        return scores
    ids = list(scores)
    where, params = filters.where()
    placeholders = ",".join("?" * len(ids))
    keep = {
        row[0]
        for row in db.execute(
            f"SELECT m.id FROM memories m WHERE m.id IN ({placeholders}) AND {where}", [*ids, *params]
        )
    }
    return {k: v for k, v in scores.items() if k in keep}


def explain_rows(scored: Sequence[Scored]) -> list[dict[str, Any]]:
    return [
        {
            "id": s.id,
            "score": round(s.score, 4),
            "vector": None if s.vector_score is None else round(s.vector_score, 4),
            "keyword": None if s.keyword_score is None else round(s.keyword_score, 4),
            "cosine": None if s.raw_vector is None else round(s.raw_vector, 4),
            "bm25": None if s.raw_keyword is None else round(s.raw_keyword, 4),
            "penalty": round(s.penalty, 4),
        }
        for s in scored
    ]


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
