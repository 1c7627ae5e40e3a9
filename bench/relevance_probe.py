#!/usr/bin/env python3
"""Does relevance let paraphrases through and cut unrelated questions, in brains of any size?

bench/data/paraphrases.json (written for maxmem): twenty memories a personal agent
keeps, each with two queries that ask for it in other words ("present for a child's
party" for "the kids want a red bicycle for the birthday"), twenty queries about things
none of them mentions, and 99 filler memories. Tiny brains hold three of the twenty
memories each (in order: the first three, the next three, ...) and are asked their own
paraphrases and every unrelated query; a medium brain holds all twenty and the filler
(119 memories) and is asked everything. Every query goes through `Brain.search` at the
default min_relevance, in mode hybrid and in mode vector. Printed per brain and mode:
paraphrases whose memory comes first and is returned (found), those whose memory comes
first whatever the threshold (ranked first: what the ranking alone gets right),
unrelated queries answered with nothing, and the AUC of the best hit's relevance for
telling paraphrases (all of them) from unrelated queries.

LoCoMo (bench/relevance_eval.py) calibrates relevance on brains of 369-688 memories
whose questions share the conversation's words; this probe is where queries in other
words and brains of a handful of memories are measured.

    python bench/relevance_probe.py
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import locomo  # noqa: E402

from maxmem import Brain  # noqa: E402
from maxmem.config import Config  # noqa: E402
from maxmem.embeddings import Embedder, make_embedder  # noqa: E402

PROBE = Path(__file__).resolve().parent / "data" / "paraphrases.json"
TINY = 3  # memories in a tiny brain
MODES = ("hybrid", "vector")


@dataclass(frozen=True)
class Probe:
    pairs: list[tuple[str, list[str]]]  # a memory and the queries that ask for it in other words
    unrelated: list[str]
    filler: list[str]


@dataclass(frozen=True)
class Asked:
    brain: str  # "tiny" or "medium"
    mode: str
    kind: str  # "paraphrase" or "unrelated"
    query: str
    first: bool  # the wanted memory ranks first (min_relevance 0)
    returned: bool  # the search at the default threshold returns something
    relevance: float  # the best hit's


def load(path: Path = PROBE) -> Probe:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return Probe([(p["memory"], list(p["queries"])) for p in raw["pairs"]], list(raw["unrelated"]),
                 list(raw["filler"]))


def item(text: str) -> dict[str, Any]:
    return {"content": text, "category": "conversation" if text.startswith("user:") else "daily"}


def ask(brain: Brain, label: str, query: str, kind: str, wanted: str | None) -> list[Asked]:
    out = []
    for mode in MODES:
        ranked = brain.search(query, limit=10, mode=mode, track=False, min_relevance=0.0)
        returned = brain.search(query, limit=10, mode=mode, track=False)  # config min_relevance
        first = bool(ranked) and wanted is not None and ranked[0].memory.content == wanted
        out.append(Asked(label, mode, kind, query, first, bool(returned),
                         max((h.relevance or 0.0 for h in ranked), default=0.0)))
    return out


def run(probe: Probe, embedder: Embedder, workdir: Path) -> list[Asked]:
    asked: list[Asked] = []
    groups = [probe.pairs[i:i + TINY] for i in range(0, len(probe.pairs), TINY)]
    for n, group in enumerate(groups):
        with Brain.open(workdir / f"tiny-{n}.db", embedder=embedder) as brain:
            brain.remember_many([item(memory) for memory, _ in group], near=False)
            for memory, queries in group:
                for query in queries:
                    asked += ask(brain, "tiny", query, "paraphrase", memory)
            for query in probe.unrelated:
                asked += ask(brain, "tiny", query, "unrelated", None)
    with Brain.open(workdir / "medium.db", embedder=embedder) as brain:
        brain.remember_many([item(memory) for memory, _ in probe.pairs] + [item(f) for f in probe.filler], near=False)
        for memory, queries in probe.pairs:
            for query in queries:
                asked += ask(brain, "medium", query, "paraphrase", memory)
        for query in probe.unrelated:
            asked += ask(brain, "medium", query, "unrelated", None)
    return asked


def summarise(asked: Sequence[Asked]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for key in sorted({(a.brain, a.mode) for a in asked}, key=lambda k: (k[0] != "tiny", k[1])):
        rows = [a for a in asked if (a.brain, a.mode) == key]
        para = [a for a in rows if a.kind == "paraphrase"]
        unrelated = [a for a in rows if a.kind == "unrelated"]
        out[f"{key[0]} {key[1]}"] = {
            "paraphrases": len(para), "found": sum(a.first and a.returned for a in para),
            "first": sum(a.first for a in para),
            "unrelated": len(unrelated), "unrelated_cut": sum(not a.returned for a in unrelated),
            "auc": auc([a.relevance for a in para], [a.relevance for a in unrelated])}
    return out


def auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """P(a paraphrase's best relevance is above an unrelated query's), ties counting half."""
    pairs = [(p > n) + 0.5 * (p == n) for p in positive for n in negative]
    return sum(pairs) / len(pairs) if pairs else float("nan")


def report(summary: dict[str, dict[str, Any]], threshold: float, out: Any = None) -> None:
    print(f"paraphrase probe at min_relevance {threshold:g} (tiny brains: {TINY} memories; medium: all "
          "pairs with the filler)", file=out or sys.stdout)
    for key, s in summary.items():
        print(f"  {key:14} paraphrases found {s['found']:2}/{s['paraphrases']} (ranked first "
              f"{s['first']:2}/{s['paraphrases']}); unrelated cut {s['unrelated_cut']:3}/{s['unrelated']}; "
              f"AUC {s['auc']:.3f}",
              file=out or sys.stdout)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--probe", type=Path, default=PROBE)
    parser.add_argument("--json", type=Path, help="write every query's result here")
    parser.add_argument("--cache", type=Path, default=locomo.OUT / "probe-embeddings.sqlite",
                        help="embedding cache kept between runs")
    args = parser.parse_args(argv)
    inner = make_embedder("local", Config())
    assert inner is not None
    embedder = locomo.CachedEmbedder(inner, args.cache)
    try:
        with tempfile.TemporaryDirectory(prefix="maxmem-probe-") as workdir:
            asked = run(load(args.probe), embedder, Path(workdir))
    finally:
        embedder.close()
    summary = summarise(asked)
    report(summary, Config().min_relevance)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"summary": summary, "asked": [a.__dict__ for a in asked]}, indent=1),
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
