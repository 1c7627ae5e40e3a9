#!/usr/bin/env python3
"""The relevance gate at every brain size: before and after the hubness check, side by side.

A hit counts as relevant by meaning (relevance.standing) only when the query stands out
from what prompts about nothing in particular get from the same memory: its cosine less
the memory's hubness, the mean of its cosines to its nearest off-topic prompts
(maxmem/data/offtopic_prompts.txt). This bench asks, in brains of each size built as
bench/paraphrase_eval.py builds them (the paraphrase set's memories and filler):

- paraphrases: the held-out half of bench/data/paraphrase_set.jsonl (`--dev`: the dev
  half, on which relevance.HUB_MARGIN is chosen), each in the brains
  that hold its memory. Counted: of those whose memory the ranking puts in the top 3,
  the share the gate keeps *listed* (the memory itself reaches the threshold);
- coding: every prompt of substance of bench/data/coding_prompts.jsonl (everyday prompts
  to a coding agent; none is among the off-topic prompts), in the first brain of each
  size. Counted: the share that find nothing relevant;
- unrelated: bench/data/unrelated_queries.json (personal questions about what no memory
  mentions), likewise.

Each search runs once (Brain.search at min_relevance 0, limit 10, explain); each hit's
relevance is computed twice from the same evidence: "before" without its hubness (the
meaning route as it was), "after" with it. So one run prints both.

    python bench/gate_eval.py                       # sizes 5 50 500
    python bench/gate_eval.py --sizes 5 50 500 5000 --sample 40
    python bench/gate_eval.py --sizes 5 50 --margins 0 -0.01 -0.02 -0.03 -1   # the frontier
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
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
SIZES = (5, 50, 500)
LIMIT = 10


def coding_prompts(path: Path = CODING) -> list[str]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r["prompt"] for r in rows if r.get("substance")]


def judged(brain: Brain, query: str, margins: Sequence[float]) -> list[tuple[Any, ...]]:
    """(content, relevance before, relevance after at each of `margins`) of the ranked hits."""
    memories = brain.db.scalar("SELECT count(*) FROM memories")
    out = []
    for h in brain.search(query, limit=LIMIT, explain=True, track=False, min_relevance=0.0):
        e = h.explain
        found = rel.Evidence(e.get("similarity"), e["cover"], e["unknown"], int(memories), e.get("lift"), e.get("hub"))
        after = []
        for margin in margins:  # the hub check at each margin (relevance.HUB_MARGIN)
            found_at = replace(found, hub=None if found.hub is None else found.hub + margin - rel.HUB_MARGIN)
            after.append(rel.relevance(found_at))
        out.append((h.memory.content, rel.relevance(replace(found, hub=None)), *after))
    return out


def run(sizes: Sequence[int], sample: int | None, workdir: Path, embedder: Any,
        held: bool = True, margins: Sequence[float] = (rel.HUB_MARGIN,)) -> dict[int, dict[str, list[Any]]]:
    pairs = [p for p in pe.load_set() if pe.held_out(p.id) == held]
    coding = coding_prompts()
    unrelated = json.loads(pe.UNRELATED.read_text(encoding="utf-8"))["queries"]
    pool = pe.filler(max(sizes) - 1)
    threshold = Config().min_relevance
    out: dict[int, dict[str, list[Any]]] = {}
    for n, plan in enumerate(pe.plans(pairs, sizes, pool)):
        first = plan.size not in out
        seen = out.setdefault(plan.size, {"paraphrase": [], "coding": [], "unrelated": []})
        asked = plan.pairs if sample is None else [p for p in plan.pairs if len(seen["paraphrase"]) < sample]
        if not asked and not first:
            continue
        path = workdir / f"g{n}.db"
        with Brain.open(path, embedder=embedder) as brain:
            brain.remember_many([{"content": p.memory, "category": "daily"} for p in plan.pairs]
                                + [{"content": f, "category": "daily"} for f in plan.filler], near=False)
            columns = range(1, 2 + len(margins))
            for p in asked:
                hits = judged(brain, p.question, margins)
                rank = next((i for i, h in enumerate(hits) if h[0] == p.memory), None)
                if rank is not None and rank < 3:
                    seen["paraphrase"].append(tuple(hits[rank][k] >= threshold for k in columns))
                else:
                    seen["paraphrase"].append(None)
            if first:
                for kind, queries in (("coding", coding), ("unrelated", unrelated)):
                    for q in queries:
                        hits = judged(brain, q, margins)
                        seen[kind].append(tuple(max((h[k] for h in hits), default=0.0) < threshold for k in columns))
        path.unlink(missing_ok=True)
    return out


def pct(flags: Sequence[bool]) -> str:
    return f"{100.0 * sum(flags) / len(flags):5.1f} %" if flags else "    —  "


def report(out: dict[int, dict[str, list[Any]]], margins: Sequence[float]) -> None:
    print(f"threshold {Config().min_relevance:g}; before → after (the hubness check at HUB_MARGIN "
          f"{rel.HUB_MARGIN:g})")
    print(f"{'size':>6} | {'paraphrase in top 3 kept':>28} | {'coding: nothing relevant':>28} | "
          f"{'unrelated: nothing relevant':>28}")
    default = list(margins).index(rel.HUB_MARGIN) + 1 if rel.HUB_MARGIN in margins else 1
    for size, seen in sorted(out.items()):
        cells = []
        for kind in ("paraphrase", "coding", "unrelated"):
            rows = [r for r in seen[kind] if r is not None]
            cells.append(f"{pct([r[0] for r in rows])} → {pct([r[default] for r in rows])} (n={len(rows)})")
        print(f"{size:>6} | " + " | ".join(f"{c:>28}" for c in cells))
    if len(margins) > 1:
        print("\nthe frontier: margin, then per size paraphrases kept / coding left alone / unrelated left alone")
        for k, margin in enumerate(margins, start=1):
            cells = []
            for size, seen in sorted(out.items()):
                shares = [pct([r[k] for r in seen[kind] if r is not None]).strip()
                          for kind in ("paraphrase", "coding", "unrelated")]
                cells.append(f"{size}: " + " / ".join(shares))
            print(f"{margin:+.3f}  " + "   ".join(cells))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="*", type=int, default=list(SIZES), help="brain sizes (memories)")
    parser.add_argument("--sample", type=int, default=None,
                        help="at most this many paraphrases a size (the big sizes' brains are slow to build)")
    parser.add_argument("--cache", type=Path, default=locomo.OUT / "paraphrase-embeddings.sqlite",
                        help="embedding cache kept between runs (shared with paraphrase_eval.py)")
    parser.add_argument("--dev", action="store_true",
                        help="ask the dev half of the paraphrases (the one HUB_MARGIN is chosen on)")
    parser.add_argument("--margins", nargs="*", type=float, default=[rel.HUB_MARGIN],
                        help="hub margins to compare (the frontier; relevance.HUB_MARGIN first)")
    args = parser.parse_args(argv)
    if any(s < 2 for s in args.sizes):
        print("a brain size must be at least 2", file=sys.stderr)
        return 2
    inner = make_embedder("local", Config())
    assert inner is not None
    embedder = locomo.CachedEmbedder(inner, args.cache)
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="maxmem-gate-") as workdir:
            out = run(args.sizes, args.sample, Path(workdir), embedder, not args.dev, args.margins)
    finally:
        embedder.close()
    report(out, args.margins)
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
