"""Cross-agent recall: the hybrid ranking of maxmem/search/hybrid.py, run inside PostgreSQL.

The same steps as local search, over every pushing agent's memories:
- keyword candidates: FTS5's bm25 recomputed in SQL (k1 = 1.2, b = 0.75, the same
  column weights, IDF floored at 1e-6, document count and average length over the
  whole table) on the FTS5 tokens the push stored, so scores equal brain.db's; for a
  query in a script written without spaces, memories_spaced's bm25 too, over that
  index's tokens (the spaced_* columns), rows and weights, each index's best `pool`
  summed as search.hybrid.keyword_candidates sums them;
- vector candidates: cosine similarity to the query vector (HNSW when pgvector is
  there, exact over real[] otherwise; exact as well when filters are given, as local
  search restricts its candidates to the filtered ids), and every keyword candidate
  gets its exact similarity too; as locally, the cosine is taken around a centre, the
  querying brain's (search.centred_cosine), or for a question in Hangul the mean of its
  search.hybrid.NEIGHBOURHOOD nearest vectors (search.hybrid.neighbourhood_centred;
  picked, as locally, by the brain's int8 estimate among NEIGHBOURHOOD_DRAWN drawn by
  the exact cosine, and averaged through their codes: Quantizer.mean); the pool and
  search.hybrid.VECTOR_SPARE more are drawn around the brain's centre (HNSW, unfiltered:
  by the plain cosine; superseded ones dropped after), the pool kept from them;
- fused by search.hybrid.fuse itself, the one rank score of local search, with the weights
  of search.hybrid.fusion_weights (a question in German, French or Spanish weighs its
  keywords less): both scaled min-max to 0–1 over their candidates, vector_weight ×
  vector + keyword_weight × keyword, less search.hybrid.ASKING_PENALTY for a memory that
  is a question (search.hybrid.ASKS_SQL), ties broken by the newer local id; a keyword
  candidate without a comparable vector lets its keyword score stand for both sides, as
  local search does for memories still waiting for their vector;
- with the querying brain's settings: each side brings `[search] candidates`
  (search.hybrid.pool_size), and `[search] recency_weight` and `recency_half_life` rank
  the fused candidates again by their dates (search.hybrid.recent_first), as locally;
- judged as locally (search.relevance.judge and verdict, JUDGED_HITS deep, min_relevance
  cutting the list), from evidence read here: plain cosines, the hits' vectors (their
  hubness), the query's terms' document counts over every memory here and which of them
  each hit holds (the pushed tokens); the typical cosine is the querying brain's.
Local search estimates the cosine of its vector candidates from int8 codes and
computes it exactly only for the head of the ranking; here every cosine is exact, so
scores can differ from local ones by the estimate's error (about 0.005 of cosine)
wherever local search used an estimate.
Only vectors from the querying brain's embedder are compared; memories embedded by
another model rank by keyword alone.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import apsw
import numpy as np

from ..clock import iso, to_iso
from ..embeddings import identity
from ..errors import EmbeddingError, InvalidInput
from ..memory import Filters, Memory, clean_text
from ..search import hybrid as search_mod
from ..search import relevance
from ..search.hybrid import MODES
from ..search.spaced import SPACED_RUN, SPACED_WEIGHTS
from ..search.vectors import Quantizer
from ..store.db import check_identifier
from .pgconnect import SyncError, connect, describe_error, psycopg_module, target_name
from .pgschema import pending_migrations, read_schema, stale_agents
from .terms import COLUMN_LABELS, Tokenizer, column_weights, phrase_query, query_payload, quote_lexeme

if TYPE_CHECKING:  # pragma: no cover
    from ..brain import Brain

MEMORY_COLUMNS = (
    "local_id", "uid", "category", "kind", "title", "content", "tags", "importance", "status",
    "started_at", "resolved_at", "source", "agent", "session_id", "metadata", "content_hash",
    "pinned", "superseded_by", "created_at", "updated_at", "last_recalled_at", "recall_count",
    "embedded_at",
)

# FTS5's bm25 in one pass over the memories that match the query: the SQL is written
# for the query's phrases (k of them), so each memory's score is one expression:
#   sum over k of idf_k * f_k * (k1 + 1) / (f_k + k1 * (1 - b + b * length / avgdl))
# (bm25_sql) where f_k, phrase k's frequency weighted by column, comes for a one-word
# phrase from the exact per-column counts in fts_freq, and for a phrase of several tokens
# from the tsvector's positions (tokens at consecutive positions).
FTS_CTES = """
stats AS (
    SELECT count(*)::float8 AS n, coalesce(sum(fts_length), 0)::float8 AS tokens FROM maxmem.memories
),
idf AS MATERIALIZED (  -- once, not per matching memory
    SELECT {idf_columns} FROM stats s
),
matched AS (
    SELECT row_number() OVER () AS doc, m.instance_id, m.uid, m.fts_length, m.fts_freq, m.tsv,
           {has_vector} AS has_vector, m.status <> 'superseded' AS visible
    FROM maxmem.memories m
    WHERE m.tsv @@ %(match)s::tsquery AND {where}
),{phrase_ctes}
fts_ranked AS (
    SELECT d.instance_id, d.uid, d.has_vector, d.visible, {bm25} AS bm25
    FROM matched d CROSS JOIN stats st CROSS JOIN idf{phrase_join}
    CROSS JOIN LATERAL (SELECT {frequencies}) f
    ORDER BY bm25 DESC
    LIMIT %(pool)s
)"""

# The bm25 of brain.db's second keyword index, memories_spaced (search/spaced.py), over
# its own rows (spaced_length set), lengths and column weights: every phrase (a pair of
# characters, or a lone one) is a key of spaced_freq, its count per column exact.
SPACED_CTES = """
spaced_stats AS (
    SELECT count(spaced_length)::float8 AS n, coalesce(sum(spaced_length), 0)::float8 AS tokens
    FROM maxmem.memories WHERE spaced_length IS NOT NULL
),
spaced_idf AS MATERIALIZED (
    SELECT {idf_columns} FROM spaced_stats s
),
spaced_ranked AS (
    SELECT m.instance_id, m.uid, {has_vector} AS has_vector, m.status <> 'superseded' AS visible, {bm25} AS bm25
    FROM maxmem.memories m CROSS JOIN spaced_stats st CROSS JOIN spaced_idf idf
    CROSS JOIN LATERAL (SELECT {frequencies}) f
    WHERE m.spaced_tsv @@ %(spaced_match)s::tsquery AND {where}
    ORDER BY bm25 DESC
    LIMIT %(pool)s
)"""

# As search.hybrid.keyword_candidates: each index's best `pool`, a memory's two scores
# summed, the best `pool` of those; unfiltered, local search takes FTS5's best and drops
# superseded ones after, so here.
KEYWORD_ONE = """
keyword AS (SELECT instance_id, uid, has_vector, bm25 FROM {side} WHERE visible)"""
KEYWORD_SUM = """
summed AS (
    SELECT coalesce(f.instance_id, s.instance_id) AS instance_id, coalesce(f.uid, s.uid) AS uid,
           coalesce(f.has_vector, s.has_vector) AS has_vector, coalesce(f.visible, s.visible) AS visible,
           coalesce(f.bm25, 0) + coalesce(s.bm25, 0) AS bm25
    FROM fts_ranked f FULL JOIN spaced_ranked s ON f.instance_id = s.instance_id AND f.uid = s.uid
    ORDER BY bm25 DESC
    LIMIT %(pool)s
),
keyword AS (SELECT instance_id, uid, has_vector, bm25 FROM summed WHERE visible)"""

# Phrases of several tokens: where their tokens sit at consecutive positions.
PHRASE_CTES = """
tokens (ord, i, tok, n) AS (VALUES {token_rows}),
hits AS (
    SELECT d.doc, u.lexeme, p.pos, p.w
    FROM matched d
    CROSS JOIN LATERAL unnest(d.tsv) AS u(lexeme, positions, weights)
    CROSS JOIN LATERAL unnest(u.positions, u.weights) AS p(pos, w)
    WHERE u.lexeme = ANY(%(phrase_lexemes)s::text[])
),
starts AS (
    SELECT h.doc, t.ord, t.n, max(CASE WHEN t.i = 1 THEN h.w END) AS w, count(*) AS k
    FROM hits h JOIN tokens t ON t.tok = h.lexeme
    GROUP BY h.doc, t.ord, t.n, h.pos - (t.i - 1)
),
phrase_freqs AS (
    SELECT s.doc, {phrase_sums}
    FROM starts s
    WHERE s.k = s.n
    GROUP BY s.doc
),"""

NO_KEYWORD_CTES = """
keyword AS (SELECT NULL::text AS instance_id, NULL::text AS uid, NULL::float8 AS bm25,
                   NULL::boolean AS has_vector WHERE false)"""

# As locally: the pool and VECTOR_SPARE more drawn best first around the brain's mean
# (HNSW, unfiltered: by the plain cosine), those failing the filters dropped (unfiltered,
# the superseded: drawn among all, as local search's in-RAM index holds them), the best
# `pool` by the similarity the search ranks by (around the neighbourhood, for a question
# search.hybrid.neighbourhood_centred says so of).
VECTOR_CTES = """
vector_drawn AS (
    SELECT m.instance_id, m.uid, {similarity} AS sim, 1 - ({distance}) AS plain, {visible} AS visible
    FROM maxmem.memories m
    WHERE m.embedder = %(embedder)s AND m.embedding IS NOT NULL AND {where}
    ORDER BY {order}
    LIMIT %(drawn)s
),
vector_pool AS (
    SELECT instance_id, uid, sim, plain FROM vector_drawn WHERE visible ORDER BY sim DESC LIMIT %(pool)s
),
keyword_vectors AS (
    SELECT k.instance_id, k.uid, {similarity} AS sim, 1 - ({distance}) AS plain
    FROM keyword k JOIN maxmem.memories m ON m.instance_id = k.instance_id AND m.uid = k.uid
    WHERE m.embedder = %(embedder)s AND m.embedding IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM vector_pool v WHERE v.instance_id = k.instance_id AND v.uid = k.uid)
),
vectors AS (SELECT * FROM vector_pool UNION ALL SELECT * FROM keyword_vectors)"""

# What relevance needs of the ranked hits (search.relevance.judge): the memories here, how
# many hold each of the query's terms, and of each hit, which of them it holds and its vector.
COUNTS_SQL = "SELECT (SELECT count(*) FROM maxmem.memories){counts}"
HELD_SQL = """
SELECT m.instance_id, m.uid, {vector}{held}
FROM maxmem.memories m
JOIN unnest(%(instances)s::text[], %(uids)s::text[]) AS h(instance_id, uid)
  ON m.instance_id = h.instance_id AND m.uid = h.uid"""

# How many vectors a search can compare (search.hybrid.neighbourhood_centred), and the
# nearest of them (plain cosine), among which a question in Hangul finds the neighbourhood
# it is ranked around: as many again as the neighbourhood, for the int8 estimate local
# search picks it by to reorder (_neighbourhood_mean).
NEIGHBOURHOOD_DRAWN = 2 * search_mod.NEIGHBOURHOOD
COMPARABLE_SQL = "SELECT count(*) FROM maxmem.memories m WHERE m.embedder = %(embedder)s AND m.embedding IS NOT NULL"
NEIGHBOURHOOD_SQL = """
SELECT m.embedding::real[] FROM maxmem.memories m
WHERE m.embedder = %(embedder)s AND m.embedding IS NOT NULL AND {where}
ORDER BY {order}
LIMIT %(neighbourhood)s"""

NO_VECTOR_CTES = """
vectors AS (SELECT NULL::text AS instance_id, NULL::text AS uid, NULL::float8 AS sim, NULL::float8 AS plain
            WHERE false)"""

# The candidates with what fusion needs; the rank score itself is search.hybrid.fuse's,
# computed in Python as for local search (one scoring function).
CANDIDATES_SQL = """
candidates AS (
    SELECT coalesce(v.instance_id, k.instance_id) AS instance_id, coalesce(v.uid, k.uid) AS uid,
           v.sim, v.plain, k.bm25, (k.uid IS NOT NULL AND NOT k.has_vector AND %(hybrid)s) AS unembedded
    FROM vectors v FULL JOIN keyword k ON v.instance_id = k.instance_id AND v.uid = k.uid
)
SELECT c.sim, c.plain, c.bm25, c.unembedded,
       %(hybrid)s AND {asks} AS asks,
       m.instance_id, {columns}
FROM candidates c JOIN maxmem.memories m ON m.instance_id = c.instance_id AND m.uid = c.uid"""


@dataclass
class SyncHit:
    """A memory found in the shared database; memory.id is its id in its own brain.db."""

    memory: Memory
    instance_id: str
    score: float
    vector_score: float | None
    keyword_score: float | None
    cosine: float | None = None
    bm25: float | None = None
    # The plain cosine to the query (None without a comparable vector): relevance's evidence.
    similarity: float | None = None
    # As local search's: one scale for every query (search.relevance), None when not judged.
    relevance: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": round(self.score, 6),
            "relevance": None if self.relevance is None else round(self.relevance, 6),
            "vector_score": None if self.vector_score is None else round(self.vector_score, 6),
            "keyword_score": None if self.keyword_score is None else round(self.keyword_score, 6),
            "instance_id": self.instance_id,
            "memory": self.memory.to_dict(),
        }


@dataclass
class PgPlan:
    mode: str
    note: str | None
    vector_type: str | None
    # The best hit's relevance and the threshold it was held to, as Brain.search's plan.
    best_relevance: float | None = None
    min_relevance: float | None = None


def pg_where(filters: Filters, agents: Sequence[str] | None) -> tuple[str, list[Any]]:
    """The PostgreSQL twin of Filters.sql (same meaning, bound %s parameters; Filters
    checked its fields when it was made)."""
    clauses: list[str] = []
    params: list[Any] = []

    def one_of(column: str, value: str | Sequence[str]) -> None:
        values = [value] if isinstance(value, str) else list(value)
        if values:
            clauses.append(f"m.{column} = ANY(%s)")
            params.append(values)

    if filters.category:
        one_of("category", filters.category)
    if filters.kind:
        one_of("kind", filters.kind)
    if filters.status:
        one_of("status", filters.status)
    elif not filters.include_superseded:
        clauses.append("m.status <> 'superseded'")
    for tag in filters.tags or ():
        clauses.append("m.tags ? %s")
        params.append(str(tag))
    if filters.since is not None:
        clauses.append("m.created_at >= %s::timestamptz")
        params.append(to_iso(filters.since))
    if filters.until is not None:
        clauses.append("m.created_at < %s::timestamptz")
        params.append(to_iso(filters.until))
    if filters.min_importance is not None:
        clauses.append("m.importance >= %s::float8")
        params.append(float(filters.min_importance))
    if filters.max_importance is not None:
        clauses.append("m.importance <= %s::float8")
        params.append(float(filters.max_importance))
    named = [filters.agent] if isinstance(filters.agent, str) else list(filters.agent or [])
    chosen = [a for a in [*named, *(agents or [])] if a]
    if chosen:
        one_of("agent", chosen)
    if filters.pinned is not None:
        clauses.append("m.pinned = %s")
        params.append(bool(filters.pinned))
    if filters.session_id:
        clauses.append("m.session_id = %s")
        params.append(filters.session_id)
    for key, value in (filters.metadata or {}).items():
        check_identifier(key, "metadata key")
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            # SQLite's json_extract(…) = NULL (or a number JSON cannot write) is never true
            clauses.append("false")
        elif isinstance(value, (bool, int, float)) and value in (0, 1):
            # SQLite's json_extract gives 1/0 for true/false, which equal the numbers 1/0
            # whichever of them the filter says: match both spellings.
            clauses.append("m.metadata -> %s IN (%s::jsonb, %s::jsonb)")
            params += [key, json.dumps(bool(value)), json.dumps(int(value))]
        else:
            clauses.append("m.metadata -> %s = %s::jsonb")
            params += [key, json.dumps(clean_text(value) if isinstance(value, str) else value)]
    # Text as brain.db's filters bind it (Filters.sql): a NUL or lone surrogate as U+FFFD.
    cleaned = [[clean_text(v) for v in p] if isinstance(p, list) else clean_text(p) if isinstance(p, str) else p
               for p in params]
    return " AND ".join(clauses) or "true", cleaned


def _named(sql: str, params: list[Any], prefix: str) -> tuple[str, dict[str, Any]]:
    """Turn positional %s into %(prefix_i)s so a WHERE can be used twice in one statement."""
    parts = sql.split("%s")
    names = {f"{prefix}{i}": p for i, p in enumerate(params)}
    out = parts[0]
    for i, part in enumerate(parts[1:]):
        out += f"%({prefix}{i})s" + part
    return out, names


def search(
    brain: Brain,
    dsn: str,
    query: str,
    limit: int = 10,
    agents: Sequence[str] | None = None,
    mode: str = "hybrid",
    pool: int | None = None,
    filters: Filters | None = None,
    min_relevance: float | None = None,
    **fields: Any,
) -> tuple[list[SyncHit], PgPlan]:
    """The best `limit` memories of every agent in the database for `query`, ranked as
    local search ranks them with the querying brain's settings (the weights, `[search]`
    candidates and recency) and judged as it judges them (search.relevance: only hits
    reaching `min_relevance` are listed, None: config.min_relevance, 0: off; nothing when
    none of the best JUDGED_HITS does); `pool`: the candidates each side brings (None: as
    locally)."""
    if mode not in MODES:
        raise InvalidInput(f"search mode must be one of {', '.join(MODES)}")
    query = search_mod.checked_query(query)
    if not 1 <= int(limit) <= 100_000:
        raise InvalidInput("limit must be from 1 to 100000")
    threshold = relevance.threshold(min_relevance, brain.config.min_relevance)
    filters = Filters.of(filters, **fields)
    where, where_params = pg_where(filters, agents)
    unfiltered = filters.is_empty() and not any(agents or ())
    # Ranked and judged to the same depth whatever `limit`, as locally.
    depth = max(int(limit), relevance.JUDGED_HITS)
    pool = pool or search_mod.pool_size(brain.config.search.candidates, depth)
    note = None

    psycopg = psycopg_module()
    conn = connect(dsn)
    try:
        schema = read_schema(conn) if _has_schema(conn) else None
        if schema is None:
            raise SyncError(
                f"{target_name(dsn)} holds no maxmem data yet: run  maxmem sync postgres  first"
            )
        pending = pending_migrations(conn)
        if pending:
            raise SyncError(
                f"the maxmem schema in {target_name(dsn)} is older than this maxmem ({', '.join(pending)}): "
                "run  maxmem sync postgres  once to upgrade it"
            )
        stale = stale_agents(conn)
        older = (f"{', '.join(stale)} pushed with an older maxmem: a word inside their Chinese, Japanese, Korean "
                 "or Thai text is found once they push again") if stale else None
        query_vector = None
        if mode != "keyword":
            if brain.embedder is None or schema.vector_type is None:
                note = "keyword-only search: " + (
                    "no embedder configured" if brain.embedder is None else "the database has no vectors yet"
                )
            else:
                try:
                    query_vector = brain.vectors.embed_query(search_mod.vector_query(query))  # bounded, redacted
                except EmbeddingError as exc:
                    note = f"search fell back to keywords: {exc}"
                    if mode == "vector":
                        raise
        if mode == "vector" and query_vector is None:
            raise InvalidInput("vector search needs an embedder and vectors in the database")
        tokenizer = Tokenizer(brain.db)
        phrases = tokenizer.phrases(query) if mode != "vector" else []
        spaced = tokenizer.spaced_phrases(query) if mode != "vector" else []
        use_vectors = query_vector is not None
        # a question in German, French or Spanish weighs its keywords less, as locally
        wv, wk = search_mod.fusion_weights(query, mode, use_vectors, brain.config.vector_weight,
                                           brain.config.keyword_weight)

        params: dict[str, Any] = {"pool": pool, "hybrid": use_vectors and mode == "hybrid"}
        ctes = []
        if phrases or spaced:
            kw_where, kw_params = _named(where, where_params, "kf")
            if unfiltered:
                kw_where, kw_params = "true", {}
            params.update(kw_params)
            has_vector = (
                "(m.embedder = %(embedder)s AND m.embedding IS NOT NULL)" if use_vectors else "false"
            )
            sides = []
            if phrases:
                ctes.append(_fts_ctes(phrases, len(tokenizer.columns), kw_where, has_vector, params))
                sides.append("fts_ranked")
            if spaced:
                ctes.append(_spaced_ctes(spaced, kw_where, has_vector, params))
                sides.append("spaced_ranked")
            ctes.append(KEYWORD_SUM if len(sides) == 2 else KEYWORD_ONE.format(side=sides[0]))
        else:
            ctes.append(NO_KEYWORD_CTES)
        around = None
        if use_vectors:
            assert query_vector is not None
            params["embedder"] = identity(brain.embedder)  # type: ignore[arg-type]
            params["drawn"] = pool + search_mod.VECTOR_SPARE
            vec_where, vec_params = _named(where, where_params, "vf")
            params.update(vec_params)
            if unfiltered:  # drawn among all, the superseded dropped after, as locally
                vec_where, visible = "true", "m.status <> 'superseded'"
            else:
                visible = "true"
            if schema.vector_type == "vector":
                distance = "m.embedding <=> %(qv)s::vector"
                # Unfiltered: the HNSW index; filtered: exact, as local search is.
                nearest = distance if unfiltered else f"({distance}) + 0"
                # As text: float32 values print exactly, and no type lookup round trips.
                params["qv"] = _vector_param(query_vector, as_text=True)
            else:
                distance = nearest = "maxmem.cosine_distance(m.embedding, %(qv)s::real[])"
                params["qv"] = _vector_param(query_vector, as_text=False)
            if search_mod.neighbourhood_centred(query, lambda: _comparable(conn, params)):
                around = _neighbourhood_mean(conn, vec_where, nearest, params, schema.vector_type == "vector",
                                             brain.vectors.quantizer(), query_vector)
            drawn_by = _centred_similarity(_brain_centre(brain, query_vector), query_vector, distance, params, "c")
            similarity = drawn_by if around is None else _centred_similarity(
                around, query_vector, distance, params, "n")
            # exact candidates, drawn as local search's are, around the brain's mean
            order = nearest if unfiltered and schema.vector_type == "vector" else f"-({drawn_by})"
            ctes.append(VECTOR_CTES.format(similarity=similarity, distance=distance, visible=visible, order=order,
                                           where=vec_where))
        else:
            ctes.append(NO_VECTOR_CTES)
        columns = ", ".join(f"m.{c}" for c in MEMORY_COLUMNS)
        # the question penalty's test, local search's own (escaped for psycopg)
        asks = search_mod.ASKS_SQL.replace("%", "%%")
        sql = "WITH " + ",".join(ctes) + "," + CANDIDATES_SQL.format(columns=columns, asks=asks)
        with conn.transaction():
            if use_vectors and schema.vector_type == "vector":
                _widen_hnsw(conn, 2 * pool)
            cur = conn.execute(sql, params)
            names = [d.name for d in cur.description or ()]
            rows = [dict(zip(names, r)) for r in cur.fetchall()]
        recency = search_mod.Recency(brain.config.search.recency_weight, brain.config.search.recency_half_life)
        hits = ranked(rows, wv, wk, depth, recency)
        # A vector search is judged on its cosines alone, which are calibrated for one
        # model only: with another, its hits carry no relevance and nothing is cut.
        judged = mode != "vector" or relevance.calibrated(brain.embedder)
        if judged and hits:
            found = _evidence(conn, brain, query, hits, query_vector, tokenizer)
            hits = [replace(h, relevance=relevance.relevance(found[n], mode)) for n, h in enumerate(hits)]
    except psycopg.Error as exc:
        raise SyncError(f"search in {target_name(dsn)} failed: {describe_error(exc, dsn)}") from None
    finally:
        conn.close()
    chosen = relevance.verdict([h.relevance for h in hits], judged, threshold, int(limit))
    notes = "; ".join(filter(None, [note, older, *chosen.notes])) or None
    return [hits[i] for i in chosen.listed], PgPlan(mode, notes, schema.vector_type, chosen.best, threshold)


def _evidence(conn: Any, brain: Brain, query: str, hits: Sequence[SyncHit], query_vector: np.ndarray | None,
              tokenizer: Tokenizer) -> dict[int, relevance.Evidence]:
    """The relevance evidence of each ranked hit (by its place in `hits`), as Brain.search
    takes it (search.relevance.judge) but read from this database: the query's terms'
    document counts over every memory here, which of them each hit holds, and the stored
    vectors of the hits for their hubness; the typical cosine is the querying brain's,
    whose centre the cosines are taken around. Cosines count only from the calibrated
    model (relevance.CALIBRATED_EMBEDDER)."""
    calibrated = relevance.calibrated(brain.embedder)
    cosines = {n: h.similarity if calibrated else None for n, h in enumerate(hits)}
    # A pair of characters of a spaceless script is asked in memories_spaced's tokens (its
    # key there, Tokenizer.spaced_key); any other term in FTS5's, as brain.db counts them: a
    # term of several tokens as a phrase; and as matched_terms finds them in a memory, its
    # tokens anywhere in it (the pair: side by side in that index's tokens, as brain.db
    # asks memories_spaced itself).
    spaced = {t: tokenizer.spaced_key(t) for t in relevance.evidence_terms(query) if SPACED_RUN.fullmatch(t)}
    terms = {t: [spaced[t]] if t in spaced else tokenizer.tokens(t, apsw.FTS5_TOKENIZE_QUERY)
             for t in relevance.evidence_terms(query)}
    asked = [(t, tokens) for t, tokens in terms.items() if any(tokens)]
    params: dict[str, Any] = {
        "instances": [h.instance_id for h in hits], "uids": [h.memory.uid for h in hits],
        **{f"d{k}": phrase_query(tokens) for k, (_, tokens) in enumerate(asked)},
        **{f"h{k}": phrase_query(tokens) if t in spaced else " & ".join(map(quote_lexeme, tokens))
           for k, (t, tokens) in enumerate(asked)},
    }
    column = {k: "spaced_tsv" if t in spaced else "tsv" for k, (t, _) in enumerate(asked)}
    compared = any(c is not None for c in cosines.values())  # (calibrated)
    total, *found = conn.execute(COUNTS_SQL.format(counts="".join(
        f", (SELECT count(*) FROM maxmem.memories WHERE {column[k]} @@ %(d{k})s::tsquery)" for k in range(len(asked))
    )), params).fetchone()
    counts = {t: 0 for t in terms} | {t: int(n) for (t, _), n in zip(asked, found)}
    place = {(h.instance_id, h.memory.uid): n for n, h in enumerate(hits)}
    matched: dict[int, set[str]] = {}
    stored: dict[int, np.ndarray] = {}
    held = conn.execute(HELD_SQL.format(
        held="".join(f", m.{column[k]} @@ %(h{k})s::tsquery" for k in range(len(asked))),
        vector="m.embedding::real[]" if compared else "NULL::real[]"), params)
    for instance_id, uid, vector, *holds in held.fetchall():
        n = place[(instance_id, uid)]
        matched[n] = {t for (t, _), holds_it in zip(asked, holds) if holds_it}
        if vector is not None and cosines[n] is not None:
            stored[n] = np.asarray(vector, np.float32)
    bank = relevance.off_topic_bank(brain.vectors, brain.embedder) if compared and brain.embedder else None
    mean = brain.vectors.mean() if query_vector is not None and calibrated else None
    usual = None if mean is None or query_vector is None else relevance.typical(query_vector, mean)
    return relevance.judge(relevance.terms_of(counts, int(total)), matched, cosines, stored, bank, usual, query_vector)


def ranked(rows: Sequence[Mapping[str, Any]], wv: float, wk: float, limit: int,
           recency: search_mod.Recency | None = None) -> list[SyncHit]:
    """The best `limit` candidates by search.hybrid.fuse, the rank score local search uses,
    then by recency as locally when its weight is above 0 (search.hybrid.recent_first over
    every candidate); ties go to the newer local id (then uid), as locally to the newer id."""
    order = sorted(range(len(rows)), key=lambda i: (rows[i]["local_id"], rows[i]["uid"]))
    key = {i: n for n, i in enumerate(order)}  # fuse breaks ties by the higher key
    vector = {key[i]: float(r["sim"]) for i, r in enumerate(rows) if r["sim"] is not None}
    keyword = {key[i]: float(r["bm25"]) for i, r in enumerate(rows) if r["bm25"] is not None}
    unembedded = {key[i] for i, r in enumerate(rows) if r["unembedded"]}
    asking = {key[i] for i, r in enumerate(rows) if r["asks"]}
    if recency is None or not recency.weight:
        fused = search_mod.fuse(vector, keyword, wv, wk, unembedded, asking, top=limit)
    else:
        days = {key[i]: _day_number(r["created_at"]) for i, r in enumerate(rows) if r["created_at"] is not None}
        recent = search_mod.recency_of_days(days, recency.half_life_days)
        every = search_mod.fuse(vector, keyword, wv, wk, unembedded, asking)
        fused = search_mod.recent_first(every, recent, recency.weight)[:limit]
    by_key = {key[i]: r for i, r in enumerate(rows)}
    return [_hit(by_key[s.id], s) for s in fused]


def _day_number(at: datetime) -> float:
    """A time as a fractional number of days (only differences between them matter:
    recency; SQLite's julianday differs by a constant)."""
    return at.timestamp() / 86400.0


def _vector_param(vector: Any, as_text: bool) -> str | list[float]:
    """A vector as a query parameter: pgvector's text (float32 values print exactly) or
    a real[]'s list."""
    values = [float(x) for x in vector]
    return "[" + ",".join(map(repr, values)) + "]" if as_text else values


def _comparable(conn: Any, params: Mapping[str, Any]) -> int:
    """How many vectors of the querying brain's embedder the database holds (every
    agent's, superseded or not: what local search's in-RAM index holds of a brain)."""
    return int(conn.execute(COMPARABLE_SQL, params).fetchone()[0])


def _widen_hnsw(conn: Any, width: int) -> None:
    """Let HNSW look at `width` candidates (at least 40, pgvector's default; at most
    1000), for the rest of the transaction: it returns no more rows than it looks at."""
    conn.execute(f"SET LOCAL hnsw.ef_search = {min(1000, max(40, width)):d}")


def _neighbourhood_mean(conn: Any, where: str, nearest: str, params: Mapping[str, Any], hnsw: bool,
                        quantizer: Quantizer | None, query_vector: np.ndarray) -> np.ndarray | None:
    """The mean of the search.hybrid.NEIGHBOURHOOD vectors nearest to the query among
    those `where` allows, as local search takes it (VectorIndex.neighbourhood_mean): picked
    by the querying brain's int8 estimate of their plain cosine (Quantizer.estimates)
    among the NEIGHBOURHOOD_DRAWN nearest by the exact one, which hold them unless the
    estimate's error (about 0.005) reaches past that many, and averaged through their int8
    codes; None when there is none."""
    with conn.transaction():
        if hnsw:
            _widen_hnsw(conn, 2 * NEIGHBOURHOOD_DRAWN)
        rows = conn.execute(NEIGHBOURHOOD_SQL.format(where=where, order=nearest),
                            {**params, "neighbourhood": NEIGHBOURHOOD_DRAWN}).fetchall()
    if not rows:
        return None
    vectors = np.array([r[0] for r in rows], np.float32)
    if quantizer is None:
        return np.asarray(vectors[: search_mod.NEIGHBOURHOOD].mean(axis=0), np.float32)
    codes = quantizer.codes(vectors)
    picked = np.argsort(-quantizer.estimates(codes, query_vector), kind="stable")[: search_mod.NEIGHBOURHOOD]
    return quantizer.mean(codes[picked])


def _brain_centre(brain: Brain, query_vector: Any) -> np.ndarray:
    """The querying brain's centre (its quantizer's), which local search takes its cosines
    around; zeros (the plain cosine) before it has one."""
    quantizer = brain.vectors.quantizer()
    return np.zeros(len(query_vector), np.float32) if quantizer is None else quantizer.center


def _centred_similarity(center: np.ndarray, query_vector: Any, distance: str, params: dict[str, Any],
                        name: str) -> str:
    """SQL for search_mod.centred_cosine around `center` from a memory's cosine distances
    to the query and to the centre (vectors are unit); the centre's parameters are
    named after `name`."""
    params[f"{name}v"] = _vector_param(center, as_text=not isinstance(params["qv"], list))
    params[f"{name}c"] = float(center @ center)
    params[f"q{name}"] = float(np.asarray(query_vector, np.float32) @ center)
    norm = float(np.sqrt(params[f"{name}c"]))
    to_center = distance.replace("%(qv)s", f"%({name}v)s")
    cc, qc = f"%({name}c)s", f"%(q{name})s"
    center_dots = f"((1 - ({to_center})) * {norm!r})" if norm > 0 else "0"
    return (f"((1 - ({distance})) - {center_dots} - {qc} + {cc}) / "
            f"sqrt(greatest((1 - 2 * {center_dots} + {cc}) * (1 - 2 * {qc} + {cc}), 1e-12))")


def _fts_ctes(phrases: Sequence[Sequence[str]], columns: int, where: str, has_vector: str,
              params: dict[str, Any]) -> str:
    """The CTEs that rank the memories matching FTS5's `phrases` (Tokenizer.phrases) by
    memories_fts's bm25, best `pool` first (fts_ranked); their parameters go to `params`."""
    payload = query_payload(phrases)
    params["match"] = " | ".join(f"({p['q']})" for p in payload)
    weights = column_weights(columns)
    params.update({f"w{i}": w for i, w in enumerate(weights)})
    label_weight = "CASE s.w " + " ".join(
        f"WHEN '{COLUMN_LABELS[i]}' THEN %(w{i})s::float8" for i in range(len(weights))
    ) + " END"
    frequencies, terms, token_rows, phrase_sums = [], [], [], []
    for k, phrase in enumerate(payload, start=1):
        # The phrase's document count is its own subquery with a constant tsquery
        # (see _idf_columns), answered from the GIN index.
        params[f"q{k}"] = phrase["q"]
        if len(phrase["t"]) == 1:
            params[f"t{k}"] = phrase["t"][0]
            frequencies.append(" + ".join(
                f"coalesce((d.fts_freq -> %(t{k})s ->> {i})::float8, 0) * %(w{i})s::float8"
                for i in range(len(weights))
            ) + f" AS f{k}")
        else:
            frequencies.append(f"coalesce(pf.f{k}, 0) AS f{k}")
            phrase_sums.append(f"sum({label_weight}) FILTER (WHERE s.ord = {k}) AS f{k}")
            for position, token in enumerate(phrase["t"], start=1):
                params[f"t{k}_{position}"] = token
                token_rows.append(f"({k}, {position}, %(t{k}_{position})s::text, {len(phrase['t'])})")
        terms.append(bm25_sql(f"idf.i{k}", f"f.f{k}", "d.fts_length"))
    multi = sorted({t for p in payload if len(p["t"]) > 1 for t in p["t"]})
    if multi:
        params["phrase_lexemes"] = multi
    return FTS_CTES.format(
        where=where, has_vector=has_vector,
        idf_columns=_idf_columns(len(payload), "tsv", "q", "i"),
        phrase_ctes=PHRASE_CTES.format(
            token_rows=", ".join(token_rows), phrase_sums=", ".join(phrase_sums)
        ) if multi else "",
        phrase_join=" LEFT JOIN phrase_freqs pf ON pf.doc = d.doc" if multi else "",
        frequencies=", ".join(frequencies),
        bm25=" + ".join(terms),
    )


def _spaced_ctes(keys: Sequence[str], where: str, has_vector: str, params: dict[str, Any]) -> str:
    """The CTEs that rank the memories holding memories_spaced's phrases (`keys`:
    Tokenizer.spaced_phrases) by that index's bm25, best `pool` first (spaced_ranked)."""
    params["spaced_match"] = " | ".join(quote_lexeme(key) for key in keys)
    params.update({f"sw{i}": float(w) for i, w in enumerate(SPACED_WEIGHTS)})
    frequencies, terms = [], []
    for k, key in enumerate(keys, start=1):
        params[f"sq{k}"] = quote_lexeme(key)
        params[f"s{k}"] = key
        frequencies.append(" + ".join(
            f"coalesce((m.spaced_freq -> %(s{k})s ->> {i})::float8, 0) * %(sw{i})s::float8"
            for i in range(len(SPACED_WEIGHTS))
        ) + f" AS f{k}")
        terms.append(bm25_sql(f"idf.j{k}", f"f.f{k}", "m.spaced_length"))
    return SPACED_CTES.format(where=where, has_vector=has_vector,
                              idf_columns=_idf_columns(len(keys), "spaced_tsv", "sq", "j"),
                              frequencies=", ".join(frequencies), bm25=" + ".join(terms))


def bm25_sql(idf: str, frequency: str, length: str) -> str:
    """One phrase's share of FTS5's bm25 in SQL (k1 = 1.2, b = 0.75), from its IDF, its
    frequency weighted by column and the memory's length; `st` is the index's stats
    (n rows, tokens in all)."""
    return (f"{idf} * ({frequency} * (1.2 + 1.0)) "
            f"/ ({frequency} + 1.2 * (1 - 0.75 + 0.75 * {length} / (st.tokens / st.n)))")


def _idf_columns(count: int, column: str, param: str, name: str) -> str:
    """Each phrase's IDF (named `name`1..K), ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6
    as FTS5 does, n the memories whose tsvector `column` matches tsquery `param`k."""
    return ", ".join(
        f"(SELECT CASE WHEN v <= 0 THEN 1e-6 ELSE v END FROM "
        f"(SELECT ln((s.n - c + 0.5) / (c + 0.5)) AS v FROM "
        f"(SELECT count(*)::float8 AS c FROM maxmem.memories WHERE {column} @@ %({param}{k})s::tsquery) hits) x)"
        f" AS {name}{k}"
        for k in range(1, count + 1)
    )


def _has_schema(conn: Any) -> bool:
    return bool(conn.execute(
        "SELECT 1 FROM pg_tables WHERE schemaname = 'maxmem' AND tablename = 'meta'"
    ).fetchone())


def _hit(row: Mapping[str, Any], scored: search_mod.Scored) -> SyncHit:
    data = {c: row[c] for c in MEMORY_COLUMNS}
    data["id"] = data.pop("local_id")
    for key in ("started_at", "resolved_at", "created_at", "updated_at", "last_recalled_at", "embedded_at"):
        if data[key] is not None:
            data[key] = iso(data[key])
    data["importance"] = float(data["importance"])
    memory = Memory(**data)
    return SyncHit(memory, row["instance_id"], scored.score, scored.vector_score, scored.keyword_score,
                   scored.raw_vector, scored.raw_keyword, None if row["plain"] is None else float(row["plain"]))
