"""Relevance: how likely a search hit is to be about what the query asks, on one scale for every query.

A hit's rank score is rescaled per query (search.fuse), so the best hit scores 1.0
even for a question the brain knows nothing about. `relevance` is instead computed
from evidence that means the same in every search:

- cosine: the hit's centred cosine to the query (what the vector stage computes);
- cover: the share of the query's IDF mass that the hit matches in the keyword index
  (its own words, tags, date and session context: every column of memories_fts);
- unknown: the share of the query's IDF mass in words that no memory contains at all.
  A question about a cocktail in a brain that never saw the word is a question the
  brain cannot answer, whatever its other words match.

The three go through a logistic function whose coefficients were fitted (scipy,
maximum likelihood) on the calibration half of bench/relevance_eval.py: the top hit
of each LoCoMo question (answerable) and of each question in
bench/data/unanswerable.jsonl (written to be unanswerable), five conversations,
both classes weighted equally. So a relevance is the probability that the search
found what the question asks about, for a question as likely to be answerable as
not. Refit with `python bench/relevance_eval.py --data PATH/locomo10.json --fit`.

LoCoMo's questions were written from the conversations and share their words, so
this data cannot teach that a query in other words (a paraphrase: "where are our
pictures stored?" for "the family photos are on the NAS") deserves trust when the
vector side finds its answer: the keyword evidence would veto it. So a hit is never
given less than a quarter of what its cosine alone says (a third fit, on the cosine
only). The quarter is a judgement, not a fit: on the held-out half it leaves the AUC
as it was (0.934 vs 0.932 without it) and, at the threshold the same rule picks,
catches 29.2 % of its unanswerable questions instead of 29.8 % (the hits of one run
of bench/relevance_eval.py scored with and without it).

The cosine terms are calibrated for the local model only (centred cosines of other
models sit on other scales): with another embedder, in keyword mode and for a hit
still waiting for its vector, a second fit that uses the keyword evidence alone
takes its place.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .config import DEFAULT_MIN_RELEVANCE
from .db import Database
from .search import keyword_terms

# "provider:model" whose centred cosines the cosine term was fitted on.
CALIBRATED_EMBEDDER = "local:multilingual-e5-small"

# Logistic coefficients (cosine, cover, unknown, intercept), from
# `python bench/relevance_eval.py --data ../shared/bench/locomo10.json --fit`
# (calibration conversations conv-26, conv-30, conv-42, conv-44, conv-48; 910 questions).
WITH_COSINE = (4.869, 5.107, -2.549, -3.023)
# The same fit without the cosine: (cover, unknown, intercept).
WITHOUT_COSINE = (5.689, -2.704, -1.61)
# The same fit on the cosine alone: (cosine, intercept); a hit gets at least
# COSINE_FLOOR times its probability.
COSINE_ONLY = (10.785, -3.617)
COSINE_FLOOR = 0.25

__all__ = ["DEFAULT_MIN_RELEVANCE", "Evidence", "QueryTerms", "evidence", "idf", "matched_terms",
           "query_terms", "relevance"]

DF_SQL = "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?"
MATCHED_SQL = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid IN ({ids})"
SIZE_SQL = "SELECT count(*) FROM memories"


@dataclass(frozen=True)
class QueryTerms:
    """The query's keyword terms, each with its IDF in this brain."""

    weights: dict[str, float]
    unknown: float  # share of the IDF mass in terms no memory contains

    def cover(self, matched: Iterable[str]) -> float:
        """Share of the query's IDF mass in `matched` terms."""
        total = sum(self.weights.values())
        return sum(self.weights.get(t, 0.0) for t in set(matched)) / total if total else 0.0


@dataclass(frozen=True)
class Evidence:
    """What a hit's relevance is computed from (shown by search --explain)."""

    cosine: float | None
    cover: float
    unknown: float


def idf(memories: int, containing: int) -> float:
    """bm25's IDF: log(1 + (N − n + 0.5) / (n + 0.5)), for n of N memories."""
    return math.log(1.0 + (memories - containing + 0.5) / (containing + 0.5))


def _phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def query_terms(db: Database, query: str) -> QueryTerms:
    """IDF of each keyword term of `query` over every memory, and the unknown share."""
    memories = int(db.scalar(SIZE_SQL) or 0)
    counts = {t: int(db.scalar(DF_SQL, (_phrase(t),)) or 0) for t in keyword_terms(query)}
    weights = {t: idf(memories, n) for t, n in counts.items()}
    total = sum(weights.values())
    unknown = sum(weights[t] for t, n in counts.items() if n == 0) / total if total else 0.0
    return QueryTerms(weights, unknown)


def matched_terms(db: Database, terms: Iterable[str], ids: Sequence[int]) -> dict[int, set[str]]:
    """The terms each memory in `ids` matches in the keyword index (any column)."""
    found: dict[int, set[str]] = {int(i): set() for i in ids}
    if not found:
        return found
    placeholders = ",".join("?" * len(found))
    for term in terms:
        for (rowid,) in db.execute(MATCHED_SQL.format(ids=placeholders), [_phrase(term), *found]):
            found[rowid].add(term)
    return found


def evidence(db: Database, query: str, cosines: dict[int, float | None]) -> dict[int, Evidence]:
    """The evidence for each hit id (its cosine given, or None where it has none)."""
    terms = query_terms(db, query)
    matched = matched_terms(db, terms.weights, list(cosines))
    return {i: Evidence(cosines[i], terms.cover(matched[i]), terms.unknown) for i in cosines}


def relevance(found: Evidence) -> float:
    """The calibrated probability, in [0, 1], that a hit with this evidence is relevant."""
    if found.cosine is None:
        a, b, c = WITHOUT_COSINE
        return _logistic(a * found.cover + b * found.unknown + c)
    cosine = max(-1.0, min(1.0, found.cosine))
    a, b, c, d = WITH_COSINE
    alone, intercept = COSINE_ONLY
    return max(_logistic(a * cosine + b * found.cover + c * found.unknown + d),
               COSINE_FLOOR * _logistic(alone * cosine + intercept))


def _logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))
