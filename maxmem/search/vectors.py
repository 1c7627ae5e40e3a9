"""Everything about vectors: the quantizer, the in-RAM index, storage, loading, rescoring.

A memory's vector lives in the sqlite-vec table `memories_vec` (float32, rowid = the
memory's id); its sign bits and int8 codes in `vector_codes`, loaded into a
`VectorIndex` in RAM for the candidate stages of search (432 bytes a memory at
384-d). Codes are taken around the stored vectors' mean (the `Quantizer`). Every text
is embedded once per model: the embeddings cache keeps vectors by text hash, or refers
to a memory's own vec0 row (`by_reference`).

`VectorStore` is one brain.db's vector side. It never opens a transaction except to
cache freshly embedded vectors; writes run inside the caller's (store/rows.py, brain.py).
Embedding happens outside any transaction, and an embedding failure never loses a
memory: it is stored without a vector (`embedded_at` NULL) and backfilled later.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..embeddings import Embedder, bound_query, for_batch, identity, text_hash
from ..errors import DatabaseError, EmbeddingError
from ..memory import Memory
from ..redact import Redactor
from ..store.db import Database
from ..store.records import embed_text
from .neighbours import in_session

log = logging.getLogger("maxmem")

# The quantizer is refitted each time the vector count doubles, up to this many
# vectors; then frozen.
CENTER_SAMPLE = 1000
# Up to this many vectors, VectorStore.mean reads them whole (their int8 codes, taken
# around a centre and spread fitted on as few as half of them, clip the newer ones).
EXACT_MEAN_UP_TO = 16

# The vectors the embeddings cache refers to (by_reference): a memory's own vector,
# read from vec0. The caller checks that the content hashes to the wanted text hash.
HELD_VECTORS_SQL = """
SELECT m.content_hash, m.content, v.embedding
FROM memories m JOIN memories_vec v ON v.rowid = m.id
WHERE m.{column} IN ({marks}) AND m.title IS NULL AND m.embedded_at IS NOT NULL
  AND NOT (m.category = 'conversation' AND m.session_id IS NOT NULL)
"""
# The models the embeddings cache holds vectors of, one index seek each (a plain
# DISTINCT reads the whole index, on every forget: a cost growing with the cache).
CACHE_MODELS_SQL = """
WITH RECURSIVE models (model) AS (
    SELECT min(model) FROM embeddings_cache
    UNION ALL
    SELECT (SELECT min(model) FROM embeddings_cache WHERE model > models.model) FROM models
    WHERE models.model IS NOT NULL
)
SELECT model FROM models WHERE model IS NOT NULL
"""
# Ahead of a query text in the embeddings cache's key (query_vectors): a memory's text
# never holds a NUL (memory.py replaces it), so no memory shares the key.
QUERY_KEY = "\x00query\x00"
CACHED_SQL = "SELECT text_hash, vector FROM embeddings_cache WHERE model = ? AND text_hash IN ({marks})"
EMBEDDED_TEXTS_SQL = "SELECT id, title, content FROM memories WHERE id IN ({marks}) AND embedded_at IS NOT NULL"
STORED_VECTOR_SQL = "SELECT embedding FROM memories_vec WHERE rowid = ?"
EMBEDDER_META = ("embedder", "embedder_provider", "embedder_model", "embedder_dim", "quantizer", "quantizer_n")


def vector_table_sql(dim: int) -> str:
    """The vec0 table of a brain's float vectors.

    sqlite-vec keeps vectors in chunk blobs and reads one vector by walking the chunk's
    overflow pages, so a point lookup (search rescores its head that way) costs time in
    proportion to the chunk's bytes: at 1536-d, chunks of 256 vectors (1.5 MB) took
    ~350 µs a lookup, of 32 (192 KB) ~60 µs, inserting as fast (bench/vector_stages.py).
    Chunks stay near 192 KB.
    """
    chunk = min(256, max(16, 128 * 384 // dim))
    return (f"CREATE VIRTUAL TABLE memories_vec USING vec0("
            f"embedding float[{dim}] distance_metric=cosine, chunk_size={chunk})")


def by_reference(memory: Memory) -> bool:
    """Whether the embeddings cache refers to this memory's vec0 row instead of holding
    a copy of its vector (writing a float16 copy was ~15 % of bulk-insert time at 1536-d).

    True when the stored vector is exactly the embedding of the text the cache is keyed
    by, and a cache lookup can find it (HELD_VECTORS_SQL): no title (the text is the
    content), content without outer whitespace (its content_hash is its text's hash),
    and not a session memory (whose stored vector is blended with its neighbours'; their
    own vectors stay in the cache).
    """
    return (
        memory.title is None
        and not in_session(memory.category, memory.session_id)
        and memory.content == memory.content.strip()
    )


def held_hashes(memories: Iterable[Memory]) -> set[str]:
    """Content hashes of the stored memories whose vec0 row the cache refers to
    (by_reference): their freshly embedded vectors need no cache copy."""
    return {m.content_hash for m in memories if m.embedded_at and by_reference(m)}


Vectors = list["np.ndarray | None"]



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
    def fit(cls, vectors: np.ndarray) -> Quantizer:
        vectors = np.asarray(vectors, dtype=np.float32)
        center = vectors.mean(axis=0)
        spread = np.abs(vectors - center).max(axis=0)
        spread[spread == 0] = 1.0
        return cls(center.astype(np.float32), (spread / 127.0).astype(np.float32))

    @classmethod
    def identity(cls, dim: int) -> Quantizer:
        return cls(np.zeros(dim, np.float32), np.full(dim, 1.0 / 127.0, np.float32))

    def bits(self, vectors: np.ndarray) -> np.ndarray:
        """Sign bits of the centred vectors, padded to whole 64-bit words: (n, words) uint64."""
        return sign_bits(np.atleast_2d(np.asarray(vectors, dtype=np.float32)) - self.center)

    def codes(self, vectors: np.ndarray) -> np.ndarray:
        """int8 codes of the centred vectors: (n, dim)."""
        return self.encode(vectors)[1]

    def encode(self, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(bits, codes) of many vectors, centring them once (the bulk-insert path)."""
        centred = np.atleast_2d(np.asarray(vectors, dtype=np.float32)) - self.center
        bits = sign_bits(centred)
        centred /= self.scale
        np.rint(centred, out=centred)
        np.clip(centred, -127, 127, out=centred)
        return bits, centred.astype(np.int8)

    def mean(self, codes: np.ndarray) -> np.ndarray:
        """The mean of the vectors whose int8 codes are `codes` (n ≥ 1, dim), as the
        in-RAM index knows them: what local search takes a mean of, so PostgreSQL search
        (sync/pgsearch.py) takes its neighbourhood's mean through it too."""
        mean = self.center + np.asarray(codes).mean(axis=0, dtype=np.float32) * self.scale
        return np.asarray(mean, dtype=np.float32)

    def estimates(self, codes: np.ndarray, query: np.ndarray) -> np.ndarray:
        """The plain cosines of `query` to the vectors whose int8 codes are `codes`, as the
        in-RAM index estimates them (VectorIndex.candidates): what local search picks a
        question's neighbourhood by, so PostgreSQL search picks it by them too."""
        q = np.asarray(query, dtype=np.float32)
        return np.asarray(codes, dtype=np.float32) @ (q * self.scale) + float(q @ self.center)

    def to_meta(self) -> str:
        return np.concatenate([self.center, self.scale]).astype(np.float32).tobytes().hex()

    @classmethod
    def from_meta(cls, raw: str) -> Quantizer:
        both = np.frombuffer(bytes.fromhex(raw), dtype=np.float32)
        half = len(both) // 2
        return cls(both[:half].copy(), both[half:].copy())


def sign_bits(centred: np.ndarray) -> np.ndarray:
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
# VectorIndex.above scores this many rows against this many queries at a time: a block
# of scores is 32 MB, the widened rows 12 MB at 384-d.
ABOVE_ROWS = 8192
ABOVE_QUERIES = 1024


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
        self._pending: set[int] = set()  # the ids in _added
        self._mean: tuple[np.ndarray, Quantizer, np.ndarray] | None = None  # (codes, quantizer, mean)

    def __len__(self) -> int:
        self._fold()
        return len(self.ids)

    def mean(self, quantizer: Quantizer) -> np.ndarray:
        """The mean of the indexed vectors: from their int8 codes while the index holds
        at most CENTER_SAMPLE (the quantizer's centre is fitted on as few as half of them
        until then: a brain of three stored one at a time has it from two; 0.2 ms at
        1,000), beyond that the centre itself (fitted on CENTER_SAMPLE of them)."""
        self._fold()
        if not len(self.ids) or len(self.ids) > CENTER_SAMPLE:
            return quantizer.center
        # kept while the codes and the quantizer are the same objects (any change replaces them)
        if self._mean is None or self._mean[0] is not self.codes or self._mean[1] is not quantizer:
            self._mean = (self.codes, quantizer, quantizer.mean(self.codes))
        return self._mean[2]

    def add(self, ids: Sequence[int], bits: np.ndarray, codes: np.ndarray) -> None:
        ids_arr = np.asarray(ids, dtype=np.int64)
        if len(ids_arr):
            self._pending.update(ids_arr.tolist())
            self._added.append((
                ids_arr,
                np.asarray(bits, dtype=np.uint64).reshape(len(ids_arr), self.words),
                np.asarray(codes, dtype=np.int8).reshape(len(ids_arr), self.dim),
            ))

    def remove(self, ids: Iterable[int]) -> None:
        """Removals apply to the folded rows; the appends waiting to be folded lose
        theirs at once (they are few), so that an update never copies the whole matrix."""
        gone = {int(i) for i in ids}
        self._removed.update(gone)
        if not gone & self._pending:
            return
        out = np.fromiter(gone, dtype=np.int64)
        kept = []
        for added in self._added:
            keep = ~np.isin(added[0], out)
            if keep.any():
                kept.append((added[0][keep], added[1][keep], added[2][keep]))
        self._added = kept
        self._pending -= gone

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
            self._pending.clear()
            # A re-added id (an update) keeps only its newest entry; ids stay sorted.
            _, last = np.unique(ids[::-1], return_index=True)
            keep = len(ids) - 1 - last
            self.ids, self.bits, self.codes = ids[keep], np.ascontiguousarray(bits[:, keep]), codes[keep]

    def restricted(self, allowed: np.ndarray) -> VectorIndex:
        """This index over the `allowed` ids only (itself when it holds no others): many
        searches among the same ids narrow it once."""
        self._fold()
        keep = np.isin(self.ids, allowed)
        if keep.all():
            return self
        narrowed = VectorIndex(self.words, self.dim)
        narrowed.ids, narrowed.codes = self.ids[keep], self.codes[keep]
        narrowed.bits = np.ascontiguousarray(self.bits[:, keep])
        return narrowed

    def candidates(
        self, query: np.ndarray, quantizer: Quantizer, count: int, allowed: np.ndarray | None = None,
        centred: bool = False, around: np.ndarray | None = None,
    ) -> dict[int, float]:
        """About the `count` nearest memories, with their approximate cosine similarity
        (with `centred`, taken around `around`, by default the quantizer's centre).

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
            near = nearest(hamming(bits, quantizer.bits(query)[0]), coarse)
        else:
            near = np.arange(len(ids))
        code_rows = near if rows is None else rows[near]
        scores = self._approx(code_rows, query, quantizer, centred, around)
        if len(scores) > count:
            best = np.argpartition(-scores, count - 1)[:count]
            near, scores = near[best], scores[best]
        return dict(zip(ids[near].tolist(), scores.tolist()))

    def above(self, queries: np.ndarray, quantizer: Quantizer, floor: float, count: int) -> list[dict[int, float]]:
        """For each query, the `count` memories nearest to it among those whose
        approximate cosine (the int8 estimate) is at least `floor`: every row scored, by
        matrix products over blocks of rows and queries. The near-duplicate check of a
        whole batch, where a search per query would redo the candidate stages for each."""
        self._fold()
        q = np.atleast_2d(np.asarray(queries, dtype=np.float32))
        weights, offsets = q * quantizer.scale, q @ quantizer.center
        best = np.full((len(q), count), -np.inf, dtype=np.float32)  # the best so far, and their ids
        best_ids = np.zeros((len(q), count), dtype=np.int64)
        for start in range(0, len(self.ids), ABOVE_ROWS):
            widened = self.codes[start:start + ABOVE_ROWS].astype(np.float32)
            ids = self.ids[start:start + ABOVE_ROWS]
            for first in range(0, len(q), ABOVE_QUERIES):
                scores = weights[first:first + ABOVE_QUERIES] @ widened.T
                scores += offsets[first:first + ABOVE_QUERIES, None]
                rows = np.flatnonzero((scores >= floor).any(axis=1))
                if not len(rows):
                    continue
                near = scores[rows]
                take = min(count, near.shape[1])
                top = np.argpartition(near, -take, axis=1)[:, -take:]
                both = np.concatenate([best[first + rows], np.take_along_axis(near, top, axis=1)], axis=1)
                both_ids = np.concatenate([best_ids[first + rows], ids[top]], axis=1)
                keep = np.argpartition(both, -count, axis=1)[:, -count:]
                best[first + rows] = np.take_along_axis(both, keep, axis=1)
                best_ids[first + rows] = np.take_along_axis(both_ids, keep, axis=1)
        return [{int(i): float(score) for i, score in zip(row_ids, row) if score >= floor}
                for row_ids, row in zip(best_ids.tolist(), best.tolist())]

    def approximate(
        self, wanted: Sequence[int], query: np.ndarray, quantizer: Quantizer, centred: bool = False,
        around: np.ndarray | None = None,
    ) -> dict[int, float]:
        """Approximate cosine (or centred cosine, around `around`: by default the
        quantizer's centre) of the query to each wanted id that has a vector."""
        self._fold()
        wanted_arr = np.asarray(list(wanted), dtype=np.int64)
        if not len(wanted_arr) or not len(self.ids):
            return {}
        pos = np.searchsorted(self.ids, wanted_arr).clip(0, len(self.ids) - 1)
        present = self.ids[pos] == wanted_arr
        scores = self._approx(pos[present], query, quantizer, centred, around)
        return dict(zip(wanted_arr[present].tolist(), scores.tolist()))

    def _approx(self, rows: np.ndarray, query: np.ndarray, quantizer: Quantizer, centred: bool = False,
                around: np.ndarray | None = None) -> np.ndarray:
        """Cosine estimates (with `centred`, centred cosine around `around`, by default the
        quantizer's centre: see centred_cosine) from the int8 codes of `rows`.

        Block by block through two small buffers that stay in the CPU cache: gathering
        and widening all the rows at once (15 MB at 100k, 384-d) was slower (3.4 vs 2.7 ms
        for a tenth of 100k rows, bench/vector_stages.py; more under memory pressure).
        """
        q, center = np.asarray(query, dtype=np.float32), quantizer.center
        around = center if around is None else np.asarray(around, dtype=np.float32)
        weights, offset = q * quantizer.scale, float(q @ center)
        out = np.empty(len(rows), dtype=np.float32)
        # a row's vector is center + code × scale: its dot product with `around` is
        # code · (around × scale) + center · around
        center_weights, center_dots = around * quantizer.scale, np.empty(len(rows) if centred else 0, np.float32)
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
            return centred_cosine(out + offset, center_dots + float(around @ center), q, around)
        return out + offset

    def neighbourhood_mean(self, query: np.ndarray, quantizer: Quantizer, count: int,
                           allowed: np.ndarray | None = None) -> np.ndarray | None:
        """The mean of the `count` memories nearest to `query` among the `allowed` (plain
        cosine, from their int8 codes); None when there is none. Whether a search takes
        it is search.hybrid.neighbourhood_centred's to say."""
        nearest_ids = np.fromiter(self.candidates(query, quantizer, count, allowed), dtype=np.int64)
        if not len(nearest_ids):
            return None
        return quantizer.mean(self.codes[np.searchsorted(self.ids, nearest_ids)])


def hamming(bits: np.ndarray, query_bits: np.ndarray) -> np.ndarray:
    """Hamming distance of each memory to the query. The bits are stored word-major
    (words, n), so each word is one contiguous pass: about 3 times faster than row-major
    (bench/vector_stages.py)."""
    distance = np.bitwise_count(bits[0] ^ query_bits[0]).astype(np.uint16)
    for word in range(1, len(bits)):
        distance += np.bitwise_count(bits[word] ^ query_bits[word])
    return distance


def nearest(distance: np.ndarray, count: int) -> np.ndarray:
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
    measures what the memory is about (LoCoMo-10, `bench/locomo.py`: vector-only R@10
    63.3 -> 67.9, hybrid 78.9 -> 80.4; docs/design.md, "The cosine around the mean"). A centre of zeros leaves the
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
    plain, centred = exact_cosines(db, ids, query, center)
    return plain if center is None else centred


def stored_vectors(db: Database, ids: Iterable[int]) -> dict[int, np.ndarray]:
    """The float32 vector of each of `ids` that has one: a vec0 point lookup each."""
    found = {}
    for memory_id in ids:
        blob = db.scalar(STORED_VECTOR_SQL, (int(memory_id),))
        if blob is not None:
            found[int(memory_id)] = decode_vector(blob)
    return found


def exact_cosines(
    db: Database, ids: Iterable[int], query: np.ndarray, center: np.ndarray | None,
    held: Mapping[int, np.ndarray] | None = None,
) -> tuple[dict[int, float], dict[int, float]]:
    """(plain, centred) cosines of the query to each stored vector of `ids`, from one read
    of each: search ranks by the centred one and judges relevance by the plain one, which
    does not depend on the brain (relevance.py). Without `center`, the centred is empty.
    `held`: vectors of some of them already read (stored_vectors)."""
    ids = [int(i) for i in ids]
    held = held or {}
    read = stored_vectors(db, [i for i in ids if i not in held])
    found_ids = [i for i in ids if i in held or i in read]
    if not found_ids:
        return {}, {}
    matrix = np.vstack([held[i] if i in held else read[i] for i in found_ids])
    query = query.astype(np.float32)
    sims = matrix @ query
    centred = {} if center is None else dict(zip(found_ids, centred_cosine(sims, matrix @ center, query,
                                                                            center).tolist()))
    return dict(zip(found_ids, sims.tolist())), centred


# -- one brain.db's vectors -----------------------------------------------------


@dataclass(frozen=True)
class Embedded:
    """Vectors for some texts (None where there is none), and those just embedded, by
    text hash, for the caller to keep in the cache (`VectorStore.cache`) unless a stored
    memory holds them (`by_reference`)."""

    vectors: Vectors
    fresh: dict[str, np.ndarray]
    error: str | None = None  # why the embedder gave no vectors, when it failed


class VectorStore:
    """The vector side of one brain.db: embedding through the cache, the vec0 table,
    the codes and their in-RAM index, the quantizer."""

    def __init__(self, db: Database, embedder: Embedder | None, warnings: list[str] | None = None,
                 redactor: Redactor | None = None) -> None:
        self.db = db
        self.embedder = embedder
        self.redactor = redactor  # search queries lose their secrets before the embedder sees them
        # What went wrong with embedding, for the caller to show (Brain shares its list).
        self.warnings = [] if warnings is None else warnings
        self._index: VectorIndex | None = None
        self._quantizer: Quantizer | None = None
        self._seen_version: tuple[int, str | None] | None = None
        # Query vectors embedded in this process (query_vectors), by model and key.
        self._queries: dict[str, dict[str, np.ndarray]] = {}

    # -- the model ----------------------------------------------------------
    def check_identity(self) -> None:
        """DatabaseError when brain.db holds vectors of another model than the embedder's."""
        recorded = self.db.get_meta("embedder")
        if self.embedder is None or recorded is None:
            return
        assume = getattr(self.embedder, "assume_dim", None)  # remote models: see OpenAIEmbedder
        if (assume is not None and self.embedder.provider == self.db.get_meta("embedder_provider")
                and self.embedder.model == self.db.get_meta("embedder_model")):
            assume(int(self.db.get_meta("embedder_dim") or 0))
        current = identity(self.embedder)
        if current != recorded:
            raise DatabaseError(
                f"{self.db.path} holds vectors from {recorded}, but the embedder in use is {current}: "
                f"run  maxmem reindex  to re-embed every memory with {current} "
                "(or configure the original embedder)"
            )

    def record_embedder(self) -> None:
        assert self.embedder is not None
        if self.db.get_meta("embedder") is None:
            self.db.set_meta("embedder", identity(self.embedder))
            self.db.set_meta("embedder_provider", self.embedder.provider)
            self.db.set_meta("embedder_model", self.embedder.model)
            self.db.set_meta("embedder_dim", str(self.embedder.dim))

    def reset(self) -> None:
        """Drop every vector and the record of the model (reindex; in its transaction)."""
        self.db.execute("DROP TABLE IF EXISTS memories_vec")
        self.db.execute("DELETE FROM vector_codes")
        self.db.execute(f"DELETE FROM meta WHERE key IN ({','.join('?' * len(EMBEDDER_META))})", EMBEDDER_META)
        self.db.execute("UPDATE memories SET embedded_at = NULL")
        self._quantizer, self._index = None, None
        self.record_embedder()
        self.bump_epoch()

    # -- embedding ------------------------------------------------------------
    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def _embedder(self, batch: bool) -> Embedder | None:
        """The embedder, or its batch flavour (a longer deadline, not paused by the
        embedding server's circuit breaker: embeddings.for_batch)."""
        if self.embedder is None or not batch:
            return self.embedder
        return for_batch(self.embedder)

    def _failed(self, exc: EmbeddingError, count: int) -> None:
        # One warning per failure: the calls a circuit breaker refused after it say the same.
        self.warn(pending_note(str(getattr(exc, "failure", None) or exc)))
        log.info("embedding failed, %d memories left pending: %s", count, exc)  # and in .warnings

    def embed(self, texts: Sequence[str], batch: bool = False) -> Embedded:
        """Vectors from the cache, else from the embedder (outside any transaction).

        On an embedding failure the texts get None (stored as pending), a warning, and
        the failure in `Embedded.error`. `batch` for jobs that embed many texts.
        """
        embedder = self._embedder(batch)
        if embedder is None:
            return Embedded([None] * len(texts), {})
        try:  # a remote model of unknown dimension is asked for it here
            model = identity(embedder)
        except EmbeddingError as exc:
            self._failed(exc, len(texts))
            return Embedded([None] * len(texts), {}, str(exc))
        hashes = [text_hash(t) for t in texts]
        cached = self.cached(model, hashes)
        unique: dict[str, str] = {}
        for h, t in zip(hashes, texts):
            if h not in cached:
                unique.setdefault(h, t)
        if not unique:
            return Embedded([cached.get(h) for h in hashes], {})
        try:
            matrix = embedder.embed_documents(list(unique.values()))
        except EmbeddingError as exc:
            self._failed(exc, len(unique))
            return Embedded([cached.get(h) for h in hashes], {}, str(exc))
        fresh = dict(zip(unique, np.asarray(matrix, dtype=np.float32)))
        cached.update(fresh)
        return Embedded([cached.get(h) for h in hashes], fresh)

    def vectors_for(self, texts: Sequence[str], batch: bool = False) -> Embedded:
        """`embed`, keeping what was just embedded in the cache (its own transaction)."""
        embedded = self.embed(texts, batch)
        if embedded.fresh:
            with self.db.atomic():
                self.cache(embedded.fresh)
        return embedded

    def cached_only(self, texts: Sequence[str]) -> Vectors:
        """Vectors the cache already holds; None for the rest (never calls the embedder)."""
        if self.embedder is None:
            return [None] * len(texts)
        try:  # a remote model of unknown dimension is asked for it here (once a process)
            model = identity(self.embedder)
        except EmbeddingError as exc:  # down: nothing is lost, the texts are stored pending
            self._failed(exc, len(texts))
            return [None] * len(texts)
        hashes = [text_hash(t) for t in texts]
        cached = self.cached(model, hashes)
        return [cached.get(h) for h in hashes]

    def embed_query(self, text: str) -> np.ndarray:
        """The query's vector, from a bounded text (a note says when it was cut);
        EmbeddingError, at once while the server's circuit breaker is open, for the
        caller to fall back on keywords."""
        assert self.embedder is not None
        if self.redactor is not None:  # a pasted key in a query must not reach an embedding API
            text = self.redactor.redact(text)[0]
        bounded, note = bound_query(text, count=getattr(self.embedder, "count_tokens", None))
        if note:
            self.warn(note)
        return self.embedder.embed_query(bounded)

    def query_vectors(self, texts: Sequence[str]) -> np.ndarray | None:
        """The query vectors of `texts` (a matrix, one row each), embedded once per model
        and kept in the embeddings cache under a key no memory's text can have (a NUL
        ahead of the text); None without an embedder or when it fails (a warning says
        why). A brain.db that cannot be written keeps them for this process only."""
        if self.embedder is None or not texts:
            return None
        try:
            model = identity(self.embedder)
            keys = [text_hash(QUERY_KEY + t) for t in texts]
            held = {**self.cached(model, keys), **self._queries.get(model, {})}
            missing = [(k, t) for k, t in zip(keys, texts) if k not in held]
            if missing:
                fresh = {k: np.asarray(self.embedder.embed_query(t), dtype=np.float32) for k, t in missing}
                held.update(fresh)
                self._queries.setdefault(model, {}).update(fresh)
                if not self.db.read_only:
                    with self.db.atomic():
                        self.cache(fresh, model)
        except EmbeddingError as exc:
            self.warn(f"the off-topic prompts could not be embedded: {exc}")
            return None
        except DatabaseError:  # busy or read-only: they are kept in this process
            pass
        return np.vstack([held[k] for k in keys]).astype(np.float32)

    # -- the embeddings cache -----------------------------------------------
    def cache(self, fresh: Mapping[str, np.ndarray], model: str | None = None) -> None:
        """Keep vectors (by text hash) in the embeddings cache, as float16."""
        if not fresh or (model is None and self.embedder is None):
            return
        model = model or identity(self.embedder)  # type: ignore[arg-type]
        halves = np.asarray(np.vstack(list(fresh.values())), dtype=np.float16)
        self.db.executemany(
            "INSERT OR IGNORE INTO embeddings_cache (model, text_hash, vector) VALUES (?, ?, ?)",
            [(model, h, v.tobytes()) for h, v in zip(fresh, halves)],
        )

    def cached(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors by text hash.

        The cache holds float16 (half the bytes written per memory; the cosine it
        changes is under 1e-3): a blob of 2 × dim bytes is float16, else float32.
        """
        out: dict[str, np.ndarray] = {}
        dim = model.rsplit(":", 1)[-1]
        half = 2 * int(dim) if dim.isdigit() else -1
        for h, blob in self.db.each_in(CACHED_SQL, hashes, [model]):
            if len(blob) == half:
                vector = np.frombuffer(blob, dtype=np.float16).astype(np.float32)
                out[h] = vector / max(float(np.linalg.norm(vector)), 1e-12)
            else:
                out[h] = np.frombuffer(blob, dtype=np.float32)
        missing = [h for h in dict.fromkeys(hashes) if h not in out]
        if missing and model == self.db.get_meta("embedder"):
            out.update(self._held("content_hash", missing))
        return out

    def _held(self, column: str, values: Sequence[object]) -> dict[str, np.ndarray]:
        """Text hash -> stored vector of the memories (`column` IN `values`) whose vec0 row
        the cache refers to (see by_reference)."""
        held: dict[str, np.ndarray] = {}
        if not self.db.table_exists("memories_vec"):
            return held
        for h, content, blob in self.db.each_in(HELD_VECTORS_SQL.replace("{column}", column), values):
            if text_hash(content) == h:  # the content as embedded, not only as hashed
                held[h] = np.frombuffer(blob, dtype=np.float32)
        return held

    def keep_held(self, ids: Sequence[int]) -> None:
        """Copy into the cache the vectors it only refers to (see by_reference), before
        the memories holding them are deleted or re-embedded: a text is embedded once."""
        model = self.db.get_meta("embedder")  # the model of the stored vectors
        if model is not None:
            self.cache(self._held("id", [int(i) for i in ids]), model)

    def own(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        """The embeddings-cache vector of each memory's own text (not its stored blend)."""
        model = self.db.get_meta("embedder")  # what the cache is keyed by; None: no vectors yet
        wanted = sorted(set(ids))
        if not wanted or model is None:
            return {}
        hashes = {row[0]: text_hash(embed_text(row[1], row[2])) for row in self.db.each_in(EMBEDDED_TEXTS_SQL, wanted)}
        cached = self.cached(model, list(hashes.values()))
        return {i: cached[h] for i, h in hashes.items() if h in cached}

    def forget_texts(self, texts: Iterable[str]) -> None:
        """Drop the cached vectors of these texts, for every model (forgetting: the key is
        the text's hash, a fingerprint of the text). Keyed by (model, hash): deleting by
        both keeps each row an index seek."""
        hashes = sorted({text_hash(t) for t in texts})
        models = [row[0] for row in self.db.execute(CACHE_MODELS_SQL)]
        self.db.executemany(
            "DELETE FROM embeddings_cache WHERE model = ? AND text_hash = ?",
            [(model, h) for model in models for h in hashes],
        )

    # -- stored vectors -------------------------------------------------------
    def ensure_table(self) -> None:
        assert self.embedder is not None
        if not self.db.table_exists("memories_vec"):
            self.db.execute(vector_table_sql(int(self.embedder.dim)))
        self.record_embedder()

    def store(self, ids: Sequence[int], matrix: np.ndarray) -> None:
        """Write float vectors (vec0) and their RAM-stage codes; inside the caller's transaction.

        The ids must have no vector yet (callers drop old ones first).
        """
        self.ensure_table()
        matrix = np.asarray(matrix, dtype=np.float32)
        self.db.executemany(
            "INSERT INTO memories_vec (rowid, embedding) VALUES (?, ?)",
            [(int(i), v.tobytes()) for i, v in zip(ids, matrix)],
        )
        fitted_on = int(self.db.get_meta("quantizer_n", "0") or 0)
        total = self.count() + len(ids)
        refit = fitted_on < CENTER_SAMPLE and total >= max(2 * fitted_on, 1)
        if refit and total == len(ids):
            # The first vectors of a brain fit the quantizer themselves: no read-back
            # (the first CENTER_SAMPLE of a big first batch, as if it came one by one).
            self._set_quantizer(Quantizer.fit(matrix[:CENTER_SAMPLE]), min(total, CENTER_SAMPLE))
            refit = False
        quantizer = self.quantizer() or Quantizer.identity(matrix.shape[1])
        bits, codes = quantizer.encode(matrix)
        self.db.executemany(
            "INSERT OR REPLACE INTO vector_codes (id, bits, codes) VALUES (?, ?, ?)",
            [(int(i), b.tobytes(), c.tobytes()) for i, b, c in zip(ids, bits, codes)],
        )
        if refit:
            self._refit()
        else:
            if self._index is not None:
                self._index.add(ids, bits, codes)
            self.bump_epoch()

    def drop(self, ids: Sequence[int]) -> None:
        if self.db.table_exists("memories_vec"):
            self.db.executemany("DELETE FROM memories_vec WHERE rowid = ?", [(int(i),) for i in ids])
        self.db.executemany("DELETE FROM vector_codes WHERE id = ?", [(int(i),) for i in ids])
        if self._index is not None:
            self._index.remove(ids)
        self.bump_epoch()

    def replace(self, vectors: Mapping[int, np.ndarray]) -> None:
        """Store new vectors for memories that may have one."""
        if vectors:
            self.drop(list(vectors))
            self.store(list(vectors), np.vstack(list(vectors.values())))

    def stored(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        """The stored (float32) vector of each id that has one."""
        if not self.db.table_exists("memories_vec"):
            return {}
        out = {}
        for memory_id in ids:
            blob = self.db.scalar(STORED_VECTOR_SQL, (int(memory_id),))
            if blob is not None:
                out[int(memory_id)] = decode_vector(blob)
        return out

    def similarities(self, ids: Iterable[int], query: np.ndarray, centred: bool = True) -> dict[int, float]:
        """Exact cosine of the query to each stored vector of `ids`: centred around the
        quantizer's centre (search), or plain (near-duplicates, whose thresholds are
        plain cosines)."""
        quantizer = self.quantizer() if centred else None
        return exact_similarities(self.db, ids, query, None if quantizer is None else quantizer.center)

    def count(self) -> int:
        return int(self.db.scalar("SELECT count(*) FROM vector_codes"))

    def mean(self) -> np.ndarray | None:
        """The mean of the stored vectors (None without any): read whole up to
        EXACT_MEAN_UP_TO of them, from the in-RAM index's codes beyond (VectorIndex.mean)."""
        index, quantizer = self.index(), self.quantizer()
        if index is None or quantizer is None or not len(index):
            return None
        if len(index) > EXACT_MEAN_UP_TO:
            return index.mean(quantizer)
        rows = [decode_vector(blob) for (blob,) in self.db.execute("SELECT embedding FROM memories_vec")]
        return np.mean(np.vstack(rows), axis=0).astype(np.float32) if rows else None

    # -- the quantizer and the in-RAM index ---------------------------------
    def quantizer(self) -> Quantizer | None:
        if self._quantizer is None:
            raw = self.db.get_meta("quantizer")
            if raw:
                self._quantizer = Quantizer.from_meta(raw)
        return self._quantizer

    def _refit(self) -> None:
        """Re-centre on the stored vectors and re-take every code.

        Done each time the count doubles until CENTER_SAMPLE vectors, then frozen: a
        thousand memories pin down the model's mean direction well.
        """
        ids, rows = [], []
        for rowid, blob in self.db.execute("SELECT rowid, embedding FROM memories_vec"):
            ids.append(rowid)
            rows.append(np.frombuffer(blob, dtype=np.float32))
        matrix = np.vstack(rows)
        quantizer = self._set_quantizer(Quantizer.fit(matrix), len(ids))
        bits, codes = quantizer.encode(matrix)
        self.db.executemany(
            "UPDATE vector_codes SET bits = ?, codes = ? WHERE id = ?",
            [(b.tobytes(), c.tobytes(), int(i)) for i, b, c in zip(ids, bits, codes)],
        )
        self._index = None
        self.bump_epoch()

    def _set_quantizer(self, quantizer: Quantizer, fitted_on: int) -> Quantizer:
        self._quantizer = quantizer
        self.db.set_meta("quantizer", quantizer.to_meta())
        self.db.set_meta("quantizer_n", str(fitted_on))
        self._index = None  # its codes were taken with the old quantizer
        return quantizer

    def bump_epoch(self) -> None:
        """Tell other processes' indexes that the vectors changed."""
        epoch = int(self.db.get_meta("vectors_epoch", "0") or 0) + 1
        self.db.set_meta("vectors_epoch", str(epoch))
        if self._seen_version is not None:
            self._seen_version = (self._seen_version[0], str(epoch))

    def index(self) -> VectorIndex | None:
        """The in-RAM candidate index, reloaded when another process changed the vectors."""
        if self.embedder is None or not self.db.table_exists("memories_vec"):
            return None
        data_version = int(self.db.scalar("PRAGMA data_version"))
        if self._index is not None and self._seen_version and self._seen_version[0] == data_version:
            return self._index
        epoch = self.db.get_meta("vectors_epoch")
        if self._index is not None and self._seen_version and self._seen_version[1] == epoch:
            self._seen_version = (data_version, epoch)
            return self._index
        self._quantizer = None
        self._index = self._load_index(int(self.embedder.dim))
        self._seen_version = (data_version, epoch)
        return self._index

    def _load_index(self, dim: int) -> VectorIndex:
        quantizer = self.quantizer() or Quantizer.identity(dim)
        words = quantizer.bits(np.zeros(dim, dtype=np.float32)).shape[1]
        index = VectorIndex(words, dim)
        ids, bits, codes = [], [], []
        for memory_id, bit_blob, code_blob in self.db.execute("SELECT id, bits, codes FROM vector_codes"):
            ids.append(memory_id)
            bits.append(bit_blob)
            codes.append(code_blob)
        if ids:
            index.add(
                ids,
                np.frombuffer(b"".join(bits), dtype=np.uint64).reshape(len(ids), words),
                np.frombuffer(b"".join(codes), dtype=np.int8).reshape(len(ids), dim),
            )
        return index


def pending_note(message: str) -> str:
    """An embedding failure as the warning of a write: what happens to the memory."""
    if "maxmem embed" in message:
        return message
    return f"{message}; the memory is kept and will be embedded by  maxmem embed"
