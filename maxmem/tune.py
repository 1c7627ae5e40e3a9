"""`maxmem tune`: the brain measures its own recall and tunes the search settings on it.

A personal benchmark is read from the brain itself, nothing sent anywhere:
- questions you asked in captured conversations (a user turn that asks, the assistant
  turn that answered it): the memories holding that answer, or committed from it (a
  trigger memory whose source turn it is), are what the question should find;
- conversation memories of one turn that ask (one speaker to another), answered by the
  next memory of the same conversation;
- searches you ran followed by a `get` of a memory they returned (store/fetched.py):
  the memories fetched are what the search should find;
- optionally, questions an OpenAI-compatible chat model writes about sampled memories
  (`model_questions`; nothing is sent unless you ask for it).
A turn's question is what it asks (`asking_part`: its sentences ending in a question
mark), not the greeting or reaction around it: the words you would search with later.
No question read from a conversation is answered by a memory that holds the question's
own text (that would be found by copying, not recall): such memories are neither
expected nor counted as hits. A search's query is your own words, not stored in a
memory: what you fetched after it is expected, whatever words they share.

The questions are split, by a seeded hash of their text, into a tuning half and a
held-out half. On the tuning half a small grid tries, one knob after the other (each
stage starting from the best so far): the weights of the two rankings
(`vector_weight` / `keyword_weight`), the candidate pool (`[search] candidates`),
recency (`[search] recency_weight` and `recency_half_life`), then lower
`min_relevance` gates (your own questions all have an answer, so they can tell a gate
that hides answers, never one that hides too little: it is never raised). The best settings replace the current ones
only when they beat them on the held-out half by more than the noise: the mean paired
difference of the score (the mean of R@10 and reciprocal rank, per question) must
exceed twice its standard error.

`record_check` runs a quick, time-bounded measurement with the current settings (the
daily part of the doctor job) and keeps the last few in brain.db's meta;
`recall_check` warns when the latest fell below the one before by more than their noise.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import tomlkit

from .brain import Brain
from .clock import iso, parse_time
from .config import Config
from .embeddings import Embedder
from .errors import ConfigError, InvalidInput, MaxmemError
from .files import write_kept, write_private
from .store import fetched

log = logging.getLogger("maxmem")

MAX_QUESTIONS = 2000
MIN_QUESTIONS = 20  # fewer, and no difference could beat the noise
SEED = 7
HELD_OUT = 0.5  # the share of questions kept for the held-out check
K = 10
NOISE_SE = 2.0  # a change must win by this many standard errors of the paired difference
WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)  # vector_weight; keyword_weight = 1 - it
POOLS = (20, 30, 50, 100, 200)  # [search] candidates
RECENCY_WEIGHTS = (0.05, 0.15)  # [search] recency_weight (0: off, always tried too)
HALF_LIVES = (7.0, 30.0, 180.0)  # [search] recency_half_life, in days
GATES = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05)  # min_relevance, tried only below the current one
STAGES = ("weights", "candidates", "recency")  # tried in this order; then the gate
MIN_WORDS = 4  # a question of fewer words ("how are you?") asks about nothing in particular
MAX_QUESTION_CHARS = 400
# Each setting tune writes: Settings' field -> its key in config.toml ("table.key" in a table).
KEYS = {"vector_weight": "vector_weight", "keyword_weight": "keyword_weight", "min_relevance": "min_relevance",
        "candidates": "search.candidates", "recency_weight": "search.recency_weight",
        "recency_half_life": "search.recency_half_life"}
# The quick measurement doctor's daily run makes.
CHECK_QUESTIONS = 150
CHECK_SECONDS = 20.0
CHECK_EVERY_HOURS = 20.0
CHECK_META = "tune_checks"
CHECKS_KEPT = 10
PREVIOUS_FILE = "tune-previous.json"  # beside config.toml: the values --apply replaced

# A user turn that asks, and the assistant turn right after it.
ASKED_SQL = """
SELECT q.session_id, q.seq, q.text, a.key, a.seq
FROM turns q JOIN turns a ON a.session_id = q.session_id AND a.seq = q.seq + 1 AND a.role = 'assistant'
WHERE q.role = 'user' AND q.text LIKE '%?%' AND length(q.text) <= ?
ORDER BY q.id DESC LIMIT ?
"""
# The conversation memories of a session whose turn range covers a turn.
COVERING_SQL = """
SELECT id, content FROM memories
WHERE session_id = ? AND category = 'conversation' AND superseded_by IS NULL
  AND json_extract(metadata, '$.turn_range[0]') <= ? AND json_extract(metadata, '$.turn_range[1]') >= ?
"""
# Memories committed from a turn (commit triggers record their source turns).
COMMITTED_FROM_SQL = """
SELECT m.id, m.content FROM memories m, json_each(m.metadata, '$.source_turns') s
WHERE m.source = 'trigger' AND m.superseded_by IS NULL AND coalesce(m.session_id, ?1) = ?1 AND s.value = ?2
"""
# Conversation memories of one turn each (not capture's chunks), in order per session.
SINGLE_TURNS_SQL = """
SELECT id, session_id, content FROM memories
WHERE category = 'conversation' AND session_id IS NOT NULL AND superseded_by IS NULL
  AND json_extract(metadata, '$.turn_range') IS NULL AND length(content) <= ?
ORDER BY session_id, id LIMIT ?
"""
MEMORY_COUNT_SQL = "SELECT count(*) FROM memories WHERE superseded_by IS NULL"
SAMPLE_MEMORIES_SQL = """
SELECT id, content FROM memories WHERE superseded_by IS NULL AND length(content) BETWEEN 40 AND 2000
ORDER BY id LIMIT ?
"""
SCAN_ROWS = 200_000
SPEAKER = re.compile(r"^[^:\n]{1,40}:\s+")
# A turn's sentences: split after . ! ? (and their full-width forms) and at line ends.
SENTENCE_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+|\n+")
ASKS = ("?", "\uff1f")  # a sentence that ends in one of these asks
CLOSERS = "\"')]\u00bb\u201d\u2019 "  # quotes and brackets closing a sentence


class NothingToLearn(MaxmemError):
    """This brain cannot be tuned: too few memories or questions with known answers, no
    vectors to weigh."""


@dataclass(frozen=True)
class Question:
    query: str
    gold: frozenset[int]  # the memories that answer it
    skip: frozenset[int] = frozenset()  # memories holding the question itself: not counted either way
    source: str = "asked"  # asked | replies | fetched | model


@dataclass(frozen=True)
class Settings:
    """The search settings tune tries (their defaults: Config's)."""

    vector_weight: float
    keyword_weight: float
    min_relevance: float
    candidates: int = 50
    recency_weight: float = 0.0
    recency_half_life: float = 30.0

    @classmethod
    def of(cls, config: Config) -> Settings:
        search = config.search
        return cls(config.vector_weight, config.keyword_weight, config.min_relevance,
                   search.candidates, search.recency_weight, search.recency_half_life)

    def label(self) -> str:
        recency = (f"recency_weight {self.recency_weight:g} (half-life {self.recency_half_life:g} days)"
                   if self.recency_weight else "recency off")
        return (f"vector_weight {self.vector_weight:g}, keyword_weight {self.keyword_weight:g}, "
                f"min_relevance {self.min_relevance:g}, candidates {self.candidates}, {recency}")

    def differing(self, other: Settings) -> list[str]:
        """The names of the settings whose value differs from `other`'s."""
        return [f.name for f in fields(self) if getattr(self, f.name) != getattr(other, f.name)]


@dataclass(frozen=True)
class Outcome:
    """One question's search: the ranked memory ids (the question's own memories left
    out) and the best hit's relevance (None: not judged)."""

    ranked: tuple[int, ...]
    best_relevance: float | None


@dataclass(frozen=True)
class Scores:
    n: int
    r1: float
    r5: float
    r10: float
    mrr: float
    nothing: float  # the share of questions that got nothing back

    def to_dict(self) -> dict[str, Any]:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Failure:
    query: str
    expected: str
    found: str | None


@dataclass
class TuneResult:
    questions: int
    sources: dict[str, int]
    tuning: int
    held_out: int
    before: Settings
    best: Settings  # the best on the tuning half
    after: Settings  # what the held-out check kept
    scores_before: Scores
    scores_best: Scores
    difference: float  # held-out mean paired difference of the score, best - before
    noise: float  # its standard error
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return self.after != self.before

    @property
    def kept(self) -> list[str]:
        """The settings the held-out check kept a new value of."""
        return self.after.differing(self.before)

    def to_dict(self) -> dict[str, Any]:
        return {
            "questions": self.questions, "sources": self.sources, "tuning": self.tuning,
            "held_out": self.held_out, "before": asdict(self.before), "best": asdict(self.best),
            "after": asdict(self.after), "changed": self.changed, "kept": self.kept,
            "scores": {"before": self.scores_before.to_dict(), "best": self.scores_best.to_dict()},
            "difference": round(self.difference, 4), "noise": round(self.noise, 4),
            "failures": [asdict(f) for f in self.failures], "seconds": round(self.seconds, 1),
        }


# -- the personal benchmark ------------------------------------------------------------

def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()


def is_question(text: str) -> bool:
    """A short text that asks about something (a '?' and a few words)."""
    text = text.strip()
    return ("?" in text and len(text) <= MAX_QUESTION_CHARS
            and len(re.findall(r"\w+", text)) >= MIN_WORDS)


def asking_part(text: str) -> str | None:
    """What a turn asks, as you would ask it later: its sentences that end in a question
    mark, without the talk around them (a greeting, a reaction to what was just said);
    None when they do not ask about something (`is_question`)."""
    asks = [s for s in (part.strip().rstrip(CLOSERS) for part in SENTENCE_END.split(text)) if s.endswith(ASKS)]
    query = " ".join(asks)
    return query if is_question(query) else None


def _split_gold(query: str, found: Iterable[tuple[int, str]]) -> tuple[set[int], set[int]]:
    """(expected, skipped): a memory holding the question's own text is skipped."""
    needle = _flat(query)
    gold: set[int] = set()
    skip: set[int] = set()
    for memory_id, content in found:
        (skip if needle in _flat(content) else gold).add(int(memory_id))
    return gold, skip


def asked_questions(brain: Brain, limit: int = SCAN_ROWS) -> list[Question]:
    """Questions you asked in captured conversations, expecting the memories that hold or
    were committed from the assistant's answer."""
    if not brain.db.table_exists("turns"):
        return []
    out = []
    for session_id, q_seq, text, a_key, a_seq in list(brain.db.execute(ASKED_SQL, (MAX_QUESTION_CHARS, limit))):
        query = asking_part(str(text))
        if query is None:
            continue
        found = [(r[0], r[1]) for r in brain.db.execute(COVERING_SQL, (session_id, a_seq, a_seq))]
        found += [(r[0], r[1]) for r in brain.db.execute(COMMITTED_FROM_SQL, (session_id, str(a_key)))]
        asked = {r[0] for r in brain.db.execute(COVERING_SQL, (session_id, q_seq, q_seq))}
        gold, skip = _split_gold(query, found)
        gold -= asked
        if gold:
            out.append(Question(query, frozenset(gold), frozenset(skip | asked), "asked"))
    return out


def reply_questions(brain: Brain, limit: int = SCAN_ROWS) -> list[Question]:
    """A one-turn conversation memory that asks, expecting the next memory of the same
    conversation (the reply)."""
    out = []
    rows = list(brain.db.execute(SINGLE_TURNS_SQL, (MAX_QUESTION_CHARS * 4, limit)))
    for (q_id, session, content), (a_id, a_session, answer) in zip(rows, rows[1:]):
        if session != a_session:
            continue
        query = asking_part(SPEAKER.sub("", str(content)))
        if query is None:
            continue
        gold, skip = _split_gold(query, [(a_id, answer)])
        if gold:
            out.append(Question(query, frozenset(gold), frozenset(skip | {int(q_id)}), "replies"))
    return out


def fetched_questions(brain: Brain, limit: int = MAX_QUESTIONS) -> list[Question]:
    """Searches you ran followed by a `get` of memories they returned, expecting those
    memories (the prompt hook's recall is not recorded)."""
    if not brain.db.table_exists("fetched"):
        return []
    gold: dict[str, set[int]] = {}
    for query, memory_id in fetched.pairs(brain.db, limit):
        if re.search(r"\w", query) and len(query) <= MAX_QUESTION_CHARS:
            gold.setdefault(query, set()).add(memory_id)
    return [Question(query, frozenset(ids), frozenset(), "fetched") for query, ids in gold.items()]


def model_questions(brain: Brain, client: Any, model: str, count: int = 50, seed: int = SEED) -> list[Question]:
    """Questions an OpenAI-compatible chat model writes, one per sampled memory (`client`:
    an `openai.OpenAI`). Each expects the memory it was written from; one that quotes it
    (its text found in the memory) is dropped."""
    rows = list(brain.db.execute(SAMPLE_MEMORIES_SQL, (SCAN_ROWS,)))
    picked = sorted(rows, key=lambda r: _hash(f"{seed}:model:{r[0]}"))[:count]
    out = []
    for memory_id, content in picked:
        reply = client.chat.completions.create(
            model=model, temperature=0,
            messages=[{"role": "system", "content": (
                "Write one short question, in the words a person would use later, that the note "
                "below answers. Do not copy phrases from it. Reply with the question only.")},
                {"role": "user", "content": str(content)[:2000]}])
        query = (reply.choices[0].message.content or "").strip().splitlines()[0:1]
        text = query[0].strip() if query else ""
        if is_question(text) and _flat(text) not in _flat(str(content)):
            out.append(Question(text, frozenset({int(memory_id)}), frozenset(), "model"))
    return out


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def benchmark(brain: Brain, extra: Sequence[Question] = (), cap: int = MAX_QUESTIONS,
              seed: int = SEED) -> list[Question]:
    """The personal benchmark: every source's questions, deduplicated by their text (the
    expected memories of repeats merged), at most `cap` (a seeded sample)."""
    merged: dict[str, Question] = {}
    for q in [*asked_questions(brain), *reply_questions(brain), *fetched_questions(brain), *extra]:
        key = _flat(q.query)
        if key in merged:
            old = merged[key]
            skip = old.skip | q.skip
            merged[key] = Question(old.query, (old.gold | q.gold) - skip, skip, old.source)
        else:
            merged[key] = q
    questions = [q for q in merged.values() if q.gold]
    questions.sort(key=lambda q: _hash(f"{seed}:{q.query}"))
    return questions[:cap]


def split(questions: Sequence[Question], seed: int = SEED,
          held_out: float = HELD_OUT) -> tuple[list[Question], list[Question]]:
    """(tuning, held-out), by a seeded hash of each question's text: the same brain gives
    the same halves."""
    tuning: list[Question] = []
    kept: list[Question] = []
    for q in questions:
        value = int(_hash(f"{seed}:split:{q.query}")[:8], 16) / 0xFFFFFFFF
        (kept if value < held_out else tuning).append(q)
    return tuning, kept


# -- measuring ----------------------------------------------------------------------------

class QueryVectors:
    """The brain's embedder, remembering each query's vector: every setting tried asks
    for the same questions' vectors."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.provider, self.model = inner.provider, inner.model
        self.vectors: dict[str, np.ndarray] = {}

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        if text not in self.vectors:
            self.vectors[text] = self.inner.embed_query(text)
        return self.vectors[text]


def searcher(brain: Brain, settings: Settings, vectors: Embedder | None) -> Brain:
    """A Brain over the same brain.db searching with `settings` (nothing is written)."""
    search = replace(brain.config.search, candidates=settings.candidates, recency_weight=settings.recency_weight,
                     recency_half_life=settings.recency_half_life)
    config = brain.config.with_(vector_weight=settings.vector_weight, keyword_weight=settings.keyword_weight,
                                min_relevance=settings.min_relevance, search=search)
    return Brain(brain.db, config, vectors, brain.clock)


def outcomes(brain: Brain, questions: Sequence[Question], settings: Settings, vectors: Embedder | None,
             gate: bool = False, deadline: float | None = None) -> list[Outcome]:
    """Each question's ranked ids under `settings`; `gate`: with its min_relevance (else
    none, so that gates can be tried on the same searches). Stops at `deadline`
    (time.monotonic()), returning the outcomes so far."""
    search = searcher(brain, settings, vectors)
    out = []
    for q in questions:
        if deadline is not None and time.monotonic() > deadline:
            break
        hits = search.search(q.query, limit=K + len(q.skip), track=False,
                             min_relevance=settings.min_relevance if gate else 0.0)
        ranked = tuple(h.memory.id for h in hits if h.memory.id not in q.skip)[:K]
        out.append(Outcome(ranked, hits.plan.best_relevance))
    return out


def gated(outcome: Outcome, min_relevance: float) -> Outcome:
    """The outcome as a search with this gate returns it: nothing when the best hit's
    relevance is below it (Brain.search's "nothing relevant")."""
    best = outcome.best_relevance
    if min_relevance and best is not None and best < min_relevance:
        return Outcome((), best)
    return outcome


def per_question(questions: Sequence[Question], found: Sequence[Outcome]) -> np.ndarray:
    """Rows of (R@1, R@5, R@10, reciprocal rank, nothing found) per question."""
    rows = []
    for q, o in zip(questions, found):
        rank = next((i for i, m in enumerate(o.ranked, start=1) if m in q.gold), None)
        rows.append([len(q.gold & set(o.ranked[:k])) / len(q.gold) for k in (1, 5, 10)]
                    + [1.0 / rank if rank else 0.0, 0.0 if o.ranked else 1.0])
    return np.array(rows, dtype=float).reshape(-1, 5)


def score(rows: np.ndarray) -> np.ndarray:
    """What tuning maximises, per question: the mean of R@10 and the reciprocal rank."""
    return (rows[:, 2] + rows[:, 3]) / 2 if len(rows) else np.zeros(0)


def scores(rows: np.ndarray) -> Scores:
    if not len(rows):
        return Scores(0, 0.0, 0.0, 0.0, 0.0, 0.0)
    mean = rows.mean(axis=0)
    return Scores(len(rows), *(float(v) for v in mean))


def paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Mean of b - a and its standard error."""
    diff = score(b) - score(a)
    if len(diff) < 2:
        return float(diff.mean()) if len(diff) else 0.0, math.inf
    return float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(len(diff)))


# -- tuning -------------------------------------------------------------------------------

def ready(brain: Brain) -> None:
    """NothingToLearn (one line) when this brain cannot be tuned: empty, of one memory, no
    embedder, every vector still pending."""
    count = int(brain.db.scalar(MEMORY_COUNT_SQL))
    if count == 0:
        raise NothingToLearn(f"{brain.path} holds no memories: nothing to tune")
    if count == 1:
        raise NothingToLearn(f"{brain.path} holds one memory: nothing to tune (recall needs several to choose from)")
    if brain.embedder is None:
        raise NothingToLearn("no embedder: search is keyword-only and its weights change nothing "
                           "(configure one, see  maxmem doctor)")
    if brain.pending_count() >= count:
        raise NothingToLearn(f"all {count} memories are waiting for a vector: run  maxmem embed  first")


def tried(current: Settings, stage: str) -> list[Settings]:
    """The settings a stage of STAGES tries besides `current` (its other knobs kept)."""
    if stage == "weights":
        out = [replace(current, vector_weight=w, keyword_weight=round(1.0 - w, 2)) for w in WEIGHTS]
    elif stage == "candidates":
        out = [replace(current, candidates=n) for n in POOLS]
    else:
        out = [replace(current, recency_weight=0.0)] + [
            replace(current, recency_weight=w, recency_half_life=h) for w in RECENCY_WEIGHTS for h in HALF_LIVES]
    unique = list(dict.fromkeys(out))
    return [s for s in unique if s != current]


def tune(brain: Brain, questions: Sequence[Question] | None = None, seed: int = SEED,
         progress: Callable[[str], None] | None = None) -> TuneResult:
    """Tune the search settings on the brain's own questions (see the module's text).
    Reads only: `write_settings` applies the result."""
    started = time.monotonic()
    ready(brain)
    questions = benchmark(brain, seed=seed) if questions is None else list(questions)
    tuning, held_out = split(questions, seed)
    if len(tuning) < MIN_QUESTIONS // 2 or len(held_out) < MIN_QUESTIONS // 2:
        raise NothingToLearn(
            f"nothing to learn from: {len(questions)} questions with a known answer found in {brain.path}, "
            f"tune needs at least {MIN_QUESTIONS} (questions asked in captured conversations and answered)")
    vectors = QueryVectors(brain.embedder) if brain.embedder is not None else None
    before = Settings.of(brain.config)
    say = progress or (lambda text: None)

    def value(found: list[Outcome], gate: float) -> float:
        return float(score(per_question(tuning, [gated(o, gate) for o in found])).mean())

    say(f"current: {before.label()}")
    best, best_found = before, outcomes(brain, tuning, before, vectors)
    best_value = value(best_found, before.min_relevance)
    for stage in STAGES:
        options = tried(best, stage)
        for i, settings in enumerate(options, start=1):
            say(f"{stage} {i}/{len(options)}: {settings.label()}")
            found = outcomes(brain, tuning, settings, vectors)
            v = value(found, settings.min_relevance)
            if v > best_value + 1e-9:
                best, best_found, best_value = settings, found, v
    for gate in GATES:
        if gate < best.min_relevance and value(best_found, gate) > best_value + 1e-9:
            best_value = value(best_found, gate)
            best = replace(best, min_relevance=gate)
    say(f"held-out check: {best.label()}")
    rows_before = per_question(held_out, outcomes(brain, held_out, before, vectors, gate=True))
    rows_best = (rows_before if best == before
                 else per_question(held_out, outcomes(brain, held_out, best, vectors, gate=True)))
    difference, noise = paired(rows_before, rows_best)
    after = best if best != before and difference > NOISE_SE * noise and difference > 0 else before
    rows_after = rows_best if after == best else rows_before
    return TuneResult(
        questions=len(questions), sources=_sources(questions), tuning=len(tuning), held_out=len(held_out),
        before=before, best=best, after=after, scores_before=scores(rows_before), scores_best=scores(rows_best),
        difference=difference, noise=noise if math.isfinite(noise) else 0.0,
        failures=failures(brain, held_out, rows_after, after, vectors),
        seconds=time.monotonic() - started)


def _sources(questions: Sequence[Question]) -> dict[str, int]:
    out: dict[str, int] = {}
    for q in questions:
        out[q.source] = out.get(q.source, 0) + 1
    return out


def failures(brain: Brain, questions: Sequence[Question], rows: np.ndarray, settings: Settings,
             vectors: Embedder | None, count: int = 3) -> list[Failure]:
    """A few questions the settings still miss (no expected memory in the top K)."""
    missed = [q for q, row in zip(questions, rows) if row[2] == 0.0][:count]
    found = outcomes(brain, missed, settings, vectors, gate=True)
    out = []
    for q, o in zip(missed, found):
        expected = brain.get(min(q.gold)).content
        top = brain.get(o.ranked[0]).content if o.ranked else None
        out.append(Failure(_short(q.query), _short(expected), _short(top) if top else None))
    return out


def _short(text: str, chars: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else flat[:chars - 1] + "…"


def report_lines(result: TuneResult, applied: bool = False) -> list[str]:
    """The before/after table, the decision, a few failures."""
    b, a = result.scores_before, result.scores_best
    sources = ", ".join(f"{n} {s}" for s, n in sorted(result.sources.items()))
    lines = [f"{result.questions} questions from this brain ({sources}): {result.tuning} to tune on, "
             f"{result.held_out} held out",
             "",
             f"held out      {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'nothing':>8}",
             *(f"{name:<12}  {100 * s.r1:6.1f} {100 * s.r5:6.1f} {100 * s.r10:6.1f} {100 * s.mrr:6.1f} "
               f"{100 * s.nothing:7.1f}%" for name, s in (("current", b), ("tuned", a))),
             "",
             f"current: {result.before.label()}",
             f"tuned:   {result.best.label()}"]
    if result.best == result.before:
        lines.append("the current settings are already the best tried: nothing to change")
    elif result.changed:
        lines.append(f"kept ({', '.join(result.kept)}): the score rose by {100 * result.difference:.1f} points "
                     f"(noise ±{100 * result.noise:.1f})"
                     + ("; written to the config (maxmem tune --revert takes it back)" if applied
                        else "; maxmem tune --apply writes it to the config"))
    else:
        lines.append(f"not kept: the score changed by {100 * result.difference:+.1f} points, within the noise "
                     f"(±{100 * result.noise:.1f} × {NOISE_SE:g})")
    if result.failures:
        lines.append("")
        lines.append("still missed, for example:")
        for f in result.failures:
            lines.append(f"  {f.query}")
            lines.append(f"    expected: {f.expected}")
            lines.append(f"    found:    {f.found or '(nothing)'}")
    return lines


# -- the config file ----------------------------------------------------------------------

def previous_path(config_path: Path) -> Path:
    return config_path.parent / PREVIOUS_FILE


def write_settings(config_path: Path, settings: Settings, before: Settings | None = None) -> dict[str, Any]:
    """Write `settings` into config.toml (its comments and other settings kept): those
    that differ from `before` (None: all of them), saving the values they replace (absent
    ones as null) for `revert_settings`. Each file is replaced whole, at the end: an
    interrupted run leaves them as they were."""
    document = _read(config_path)
    names = settings.differing(before) if before is not None else list(KEYS)
    new = {KEYS[name]: getattr(settings, name) for name in names}
    old = {key: _plain(_get(document, key)) for key in new}
    _set(document, new)
    write_private(previous_path(config_path), lambda f: f.write(json.dumps(old, indent=1) + "\n"))
    write_kept(config_path, tomlkit.dumps(document))
    return {"config": str(config_path), "written": new, "previous": old}


def revert_settings(config_path: Path) -> dict[str, Any]:
    """Put back the values the last `write_settings` replaced (removing those that were
    not set)."""
    saved = previous_path(config_path)
    if not saved.is_file():
        raise InvalidInput(f"nothing to revert: {saved} does not exist (maxmem tune --apply writes it)")
    try:
        old = json.loads(saved.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"cannot read {saved}: {exc}") from None
    if not isinstance(old, dict) or set(old) - set(KEYS.values()) or not all(map(_saved_value, old.values())):
        raise InvalidInput(f"{saved} is not what maxmem tune --apply wrote: fix or delete it")
    document = _read(config_path)
    _set(document, old)
    write_kept(config_path, tomlkit.dumps(document))
    saved.unlink()
    return {"config": str(config_path), "restored": old}


def _saved_value(value: Any) -> bool:
    """A value --apply saves: a setting's number, or None for one that was not set."""
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)
                             and math.isfinite(value))


def _read(config_path: Path) -> tomlkit.TOMLDocument:
    if not config_path.exists():
        return tomlkit.document()
    try:
        return tomlkit.parse(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomlkit.exceptions.ParseError) as exc:
        raise ConfigError(f"cannot read {config_path}: {exc}") from None


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def _get(document: tomlkit.TOMLDocument, key: str) -> Any:
    """A key's value ("table.key": in that table), None when absent."""
    table, _, name = key.rpartition(".")
    if not table:
        return document.get(name)
    found = document.get(table)
    return found.get(name) if isinstance(found, Mapping) else None


def _set(document: tomlkit.TOMLDocument, values: Mapping[str, Any]) -> None:
    """Set (None: remove) keys, "table.key" in that table (made when missing, removed
    when its last key is; an inline table, `search = {…}`, is set in place)."""
    _set_top(document, {k: v for k, v in values.items() if "." not in k})
    for key, value in values.items():
        table_name, _, name = key.rpartition(".")
        if not table_name:
            continue
        table = document.get(table_name)
        if table is not None and not isinstance(table, (tomlkit.items.Table, tomlkit.items.InlineTable)):
            raise ConfigError(f"{table_name} in the config is not a table: make it [{table_name}]")
        if table is None:
            if value is None:
                continue
            table = tomlkit.table()
            document.add(table_name, table)
        if value is None:
            table.pop(name, None)
            if not table:
                document.pop(table_name)
        else:
            table[name] = value


def _set_top(document: tomlkit.TOMLDocument, values: Mapping[str, Any]) -> None:
    """Set (None: remove) top-level keys, new ones before the first table."""
    tables = [k for k, v in document.items() if isinstance(v, (tomlkit.items.Table, tomlkit.items.AoT))]
    for name, value in values.items():
        if value is None:
            document.pop(name, None)
        elif name in document:
            document[name] = value
        elif tables:
            # tomlkit would append after the last table, inside it: rebuild in order.
            body = list(document.items())
            document.clear()
            for k, v in body:
                if k == tables[0]:
                    document[name] = value
                document[k] = v
        else:
            document[name] = value


# -- doctor's daily check -----------------------------------------------------------------

def measure(brain: Brain, count: int | None = None, max_seconds: float | None = None,
            seed: int = SEED) -> dict[str, Any] | None:
    """A quick measurement of the current settings on a sample of the brain's own
    questions (CHECK_QUESTIONS), bounded in time (CHECK_SECONDS); None when the brain has
    too few to say anything."""
    count = CHECK_QUESTIONS if count is None else count
    max_seconds = CHECK_SECONDS if max_seconds is None else max_seconds
    if brain.embedder is None:
        return None
    questions = benchmark(brain, cap=count, seed=seed)
    if len(questions) < MIN_QUESTIONS:
        return None
    settings = Settings.of(brain.config)
    found = outcomes(brain, questions, settings, QueryVectors(brain.embedder), gate=True,
                     deadline=time.monotonic() + max_seconds)
    rows = per_question(questions[:len(found)], found)
    if len(rows) < MIN_QUESTIONS:
        return None
    values = score(rows)
    return {"at": iso(brain.clock.now()), "n": len(rows), "r10": round(float(rows[:, 2].mean()), 4),
            "mrr": round(float(rows[:, 3].mean()), 4), "score": round(float(values.mean()), 4),
            "se": round(float(values.std(ddof=1) / math.sqrt(len(values))), 4), "settings": asdict(settings)}


def recorded(brain: Brain) -> list[dict[str, Any]]:
    raw = brain.db.get_meta(CHECK_META)
    try:
        checks = json.loads(raw) if raw else []
    except ValueError:
        return []
    return [c for c in checks if isinstance(c, dict)] if isinstance(checks, list) else []


def record_check(brain: Brain, now: datetime | None = None, **options: Any) -> dict[str, Any] | None:
    """Measure and keep the result in brain.db's meta, at most once every
    CHECK_EVERY_HOURS (the doctor job runs hourly); the new record, or None."""
    if brain.db.read_only:
        return None
    checks = recorded(brain)
    now = now or brain.clock.now()
    if checks and now - parse_time(checks[-1]["at"]) < timedelta(hours=CHECK_EVERY_HOURS):
        return None
    found = measure(brain, **options)
    if found is None:
        return None
    brain.db.set_meta(CHECK_META, json.dumps((checks + [found])[-CHECKS_KEPT:]))
    return found


def fallen(checks: Sequence[Mapping[str, Any]]) -> tuple[float, float] | None:
    """(drop, noise) when the latest score is below the one before by more than
    NOISE_SE standard errors of their difference; else None."""
    if len(checks) < 2:
        return None
    last, before = checks[-1], checks[-2]
    drop = float(before["score"]) - float(last["score"])
    noise = math.hypot(float(before.get("se", 0.0)), float(last.get("se", 0.0)))
    return (drop, noise) if drop > NOISE_SE * noise and drop > 0 else None


def recall_check(brain: Brain) -> dict[str, Any]:
    """Doctor's check of the brain's own recall: the daily quick measurement (recorded),
    then a WARN when it fell compared with the one before by more than the noise."""
    try:
        record_check(brain)
    except MaxmemError as exc:  # doctor reports; it never stops on a check
        log.info("recall check skipped: %s", exc)
    checks = recorded(brain)
    if not checks:
        return {"name": "own recall", "ok": True, "level": "ok",
                "detail": "not measured yet (too few questions with a known answer in this brain)"}
    last = checks[-1]
    detail = f"R@10 {100 * last['r10']:.1f}, MRR {100 * last['mrr']:.1f} on {last['n']} of your questions"
    drop = fallen(checks)
    if drop:
        return {"name": "own recall", "ok": True, "level": "warn",
                "detail": f"{detail}: fell {100 * drop[0]:.1f} points since {checks[-2]['at'][:10]} "
                          f"(noise ±{100 * drop[1]:.1f}); see  maxmem tune"}
    return {"name": "own recall", "ok": True, "level": "ok", "detail": detail}
