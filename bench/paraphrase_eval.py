#!/usr/bin/env python3
"""Does the relevance gate keep right answers put in other words, in brains of any size?

bench/data/paraphrase_set.jsonl (written for maxmem): 208 memories a personal agent
keeps, eight domains (home, health, travel, code, work, money, family, food), each with
one question that asks for it sharing no content word with it ("network layout for
the smart home gadgets" for "IoT devices live on VLAN 20; the NAS sits on VLAN 10.").
`check_set` verifies that (lowercased, plural and verb endings stripped, stop words
dropped) before anything runs, and stops the run on a question that shares a word.

Brains of 5, 50, 500, 5,000 and 10,000 memories hold the wanted memories (up to half of
each brain: groups of 2 in the brains of 5, of 25 in those of 50, all of them from
500) and filler: agent memories made from bench/data/filler_templates.json (sixty
templates over people, projects, services, places, days, amounts...; every one
different). Every question is asked in each size's brain that holds its memory, through
`Brain.search(question, limit=10)` at min_relevance 0 (the ranking) and at the default
min_relevance (the gate). Printed per brain size and pooled, for the held-out half:
the share of questions whose memory the ranking puts in the top 3 and in the top 10,
and of those, the share the default gate keeps (returns something rather than
"nothing relevant"). Forty questions about things no memory there mentions
(bench/data/unrelated_queries.json) are asked in the first brain of each size: the
share the gate cuts is printed beside.

The questions are split in two by a hash of their id (`held_out`): the dev half is the
one thresholds and constants may be tuned on, the held-out half is reported.

    python bench/paraphrase_eval.py
    python bench/paraphrase_eval.py --sizes 5 50 500 --json bench/out/paraphrase.json
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import random
import re
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import locomo  # noqa: E402
import numpy as np  # noqa: E402
import relevance_eval  # noqa: E402

from maxmem import Brain  # noqa: E402
from maxmem.config import Config  # noqa: E402
from maxmem.embeddings import Embedder, make_embedder  # noqa: E402
from maxmem.search import relevance as rel  # noqa: E402
from maxmem.search.stopwords import STOP_WORDS  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
SET = DATA / "paraphrase_set.jsonl"
TEMPLATES = DATA / "filler_templates.json"
UNRELATED = DATA / "unrelated_queries.json"
SIZES = (5, 50, 500, 5000, 10000)
LIMIT = 10
SEED = 25

# Words that carry no content for the shared-word check (beside maxmem's own stop words,
# the question words and auxiliaries a paraphrase may well repeat).
STOP = STOP_WORDS | frozenset(
    """d ll re ve m get got gets must need needs use used uses keep kept go goes went one
    also still every whose much many way thing things""".split())
WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Endings taken off a word (the first that fits), and what each leaves in its place.
SUFFIXES = (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("ly", ""), ("s", ""))


@dataclass(frozen=True)
class Pair:
    id: str
    domain: str
    memory: str
    question: str


@dataclass
class Asked:
    """One question in one brain."""

    id: str
    size: int
    kind: str  # "paraphrase" or "unrelated"
    held_out: bool
    rank: int | None = None  # 1-based rank of the wanted memory at min_relevance 0, None if not in the top 10
    kept: bool = False  # the default gate returns something
    best: float = 0.0  # the best hit's relevance
    hits: list[dict[str, Any]] = field(default_factory=list)  # the ranked hits' evidence


def stem(word: str) -> str:
    """A word without its plural or verb ending and a final e, so that the forms of one
    word meet ("gadgets" -> "gadget"; "stored", "stores", "store" -> "stor"; "planned" -> "plan")."""
    for suffix, left in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + left
            if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
                word = word[:-1]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def content_words(text: str) -> set[str]:
    """The stems of `text`'s words that are not stop words, lowercased."""
    return {stem(w) for w in (m.lower() for m in WORD.findall(text)) if w not in STOP}


def shared_words(pair: Pair) -> set[str]:
    """The content words the question and its memory have in common."""
    return content_words(pair.memory) & content_words(pair.question)


def check_set(pairs: Sequence[Pair]) -> list[str]:
    """One line per pair whose question shares a content word with its memory, or
    whose id is used twice."""
    problems = [f"{p.id}: shares {', '.join(sorted(shared_words(p)))}" for p in pairs if shared_words(p)]
    seen: set[str] = set()
    for p in pairs:
        if p.id in seen:
            problems.append(f"{p.id}: used twice")
        seen.add(p.id)
    return problems


def load_set(path: Path = SET) -> list[Pair]:
    pairs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                row = json.loads(line)
                pairs.append(Pair(row["id"], row["domain"], row["memory"], row["question"]))
            except (ValueError, KeyError, TypeError):
                raise SystemExit(f"{path}:{number}: not a paraphrase record") from None
    return pairs


def held_out(pair_id: str) -> bool:
    """The held-out half: by the first byte of the id's SHA-256, fixed before any figure was seen."""
    return hashlib.sha256(pair_id.encode()).digest()[0] % 2 == 1


def filler(count: int, templates: dict[str, Any] | None = None, seed: int = SEED) -> list[str]:
    """`count` different agent memories from the templates: each template in turn, its
    slots filled at random (a slot named twice in a template gets two different values)."""
    spec = templates or json.loads(TEMPLATES.read_text(encoding="utf-8"))
    rng = random.Random(seed)
    slot = re.compile(r"\{(\w+)\}")
    out: list[str] = []
    seen: set[str] = set()
    for attempt, template in enumerate(itertools.cycle(spec["templates"])):
        if len(out) >= count:
            break
        if attempt > 50 * count + 1000:
            raise SystemExit(f"the filler templates make fewer than {count} different memories")
        names = slot.findall(template)
        text = fill(template, {n: rng.sample(spec["slots"][n], names.count(n)) for n in dict.fromkeys(names)})
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def fill(template: str, values: dict[str, list[str]]) -> str:
    """`template` with each {slot} replaced by the next of its values."""
    return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)].pop(), template)


@dataclass(frozen=True)
class Plan:
    """One brain: its size, the pairs whose memories it holds, and its filler."""

    size: int
    pairs: list[Pair]
    filler: list[str]


def plans(pairs: Sequence[Pair], sizes: Sequence[int], pool: Sequence[str]) -> Iterator[Plan]:
    """The brains of each size: the wanted memories (shuffled, so that a brain mixes the
    domains) in groups of up to half its size, the rest filler, each brain taking the
    next filler of the pool in turn."""
    order = sorted(pairs, key=lambda p: hashlib.sha256(f"order:{p.id}".encode()).hexdigest())
    for size in sizes:
        group = max(1, min(len(order), size // 2))
        start = 0
        for first in range(0, len(order), group):
            chunk = order[first:first + group]
            need = size - len(chunk)
            if need > len(pool):
                raise SystemExit(f"a brain of {size} needs {need} filler memories, the pool has {len(pool)}")
            taken = [pool[(start + i) % len(pool)] for i in range(need)]
            start = (start + need) % len(pool)
            yield Plan(size, chunk, taken)


def ask(brain: Brain, asked: Asked, query: str, wanted: str | None) -> Asked:
    ranked = brain.search(query, limit=LIMIT, explain=True, track=False, min_relevance=0.0)
    gated = brain.search(query, limit=LIMIT, track=False)  # config min_relevance
    contents = [h.memory.content for h in ranked]
    asked.rank = contents.index(wanted) + 1 if wanted in contents else None
    asked.kept = bool(gated)
    asked.best = max((h.relevance or 0.0 for h in ranked), default=0.0)
    asked.hits = [{"relevance": h.relevance, "wanted": h.memory.content == wanted,
                   **{k: h.explain.get(k) for k in ("similarity", "cover", "unknown", "lift")}} for h in ranked]
    return asked


def run(pairs: Sequence[Pair], unrelated: Sequence[str], sizes: Sequence[int], embedder: Embedder,
        workdir: Path, pool: Sequence[str]) -> list[Asked]:
    out: list[Asked] = []
    asked_unrelated: set[int] = set()
    for n, plan in enumerate(plans(pairs, sizes, pool)):
        path = workdir / f"b{n}.db"
        with Brain.open(path, embedder=embedder) as brain:
            brain.remember_many([{"content": p.memory, "category": "daily"} for p in plan.pairs]
                                + [{"content": f, "category": "daily"} for f in plan.filler], near=False)
            for p in plan.pairs:
                out.append(ask(brain, Asked(p.id, plan.size, "paraphrase", held_out(p.id)), p.question, p.memory))
            if plan.size not in asked_unrelated:  # once per size: in its first brain
                asked_unrelated.add(plan.size)
                for i, query in enumerate(unrelated):
                    mine = Asked(f"unrelated-{i}", plan.size, "unrelated", held_out(query))
                    out.append(ask(brain, mine, query, None))
        path.unlink(missing_ok=True)
    return out


def share(flags: Sequence[bool]) -> float | None:
    return 100.0 * sum(flags) / len(flags) if flags else None


def summarise(asked: Sequence[Asked], held: bool = True) -> dict[str, dict[str, Any]]:
    """Per brain size and pooled, for one half: the share of paraphrases ranked in the
    top 3 / top 10, the share of those the gate keeps, and of unrelated queries cut."""
    out: dict[str, dict[str, Any]] = {}
    sizes = sorted({a.size for a in asked})
    for key, chosen in [*((str(s), [s]) for s in sizes), ("pooled", sizes)]:
        mine = [a for a in asked if a.size in chosen and a.held_out == held]
        para = [a for a in mine if a.kind == "paraphrase"]
        top3 = [a for a in para if a.rank is not None and a.rank <= 3]
        top10 = [a for a in para if a.rank is not None]
        unrelated = [a for a in mine if a.kind == "unrelated"]
        out[key] = {"questions": len(para), "top3": share([a in top3 for a in para]),
                    "top10": share([a in top10 for a in para]),
                    "kept_top3": share([a.kept for a in top3]), "kept_top10": share([a.kept for a in top10]),
                    "lost": sorted(a.id for a in top10 if not a.kept),
                    "unrelated": len(unrelated), "unrelated_cut": share([not a.kept for a in unrelated])}
    return out


def fmt(value: float | None) -> str:
    return "   - " if value is None else f"{value:5.1f}"


def report(summary: dict[str, dict[str, Any]], threshold: float, half: str, out: Any = None) -> None:
    def line(text: str) -> None:
        print(text, file=out or sys.stdout)

    line(f"{half} half, default min_relevance {threshold:g}, top {LIMIT} of Brain.search:")
    line("  memories  questions  top 3 %  kept %  top 10 %  kept %  unrelated cut %")
    for key, s in summary.items():
        line(f"  {key:>8}  {s['questions']:9}  {fmt(s['top3'])}   {fmt(s['kept_top3'])}   {fmt(s['top10'])}   "
             f"{fmt(s['kept_top10'])}   {fmt(s['unrelated_cut'])} (of {s['unrelated']})")


# -- fitting the meaning route (relevance.STANDING) ---------------------------------

# Of the dev half's paraphrases the ranking puts in the top 10, the share the fitted
# default must keep (above the target of 98 %, so that the held-out half has room).
KEEP = 99.0


def hit_evidence(hit: dict[str, Any], memories: int) -> rel.Evidence:
    """A dumped hit's evidence (this benchmark's hits name the cosine "similarity",
    relevance_eval.py's "cosine")."""
    cosine = hit.get("similarity", hit.get("cosine"))
    return rel.Evidence(cosine, hit["cover"], hit["unknown"], memories, hit.get("lift"))


def best_relevance(hits: Sequence[dict[str, Any]], memories: int) -> float:
    """The relevance Brain.search holds to min_relevance: the best of its hits'."""
    return max((rel.relevance(hit_evidence(h, memories)) for h in hits), default=0.0)


def fit(asked: Sequence[Asked], locomo_dump: Sequence[dict[str, Any]], calibration: Sequence[str],
        threshold: float) -> dict[str, Any]:
    """relevance.STANDING from the dev half and LoCoMo's calibration half: a logistic
    regression (scipy; half the weight to the relevant, a quarter to each kind of
    irrelevant question) of the lift, cosine and log N of the
    wanted hit of each dev paraphrase the ranking found (relevant) against the hit with
    the highest lift of each unanswerable LoCoMo question of the calibration half, in
    its own brain and the shared one, and of each unrelated dev query (not relevant);
    then the intercept set, in steps of 0.1, to the lowest at which the default threshold
    keeps KEEP % of those paraphrases (the two routes together, as Brain.search judges). Printed
    with what it does to the calibration half: unanswerable questions cut, R@10 change."""
    from scipy.optimize import minimize  # the benchmark's own dependency, not maxmem's

    sizes = sorted({a.size for a in asked})
    low, high = sizes[0], sizes[-1]
    found = [a for a in asked if a.kind == "paraphrase" and not a.held_out and a.rank is not None]
    unrelated = [a for a in asked if a.kind == "unrelated" and not a.held_out]
    unanswerable = [q for q in locomo_dump if q["conv"] in calibration and q["kind"] == "unanswerable" and q["hits"]]
    answerable = [q for q in locomo_dump if q["conv"] in calibration and q["kind"] == "answerable" and q["hits"]]

    def row(hit: dict[str, Any], memories: int) -> list[float]:
        cosine = hit.get("similarity", hit.get("cosine")) or 0.0
        return [hit.get("lift") or 0.0, cosine, math.log(min(max(memories, low), high)), 1.0]

    def top_lift(hits: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return max(hits, key=lambda h: h.get("lift") or 0.0)

    positive = [row(next(h for h in a.hits if h["wanted"]), a.size) for a in found]
    locomo_no = [row(top_lift(q["hits"]), q["memories"]) for q in unanswerable]
    unrelated_no = [row(top_lift(a.hits), a.size) for a in unrelated if a.hits]
    x = np.array(positive + locomo_no + unrelated_no)
    y = np.array([1.0] * len(positive) + [0.0] * (len(locomo_no) + len(unrelated_no)))
    # the relevant half of the weight to the paraphrases, a quarter to each kind of irrelevant question
    weight = np.concatenate([np.full(len(group), share_of / max(len(group), 1)) for group, share_of in
                             ((positive, 0.5), (locomo_no, 0.25), (unrelated_no, 0.25))]) * len(x)

    def loss(b: np.ndarray) -> float:
        z = x @ b
        return float((weight * (y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z))).mean())

    b = minimize(loss, np.zeros(4), method="BFGS").x
    saved = rel.STANDING, rel.STANDING_MEMORIES
    try:
        rel.STANDING_MEMORIES = (low, high)
        for step in range(-200, 201):  # the intercept from 20 below the fit's to 20 above, strictest first
            rel.STANDING = (*(round(float(v), 3) for v in b[:3]), round(float(b[3]) + step / 10, 3))
            kept = share([best_relevance(a.hits, a.size) >= threshold for a in found]) or 0.0
            if kept >= KEEP:
                break
        standing = rel.STANDING
        cut = share([best_relevance(q["hits"], q["memories"]) < threshold for q in unanswerable])
        lost = (sum(q["recall"] for q in answerable if best_relevance(q["hits"], q["memories"]) < threshold)
                / max(len(answerable), 1) * 100)
    finally:
        rel.STANDING, rel.STANDING_MEMORIES = saved
    fitted_on = {"paraphrases": len(found), "unrelated": len(unrelated), "unanswerable": len(unanswerable)}
    return {"STANDING": standing, "STANDING_MEMORIES": (low, high), "kept_dev": kept,
            "calibration_unanswerable_cut": cut, "calibration_r10_change": -lost, "fitted_on": fitted_on}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, default=SET, help="the paraphrase set (JSON lines)")
    parser.add_argument("--sizes", nargs="*", type=int, default=list(SIZES), help="brain sizes (memories)")
    parser.add_argument("--dev", action="store_true", help="also print the dev half")
    parser.add_argument("--json", type=Path, help="write every question's result here")
    parser.add_argument("--fit", type=Path, metavar="DUMP",
                        help="refit relevance.STANDING on the dev half and the LoCoMo searches in DUMP "
                             "(written by relevance_eval.py --dump), and print it")
    parser.add_argument("--cache", type=Path, default=locomo.OUT / "paraphrase-embeddings.sqlite",
                        help="embedding cache kept between runs")
    args = parser.parse_args(argv)
    pairs = load_set(args.set)
    problems = check_set(pairs)
    if problems:
        print("paraphrase set check failed:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    if any(s < 2 for s in args.sizes):
        print("a brain size must be at least 2", file=sys.stderr)
        return 2
    unrelated = json.loads(UNRELATED.read_text(encoding="utf-8"))["queries"]
    pool = filler(max(args.sizes) - 1)
    inner = make_embedder("local", Config())
    assert inner is not None
    embedder = locomo.CachedEmbedder(inner, args.cache)
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="maxmem-paraphrase-") as workdir:
            asked = run(pairs, unrelated, args.sizes, embedder, Path(workdir), pool)
    finally:
        embedder.close()
    threshold = Config().min_relevance
    result: dict[str, Any] = {"threshold": threshold, "seconds": time.perf_counter() - started,
              "held-out": summarise(asked, True), "dev": summarise(asked, False)}
    report(result["held-out"], threshold, "held-out")
    if args.dev:
        report(result["dev"], threshold, "dev")
    if args.fit:
        try:
            dump = json.loads(args.fit.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"{args.fit}: not a dump of relevance_eval.py --dump ({exc})", file=sys.stderr)
            return 2
        result["fit"] = fit(asked, dump, relevance_eval.CALIBRATION, threshold)
        print("\nrefitted on the dev half and LoCoMo's calibration half (paste into maxmem/search/relevance.py):")
        for name, value in result["fit"].items():
            print(f"{name} = {value}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({**result, "asked": [asdict(a) for a in asked]}, indent=1),
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
