#!/usr/bin/env python3
"""Encryption at rest: search p50 and ingest of an encrypted brain.db next to a plain one.

Two brains of the same memories (default 100,000 at 384 dimensions), one plain, one
encrypted (SQLite3 Multiple Ciphers, AEGIS-256, a random 256-bit raw key as `maxmem
init --encrypt` makes; --cipher chacha20 for the library's default), measured side by
side in one run so that the ratios hold on a shared machine:

- ingest: `Brain.remember_many` in batches of 10,000, the two brains built in turn and
  in alternating order (--ingest-repeats, default 3), the best run of each kept, in
  memories per second on the clock and per second of the process's CPU (encrypting is
  CPU work: the second ratio is what it adds, whatever else the machine runs);
- search: hybrid `Brain.search` (limit 10) of the same questions, each question asked of
  the plain brain and of the encrypted one in turn (alternating which goes first),
  --repeats rounds; p50 and p95 of each;
- open: `Brain.open` + close (what each hook and command pays), in turn, p50 of each.

The vectors are stored ones, computed beforehand (synthetic e5-like unit vectors from
bench/core_bench.py, handed out by its `Precomputed` embedder): the embedding model's
time is the same for both brains and is left out.

    python bench/encrypt_bench.py              # 100,000 memories (about 5 minutes)
    python bench/encrypt_bench.py --n 10000    # quicker
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # as core_bench.py: BLAS threads sleep at once

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from core_bench import QUESTIONS, Precomputed, e5_like, texts  # noqa: E402

from maxmem import Brain, Config  # noqa: E402
from maxmem.keys import CIPHER, Key, is_encrypted, new_secret  # noqa: E402

BATCH = 10_000
KINDS = ("plain", "encrypted")


def build(path: Path, rows: list[str], embedder: Precomputed, config: Config) -> tuple[float, float]:
    """Seconds to remember every row into a new brain.db at `path`: on the clock, and
    of this process's CPU (what encrypting adds, whatever else the machine runs)."""
    for part in path.parent.glob(f"{path.name}*"):
        part.unlink()
    start, cpu = time.perf_counter(), time.process_time()
    with Brain.open(path, embedder=embedder, config=config) as brain:
        for s in range(0, len(rows), BATCH):
            brain.remember_many([{"content": t} for t in rows[s:s + BATCH]], near=False)
    return time.perf_counter() - start, time.process_time() - cpu


def run(n: int, dim: int, repeats: int, ingest_repeats: int, folder: Path, cipher: str) -> dict:
    rows = texts(n)
    vectors = e5_like(n, dim)
    qvecs = e5_like(len(QUESTIONS), dim, seed=5)
    embedder = Precomputed(dict(zip(rows, vectors)), dict(zip(QUESTIONS, qvecs)), dim)
    # min_relevance 0: every search returns its 10 hits, so both brains do the same work
    configs = {"plain": Config(min_relevance=0.0),
               "encrypted": Config(min_relevance=0.0, key=Key(new_secret(), "the benchmark", cipher))}
    paths = {kind: folder / f"{kind}.db" for kind in KINDS}
    ingest = {kind: float("inf") for kind in KINDS}
    ingest_cpu = {kind: float("inf") for kind in KINDS}
    for r in range(ingest_repeats):
        for kind in KINDS if r % 2 == 0 else reversed(KINDS):
            wall, cpu = build(paths[kind], rows, embedder, configs[kind])
            ingest[kind], ingest_cpu[kind] = min(ingest[kind], wall), min(ingest_cpu[kind], cpu)
            print(f"  ingest {kind}: {n / wall:,.0f} memories/s ({n / cpu:,.0f} per CPU second)", flush=True)
    assert is_encrypted(paths["encrypted"]) and not is_encrypted(paths["plain"])
    opens: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for r in range(30):
        for kind in KINDS if r % 2 == 0 else reversed(KINDS):
            start = time.perf_counter()
            Brain.open(paths[kind], embedder=embedder, config=configs[kind]).close()
            opens[kind].append(time.perf_counter() - start)
    brains = {kind: Brain.open(paths[kind], embedder=embedder, config=configs[kind]) for kind in KINDS}
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    try:
        for kind in KINDS:
            brains[kind].search(QUESTIONS[0], track=False)  # the RAM index loads once, as in a long-lived agent
        for r in range(repeats):
            for q in QUESTIONS:
                for kind in KINDS if r % 2 == 0 else reversed(KINDS):
                    start = time.perf_counter()
                    brains[kind].search(q, limit=10, track=False)
                    times[kind].append(time.perf_counter() - start)
        same = all([h.memory.id for h in brains["plain"].search(q, limit=10, track=False)]
                   == [h.memory.id for h in brains["encrypted"].search(q, limit=10, track=False)]
                   for q in QUESTIONS)
    finally:
        for brain in brains.values():
            brain.close()
    result = {"n": n, "dim": dim, "cipher": cipher, "same_results": same,
              "size_mb": {kind: paths[kind].stat().st_size / 1e6 for kind in KINDS}}
    for kind in KINDS:
        result[kind] = {"ingest_per_s": n / ingest[kind], "ingest_per_cpu_s": n / ingest_cpu[kind],
                        "search_p50_ms": 1e3 * statistics.median(times[kind]),
                        "search_p95_ms": 1e3 * float(np.percentile(times[kind], 95)),
                        "open_p50_ms": 1e3 * statistics.median(opens[kind])}
    result["search_p50_ratio"] = result["encrypted"]["search_p50_ms"] / result["plain"]["search_p50_ms"]
    result["search_p95_ratio"] = result["encrypted"]["search_p95_ms"] / result["plain"]["search_p95_ms"]
    result["ingest_ratio"] = result["encrypted"]["ingest_per_s"] / result["plain"]["ingest_per_s"]
    result["ingest_cpu_ratio"] = result["encrypted"]["ingest_per_cpu_s"] / result["plain"]["ingest_per_cpu_s"]
    return result


def report(r: dict) -> None:
    print(f"\n{r['n']:,} memories, {r['dim']}-d stored vectors (synthetic e5-like, computed beforehand: "
          f"no model time in either brain); cipher {r['cipher']}")
    print(f"{'':12}{'plain':>12}{'encrypted':>12}{'ratio':>8}")
    p, e = r["plain"], r["encrypted"]
    print(f"{'ingest /s':12}{p['ingest_per_s']:>12,.0f}{e['ingest_per_s']:>12,.0f}{r['ingest_ratio']:>8.2f}"
          "   (target ≥ 0.85)")
    print(f"{'  per CPU s':12}{p['ingest_per_cpu_s']:>12,.0f}{e['ingest_per_cpu_s']:>12,.0f}"
          f"{r['ingest_cpu_ratio']:>8.2f}")
    print(f"{'search p50':12}{p['search_p50_ms']:>10.2f}ms{e['search_p50_ms']:>10.2f}ms{r['search_p50_ratio']:>8.2f}"
          "   (target ≤ 1.15)")
    print(f"{'search p95':12}{p['search_p95_ms']:>10.2f}ms{e['search_p95_ms']:>10.2f}ms{r['search_p95_ratio']:>8.2f}")
    print(f"{'open+close':12}{p['open_p50_ms']:>10.2f}ms{e['open_p50_ms']:>10.2f}ms")
    print(f"{'brain.db':12}{r['size_mb']['plain']:>10.1f}MB{r['size_mb']['encrypted']:>10.1f}MB")
    print(f"the same top 10 for every question: {r['same_results']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="memories in each brain")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--repeats", type=int, default=10, help="rounds of the 20 questions")
    parser.add_argument("--ingest-repeats", type=int, default=3)
    parser.add_argument("--cipher", default=CIPHER,
                        help=f"SQLite3 Multiple Ciphers' cipher of the encrypted brain (maxmem's: {CIPHER}; "
                             "chacha20 is the library's default)")
    parser.add_argument("--dir", type=Path, help="where the two brains are built (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        report(run(args.n, args.dim, args.repeats, args.ingest_repeats, Path(folder), args.cipher))


if __name__ == "__main__":
    main()
