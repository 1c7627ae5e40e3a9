"""Hybrid search: FTS5 keyword candidates + vector candidates, filtered first, fused.

Vector search has three stages so that 100k memories answer faster than an exact
numpy scan held in RAM: the sign bits and int8 codes of every centred vector live in
RAM (`VectorIndex`, 432 bytes a memory at 384-d); Hamming distance on the bits keeps
a tenth, int8 dot products estimate the cosine of those and keep the pool, and after
fusion the head of the ranking is rescored exactly against the float32 vectors in
the sqlite-vec table (a point lookup there costs 25-50 µs, so only the head is). The
cosine is taken around the stored vectors' mean (the quantizer's centre): see
centred_cosine; each returned hit also carries its plain cosine (`Scored.cosine`), on
which relevance.py judges it. Keyword candidates come from FTS5 bm25 (and, for a query in a script
written without spaces, from memories_spaced too: spaced.py). Both lists are taken after
the filters, then each score is scaled to 0–1 over the candidates and fused:
score = vector_weight × vector + keyword_weight × keyword (less a small penalty for a
memory that is itself a question); with [search] recency_weight above 0, how recent each
candidate is then takes that share of the score (Recency; off by default). What the two
sides see of a conversation memory includes its session neighbours (neighbours.py); the
query is embedded without its closing question mark. Measured on LoCoMo with
bench/locomo.py (docs/design.md). The vector stages themselves are in vectors.py.

From KEYWORD_THREAD_FROM memories the keyword query runs on a worker thread beside the
vector stages, and what needs no keyword result (the vector candidates' filter and
question checks, the stored vectors of the vector side's head; Brain.search adds the
query's term counts) is read meanwhile on a second, read-only connection
(Database.reader): SQLite runs one statement of a connection at a time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np

from ..errors import InvalidInput
from ..memory import Filters
from ..store.db import Database
from .spaced import SPACED_WEIGHTS, spaced_query
from .stopwords import ENGLISH, stop_words_of
from .vectors import Quantizer, VectorIndex, VectorStore, exact_cosines, stored_vectors

MODES = ("hybrid", "keyword", "vector")
T = TypeVar("T")

WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_TERMS = 64


# A question in Hangul has the cosines of its vector side taken around the mean of its
# NEIGHBOURHOOD nearest memories instead of the brain's mean (centred_cosine). The local
# model's Korean vectors lie close together, away from the mean of a brain holding other
# languages: around that mean every Korean memory shares the same lean and looks alike
# to a Korean question (bench/multilingual_eval.py, brain of seven languages: Korean
# hybrid R@10 84.7 -> 95.8; a brain of Korean only 88.9 -> 91.7). Around their
# neighbourhood, Japanese and Latin-script questions lose (German 91.7 -> 80.6: their
# neighbours are the same topic in other languages, and taking them away takes the
# topic), so other scripts keep the brain's mean.
NEIGHBOURHOOD = 100
NEIGHBOURHOOD_SCRIPT = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")


def around_neighbourhood(query: str) -> bool:
    """Whether `query` is in a script whose searches take their cosines around the mean
    of the memories nearest to it (NEIGHBOURHOOD_SCRIPT) rather than the brain's."""
    return NEIGHBOURHOOD_SCRIPT.search(query) is not None


def neighbourhood_centred(query: str, stored: Callable[[], int]) -> bool:
    """Whether a search for `query` takes its cosines around the mean of its NEIGHBOURHOOD
    nearest memories (around_neighbourhood), `stored()` being how many vectors it could
    compare (counted only for such a query): not when there are no more than
    NEIGHBOURHOOD of them, whose mean is the brain's own. The one rule of local search and
    PostgreSQL search (sync/pgsearch.py)."""
    return around_neighbourhood(query) and stored() > NEIGHBOURHOOD


# A question in German, French or Spanish (one whose stop words stopwords.stop_words_of
# finds) gives its keyword side this share of the weight it has in English. The keyword
# index stems words as English does (FTS5's porter), so in those languages a shared
# word is weaker evidence: one common word ("appel" in a question, "appels" in every
# "préfère les appels après 8 h") lifted near-topic memories above what the vectors found
# (bench/multilingual_eval.py, brain of seven languages: French hybrid R@10 87.5 ->
# 91.7, Spanish 94.4 -> 95.8, German 91.7 either way). Chosen on the dev half between 1/3
# and 2/3: 1/3 cost French R@1 on the set whose questions share a noun with their memory
# (`--set basic`: 90 -> 70; 2/3: 85).
OTHER_LANGUAGE_KEYWORD_SHARE = 2 / 3


def keyword_share(query: str) -> float:
    """The share of its configured weight the keyword side keeps in a search for `query`
    (OTHER_LANGUAGE_KEYWORD_SHARE for a question in German, French or Spanish, else 1)."""
    words = [w.lower() for w in WORD.findall(query)]
    return OTHER_LANGUAGE_KEYWORD_SHARE if stop_words_of(words) != ENGLISH else 1.0


def fusion_weights(query: str, mode: str, use_vectors: bool, vector_weight: float,
                   keyword_weight: float) -> tuple[float, float]:
    """The (vector, keyword) weights a search for `query` fuses with: one side alone in
    mode keyword (or without vectors) and vector; in mode hybrid the configured ones,
    the keyword side keeping keyword_share(query) of its share of them. Local search and
    PostgreSQL search (sync/pgsearch.py) both weigh with this."""
    if mode == "keyword" or not use_vectors:
        return 0.0, 1.0
    if mode == "vector":
        return 1.0, 0.0
    share, total = keyword_share(query), vector_weight + keyword_weight
    if share == 1.0 or total <= 0:
        return vector_weight, keyword_weight
    keyword = share * keyword_weight / total
    return 1.0 - keyword, keyword


def keyword_terms(text: str) -> list[str]:
    """The words of a question worth matching, lowercased, in order, without repeats: its
    stop words (stopwords.py: English's, and German's, French's or Spanish's in a question
    in that language) dropped unless nothing else is left."""
    words = [w.lower() for w in WORD.findall(text)]
    stop = stop_words_of(words)
    kept = [w for w in words if w not in stop] or words
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
    statements that answer them (LoCoMo-10, bench/locomo.py: vector-only R@10 60.8
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
# for a conversation memory, its neighbours' text: see neighbours.py). The context
# counts less than the memory's own words; the weight was chosen on LoCoMo's tuning pair
# (bench/locomo.py; docs/design.md).
BM25_WEIGHTS = (2.0, 1.0, 1.5, 0.5)

KEYWORD_SQL = """
SELECT m.id AS id, -bm25({table}, {w}) AS score
FROM {table} JOIN memories m ON m.id = {table}.rowid
WHERE {table} MATCH ? AND {where}
ORDER BY bm25({table}, {w})
LIMIT ?
"""
# Without filters, FTS5 ranks on its own and the few superseded hits are dropped after.
KEYWORD_SQL_UNFILTERED = """
SELECT rowid AS id, -bm25({table}, {w}) AS score
FROM {table} WHERE {table} MATCH ?
ORDER BY bm25({table}, {w})
LIMIT ?
"""


def keyword_matches(query: str) -> list[tuple[str, str, tuple[float, ...]]]:
    """The keyword indexes `query` is asked in: (table, MATCH expression, bm25 weights).

    memories_fts always (when the query has a word); memories_spaced too when the query
    holds characters of scripts written without spaces (spaced.py)."""
    asked = [("memories_fts", fts_query(query), BM25_WEIGHTS),
             ("memories_spaced", spaced_query(query), SPACED_WEIGHTS)]
    return [(table, match, weights) for table, match, weights in asked if match is not None]


def keyword_candidates(db: Database, query: str, filters: Filters, limit: int) -> dict[int, float]:
    """id -> positive bm25 score (higher is better), best `limit` among the filtered."""
    scores = _keyword_scores(db, query, filters, limit)
    return _only_matching(db, scores, filters) if filters.is_empty() else scores


def _keyword_scores(db: Database, query: str, filters: Filters, limit: int) -> dict[int, float]:
    """The best `limit` for `query` over every keyword index it is asked in, a memory's
    bm25 scores summed; without filters, FTS5 ranks on its own (superseded hits kept)."""
    where, params = filters.sql
    scores: dict[int, float] = {}
    for table, match, weights in keyword_matches(query):
        w = ", ".join(str(x) for x in weights)
        if filters.is_empty():
            rows = db.execute(KEYWORD_SQL_UNFILTERED.format(table=table, w=w), [match, limit])
        else:
            rows = db.execute(KEYWORD_SQL.format(table=table, w=w, where=where), [match, *params, limit])
        for memory_id, score in rows:
            scores[memory_id] = scores.get(memory_id, 0.0) + float(score)
    if len(scores) > limit:
        scores = dict(sorted(scores.items(), key=lambda kv: -kv[1])[:limit])
    return scores


def _keyword_side(db: Database, query: str, filters: Filters, limit: int,
                  asked: bool) -> tuple[dict[int, float], EarlyReads]:
    """keyword_candidates and, with `asked`, which of them are questions (found by the
    read that drops the superseded ones, where there is one)."""
    if not asked or not keyword_matches(query):
        return keyword_candidates(db, query, filters, limit), EarlyReads()
    if filters.is_empty():
        return _screened(db, _keyword_scores(db, query, filters, limit), filters)
    return _screened(db, keyword_candidates(db, query, filters, limit), None)


def allowed_ids(db: Database, filters: Filters) -> np.ndarray:
    where, params = filters.sql
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
    # The plain cosine (not centred) of a returned hit with a vector: relevance.py's
    # evidence, which unlike the centred one does not depend on the brain's centre.
    cosine: float | None = None
    # The weights its score was fused with, (vector, keyword), as applied to this memory:
    # score = vector × weights[0] + keyword × weights[1] − penalty (fuse).
    weights: tuple[float, float] = (0.0, 1.0)
    # How recent it is among the candidates (1: the newest), when recency counts
    # (Recency): the score above is then (1 − weight) × that + weight × this.
    recency: float | None = None


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
# LoCoMo's tuning pair (bench/locomo.py: R@5 +1.7, R@10 +0.9 over all ten).
ASKING_PENALTY = 0.06
# A memory whose text ends with a question mark (ASCII or full-width).
ASKS_SQL = "(rtrim(m.content) LIKE '%?' OR rtrim(m.content) LIKE '%？')"
QUESTIONS_SQL = f"SELECT m.id FROM memories m WHERE m.id IN ({{marks}}) AND {ASKS_SQL}"


def questions(db: Database, ids: Iterable[int]) -> set[int]:
    """The memories among `ids` whose text ends with a question mark."""
    return {row[0] for row in db.each_in(QUESTIONS_SQL, [int(i) for i in ids])}


def fuse(
    vector: dict[int, float],
    keyword: dict[int, float],
    vector_weight: float,
    keyword_weight: float,
    unembedded: set[int] | frozenset[int] = frozenset(),
    asking: set[int] | frozenset[int] = frozenset(),
    top: int | None = None,
) -> list[Scored]:
    """score = wv·vector + wk·keyword, each min-max scaled over the union of candidates,
    minus ASKING_PENALTY (at most down to 0: a score is in [0, 1]) for a memory that is a
    question (`asking`); the best `top` (None: all), best first. This is the one rank
    score: local search, PostgreSQL search (sync/pgsearch.py) and --explain use it.

    A candidate absent from a list scores 0 on that side. Every keyword candidate gets an
    exact vector similarity before this (see hybrid_search), so only true non-matches of
    the keyword query score 0 there. A memory still waiting for its vector (`unembedded`)
    has no vector side at all: its keyword score stands for both sides, so an embedding
    outage does not bury what was stored during it.
    """
    total = vector_weight + keyword_weight
    wv, wk = vector_weight / total, keyword_weight / total
    v_scaled, k_scaled = scale(vector), scale(keyword)
    ranked = []
    for memory_id in set(vector) | set(keyword):
        ks = k_scaled.get(memory_id, 0.0) if keyword or wk else None
        # A memory still waiting for its vector is ranked by what it has: its keyword
        # score carries both weights.
        weights = (0.0, wv + wk) if memory_id in unembedded else (wv, wk)
        vs = v_scaled.get(memory_id, 0.0) if vector and memory_id not in unembedded else None
        score = weights[0] * (vs or 0.0) + weights[1] * (ks or 0.0)
        # A question loses at most what it scored: a rank score stays within [0, 1].
        penalty = min(ASKING_PENALTY, score) if memory_id in asking else 0.0
        # sorted on (-score, -id): ids are unique, so nothing after them is compared
        ranked.append((-(score - penalty), -memory_id, vs, ks, penalty, weights))
    ranked.sort()
    return [Scored(-i, -negated, vs, ks, vector.get(-i), keyword.get(-i), penalty, weights=weights)
            for negated, i, vs, ks, penalty, weights in ranked[:top]]


@dataclass(frozen=True)
class Recency:
    """How much a memory's date counts in the rank score ([search] recency_weight,
    recency_half_life): score = (1 − weight) × fused + weight × recency, where recency is
    1 for the newest candidate and halves every `half_life_days` older. Weight 0 (the
    default) leaves the ranking as fusion makes it."""

    weight: float = 0.0
    half_life_days: float = 30.0


# Each candidate's creation date as a day number (julianday reads the stored ISO times).
DAYS_SQL = "SELECT m.id, julianday(m.created_at) FROM memories m WHERE m.id IN ({marks})"


def recency_of(db: Database, ids: Iterable[int], half_life_days: float) -> dict[int, float]:
    """1 for the newest of `ids`, halving every `half_life_days` older (a memory without a
    readable date is left out: 0)."""
    days = {int(i): float(d) for i, d in db.each_in(DAYS_SQL, [int(i) for i in ids]) if d is not None}
    return recency_of_days(days, half_life_days)


def recency_of_days(days: Mapping[int, float], half_life_days: float) -> dict[int, float]:
    """1 for the candidate of the latest day number, halving every `half_life_days` older:
    recency's one formula (local search reads the days from brain.db, PostgreSQL search
    from its rows)."""
    newest = max(days.values(), default=0.0)
    return {i: 0.5 ** ((newest - d) / half_life_days) for i, d in days.items()}


def recent_first(scored: Sequence[Scored], recency: Mapping[int, float], weight: float) -> list[Scored]:
    """`scored` ranked again on (1 − weight) × score + weight × recency, best first."""
    again = [replace(s, score=(1.0 - weight) * s.score + weight * recency.get(s.id, 0.0),
                     recency=recency.get(s.id, 0.0)) for s in scored]
    again.sort(key=lambda s: (-s.score, -s.id))
    return again


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


def threaded(mode: str, index: VectorIndex | None) -> bool:
    """Whether a search runs its keyword query on the worker thread (KEYWORD_THREAD_FROM)."""
    return mode != "keyword" and index is not None and len(index) >= KEYWORD_THREAD_FROM


def beside(fn: Callable[..., T], *args: Any) -> Future[T]:
    """Run `fn(*args)` on a worker thread: for work a search can do while its own
    stages run (it must touch the database only through a connection of its own)."""
    return _WORKERS.submit(fn, *args)


# The vector candidates drawn beyond the pool, best first around the brain's mean: room
# for those the filters drop after (unfiltered, the superseded), and for a question ranked
# around its neighbourhood (neighbourhood_centred) to reorder the draw before the pool is cut.
VECTOR_SPARE = 8


def pool_size(candidates: int, limit: int) -> int:
    """How many candidates each side of a search for `limit` hits brings: `candidates`
    for ten or fewer, as many more per hit beyond ([search] candidates)."""
    return max(candidates, candidates * limit // 10)


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
    spare: Database | None = None,
    recency: Recency = Recency(),
) -> tuple[list[Scored], SearchPlan]:
    """The best `limit` memories among those matching `filters`; `pool`: how many
    candidates each side brings (None: max(50, 5 × limit)); `recency`: how much their
    dates count (Recency; by default not at all).

    `spare`: a second connection to the same brain.db (Database.reader). While the
    keyword query holds `db` on the worker thread, the reads that do not wait for its
    result go there, so they cost no time of their own."""
    if mode not in MODES:
        raise InvalidInput(f"search mode must be one of {', '.join(MODES)}")
    pool = pool or pool_size(50, limit)
    where, params = filters.sql
    plan = SearchPlan(mode=mode, match=fts_query(query), where=where, params=params)
    use_vectors = query_vector is not None and index is not None and mode != "keyword"
    if mode == "vector" and not use_vectors:
        raise InvalidInput("vector search needs an embedder: configure one or use mode keyword")

    keyword: dict[int, float] = {}
    vector: dict[int, float] = {}
    unembedded: set[int] = set()
    exact: dict[int, float] = {}
    early = said = EarlyReads()  # what the vector side and the keyword side read
    around: np.ndarray | None = None  # the point cosines are taken around, when not the brain's mean
    if not use_vectors and mode != "vector":
        keyword = keyword_candidates(db, query, filters, pool)
    if use_vectors:
        assert query_vector is not None and index is not None and quantizer is not None
        allowed = None if filters.is_empty() else allowed_ids(db, filters)
        # In a big brain the keyword query (SQLite, which releases the GIL) runs on a
        # worker thread while the vector stages (numpy) run here: a search costs the
        # slower of the two, not their sum. Meanwhile this thread reads only through
        # `spare` (SQLite runs one statement of a connection at a time), and what needs
        # no keyword result is read there. In a small brain the hand-over costs more
        # than it saves.
        asked = mode == "hybrid" and bool(ASKING_PENALTY)
        aside = mode != "vector" and threaded(mode, index)
        job = _WORKERS.submit(_keyword_side, db, query, filters, pool, asked) if aside else None
        reader = spare if job else None
        if neighbourhood_centred(query, index.__len__):
            around = index.neighbourhood_mean(query_vector, quantizer, NEIGHBOURHOOD, allowed)
        try:
            vector = index.candidates(query_vector, quantizer, pool + VECTOR_SPARE, allowed, centred=True)
            if around is not None:  # drawn around the brain's mean, ranked around the neighbourhood's
                vector = index.approximate(list(vector), query_vector, quantizer, centred=True, around=around)
            vector, early = _vector_pool(reader or db, vector, filters if allowed is None else None, asked, pool)
            if reader is not None:  # the head's stored vectors, as the vector side alone ranks it
                early = replace(early, held=stored_vectors(reader, list(vector)[: limit + rescore]))
        finally:
            keyword, said = job.result() if job else ({}, EarlyReads())
        if mode != "vector" and not aside:
            keyword, said = _keyword_side(db, query, filters, pool, asked)
        if mode == "hybrid":
            missing = [i for i in keyword if i not in vector]
            found = index.approximate(missing, query_vector, quantizer, centred=True, around=around)
            vector.update(found)
            unembedded = {i for i in missing if i not in found}
    plan.vector_candidates, plan.keyword_candidates = len(vector), len(keyword)
    asking: set[int] = set()
    if mode == "hybrid" and ASKING_PENALTY and use_vectors:  # (fusion on keywords alone ignores it)
        unread = (set(vector) | set(keyword)) - early.checked - said.checked
        asking = questions(db, unread) | early.asking | said.asking

    recent = recency_of(db, set(vector) | set(keyword), recency.half_life_days) if recency.weight else None
    wv, wk = fusion_weights(query, mode, use_vectors, vector_weight, keyword_weight)

    def ranked(top: int) -> list[Scored]:
        every = None if recent is not None else top  # recency reorders all the candidates
        if mode == "keyword" or not use_vectors:
            fused = fuse({}, keyword, wv, wk, top=every)
        elif mode == "vector":
            fused = fuse(vector, {}, wv, wk, top=every)
        else:
            fused = fuse(vector, keyword, wv, wk, unembedded, asking, every)
        return fused if recent is None else recent_first(fused, recent, recency.weight)[:top]

    fused = ranked(limit + rescore)
    plain: dict[int, float] = {}
    if use_vectors:
        assert query_vector is not None and quantizer is not None
        # The candidates were ranked on int8 estimates; the head is rescored exactly
        # against the float32 vectors in sqlite-vec and ranked again.
        head = [s.id for s in fused[: limit + rescore] if s.id not in unembedded]
        centre = quantizer.center if around is None else around
        plain, exact = exact_cosines(db, head, query_vector, centre, early.held)
        vector.update(exact)
        fused = ranked(limit)
        late = [s.id for s in fused[:limit] if s.id not in plain and s.id not in unembedded]
        plain.update(exact_cosines(db, late, query_vector, None)[0])
    return [replace(s, cosine=plain.get(s.id)) for s in fused[:limit]], plan


# How far the int8 estimate of a cosine may be from the exact one (about 0.005; see
# VectorIndex.candidates), with room to spare.
ESTIMATE_SLACK = 0.01


def similar(db: Database, vectors: VectorStore, vector: np.ndarray, filters: Filters,
            limit: int) -> list[tuple[int, float]]:
    """(id, plain cosine) of the stored memories nearest to `vector` among the filtered,
    most similar first: the near-duplicate search (curation's thresholds are plain
    cosines). A few more than `limit`, for the caller to drop superseded ones."""
    return similar_many(db, vectors, [vector], filters, limit)[0]


def similar_many(db: Database, vectors: VectorStore, queries: Sequence[np.ndarray], filters: Filters,
                 limit: int, at_least: float | None = None) -> list[list[tuple[int, float]]]:
    """`similar` for each of many vectors, under the same filters: the ids they allow are
    read, and the in-RAM index narrowed to them, once for all. `at_least`: only the
    memories whose cosine may reach it (a near-duplicate check's lowest threshold),
    which spares reading the stored vectors of the others."""
    index = vectors.index()
    if index is None or not queries:
        return [[] for _ in queries]
    allowed = None if filters.is_empty() else allowed_ids(db, filters)
    quantizer = vectors.quantizer() or Quantizer.identity(len(queries[0]))
    pool = max(16, 4 * limit)
    if at_least is not None and len(queries) > 1:
        # A batch: every allowed row scored once by matrix products, the pool drawn from
        # those that may reach `at_least`.
        narrowed = index if allowed is None else index.restricted(allowed)
        pools = narrowed.above(np.vstack(queries), quantizer, at_least - ESTIMATE_SLACK, pool)
    else:
        # The int8 estimates rank near-duplicates first; a small pool keeps curation cheap.
        pools = [index.candidates(vector, quantizer, pool, allowed) for vector in queries]
        if at_least is not None:
            pools = [{i: s for i, s in found.items() if s >= at_least - ESTIMATE_SLACK} for found in pools]
    # Each stored vector read once, however many of the queries it is near.
    held = stored_vectors(db, sorted(set().union(*pools))) if len(queries) > 1 else None
    found = []
    for vector, ids in zip(queries, pools):
        exact = exact_cosines(db, ids, vector, None, held)[0]
        found.append(sorted(exact.items(), key=lambda kv: -kv[1])[: limit + 8])
    return found


@dataclass(frozen=True)
class EarlyReads:
    """What a search read of its vector candidates before the keyword result was in."""

    checked: frozenset[int] = frozenset()  # the ids looked at for ASKING_PENALTY
    asking: frozenset[int] = frozenset()  # those of them that are questions
    held: dict[int, np.ndarray] = field(default_factory=dict)  # stored vectors


SCREEN_SQL = f"SELECT m.id, {ASKS_SQL} FROM memories m WHERE {{where}} AND m.id IN ({{marks}})"


def _vector_pool(db: Database, vector: dict[int, float], filters: Filters | None, asked: bool,
                 pool: int) -> tuple[dict[int, float], EarlyReads]:
    """The best `pool` vector candidates, best first, after dropping those that fail
    `filters` (None: the candidate stages filtered already); with `asked`, which of them
    are questions, found by the same read."""
    if not asked:
        vector = _only_matching(db, vector, filters) if filters is not None else vector
        return dict(sorted(vector.items(), key=lambda kv: -kv[1])[:pool]), EarlyReads()
    kept, read = _screened(db, vector, filters)
    return dict(sorted(kept.items(), key=lambda kv: -kv[1])[:pool]), read


def _screened(db: Database, scores: dict[int, float],
              filters: Filters | None) -> tuple[dict[int, float], EarlyReads]:
    """`scores` without the candidates failing `filters` (None: none checked), and which
    of those kept are questions (as `questions` finds them): one read."""
    where, params = filters.sql if filters is not None else ("1", [])
    flags = dict(db.each_in(SCREEN_SQL.replace("{where}", where), list(scores), params))
    kept = {k: v for k, v in scores.items() if k in flags}
    return kept, EarlyReads(frozenset(flags), frozenset(i for i, asks in flags.items() if asks))


def _only_matching(db: Database, scores: dict[int, float], filters: Filters) -> dict[int, float]:
    """Drop candidates that fail the default filter (superseded memories)."""
    if not scores:
        return scores
    where, params = filters.sql
    keep = {row[0] for row in db.each_in(f"SELECT m.id FROM memories m WHERE {where} AND m.id IN ({{marks}})",
                                         list(scores), params)}
    return {k: v for k, v in scores.items() if k in keep}


def explain_rows(scored: Sequence[Scored]) -> list[dict[str, Any]]:
    return [
        {
            "id": s.id,
            "score": round(s.score, 4),
            "vector": None if s.vector_score is None else round(s.vector_score, 4),
            "keyword": None if s.keyword_score is None else round(s.keyword_score, 4),
            "cosine": None if s.raw_vector is None else round(s.raw_vector, 4),
            "similarity": None if s.cosine is None else round(s.cosine, 4),
            "bm25": None if s.raw_keyword is None else round(s.raw_keyword, 4),
            "penalty": round(s.penalty, 4),
            "weights": [round(w, 4) for w in s.weights],
            **({} if s.recency is None else {"recency": round(s.recency, 4)}),
        }
        for s in scored
    ]
