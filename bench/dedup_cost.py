"""What the near-duplicate check adds to `brain.remember`, side by side.

    python bench/dedup_cost.py [N]        # N stored memories first (default 20000)

Stores N memories with remember_many (no check there) in a realistic mix (core
2 %, daily 8 %, conversation 90 %: conversations come from capture, which uses
remember_many), then times 200 single `remember` calls into core and into daily
with `[curation] dedup` on and off, on copies of the same brain.db. Vectors come
from a cheap deterministic 384-d embedder so that the numbers show the lookup, not
the model (the real model's time is the same in both columns: the check embeds
through the cache that remember then reads).
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


class CheapEmbedder:
    provider, model = "bench", "cheap-384"

    @property
    def dim(self) -> int:
        return 384

    def embed_documents(self, texts):
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.vstack(rows)

    def embed_query(self, text):
        return self.embed_documents([text])[0]


def timed(path: Path, dedup: bool, texts: list[str], category: str) -> list[float]:
    config = Config.from_tables({"curation": {"dedup": dedup}})
    times = []
    with Brain.open(path, embedder=CheapEmbedder(), config=config) as brain:
        for text in texts:
            started = time.perf_counter()
            brain.remember(text, category=category)
            times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=20000, help="memories stored first (default 20000)")
    n = parser.parse_args().n
    folder = Path(tempfile.mkdtemp(prefix="maxmem-dedup-"))
    try:
        base = folder / "base.db"
        with Brain.open(base, embedder=CheapEmbedder()) as brain:
            items = [{"content": f"stored fact number {i} about topic {i % 97}",
                      "category": "core" if i % 50 == 0 else "daily" if i % 50 < 5 else "conversation"}
                     for i in range(n)]
            for start in range(0, n, 5000):
                brain.remember_many(items[start:start + 5000])
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
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
