#!/usr/bin/env python3
"""Does `maxmem tune` help recall as a user would feel it? Measured on LoCoMo-10.

Each conversation becomes a brain as bench/locomo.py builds it (one memory per turn,
the session as `session_id`, the local model's vectors). `maxmem tune`'s library then
tunes that brain on its own turns only (the personal benchmark it reads from the brain:
a turn that asks, expecting the reply that follows), knowing nothing of LoCoMo's
questions. Both settings, the defaults and what tune kept, are then scored side by side
on LoCoMo's real QA (categories 1-4, held out from tuning entirely): R@10 and MRR per
conversation and overall, each search with its settings' own "nothing relevant" gate,
as `maxmem search` runs it.

The data is not part of maxmem (CC BY-NC 4.0): download data/locomo10.json from
https://github.com/snap-research/LoCoMo and pass its path (or set MAXMEM_LOCOMO).

    python bench/tune_eval.py --data PATH/locomo10.json
    python bench/tune_eval.py --data PATH/locomo10.json --convs conv-26 conv-30 --json out.json
    python bench/tune_eval.py --merge a.json b.json     # one table of runs saved with --json

(--json is rewritten after each conversation, so a run stopped early keeps what it did.)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import SCORED, CachedEmbedder, Conversation, hit_ids, load, recall_row  # noqa: E402

from maxmem import Brain  # noqa: E402
from maxmem.config import Config  # noqa: E402
from maxmem.embeddings import Embedder, make_embedder  # noqa: E402
from maxmem.tune import NothingToLearn, QueryVectors, Settings, searcher, tune  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"


def locomo_scores(brain: Brain, conv: Conversation, settings: Settings, vectors: Embedder) -> np.ndarray:
    """(R@10, reciprocal rank) per LoCoMo question of categories 1-4, with `settings`."""
    search = searcher(brain, settings, vectors)
    rows = []
    for q in conv.questions:
        if q.category not in SCORED:
            continue
        hits = search.search(q.text, limit=10, track=False)
        _, r10, rr = recall_row(hit_ids(hits, 10), q.gold)
        rows.append((r10, rr))
    return np.array(rows, dtype=float).reshape(-1, 2)


def run_one(conv: Conversation, embedder: Embedder, workdir: Path) -> dict[str, Any]:
    path = workdir / f"{conv.sample_id}.db"
    started = time.monotonic()
    with Brain.open(path, embedder=embedder, config=Config()) as brain:
        brain.remember_many(conv.items, near=False)
        built = time.monotonic() - started
        started = time.monotonic()
        try:
            result = tune(brain)
            tuned, note = result.after, result.to_dict()
        except NothingToLearn as exc:
            tuned, note = Settings.of(brain.config), {"error": str(exc)}
        tuning_seconds = time.monotonic() - started
        vectors = QueryVectors(embedder)
        default = Settings.of(brain.config)
        before = locomo_scores(brain, conv, default, vectors)
        after = before if tuned == default else locomo_scores(brain, conv, tuned, vectors)
        best = result.best if "error" not in note else default
        tried = after if best == tuned else locomo_scores(brain, conv, best, vectors)
    path.unlink(missing_ok=True)
    return {"conversation": conv.sample_id, "memories": len(conv.items), "qa": len(before),
            "default": Settings.of(Config()).__dict__, "tuned": tuned.__dict__, "best": best.__dict__,
            "tune": note, "build_seconds": round(built, 1), "tune_seconds": round(tuning_seconds, 1),
            "rows": {"default": before.tolist(), "tuned": after.tolist(), "best": tried.tolist()}}


def mean(rows: list[list[float]], column: int) -> float:
    return 100 * float(np.mean([r[column] for r in rows])) if rows else 0.0


def gain(note: dict[str, Any]) -> str:
    """Tune's held-out gain of its best settings, ± the noise (points of its score)."""
    if "difference" not in note:
        return "-"
    return f"{100 * note['difference']:+.1f} ± {100 * note['noise']:.1f}"


def report(results: Sequence[dict[str, Any]]) -> list[str]:
    lines = ["LoCoMo QA (categories 1-4), each brain tuned on its own turns only",
             f"{'conversation':13s} {'own qs':>6s} {'R@10 default':>12s} {'R@10 tuned':>10s} "
             f"{'MRR default':>11s} {'MRR tuned':>9s}  {'R@10 best-on-tuning':>19s}  {'own gain ± noise':>16s}  "
             "settings kept"]
    for r in results:
        own = r["tune"].get("questions", 0)
        kept = r["tuned"]
        changed = kept != r["default"]
        lines.append(
            f"{r['conversation']:13s} {own:6d} {mean(r['rows']['default'], 0):12.1f} "
            f"{mean(r['rows']['tuned'], 0):10.1f} {mean(r['rows']['default'], 1):11.1f} "
            f"{mean(r['rows']['tuned'], 1):9.1f}  {mean(r['rows']['best'], 0):19.1f}  "
            f"{gain(r['tune']):>16s}  "
            + (", ".join(f"{k} {kept[k]:g}" for k in r["tune"].get("kept", [])) if changed else "(defaults)"))
    every = {k: [row for r in results for row in r["rows"][k]] for k in ("default", "tuned", "best")}
    diff = np.array(every["tuned"])[:, 0] - np.array(every["default"])[:, 0] if every["default"] else np.zeros(1)
    se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
    lines.append(f"{'overall':13s} {sum(r['tune'].get('questions', 0) for r in results):6d} "
                 f"{mean(every['default'], 0):12.1f} {mean(every['tuned'], 0):10.1f} "
                 f"{mean(every['default'], 1):11.1f} {mean(every['tuned'], 1):9.1f}  "
                 f"{mean(every['best'], 0):19.1f}")
    lines.append(f"tuned - default R@10: {100 * float(diff.mean()):+.2f} points "
                 f"(standard error {100 * se:.2f}, {len(diff)} questions)")
    for what, settings in (("kept by the held-out check", "tuned"), ("best on the tuning half", "best")):
        counts: dict[str, int] = {}
        for r in results:
            for name, value in r[settings].items():
                if value != r["default"][name]:
                    counts[name] = counts.get(name, 0) + 1
        lines.append(f"settings changed, {what}, in how many of the {len(results)} brains: "
                     + (", ".join(f"{k} {n}" for k, n in sorted(counts.items())) or "none"))
    lines.append("(own qs: the questions tune read from the brain; own gain: on its held-out half, the "
                 "best settings' mean score (R@10 + reciprocal rank) / 2 minus the current's; "
                 "best-on-tuning: the best settings of the tuning half, before the held-out check; default = " +
                 Settings.of(Config()).label() + ")")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=os.environ.get("MAXMEM_LOCOMO"),
                        help="path to locomo10.json (default: MAXMEM_LOCOMO)")
    parser.add_argument("--convs", nargs="*", help="sample ids to run (default: all ten)")
    parser.add_argument("--json", type=Path, help="write the full result here")
    parser.add_argument("--cache", type=Path, default=OUT / "locomo-embeddings.sqlite",
                        help="embedding cache kept between runs (bench/locomo.py's)")
    parser.add_argument("--merge", nargs="+", type=Path, metavar="JSON",
                        help="print one table of the results these --json files hold, and stop")
    args = parser.parse_args(argv)
    if args.merge:
        for line in report([r for path in args.merge for r in json.loads(path.read_text(encoding="utf-8"))]):
            print(line)
        return 0
    if args.data is None:
        parser.error("--data PATH/locomo10.json (or MAXMEM_LOCOMO) is required")
    conversations = load(args.data, args.convs)
    inner = make_embedder("local", Config())
    assert inner is not None
    embedder = CachedEmbedder(inner, args.cache)
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix="maxmem-tune-eval-") as workdir:
            for conv in conversations:
                results.append(run_one(conv, embedder, Path(workdir)))
                print(f"{conv.sample_id}: built in {results[-1]['build_seconds']} s, "
                      f"tuned in {results[-1]['tune_seconds']} s", file=sys.stderr)
                if args.json:
                    args.json.parent.mkdir(parents=True, exist_ok=True)
                    args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    finally:
        embedder.close()
    for line in report(results):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
