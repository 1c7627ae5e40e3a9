#!/usr/bin/env python3
"""Does a search know when the brain knows nothing? relevance.py on LoCoMo-10.

Answerable questions: LoCoMo's own (categories 1-4, with evidence). Unanswerable ones:
bench/data/unanswerable.jsonl, written for this benchmark in LoCoMo's style (its
speakers, its topics, its four question shapes) about things the conversations never
mention; each was checked against its conversation (the words of its `topic` looked
up in every turn, every hit read: `--check` lists them again). LoCoMo's adversarial
questions (category 5: a fact asked of the wrong speaker) are reported on their own
line: the brain does hold memories about their topic.

Each conversation is loaded into its own brain as bench/locomo.py does (its code),
and every question goes through `Brain.search(question, limit=10)`, the code path
users get: once with min_relevance=0 (the ranking, each hit with its relevance and,
with explain, its evidence) and once at the default threshold (config min_relevance),
whose empty results are the "nothing relevant" answers counted here.

Each question is asked again in one brain holding every conversation of its half
(about 2,800-3,100 memories, where most words are known somewhere): relevance is
fitted on both kinds of brain so that it means the same as a brain grows; `--crowded`
also asks the held-out questions in one brain holding all ten (5,882 memories).

The questions are split by conversation: the calibration half (CALIBRATION) is the
one relevance.py's constants were fitted on (`--fit` refits them and prints them),
the held-out half is the others. Printed per half: the AUC of the top hit's relevance
for telling answerable from unanswerable questions, the share of each kind that comes
back empty at the default threshold, and LoCoMo R@10 without and with it. `--cv`
compares variants on the calibration half alone: each of its conversations is left
out in turn, fitted without, and judged at that fit's default threshold.

    python bench/relevance_eval.py --data PATH/locomo10.json
    python bench/relevance_eval.py --data PATH/locomo10.json --fit
    python bench/relevance_eval.py --data PATH/locomo10.json --crowded
    python bench/relevance_eval.py --data PATH/locomo10.json --cv
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import locomo  # noqa: E402

from maxmem import Brain  # noqa: E402
from maxmem.config import Config  # noqa: E402
from maxmem.embeddings import Embedder, make_embedder  # noqa: E402
from maxmem.search import relevance as rel  # noqa: E402

UNANSWERABLE = Path(__file__).resolve().parent / "data" / "unanswerable.jsonl"
# Chosen before any figure was seen: LoCoMo's tuning pair and every other one of the rest.
CALIBRATION = ("conv-26", "conv-30", "conv-42", "conv-44", "conv-48")
LIMIT = 10
KINDS = ("answerable", "unanswerable", "adversarial")
# Other thresholds, for the trade-off line: from each hit's relevance, as Brain.search cuts.
CURVE = (0.05, 0.08, 0.10, 0.12, 0.15, 0.20, 0.25, 0.30)
# Factors tried on WITH_COSINE's cosine coefficient (cosine_share), in steps of 0.1.
SHARES = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5)


@dataclass
class Asked:
    """One question's search, both ways."""

    conv: str
    text: str
    kind: str  # answerable, unanswerable or adversarial
    category: str
    gold: list[str]
    hits: list[dict[str, Any]] = field(default_factory=list)  # relevance and evidence, ranked
    memories: int = 0  # in the brain searched
    brain: str = "alone"  # or "shared" (with the other conversations of its half)
    vector: list[float] = field(default_factory=list)  # relevances of a mode="vector" search's hits
    empty: bool = False  # nothing relevant at the default threshold
    recall: float = 0.0  # R@10 of the ranking (answerable questions)
    recall_cut: float = 0.0  # R@10 of what the default threshold returns


def load_unanswerable(path: Path) -> dict[str, list[dict[str, Any]]]:
    by_conv: dict[str, list[dict[str, Any]]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                row = json.loads(line)
                by_conv.setdefault(row["conv"], []).append(row)
            except (ValueError, KeyError):
                raise SystemExit(f"{path}:{number}: not a question record") from None
    return by_conv


def questions(conv: locomo.Conversation, unanswerable: Sequence[dict[str, Any]]) -> list[Asked]:
    asked = [Asked(conv.sample_id, q.text, "adversarial" if q.category == 5 else "answerable",
                   locomo.CATEGORIES[q.category], q.gold) for q in conv.questions]
    asked += [Asked(conv.sample_id, u["question"], "unanswerable", u["category"], []) for u in unanswerable]
    return asked


@dataclass
class Timing:
    """Seconds spent in Brain.search at the default threshold, and within it the part
    relevance.evidence takes (timed again on its own, on the same hits)."""

    searches: int = 0
    search: float = 0.0
    evidence: float = 0.0


def ask(brain: Brain, q: Asked, timing: Timing) -> Asked:
    """One question through Brain.search: ranked with every hit's evidence, by meaning
    only, and at the default threshold (timed)."""
    hits = brain.search(q.text, limit=LIMIT, explain=True, track=False, min_relevance=0.0)
    meaning = brain.search(q.text, limit=LIMIT, track=False, min_relevance=0.0, mode="vector")
    started = time.perf_counter()
    cut = brain.search(q.text, limit=LIMIT, track=False)  # config min_relevance
    timing.search += time.perf_counter() - started
    started = time.perf_counter()
    rel.evidence(brain.db, q.text, {h.memory.id: h.explain.get("similarity") for h in hits})
    timing.evidence += time.perf_counter() - started
    timing.searches += 1
    q.hits = [{"relevance": h.relevance, "cosine": h.explain.get("similarity"),
               "cover": h.explain["cover"], "unknown": h.explain["unknown"], "lift": h.explain.get("lift"),
               "hub": h.explain.get("hub"), "off_topic": h.explain.get("off_topic"), "lead": h.explain.get("lead"),
               "dia_ids": locomo.hit_ids([h], LIMIT)}
              for h in hits]
    q.memories = int(brain.db.scalar(rel.SIZE_SQL) or 0)
    q.vector = [h.relevance or 0.0 for h in meaning]
    q.empty = not cut
    if q.gold:
        q.recall = locomo.recall_row(locomo.hit_ids(hits, LIMIT), q.gold)[1]
        q.recall_cut = locomo.recall_row(locomo.hit_ids(cut, LIMIT), q.gold)[1]
    return q


def shared(conv: locomo.Conversation) -> list[dict[str, Any]]:
    """The conversation's memories for a brain it shares with others: turn ids named by
    conversation, so that recall counts its own turns only (sessions already are)."""
    return [{**item, "metadata": {**item["metadata"], "dia_id": f"{conv.sample_id}/{item['metadata']['dia_id']}"}}
            for item in conv.items]


def run(conversations: Sequence[locomo.Conversation], unanswerable: dict[str, list[dict[str, Any]]],
        embedder: Embedder, workdir: Path, timing: Timing | None = None,
        calibration: Sequence[str] = CALIBRATION, crowded: bool = False) -> list[Asked]:
    """Every question in its conversation's own brain ("alone"), and again in a brain
    holding every conversation of its half ("shared": five conversations, about 2,800
    to 3,100 memories, where most words are known somewhere and names are rare). With
    `crowded`, each held-out question also in a brain holding all ten ("crowded")."""
    timing = timing if timing is not None else Timing()
    out: list[Asked] = []
    for conv in conversations:
        path = workdir / f"{conv.sample_id}.db"
        with Brain.open(path, embedder=embedder) as brain:
            brain.remember_many(conv.items, near=False)
            out += [ask(brain, q, timing) for q in questions(conv, unanswerable.get(conv.sample_id, []))]
        path.unlink(missing_ok=True)
    for half in (True, False):
        convs = [c for c in conversations if (c.sample_id in calibration) == half]
        if len(convs) < 2:
            continue
        path = workdir / f"shared-{half}.db"
        with Brain.open(path, embedder=embedder) as brain:
            brain.remember_many([item for c in convs for item in shared(c)], near=False)
            for conv in convs:
                for q in questions(conv, unanswerable.get(conv.sample_id, [])):
                    q.brain, q.gold = "shared", [f"{conv.sample_id}/{g}" for g in q.gold]
                    out.append(ask(brain, q, timing))
        path.unlink(missing_ok=True)
    if crowded and len(conversations) > 1:
        path = workdir / "crowded.db"
        with Brain.open(path, embedder=embedder) as brain:
            brain.remember_many([item for c in conversations for item in shared(c)], near=False)
            for conv in conversations:
                if conv.sample_id not in calibration:
                    for q in questions(conv, unanswerable.get(conv.sample_id, [])):
                        q.brain, q.gold = "crowded", [f"{conv.sample_id}/{g}" for g in q.gold]
                        out.append(ask(brain, q, timing))
        path.unlink(missing_ok=True)
    return out


# -- figures ------------------------------------------------------------------------

def auc(positive: Sequence[float], negative: Sequence[float]) -> float | None:
    """P(a positive scores above a negative), ties counting half (Mann-Whitney)."""
    if not len(positive) or not len(negative):
        return None
    p, n = np.asarray(positive)[:, None], np.asarray(negative)[None, :]
    return float((p > n).mean() + 0.5 * (p == n).mean())


def top(q: Asked) -> float:
    return q.hits[0]["relevance"] if q.hits else 0.0


def best(q: Asked) -> float:
    """The relevance Brain.search holds to min_relevance: the best of its hits'."""
    return max((h["relevance"] for h in q.hits), default=0.0)


def curve(kind: dict[str, list[Asked]]) -> dict[str, Any]:
    """At each threshold of CURVE: % of unanswerable questions cut, R@10 change in points."""
    answerable, unanswerable = kind["answerable"], kind["unanswerable"]
    if not answerable or not unanswerable:
        return {}
    r10 = np.mean([q.recall for q in answerable])
    return {f"{t:.2f}": (float(np.mean([best(q) < t for q in unanswerable]) * 100),
                         float((np.mean([q.recall * (best(q) >= t) for q in answerable]) - r10) * 100))
            for t in CURVE}


def frontier(kind: dict[str, list[Asked]]) -> dict[str, Any]:
    """Where the trade-off stands, over every threshold the hits' relevances allow: the
    most unanswerable questions cut (%) while R@10 drops by at most one point, and what
    cutting half of them costs in R@10 points (each with its threshold)."""
    answerable, unanswerable = kind["answerable"], kind["unanswerable"]
    if not answerable or not unanswerable:
        return {}
    ok, okay = np.array([best(q) for q in answerable]), np.array([q.recall for q in answerable])
    no = np.array([best(q) for q in unanswerable])
    cut_at, best_cut = 0.0, 0.0
    for t in np.unique(np.concatenate([ok, no, [1.0]])):
        if (okay * (ok < t)).sum() / len(ok) * 100 > 1.0:
            break
        cut_at, best_cut = float(t), float((no < t).mean() * 100)
    half = float(np.sort(no)[(len(no) + 1) // 2 - 1]) + 1e-9  # cuts at least half
    return {"one_point": {"threshold": cut_at, "cut": best_cut},
            "half": {"threshold": half, "r10_change": float(-(okay * (ok < half)).sum() / len(ok) * 100)}}


def vector_mode(kind: dict[str, list[Asked]], threshold: float) -> dict[str, Any]:
    """mode="vector" (judged on the cosine alone): AUC of its best hit's relevance and the
    share of each kind of question it answers with nothing at `threshold`."""
    ok = [max(q.vector, default=0.0) for q in kind["answerable"]]
    no = [max(q.vector, default=0.0) for q in kind["unanswerable"]]
    return {"auc": auc(ok, no),
            "empty": {"answerable": float(np.mean([v < threshold for v in ok]) * 100) if ok else None,
                      "unanswerable": float(np.mean([v < threshold for v in no]) * 100) if no else None}}


def figures(asked: Sequence[Asked], threshold: float) -> dict[str, Any]:
    kind = {k: [q for q in asked if q.kind == k] for k in KINDS}
    answerable = kind["answerable"]
    r10 = float(np.mean([q.recall for q in answerable]) * 100) if answerable else None
    r10_cut = float(np.mean([q.recall_cut for q in answerable]) * 100) if answerable else None
    return {
        "curve": curve(kind),
        "frontier": frontier(kind),
        "vector_mode": vector_mode(kind, threshold),
        "conversations": sorted({q.conv for q in asked}),
        "n": {k: len(v) for k, v in kind.items()},
        "auc": auc([top(q) for q in answerable], [top(q) for q in kind["unanswerable"]]),
        "empty": {k: float(np.mean([q.empty for q in v]) * 100) if v else None for k, v in kind.items()},
        "empty_by_category": {
            c: float(np.mean([q.empty for q in kind["unanswerable"] if q.category == c]) * 100)
            for c in sorted({q.category for q in kind["unanswerable"]})
        },
        "r10": r10, "r10_cut": r10_cut, "memories": max((q.memories for q in asked), default=0),
        "r10_change": None if r10 is None or r10_cut is None else r10_cut - r10,
    }


def halves(asked: Sequence[Asked], calibration: Sequence[str], threshold: float) -> dict[str, dict[str, Any]]:
    """Each half's figures in the conversations' own brains, with those of the shared brain."""
    out = {}
    for name, inside in (("calibration", True), ("held-out", False)):
        mine = [q for q in asked if (q.conv in calibration) == inside]
        out[name] = {**figures([q for q in mine if q.brain == "alone"], threshold),
                     "shared": figures([q for q in mine if q.brain == "shared"], threshold),
                     "crowded": figures([q for q in mine if q.brain == "crowded"], threshold)}
    return out


def fmt(value: float | None, spec: str = "5.1f") -> str:
    return "  -  " if value is None else format(value, spec)


def report(result: dict[str, Any], out: Any = None) -> None:
    def line(text: str = "") -> None:
        print(text, file=out or sys.stdout)

    line(f"relevance on LoCoMo: default min_relevance {result['threshold']:g}, "
         f"top {LIMIT} hits of Brain.search per question")
    t = result.get("ms_per_search")
    if t:
        line(f"a search takes {t['search']:.2f} ms (question vector cached), of which the relevance "
             f"evidence {t['evidence']:.2f} ms, measured in the same run")
    for name, f in result["halves"].items():
        n = f["n"]
        line()
        line(f"{name} half ({', '.join(f['conversations']) or 'none'}): {n['answerable']} answerable, "
             f"{n['unanswerable']} unanswerable, {n['adversarial']} adversarial questions")
        line(f"  AUC of the top hit's relevance, answerable vs unanswerable: {fmt(f['auc'], '.3f')}")
        e = f["empty"]
        line(f"  nothing relevant at {result['threshold']:g}: {fmt(e['unanswerable'])} % of unanswerable, "
             f"{fmt(e['answerable'])} % of answerable, {fmt(e['adversarial'])} % of adversarial")
        line("    unanswerable by shape: " + ", ".join(
            f"{c} {v:.0f} %" for c, v in f["empty_by_category"].items()))
        line(f"  LoCoMo R@10 (categories 1-4): {fmt(f['r10'])} without the threshold, {fmt(f['r10_cut'])} "
             f"with it ({fmt(f['r10_change'], '+.1f')} points)")
        if f["curve"]:
            line("  other thresholds (unanswerable cut / R@10 change): " + ", ".join(
                f"{t} {cut:.0f} %/{change:+.1f}" for t, (cut, change) in f["curve"].items()))
        if f["frontier"]:
            one, half = f["frontier"]["one_point"], f["frontier"]["half"]
            line(f"  frontier: at most 1 point of R@10 lost cuts {one['cut']:.1f} % "
                 f"(threshold {one['threshold']:.3f}); cutting half costs {half['r10_change']:+.2f} points "
                 f"(threshold {half['threshold']:.3f})")
        v = f["vector_mode"]
        line(f"  mode vector (cosine alone): AUC {fmt(v['auc'], '.3f')}; nothing relevant at {result['threshold']:g}: "
             f"{fmt(v['empty']['unanswerable'])} % of unanswerable, {fmt(v['empty']['answerable'])} % of answerable")
        for key, where in (("shared", "the half's other conversations"), ("crowded", "all the others")):
            b = f[key]
            if b["n"]["answerable"]:
                one = b["frontier"]["one_point"] if b["frontier"] else {"cut": None}
                line(f"  in one brain with {where} ({b['memories']} memories): AUC "
                     f"{fmt(b['auc'], '.3f')}; nothing relevant {fmt(b['empty']['unanswerable'])} % of unanswerable, "
                     f"{fmt(b['empty']['answerable'])} % of answerable; R@10 {fmt(b['r10'])} -> {fmt(b['r10_cut'])} "
                     f"({fmt(b['r10_change'], '+.1f')}); at most 1 point lost cuts {fmt(one['cut'])} %")


# -- fitting --------------------------------------------------------------------------

def fit(asked: Sequence[Asked], calibration: Sequence[str]) -> dict[str, Any]:
    """relevance.py's constants from the calibration half, its conversations' own brains
    and the shared one together: logistic regressions on the top hit's evidence and the
    brain's size (relevance.size), answerable (1) vs unanswerable (0), both classes
    weighted equally and each answerable question by its R@10 (a search that found none
    of the evidence costs nothing when cut); WITH_COSINE's cosine term rescaled for the
    threshold's decision (cosine_share); then the highest threshold (steps of 0.005)
    whose R@10 change there is within one point."""
    from scipy.optimize import minimize  # the benchmark's own dependency, not maxmem's

    chosen = [q for q in asked if q.conv in calibration and q.kind != "adversarial" and q.hits]
    y = np.array([q.kind == "answerable" for q in chosen], dtype=float)
    recall = np.array([q.recall for q in chosen])
    weight = np.where(y == 1, 0.5 / y.mean() * recall, 0.5 / (1 - y.mean()))
    smallest, largest = min(q.memories for q in chosen), max(q.memories for q in chosen)
    saved = {k: getattr(rel, k) for k in ("WITH_COSINE", "WITHOUT_COSINE", "COSINE_ONLY",
                                          "CALIBRATED_MEMORIES", "LARGEST_MEMORIES")}
    try:
        rel.CALIBRATED_MEMORIES, rel.LARGEST_MEMORIES = smallest, largest

        def logistic(columns: list[str]) -> tuple[float, ...]:
            x = np.array([[rel.size(q.memories) if c == "size" else q.hits[0][c] or 0.0 for c in columns] + [1.0]
                          for q in chosen])

            def loss(b: np.ndarray) -> float:
                z = x @ b
                return float((weight * (y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z))).mean())

            return tuple(round(float(v), 3) for v in minimize(loss, np.zeros(x.shape[1]), method="BFGS").x)

        constants: dict[str, Any] = {"WITH_COSINE": logistic(["cosine", "cover", "unknown", "size"]),
                                     "WITHOUT_COSINE": logistic(["cover", "unknown", "size"]),
                                     "COSINE_ONLY": logistic(["cosine"]),
                                     "CALIBRATED_MEMORIES": smallest, "LARGEST_MEMORIES": largest}
        constants["WITH_COSINE"], constants["cosine_share"] = cosine_share(asked, calibration, constants,
                                                                           chosen, y, weight)
        for k, v in constants.items():
            setattr(rel, k, v)
        answerable = [q for q in asked if q.conv in calibration and q.kind == "answerable"]
        best = [max((rel.relevance(rel.Evidence(h["cosine"], h["cover"], h["unknown"], q.memories, h.get("lift")))
                     for h in q.hits), default=0.0) for q in answerable]
        r10 = np.mean([q.recall for q in answerable])
        threshold = 0.0
        for step in range(1, 200):
            t = step / 200
            kept = np.mean([q.recall * (b >= t) for q, b in zip(answerable, best)])
            if (r10 - kept) * 100 > 1.0:
                break
            threshold = t
    finally:
        for k, v in saved.items():
            setattr(rel, k, v)
    constants["DEFAULT_MIN_RELEVANCE"] = threshold
    constants["fitted_on"] = {"conversations": list(calibration), "questions": len(chosen)}
    return constants


def cosine_share(asked: Sequence[Asked], calibration: Sequence[str], constants: dict[str, Any],
                 chosen: Sequence[Asked], y: np.ndarray, weight: np.ndarray) -> tuple[tuple[float, ...], float]:
    """WITH_COSINE with its cosine term rescaled for the decision it serves. The logistic
    fit weighs every question alike, but a threshold only asks which questions fall
    below it. For each factor of SHARES, the cosine coefficient is multiplied by it and
    the scale and intercept of the whole are fitted again (the same weighted logistic, so
    that a relevance stays a calibrated probability); kept is the factor whose relevance,
    judged on each search's best hit as Brain.search cuts, cuts the most unanswerable
    questions of the calibration half (own and shared brains) before its R@10 has lost
    one point (ties: the factor nearest 1). Returns the coefficients and the factor."""
    from scipy.optimize import minimize

    alone, intercept = constants["COSINE_ONLY"]

    def rows(q: Asked) -> tuple[np.ndarray, np.ndarray]:
        x = np.array([[h["cosine"] or 0.0, h["cover"], h["unknown"], rel.size(q.memories), 1.0] for h in q.hits])
        return x, np.array([h["unknown"] >= rel.KEYWORDS_SILENT for h in q.hits])

    mine = [q for q in asked if q.conv in calibration and q.hits and q.kind != "adversarial"]
    answerable = [rows(q) for q in mine if q.kind == "answerable"]
    recall = np.array([q.recall for q in mine if q.kind == "answerable"])
    unanswerable = [rows(q) for q in mine if q.kind == "unanswerable"]
    top = np.array([rows(q)[0][0] for q in chosen])

    def best(b: np.ndarray, searches: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        return np.array([np.where(silent, alone * x[:, 0] + intercept, x @ b).max() for x, silent in searches])

    def cut(b: np.ndarray) -> float:
        ok, no = best(b, answerable), best(b, unanswerable)
        order = np.argsort(ok)
        lost = np.cumsum(recall[order]) / len(recall) * 100
        k = int(np.searchsorted(lost, 1.0, side="right"))
        return float(np.mean(no < (ok[order][k] if k < len(ok) else ok.max())))

    def rescaled(b: np.ndarray) -> np.ndarray:
        z = top @ b

        def loss(ab: np.ndarray) -> float:
            s = ab[0] * z + ab[1]
            return float((weight * (y * np.logaddexp(0, -s) + (1 - y) * np.logaddexp(0, s))).mean())

        scale, shift = minimize(loss, np.array([1.0, 0.0]), method="BFGS").x
        return np.concatenate([scale * b[:-1], [scale * b[-1] + shift]])

    fitted = np.array(constants["WITH_COSINE"], dtype=float)
    tried = []
    for share in SHARES:
        b = rescaled(fitted * np.array([share, 1.0, 1.0, 1.0, 1.0]))
        tried.append((cut(b), -abs(share - 1.0), share, b))
    _, _, share, b = max(tried, key=lambda t: (t[0], t[1]))
    return tuple(round(float(v), 3) for v in b), share


FITTED = ("WITH_COSINE", "WITHOUT_COSINE", "COSINE_ONLY", "CALIBRATED_MEMORIES", "LARGEST_MEMORIES")


def cross_validate(asked: Sequence[Asked], calibration: Sequence[str]) -> dict[str, Any]:
    """`fit` judged on the calibration half alone, to compare variants without reading the
    held-out half: each calibration conversation in turn is left out, the constants and
    the default threshold are fitted on the other ones (their own brains and the shared
    one), and the left-out conversation's questions in its own brain are cut at that
    threshold. Per conversation and pooled: % of unanswerable questions cut, R@10 change
    (points), and the AUC of the pooled out-of-fold best-hit relevances."""
    saved = {k: getattr(rel, k) for k in FITTED}
    folds, ok, no, recall, cut_ok, cut_no = [], [], [], [], [], []
    try:
        for left in calibration:
            constants = fit(asked, [c for c in calibration if c != left])
            for k in FITTED:
                setattr(rel, k, constants[k])
            t = constants["DEFAULT_MIN_RELEVANCE"]
            mine = [q for q in asked if q.conv == left and q.brain == "alone" and q.hits]

            def judged(q: Asked) -> float:
                return max(rel.relevance(rel.Evidence(h["cosine"], h["cover"], h["unknown"], q.memories, h.get("lift")))
                           for h in q.hits)

            a = [(judged(q), q.recall) for q in mine if q.kind == "answerable"]
            u = [judged(q) for q in mine if q.kind == "unanswerable"]
            if a and u:
                folds.append({"conversation": left, "threshold": t, "cut": float(np.mean([v < t for v in u]) * 100),
                              "r10_change": float(-sum(r for v, r in a if v < t) / len(a) * 100)})
                ok += [v for v, _ in a]
                recall += [r for _, r in a]
                no += u
                cut_ok += [v < t for v, _ in a]
                cut_no += [v < t for v in u]
            for k, v in saved.items():
                setattr(rel, k, v)
    finally:
        for k, v in saved.items():
            setattr(rel, k, v)
    return {"folds": folds, "auc": auc(ok, no),
            "cut": float(np.mean(cut_no) * 100) if cut_no else None,
            "r10_change": float(-np.dot(recall, cut_ok) / len(recall) * 100) if recall else None}


# -- the keyword check of the unanswerable questions ---------------------------------

def check(conversations: Sequence[locomo.Conversation], unanswerable: dict[str, list[dict[str, Any]]],
          out: Any = None) -> int:
    """Each unanswerable question's topic words (as word starts) in its conversation's
    turns: every hit listed, to be read. Returns how many questions have hits."""
    with_hits = 0
    for conv in conversations:
        texts = [(i["metadata"]["dia_id"], i["content"]) for i in conv.items]
        for u in unanswerable.get(conv.sample_id, []):
            pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in u["topic"]) + ")", re.IGNORECASE)
            found = [(d, t) for d, t in texts if pattern.search(t)]
            if found:
                with_hits += 1
                print(f"{conv.sample_id}: {u['question']}  [{len(found)} turns]", file=out or sys.stdout)
                for dia_id, text in found:
                    print(f"    {dia_id} {text[:160]!r}", file=out or sys.stdout)
    return with_hits


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path, help="path to locomo10.json")
    parser.add_argument("--unanswerable", type=Path, default=UNANSWERABLE)
    parser.add_argument("--calibration", nargs="*", default=list(CALIBRATION),
                        help="conversations of the calibration half (the rest are held out)")
    parser.add_argument("--fit", action="store_true", help="refit relevance.py's constants and print them")
    parser.add_argument("--cv", action="store_true",
                        help="cross-validate the fit on the calibration half (leave one conversation out)")
    parser.add_argument("--crowded", action="store_true",
                        help="also ask each held-out question in one brain holding all the conversations")
    parser.add_argument("--check", action="store_true",
                        help="list every turn holding a topic word of an unanswerable question, and stop")
    parser.add_argument("--without-route", action="store_true",
                        help="judge every hit by the keyword fits alone, without the meaning route "
                             "(the comparison the route is measured against)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--dump", type=Path, help="write every search's hits and their evidence here")
    parser.add_argument("--cache", type=Path, default=locomo.OUT / "locomo-embeddings.sqlite",
                        help="embedding cache kept between runs (shared with bench/locomo.py)")
    args = parser.parse_args(argv)
    conversations = locomo.load(args.data)
    unanswerable = load_unanswerable(args.unanswerable)
    if args.check:
        print(f"{check(conversations, unanswerable)} questions have topic words in their conversation")
        return 0
    if args.without_route:
        rel.standing = lambda found: None  # relevance() then takes the fits' judgement as it is
    inner = make_embedder("local", Config())
    assert inner is not None
    embedder = locomo.CachedEmbedder(inner, args.cache)
    timing = Timing()
    try:
        with tempfile.TemporaryDirectory(prefix="maxmem-relevance-") as workdir:
            asked = run(conversations, unanswerable, embedder, Path(workdir), timing, args.calibration,
                        args.crowded)
    finally:
        embedder.close()
    threshold = Config().min_relevance
    result = {"threshold": threshold, "halves": halves(asked, args.calibration, threshold),
              "ms_per_search": {"search": 1000 * timing.search / max(timing.searches, 1),
                                "evidence": 1000 * timing.evidence / max(timing.searches, 1)}}
    report(result)
    if args.fit:
        constants = fit(asked, args.calibration)
        result["fit"] = constants
        print("\nrefitted on the calibration half (paste into maxmem/search/relevance.py and maxmem/config.py):")
        for name, value in constants.items():
            print(f"{name} = {value}")
    if args.cv:
        cv = cross_validate(asked, args.calibration)
        result["cv"] = cv
        print("\ncross-validated on the calibration half (fitted without the conversation, cut at that "
              "fit's default threshold, in its own brain):")
        for f in cv["folds"]:
            print(f"  {f['conversation']}: threshold {f['threshold']:.3f}, {f['cut']:.1f} % of unanswerable cut, "
                  f"R@10 {f['r10_change']:+.2f} points")
        print(f"  pooled: AUC {fmt(cv['auc'], '.3f')}, {fmt(cv['cut'])} % of unanswerable cut, "
              f"R@10 {fmt(cv['r10_change'], '+.2f')} points")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    if args.dump:
        args.dump.parent.mkdir(parents=True, exist_ok=True)
        args.dump.write_text(json.dumps([asdict(q) for q in asked]), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
