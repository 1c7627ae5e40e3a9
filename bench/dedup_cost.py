"""What the near-duplicate check adds to `brain.remember` and `brain.remember_many`, side by side.

    python bench/dedup_cost.py [N] [--batch B] [--category C]   # N stored first (20000), a batch of B (10000)

Stores N memories (remember_many with near=False) in a realistic mix (core 2 %, daily 8 %,
conversation 90 %: conversations come from capture, which keeps every chunk), then, on
copies of the same brain.db:

- times 200 single `remember` calls into core and into daily with `[curation] dedup` on
  and off;
- times `remember_many` of a batch of B new memories of category C (daily; one in ten
  restating a stored memory of C) with the check on and off (`near=`), into that brain
  and into an empty one, the two alternating, the best of two runs each. The check
  compares the batch with the stored memories of C: `--category conversation` is the
  largest share.

Vectors come from a cheap deterministic 384-d embedder so that the numbers show the
lookup, not the model (the real model's time is the same in both columns: the check
embeds through the cache that remember then reads). It gives "Remember that X" a vector
close to X's (cosine about 0.96), so that a restatement is found as the real model finds it.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from maxmem import Brain, Config  # noqa: E402

RESTATING = "Remember that "


class CheapEmbedder:
    provider, model = "bench", "cheap-384"

    @property
    def dim(self) -> int:
        return 384

    def _vector(self, text: str) -> np.ndarray:
        restated = text.startswith(RESTATING)
        base = text[len(RESTATING):] if restated else text
        seed = int.from_bytes(hashlib.blake2b(base.encode(), digest_size=8).digest(), "little")
        v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
        if restated:  # the same fact in other words: near, not equal
            v += 0.3 * np.random.default_rng(seed + 1).standard_normal(384).astype(np.float32)
        return v / np.linalg.norm(v)

    def embed_documents(self, texts):
        return np.vstack([self._vector(t) for t in texts])

    def embed_query(self, text):
        return self._vector(text)


def timed(path: Path, dedup: bool, texts: list[str], category: str) -> list[float]:
    config = Config.from_tables({"curation": {"dedup": dedup}})
    times = []
    with Brain.open(path, embedder=CheapEmbedder(), config=config) as brain:
        for text in texts:
            started = time.perf_counter()
            brain.remember(text, category=category)
            times.append((time.perf_counter() - started) * 1000)
    return times


def batch_seconds(path: Path, near: bool, items: list[dict]) -> tuple[float, int]:
    """Seconds one remember_many of `items` takes, and how many memories it added."""
    with Brain.open(path, embedder=CheapEmbedder()) as brain:
        before = brain.stats()["memories"]
        started = time.perf_counter()
        brain.remember_many(items, near=near)
        took = time.perf_counter() - started
        return took, brain.stats()["memories"] - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=20000, help="memories stored first (default 20000)")
    parser.add_argument("--batch", type=int, default=10000, help="items of the remember_many batch (10000)")
    parser.add_argument("--category", default="daily", choices=("core", "daily", "conversation"),
                        help="the batch's category (daily)")
    args = parser.parse_args()
    n = args.n
    folder = Path(tempfile.mkdtemp(prefix="maxmem-dedup-"))
    try:
        base, empty = folder / "base.db", folder / "empty.db"
        Brain.open(empty, embedder=CheapEmbedder()).close()
        stored = [f"stored fact number {i} about topic {i % 97}" for i in range(n)]
        with Brain.open(base, embedder=CheapEmbedder()) as brain:
            items = [{"content": text,
                      "category": "core" if i % 50 == 0 else "daily" if i % 50 < 5 else "conversation"}
                     for i, text in enumerate(stored)]
            for start in range(0, n, 5000):
                brain.remember_many(items[start:start + 5000], near=False)
        texts = [f"a new fact number {i} that is not stored yet" for i in range(200)]
        print(f"remember() over {n} stored memories, 200 calls, median ms (p90):")
        for category in ("core", "daily"):
            results = {}
            for dedup in (False, True):
                copy = folder / f"copy-{category}-{dedup}.db"
                shutil.copy(base, copy)
                results[dedup] = timed(copy, dedup, texts, category)
            off, on = statistics.median(results[False]), statistics.median(results[True])
            print(f"  into {category:<6} dedup off {off:6.2f} ({sorted(results[False])[179]:.2f})   "
                  f"dedup on {on:6.2f} ({sorted(results[True])[179]:.2f})   on/off {on / off:.2f}×")

        same = [item["content"] for item in items if item["category"] == args.category]
        batch = [{"content": f"{RESTATING}{same[(i // 10) % len(same)]}" if same and i % 10 == 0
                  else f"a new note number {i} about subject {i % 89}", "category": args.category}
                 for i in range(args.batch)]
        print(f"remember_many() of {args.batch} new {args.category} memories (one in ten restating a stored "
              f"one; {len(same)} of the {n} stored are {args.category}), seconds, best of 2 (memories added):")
        for name, brain_db in (("an empty brain", empty), (f"{n} stored", base)):
            best: dict[bool, tuple[float, int]] = {}
            for _ in range(2):
                for near in (False, True):
                    copy = folder / f"batch-{near}.db"
                    shutil.copy(brain_db, copy)
                    took = batch_seconds(copy, near, batch)
                    best[near] = min(best.get(near, took), took)
            (off, added_off), (on, added_on) = best[False], best[True]
            print(f"  into {name:<14} check off {off:6.2f} s ({added_off})   check on {on:6.2f} s ({added_on})   "
                  f"on/off {on / off:.2f}×")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
