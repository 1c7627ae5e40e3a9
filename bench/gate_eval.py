#!/usr/bin/env python3
"""The relevance gate at every brain size: the gate as it was and as it is, side by side.

A search whose best hit does not reach min_relevance returns nothing, and the prompt hook
injects nothing. This bench asks, in brains of each size built as bench/paraphrase_eval.py
builds them (the paraphrase set's memories and its filler; 5 to 10,000 memories):

- paraphrases: bench/data/paraphrase_set.jsonl, each question in the brains that hold
  its memory. Counted: of those whose memory the ranking puts in the top 3, the share the
  gate keeps *listed* (the memory itself reaches the threshold);
- coding: every prompt of substance of bench/data/coding_prompts.jsonl (everyday prompts
  to a coding agent; none is among the off-topic prompts), in the first brain of each
  size. Counted: the share that find nothing relevant;
- unrelated: bench/data/unrelated_queries.json (personal questions about what no memory
  mentions), likewise.

Each of the three is split in two by a hash (paraphrase_eval.held_out): the dev half,
on which the gate's constants are chosen, and the held-out half, reported (`--dev`
reports the dev half instead).

Each search runs once (Brain.search at min_relevance 0, limit 10, explain); each hit's
relevance is then computed from the same evidence twice: "before", the gate as it was
(no standout check; the meaning route silent where the cosine is below the memory's
hubness, whatever the best cosine's lead), and "after", relevance.relevance as shipped
(the standout check, relevance.required_standout, less relevance.lead_credit where the best
cosine leads by far; the meaning route only where the best cosine leads its rivals,
relevance.ROUTE_LEAD). `--margins` prints the frontier: every
margin of relevance.STANDOUT_MARGINS moved by each value. `--dump FILE` writes every
search's evidence (JSON); `--load FILE` scores such a dump again without searching (to
print other margins; a dump written before the lead was kept judges without it).

    python bench/gate_eval.py                       # sizes 5 50 500 5000 10000
    python bench/gate_eval.py --sizes 5 50 500 --dev --margins -0.02 -0.01 0 0.01 0.02   # the frontier
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import locomo  # noqa: E402
import paraphrase_eval as pe  # noqa: E402

from maxmem import Brain  # noqa: E402
from maxmem.config import Config  # noqa: E402
from maxmem.embeddings import make_embedder  # noqa: E402
from maxmem.search import relevance as rel  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
CODING = DATA / "coding_prompts.jsonl"
SIZES = (5, 50, 500, 5000, 10000)
LIMIT = 10
KINDS = ("paraphrase", "coding", "unrelated")

Record = dict[str, Any]


def coding_prompts(path: Path = CODING) -> list[str]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r["prompt"] for r in rows if r.get("substance")]


def searched(brain: Brain, query: str, memories: int) -> list[Record]:
    """The ranked hits' evidence (Brain.search at min_relevance 0, explain)."""
    out = []
    for h in brain.search(query, limit=LIMIT, explain=True, track=False, min_relevance=0.0):
        e = h.explain
        out.append({"content": h.memory.content, "cosine": e.get("similarity"), "cover": e["cover"],
                    "unknown": e["unknown"], "lift": e.get("lift"), "hub": e.get("hub"),
                    "off_topic": e.get("off_topic"), "lead": e.get("lead"), "memories": memories})
    return out


def evidence(hit: Record) -> rel.Evidence:
    return rel.Evidence(hit["cosine"], hit["cover"], hit["unknown"], hit["memories"], hit["lift"],
                        hit["hub"], hit.get("off_topic"), hit.get("lead"))


def before(found: rel.Evidence) -> float:
    """The gate as it was: no check of the query against the off-topic prompts, the
    meaning route silent where the cosine is below the memory's hubness (and whatever
    the best cosine's lead)."""
    if found.margin is not None and found.margin < 0:
        return rel.relevance(replace(found, hub=None, off_topic=None, lift=None, lead=None))
    return rel.relevance(replace(found, hub=None, off_topic=None, lead=None))


def shifted(margin: float) -> Callable[[rel.Evidence], float]:
    """relevance.relevance with every margin of relevance.STANDOUT_MARGINS moved by `margin`."""
    def judge(found: rel.Evidence) -> float:
        saved = rel.STANDOUT_MARGINS
        try:
            rel.STANDOUT_MARGINS = tuple((size, value + margin) for size, value in saved)
            return rel.relevance(found)
        finally:
            rel.STANDOUT_MARGINS = saved
    return judge


def passed(record: Record, judge: Callable[[rel.Evidence], float], threshold: float) -> bool | None:
    """For a paraphrase ranked in the top 3: whether its memory is listed (None when the
    ranking did not put it there); for another query: whether nothing is relevant."""
    hits = record["hits"]
    if record["kind"] == "paraphrase":
        rank = record["rank"]
        return None if rank is None or rank >= 3 else judge(evidence(hits[rank])) >= threshold
    return max((judge(evidence(h)) for h in hits), default=0.0) < threshold


def run(sizes: Sequence[int], workdir: Path, embedder: Any, held: bool | None = True) -> list[Record]:
    """Every search's record (`held`: the half asked; None: both)."""
    def mine(key: str) -> bool:
        return held is None or pe.held_out(key) == held

    pairs = [p for p in pe.load_set() if mine(p.id)]
    others = {"coding": [q for q in coding_prompts() if mine(q)],
              "unrelated": [q for q in json.loads(pe.UNRELATED.read_text(encoding="utf-8"))["queries"] if mine(q)]}
    pool = pe.filler(max(sizes) - 1)
    out: list[Record] = []
    firsts: set[int] = set()
    for n, plan in enumerate(pe.plans(pairs, sizes, pool)):
        path = workdir / f"g{n}.db"
        with Brain.open(path, embedder=embedder) as brain:
            brain.remember_many([{"content": p.memory, "category": "daily"} for p in plan.pairs]
                                + [{"content": f, "category": "daily"} for f in plan.filler], near=False)
            for p in plan.pairs:
                hits = searched(brain, p.question, plan.size)
                rank = next((i for i, h in enumerate(hits) if h["content"] == p.memory), None)
                out.append({"kind": "paraphrase", "size": plan.size, "held_out": pe.held_out(p.id),
                            "query": p.question, "rank": rank, "hits": hits})
            if plan.size not in firsts:  # once per size: in its first brain
                firsts.add(plan.size)
                for kind, queries in others.items():
                    out.extend({"kind": kind, "size": plan.size, "held_out": pe.held_out(q), "query": q,
                                "rank": None, "hits": searched(brain, q, plan.size)} for q in queries)
        path.unlink(missing_ok=True)
    return out


def pct(flags: Sequence[bool]) -> str:
    return f"{100.0 * sum(flags) / len(flags):5.1f} %" if flags else "    —  "


def shares(records: Sequence[Record], judge: Callable[[rel.Evidence], float],
           threshold: float) -> dict[int, dict[str, list[bool]]]:
    """Per size and kind, the flags `passed` gives (Nones left out)."""
    out: dict[int, dict[str, list[bool]]] = {}
    for r in records:
        flag = passed(r, judge, threshold)
        if flag is not None:
            out.setdefault(r["size"], {k: [] for k in KINDS})[r["kind"]].append(flag)
    return out


def report(records: Sequence[Record], margins: Sequence[float], half: str,
           thresholds: Sequence[float] = ()) -> None:
    threshold = Config().min_relevance
    required = ", ".join(f"{value:g} at {size}" for size, value in rel.STANDOUT_MARGINS)
    print(f"{half} half, threshold {threshold:g}; before → after (the standout check, STANDOUT_MARGINS "
          f"{required} memories)")
    print(f"{'size':>6} | {'paraphrase in top 3 kept':>28} | {'coding: nothing relevant':>28} | "
          f"{'unrelated: nothing relevant':>28}")
    old, new = shares(records, before, threshold), shares(records, rel.relevance, threshold)
    for size in sorted(new):
        cells = [f"{pct(old[size][k])} → {pct(new[size][k])} (n={len(new[size][k])})" for k in KINDS]
        print(f"{size:>6} | " + " | ".join(f"{c:>28}" for c in cells))
    if thresholds:
        print("\nthe frontier over min_relevance (the search's and the prompt hook's threshold): per size "
              "paraphrases kept / coding left alone / unrelated left alone")
        for value in thresholds:
            at = shares(records, rel.relevance, value)
            cells = [f"{size}: " + " / ".join(pct(at[size][k]).strip() for k in KINDS) for size in sorted(at)]
            print(f"{value:.3f}  " + "   ".join(cells))
    if margins:
        print("\nthe frontier: STANDOUT_MARGINS moved by, then per size paraphrases kept / coding left alone / "
              "unrelated left alone")
        for margin in margins:
            at = shares(records, shifted(margin), threshold)
            cells = [f"{size}: " + " / ".join(pct(at[size][k]).strip() for k in KINDS) for size in sorted(at)]
            print(f"{margin:+.3f}  " + "   ".join(cells))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="*", type=int, default=list(SIZES), help="brain sizes (memories)")
    parser.add_argument("--cache", type=Path, default=locomo.OUT / "paraphrase-embeddings.sqlite",
                        help="embedding cache kept between runs (shared with paraphrase_eval.py)")
    parser.add_argument("--dev", action="store_true",
                        help="ask the dev half (the one the gate's constants are chosen on)")
    parser.add_argument("--margins", nargs="*", type=float, default=[],
                        help="moves of relevance.STANDOUT_MARGINS to compare (the frontier)")
    parser.add_argument("--thresholds", nargs="*", type=float, default=[],
                        help="min_relevance values to compare (the frontier a user moves along by setting it)")
    parser.add_argument("--dump", type=Path, help="write every search's evidence here (JSON)")
    parser.add_argument("--load", type=Path, help="score the searches of an earlier --dump instead of searching")
    args = parser.parse_args(argv)
    if any(s < 2 for s in args.sizes):
        print("a brain size must be at least 2", file=sys.stderr)
        return 2
    started = time.perf_counter()
    if args.load:
        try:
            records = json.loads(args.load.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"{args.load}: not a dump of gate_eval.py --dump ({exc})", file=sys.stderr)
            return 2
        records = [r for r in records if r["held_out"] != args.dev and r["size"] in args.sizes]
    else:
        inner = make_embedder("local", Config())
        assert inner is not None
        embedder = locomo.CachedEmbedder(inner, args.cache)
        try:
            with tempfile.TemporaryDirectory(prefix="maxmem-gate-") as workdir:
                records = run(args.sizes, Path(workdir), embedder, not args.dev)
        finally:
            embedder.close()
        if args.dump:
            args.dump.parent.mkdir(parents=True, exist_ok=True)
            args.dump.write_text(json.dumps(records), encoding="utf-8")
    report(records, args.margins, "dev" if args.dev else "held-out", args.thresholds)
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
