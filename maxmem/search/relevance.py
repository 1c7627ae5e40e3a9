"""Relevance: how likely a search hit is to be about what the query asks, on one scale for every query.

A hit's rank score is rescaled per query (search.fuse), so the best hit scores 1.0
even for a question the brain knows nothing about. `relevance` is instead computed
from evidence that means the same in every search and in a brain of any size:

- cosine: the hit's plain cosine to the query. Not the centred cosine the ranking
  uses: that one is taken around the brain's running mean, which a handful of
  memories estimate badly (three memories' centred cosines sum to about zero), and
  on LoCoMo the plain one also tells answerable from unanswerable questions better;
- cover: the share of the query's IDF mass that the hit matches in the keyword index
  (its own words, tags, date and session context: every column of memories_fts);
- unknown: the share of the query's IDF mass in words that no memory contains at all.
  A question about a cocktail in a brain that never saw the word is a question the
  brain cannot answer, whatever its other words match.

They go through logistic functions fitted (scipy, maximum likelihood) on the
calibration half of bench/relevance_eval.py: the top hit of each LoCoMo question
(answerable) and of each question in bench/data/unanswerable.jsonl (written to be
unanswerable), five conversations, each in its own brain and all five in one, both
classes weighted equally and each answerable question by the share of its evidence
the search found (cutting a search that found nothing costs nothing). So a relevance
is the probability that the search found what the question asks about, for a question
as likely to be answerable as not. The full fit's cosine term is then scaled by the
factor that cuts the most unanswerable questions there within one point of R@10 (0.7:
the threshold decides among the least relevant searches, where the keyword evidence
tells more than the maximum-likelihood fit gives it), scale and intercept refitted. Refit with
`python bench/relevance_eval.py --data PATH/locomo10.json --fit`.

Three fits: all three features; the cosine alone; the keyword evidence alone
(keyword mode, an embedder the cosines were not measured on, a hit still waiting for
its vector). The cosine alone judges a search in mode "vector" (it ranks by meaning
only, so it is judged by meaning only) and a query none of whose telling words the
brain knows (KEYWORDS_SILENT): a query put in other words than the memory's
("present for a child's party" for "the kids want a red bicycle for the birthday")
has nothing for the keywords to match, and their silence is not evidence against it.
The keyword evidence also weighs with the brain's size. In a small brain a word that
none of a few memories contains says little: its weight follows bm25's own measure of
how telling an absent word is, the IDF of a word no memory holds, log(2N + 2), and
below the smallest calibration brain (CALIBRATED_MEMORIES) the relevance moves from the
full fit toward the cosine-only fit in that proportion. In a big brain most words are
known somewhere and the evidence of a miss weakens: the fits with keyword evidence take
the brain's size in (size: log N, from each conversation in its own brain to the five
in one, LARGEST_MEMORIES), and a bigger brain is judged as one of that size.

Beside the fits, a meaning route (standing) judges a hit by how far its cosine stands
above the brain's typical cosine to the query (lift: the cosine less the query's dot
product with the mean of the stored vectors, which is the mean of its cosines to them),
with its cosine and the brain's size (log N: the best of more memories stands higher by
chance). A hit's relevance is the higher of the two, so the keyword evidence can speak
for a hit but never against one whose meaning stands out: a question put in other words
than its memory ("network layout for the smart home gadgets" for "IoT devices live on
VLAN 20; the NAS sits on VLAN 10.") matches none of its words, which the fits above take
as evidence against it. The route is a logistic regression (`python
bench/paraphrase_eval.py --fit DUMP`) of the memory each question of the dev half of
bench/data/paraphrase_set.jsonl paraphrases (relevant, in brains of 5 to 500 memories:
STANDING_MEMORIES, log N held within them) against the hit with the highest lift of each
unanswerable LoCoMo question of the calibration half and of each unrelated query (not
relevant), its intercept then set to the lowest at which the default threshold keeps
99 % of the dev paraphrases the ranking finds. So the route alone favours keeping answers:
measured, it keeps nearly every paraphrase the ranking finds and, in a small brain, lets
most questions about something the brain lacks through as well (docs/relevance.md). The
route speaks only when the search's best cosine leads its rivals (lead, ROUTE_LEAD): among
thousands of memories the best hit of a question about none of them has close rivals.

Above both, a hit must stand out from prompts about nothing in particular (the off-topic
prompts shipped with maxmem): its cosine above the memory's hubness plus its cosine above
the query's own closeness to those prompts (standout) must reach the brain's margin
(required_standout: it grows with the brain, and is raised in a young brain, where the
default favours silence), or its relevance is 0, whatever its words match. A search whose
best cosine leads its rivals by far (lead_credit: beyond LEAD_CREDIT, which only small
brains' searches reach) needs that much less.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

import apsw
import numpy as np

from ..config import DEFAULT_MIN_RELEVANCE
from ..embeddings import Embedder, identity
from ..errors import InvalidInput
from ..store.db import Database
from .fts import Tokenizer
from .hybrid import keyword_terms
from .spaced import SPACED_RUN, spaced_terms
from .vectors import VectorStore

# "provider:model" whose cosines the cosine terms were fitted on.
CALIBRATED_EMBEDDER = "local:multilingual-e5-small"
# How deep a search ranks and judges its hits whatever its limit (Brain.search, PostgreSQL
# search): whether it found something relevant is decided on the best of these.
JUDGED_HITS = 10

# Logistic coefficients (cosine, cover, unknown, size, intercept), from
# `python bench/relevance_eval.py --data PATH/locomo10.json --fit`
# (calibration conversations conv-26, conv-30, conv-42, conv-44, conv-48, each in its own brain
# and all five in one: 1,820 searches). The cosine term is the logistic fit's times 0.7,
# then scale and intercept refitted: the factor (of 0.5-1.5) that cuts the most
# unanswerable questions there within one point of R@10 (the fit's cosine_share).
WITH_COSINE = (42.141, 8.662, -0.993, -0.803, -39.885)
# The same fit without the cosine: (cover, unknown, size, intercept).
WITHOUT_COSINE = (8.697, -0.908, -0.815, -3.501)
# The same fit on the cosine alone: (cosine, intercept).
COSINE_ONLY = (68.792, -59.79)
# Memories in the smallest brain of the calibration half: below it the keyword
# evidence counts for less (keyword_weight).
CALIBRATED_MEMORIES = 369
# Memories in its largest (the five conversations in one brain): from the smallest to
# this, the fits with keyword evidence take the brain's size in (size); beyond it, a
# brain is judged as one of this size.
LARGEST_MEMORIES = 2772
# From this share of the query's IDF mass in words no memory contains, the keyword
# evidence is silent and a hit is judged on its cosine alone: the brain knows none of
# the query's telling words (those left are in nearly every memory), which says the
# query is put in other words as much as that it asks about something else.
KEYWORDS_SILENT = 0.99
# The meaning route (standing): logistic coefficients (lift, cosine, log N, intercept),
# from `python bench/paraphrase_eval.py --fit DUMP` (DUMP: `bench/relevance_eval.py --dump`'s
# searches of LoCoMo conv-26, conv-30 and conv-42, each in its own brain and the three in
# one; the paraphrase set's dev half in brains of 5, 50 and 500; the unrelated dev queries).
STANDING = (80.681, -11.023, -0.768, 6.494)
# The brain sizes the meaning route was measured on: log N is held within them.
STANDING_MEMORIES = (5, 500)
# The meaning route speaks for a hit only when the search's best cosine leads its rivals
# (lead: its margin over the mean of the next LEAD_RIVALS cosines of the ranked hits) by
# ROUTE_LEAD. Among many memories, the best of a question about none of them has close
# rivals (the top cosines of N unrelated memories crowd together as N grows), while an
# answer stands alone. Only the route: a conversation's answer is one turn among many on
# its topic, so it leads no more than a question the conversation cannot answer, and the
# keyword fits judge those. Chosen with `python bench/gate_eval.py --dev` (the dev halves
# of the paraphrase set, coding prompts and unrelated questions, brains of 5 to 10,000)
# and `python bench/relevance_eval.py` on LoCoMo's calibration half (the largest lead at
# which R@10 with the gate loses at most one point there, in steps of 0.005).
LEAD_RIVALS = 5
ROUTE_LEAD = 0.01

# Standing out from prompts about nothing in particular (maxmem/data/offtopic_prompts.txt,
# embedded once per model): a memory's hubness is the mean of its plain cosines to its
# HUB_NEIGHBOURS nearest off-topic prompts (some memories sit close to any query: a short
# personal fact, in this model); the query's own closeness to them (off_topic) the mean of
# its cosines to its OFF_TOPIC_NEIGHBOURS nearest (a prompt about code sits close to
# prompts about code). A hit counts as relevant at all only when its cosine stands above
# both (standout: the cosine less the hubness, plus the cosine less the query's closeness,
# a CSLS-style score) by the brain's required margin (required_standout): STANDOUT_MARGINS
# gives it at three brain sizes, linear in log N between them and held beyond them. At 5
# and at 500 memories it follows a margin that grows by 0.006 for each factor e of
# memories (a bigger brain holds more memories a prompt can lean on by chance; chosen
# as -0.015 at 50). At 50 it is raised so that a young brain favours silence: no margin
# keeps both the answers put in other words and the silence on prompts about nothing the
# brain holds, and a prompt to a young brain has the least to recall, so 50 memories take
# the lowest margin at which the dev half's coding prompts find nothing 95 % of the time
# and its unrelated questions 90 % (at 5 the grown margin does already). Chosen with
# `python bench/gate_eval.py --dev` on the dev halves of the paraphrase set, the coding
# prompts and the unrelated questions, none in the bank.
HUB_NEIGHBOURS = 10
OFF_TOPIC_NEIGHBOURS = 3
# A search whose best cosine leads its rivals (lead) by more than LEAD_CREDIT has found
# something that stands alone among the memories: what it leads by beyond that counts
# toward the standout its hits need (lead_credit), one for one. Leads that large come
# from small brains (a brain of five: a paraphrase's answer leads by 0.067, median, a
# coding prompt's best hit by 0.024); none of LoCoMo's calibration searches leads by that
# much. Chosen with `python bench/gate_eval.py --dev` (at weight 1, 0.055-0.06 keep one to
# three more paraphrases at 5 memories and move nothing else at any size; 0.05 lets an
# unrelated question through at 5): the silent edge of that plateau.
LEAD_CREDIT = 0.06
# (memories, required standout)
STANDOUT_MARGINS = ((5, -0.0288), (50, 0.012), (500, -0.0012))
OFF_TOPIC = "offtopic_prompts.txt"
# Their query vectors from the local model (CALIBRATED_EMBEDDER), shipped beside them
# (scripts/make_offtopic_vectors.py) with the digest of the prompts they were made from.
OFF_TOPIC_VECTORS = "offtopic_prompts.e5.npz"

__all__ = ["DEFAULT_MIN_RELEVANCE", "JUDGED_HITS", "Evidence", "QueryTerms", "Verdict", "calibrated",
           "document_frequencies", "evidence", "evidence_terms", "hubness", "idf", "judge", "keyword_weight",
           "lead", "lead_credit", "matched_terms", "off_topic", "off_topic_bank", "off_topic_prompts", "prompts_digest",
           "query_terms", "relevance", "required_standout", "size", "shipped_vectors", "standing",
           "terms_of", "threshold", "typical", "verdict"]

DF_SQL = "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?"
# The keyword index's vocabulary, one row per token with the number of memories holding
# it (a temp table: nothing is written to brain.db).
VOCABULARY_SQL = ("CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_vocabulary "
                  "USING fts5vocab(main, memories_fts, row)")
TOKEN_DF_SQL = "SELECT doc FROM temp.memories_fts_vocabulary WHERE term = ?"
# A pair of characters of a script written without spaces is counted in memories_spaced.
SPACED_DF_SQL = "SELECT count(*) FROM memories_spaced WHERE memories_spaced MATCH ?"
SPACED_HELD_SQL = "SELECT rowid FROM memories_spaced WHERE memories_spaced MATCH ? AND rowid IN ({marks})"
# The texts the keyword index holds for some memories, column by column.
INDEXED_SQL = "SELECT * FROM {source} WHERE id IN ({marks})"
SIZE_SQL = "SELECT count(*) FROM memories"


@dataclass(frozen=True)
class QueryTerms:
    """The query's keyword terms, each with its IDF in this brain."""

    weights: dict[str, float]
    unknown: float  # share of the IDF mass in terms no memory contains
    memories: int = 0  # in the brain the IDFs were taken over

    def cover(self, matched: Iterable[str]) -> float:
        """Share of the query's IDF mass in `matched` terms."""
        total = sum(self.weights.values())
        return sum(self.weights.get(t, 0.0) for t in set(matched)) / total if total else 0.0


@dataclass(frozen=True)
class Evidence:
    """What a hit's relevance is computed from (shown by search --explain)."""

    cosine: float | None  # plain cosine to the query, None without a calibrated one
    cover: float
    unknown: float
    memories: int = CALIBRATED_MEMORIES  # in the brain searched
    # The cosine less the brain's typical cosine to the query (typical), None without one.
    lift: float | None = None
    # The memory's hubness (hubness), None where it is not known (no off-topic prompts' vectors).
    hub: float | None = None
    # The query's closeness to the off-topic prompts (off_topic), None where it is not known.
    off_topic: float | None = None
    # How far the search's best cosine leads its rivals (lead), None where it is not known.
    lead: float | None = None

    @property
    def margin(self) -> float | None:
        """How far the query stands above the off-topic prompts to this memory (the
        cosine less the hubness), None without both."""
        return None if self.cosine is None or self.hub is None else self.cosine - self.hub

    @property
    def standout(self) -> float | None:
        """How far the query's cosine to this memory stands above the off-topic prompts:
        its margin over the memory's hubness plus its margin over the query's own closeness
        to them (off_topic), None without both."""
        if self.margin is None or self.off_topic is None or self.cosine is None:
            return None
        return self.margin + self.cosine - self.off_topic


def idf(memories: int, containing: int) -> float:
    """bm25's IDF: log(1 + (N − n + 0.5) / (n + 0.5)), for n of N memories."""
    return math.log(1.0 + (memories - containing + 0.5) / (containing + 0.5))


def _phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def document_frequencies(db: Database, terms: Iterable[str], tokenizer: Tokenizer) -> dict[str, int]:
    """How many memories hold each term in the keyword index (any column): what
    DF_SQL counts for the quoted term. A term of one token is looked up in the index's
    vocabulary instead, which counts the token's entries without a row loop per match;
    a term of several tokens (a phrase) is matched."""
    db.execute(VOCABULARY_SQL)
    counts = {}
    for term in terms:
        if SPACED_RUN.fullmatch(term):
            counts[term] = int(db.scalar(SPACED_DF_SQL, (_phrase(" ".join(term)),)) or 0)
            continue
        tokens = tokenizer.tokens(term, apsw.FTS5_TOKENIZE_QUERY)
        sql, param = (TOKEN_DF_SQL, tokens[0]) if len(tokens) == 1 else (DF_SQL, _phrase(term))
        counts[term] = int(db.scalar(sql, (param,)) or 0)
    return counts


def evidence_terms(query: str) -> list[str]:
    """The terms a query's keyword evidence is taken over: its keyword terms, each with
    its runs of spaceless scripts (spaced.py) cut out, and those runs' pairs of characters."""
    words = [part for term in keyword_terms(query) for part in SPACED_RUN.split(term) if part]
    return list(dict.fromkeys(words + spaced_terms(query)))


def query_terms(db: Database, query: str, tokenizer: Tokenizer | None = None) -> QueryTerms:
    """IDF of each keyword term of `query` over every memory, and the unknown share."""
    memories = int(db.scalar(SIZE_SQL) or 0)
    return terms_of(document_frequencies(db, evidence_terms(query), tokenizer or Tokenizer(db)), memories)


def terms_of(counts: Mapping[str, int], memories: int) -> QueryTerms:
    """The query's terms weighed by IDF, from how many of `memories` hold each (`counts`:
    brain.db's keyword index, or PostgreSQL's for its search)."""
    weights = {t: idf(memories, n) for t, n in counts.items()}
    total = sum(weights.values())
    unknown = sum(weights[t] for t, n in counts.items() if n == 0) / total if total else 0.0
    return QueryTerms(weights, unknown, memories)


def matched_terms(db: Database, terms: Iterable[str], ids: Sequence[int],
                  tokenizer: Tokenizer | None = None) -> dict[int, set[str]]:
    """The terms each memory in `ids` holds in the keyword index (any column): its
    indexed text tokenized as the index does (fts.Tokenizer), no index lookup at all
    (which walks the doclists of common words whole: ~1 ms a search at 100k). A pair of
    spaceless-script characters is asked of memories_spaced itself, as search and
    document_frequencies ask it (that index keeps the first SPACED_CHARS characters of a
    column and drops the scripts' punctuation, so the text alone would say otherwise)."""
    tokenizer = tokenizer or Tokenizer(db)
    asked = list(terms)
    wanted = {t: set(tokenizer.tokens(t, apsw.FTS5_TOKENIZE_QUERY)) for t in asked if not SPACED_RUN.fullmatch(t)}
    found: dict[int, set[str]] = {int(i): set() for i in ids}
    sql = INDEXED_SQL.replace("{source}", tokenizer.source)
    for row in db.rows_in(sql, list(found)) if wanted else []:
        held: set[str] = set()
        for column in tokenizer.columns:
            held.update(tokenizer.tokens(str(row.get(column) or "")))
        found[row["id"]] = {t for t, tokens in wanted.items() if tokens and tokens <= held}
    for term in (t for t in asked if SPACED_RUN.fullmatch(t)):
        for row in db.rows_in(SPACED_HELD_SQL, list(found), (_phrase(" ".join(term)),)):
            found[int(row["rowid"])].add(term)
    return found


def evidence(db: Database, query: str, cosines: dict[int, float | None],
             tokenizer: Tokenizer | None = None, terms: QueryTerms | None = None,
             usual: float | None = None, hubs: dict[int, float] | None = None,
             off: float | None = None, ahead: float | None = None) -> dict[int, Evidence]:
    """The evidence for each hit id (its cosine given, or None where it has none);
    `terms`: query_terms(db, query) when already taken; `usual`: the brain's typical
    cosine to the query (typical), from which each hit's lift is taken; `hubs`: the
    hits' hubness (hubness), where known; `off`: the query's closeness to the off-topic
    prompts (off_topic), where known; `ahead`: how far the search's best cosine leads its
    rivals (lead), where known."""
    terms = query_terms(db, query, tokenizer) if terms is None else terms
    matched = matched_terms(db, terms.weights, list(cosines), tokenizer)
    return _evidence_of(terms, matched, cosines, usual, hubs or {}, off, ahead)


def _evidence_of(terms: QueryTerms, matched: Mapping[int, set[str]], cosines: Mapping[int, float | None],
                 usual: float | None, hubs: Mapping[int, float], off: float | None,
                 ahead: float | None) -> dict[int, Evidence]:
    def lift(cosine: float | None) -> float | None:
        return None if cosine is None or usual is None else cosine - usual

    return {i: Evidence(c, terms.cover(matched.get(i, set())), terms.unknown, terms.memories, lift(c),
                        hubs.get(i), None if c is None else off, ahead)
            for i, c in cosines.items()}


def threshold(min_relevance: object, default: float) -> float:
    """The relevance a search's hits must reach: `min_relevance`, a number from 0 to 1
    (0: every hit listed), or `default` (config min_relevance) when it is None."""
    if min_relevance is None:
        return default
    try:
        number = float(min_relevance)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise InvalidInput(f"min_relevance must be a number from 0 to 1, not {min_relevance!r}"[:200]) from None
    if isinstance(min_relevance, bool) or not 0.0 <= number <= 1.0:
        raise InvalidInput(f"min_relevance must be a number from 0 to 1, not {min_relevance!r}"[:200])
    return number


def calibrated(embedder: Embedder | None) -> bool:
    """Whether relevance's cosine terms were fitted on `embedder`'s model (CALIBRATED_EMBEDDER)."""
    return embedder is not None and f"{embedder.provider}:{embedder.model}" == CALIBRATED_EMBEDDER


def off_topic_bank(vectors: VectorStore, embedder: Embedder) -> np.ndarray | None:
    """The off-topic prompts' query vectors (hubness, off_topic): shipped for the local
    model; another's come from the embeddings cache, embedded the first time its brain.db
    searches."""
    bank = shipped_vectors(identity(embedder))
    return vectors.query_vectors(off_topic_prompts()) if bank is None else bank


def judge(terms: QueryTerms, matched: Mapping[int, set[str]], cosines: Mapping[int, float | None],
          stored: Mapping[int, np.ndarray], bank: np.ndarray | None, usual: float | None,
          query_vector: np.ndarray | None) -> dict[int, Evidence]:
    """The evidence of each ranked hit: `cosines`, best first, its plain cosine (None
    where it has none or the model is not the calibrated one); `matched`, the query's
    terms it holds (matched_terms); `stored`, the vectors of those with a cosine, for
    their hubness against `bank` (off_topic_bank; None: not known); `usual`, the typical
    cosine of the brain searched to the query (typical). The one judge of local search
    (Brain.search) and PostgreSQL search (sync/pgsearch.py), which read these each from
    their own store."""
    hubs = hubness(dict(stored), bank) if bank is not None else {}
    off = off_topic(query_vector, bank) if bank is not None and query_vector is not None else None
    ahead = lead(list(cosines.values())[:JUDGED_HITS])  # over the hits judged, whatever the limit
    return _evidence_of(terms, matched, cosines, usual, hubs, off, ahead)


@dataclass(frozen=True)
class Verdict:
    """Which of a search's ranked hits it lists (`listed`, their places in the ranking),
    the best relevance among the first JUDGED_HITS (None: not judged) and what to tell
    the user (`notes`)."""

    listed: list[int]
    best: float | None
    notes: list[str] = field(default_factory=list)


def verdict(relevances: Sequence[float | None], judged: bool, threshold: float, limit: int) -> Verdict:
    """The hits of a ranking (`relevances`, best first; None: a hit not judged) that reach
    `threshold`, at most `limit`; none when the best of the first JUDGED_HITS does not
    (nothing relevant was found). `judged`: whether the search's hits carry a relevance
    at all (a vector search with an uncalibrated model's cosines does not)."""
    best = max((r or 0.0 for r in relevances[:JUDGED_HITS]), default=None) if judged else None
    notes = []
    if threshold and not judged:
        notes.append(f"relevance is calibrated for {CALIBRATED_EMBEDDER} only: min_relevance is not "
                     f"applied to a vector search with another embedder")
    if threshold and best is not None and best < threshold:
        notes.append(f"nothing relevant: the best hit's relevance {best:.3f} is below min_relevance {threshold:g}")
        return Verdict([], best, notes)
    # Only the hits that reach the threshold are listed (0 lists every one).
    return Verdict([i for i, r in enumerate(relevances) if r is None or r >= threshold][:limit], best, notes)


@cache
def off_topic_prompts() -> tuple[str, ...]:
    """The off-topic prompts shipped with maxmem (OFF_TOPIC), one a line, without comments."""
    text = resources.files("maxmem").joinpath("data", OFF_TOPIC).read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def prompts_digest(prompts: Sequence[str]) -> str:
    """A fingerprint of the off-topic prompts, to know shipped vectors are theirs."""
    return hashlib.sha256("\n".join(prompts).encode("utf-8")).hexdigest()


@cache
def shipped_vectors(model: str) -> np.ndarray | None:
    """The off-topic prompts' vectors shipped for `model` ("provider:model:dim"): the
    local model's, when made from the prompts as they are; None otherwise."""
    if model.rsplit(":", 1)[0] != CALIBRATED_EMBEDDER:
        return None
    try:
        with resources.files("maxmem").joinpath("data", OFF_TOPIC_VECTORS).open("rb") as handle, \
                np.load(handle) as shipped:
            if str(shipped["digest"]) != prompts_digest(off_topic_prompts()):
                return None
            vectors = np.asarray(shipped["vectors"], dtype=np.float32)
    except (OSError, KeyError, ValueError):
        return None
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def hubness(vectors: dict[int, np.ndarray], bank: np.ndarray | None) -> dict[int, float]:
    """Each memory's hubness: the mean of its plain cosines to its HUB_NEIGHBOURS nearest
    off-topic prompts (`bank`, their query vectors, one row each); empty without a bank."""
    if bank is None or not len(bank) or not vectors:
        return {}
    ids = list(vectors)
    sims = np.vstack([vectors[i] for i in ids]).astype(np.float32) @ bank.T
    k = min(HUB_NEIGHBOURS, sims.shape[1])
    near = np.partition(sims, sims.shape[1] - k, axis=1)[:, -k:]
    return dict(zip(ids, near.mean(axis=1).tolist()))


def off_topic(query_vector: np.ndarray, bank: np.ndarray | None) -> float | None:
    """The query's closeness to the off-topic prompts (`bank`, their query vectors, one row
    each): the mean of its plain cosines to its OFF_TOPIC_NEIGHBOURS nearest; None without
    a bank. Its hubness, as a query."""
    if bank is None or not len(bank):
        return None
    sims = bank.astype(np.float32) @ np.asarray(query_vector, dtype=np.float32)
    k = min(OFF_TOPIC_NEIGHBOURS, len(sims))
    return float(np.partition(sims, len(sims) - k)[-k:].mean())


def lead(cosines: Iterable[float | None]) -> float | None:
    """How far the best of a search's cosines (those of its ranked hits that have one)
    stands above the mean of the next LEAD_RIVALS; None with fewer than two."""
    known = sorted((c for c in cosines if c is not None), reverse=True)
    if len(known) < 2:
        return None
    rivals = known[1:1 + LEAD_RIVALS]
    return known[0] - sum(rivals) / len(rivals)


def typical(query_vector: np.ndarray, mean: np.ndarray) -> float:
    """The brain's typical plain cosine to the query: its mean over the stored vectors,
    which is the query's dot product with their mean (VectorIndex.mean: the vectors are
    unit length), one dot product a search."""
    return float(np.dot(query_vector, mean))


def size(memories: int) -> float:
    """The brain's size as the fits take it: log(N / CALIBRATED_MEMORIES), held within
    the calibration's range of brains (smaller ones are keyword_weight's)."""
    held = min(max(memories, CALIBRATED_MEMORIES), LARGEST_MEMORIES)
    return math.log(held / CALIBRATED_MEMORIES)


def keyword_weight(memories: int) -> float:
    """How much the keyword evidence counts in a brain of `memories`: the IDF of a word
    no memory contains, relative to its value in the smallest calibration brain, at most 1."""
    return min(1.0, idf(max(memories, 0), 0) / idf(CALIBRATED_MEMORIES, 0))


def required_standout(memories: int) -> float:
    """The standout a hit needs in a brain of `memories`: STANDOUT_MARGINS' margins,
    linear in log N between their sizes, held beyond the smallest and the largest."""
    sizes = [math.log(n) for n, _ in STANDOUT_MARGINS]
    margins = [m for _, m in STANDOUT_MARGINS]
    return float(np.interp(math.log(max(memories, 1)), sizes, margins))


def lead_credit(ahead: float | None) -> float:
    """How much of the standout a hit needs its search's lead (lead) makes up: what it
    leads by beyond LEAD_CREDIT; 0 without one."""
    return 0.0 if ahead is None else max(0.0, ahead - LEAD_CREDIT)


def standing(found: Evidence) -> float | None:
    """The meaning route's log-odds: how far the hit's cosine stands above the brain's
    typical cosine to the query (lift), against how far the best of N memories stands
    by chance, which grows with N (log N, held within STANDING_MEMORIES). None without a
    lift."""
    if found.lift is None or found.cosine is None:
        return None
    a, b, c, d = STANDING
    low, high = STANDING_MEMORIES
    return a * found.lift + b * found.cosine + c * math.log(min(max(found.memories, low), high)) + d


def relevance(found: Evidence, mode: str = "hybrid") -> float:
    """The calibrated probability, in [0, 1], that a hit with this evidence is relevant
    (`mode` as in search: a "vector" search is judged on its cosine alone), or the
    meaning route's (standing) where that is higher: the keyword evidence can speak for
    a hit, never against one whose meaning stands out, and the route speaks only when the
    search's best cosine leads its rivals by ROUTE_LEAD (lead). Nothing speaks for a hit
    that does not stand out from the off-topic prompts (standout below required_standout, less
    the search's lead_credit): 0."""
    if found.standout is not None and found.standout < required_standout(found.memories) - lead_credit(found.lead):
        return 0.0  # prompts about nothing in particular sit as close: the hit does not stand out
    grown = size(found.memories)
    if found.cosine is None:
        a, b, c, d = WITHOUT_COSINE
        return _logistic(a * found.cover + b * found.unknown + c * grown + d)
    cosine = max(-1.0, min(1.0, found.cosine))
    alone, intercept = COSINE_ONLY
    by_cosine = alone * cosine + intercept
    if mode == "vector" or found.unknown >= KEYWORDS_SILENT:
        judged = by_cosine
    else:
        a, b, c, d, e = WITH_COSINE
        weight = keyword_weight(found.memories)
        full = a * cosine + b * found.cover + c * found.unknown + d * grown + e
        judged = weight * full + (1.0 - weight) * by_cosine
    # The meaning route speaks only when the search's best hit leads its rivals.
    meaning = standing(found) if found.lead is None or found.lead >= ROUTE_LEAD else None
    return _logistic(judged if meaning is None else max(judged, meaning))


def _logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))
