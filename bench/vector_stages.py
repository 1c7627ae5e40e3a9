#!/usr/bin/env python3
"""The design figures behind search's vector stages, each measured side by side:

- a vec0 point lookup (how search rescores its head) for several chunk sizes
  (vectors.vector_table_sql picks ~192 KB chunks);
- Hamming distances over row-major vs word-major bits (VectorIndex keeps word-major);
- the candidate cut by argpartition vs by a histogram of the distances (vectors.nearest);
- int8 estimates for a tenth of 100k rows, all rows widened at once vs in cache-sized
  blocks (VectorIndex._approx);
- a whole hybrid Brain.search with the keyword query inline vs on the worker thread
  (search.KEYWORD_THREAD_FROM), back to back, for each brain size.

    python bench/vector_stages.py                    # brains of 10k and 100k (a few minutes)
    python bench/vector_stages.py --sizes 10000      # quicker
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import apsw
import numpy as np
import sqlite_vec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import core_bench  # noqa: E402

from maxmem import Brain  # noqa: E402
from maxmem.search import hybrid as search_mod  # noqa: E402
from maxmem.search import vectors  # noqa: E402


def median_ms(fn: Callable[[], object], repeats: int = 30) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def vec0_lookups(tmp: Path, dim: int, chunks: list[int], n: int = 20000) -> None:
    vectors = np.random.default_rng(0).normal(size=(n, dim)).astype(np.float32)
    wanted = np.random.default_rng(1).integers(1, n + 1, 400)
    for chunk in chunks:
        conn = apsw.Connection(str(tmp / f"vec-{dim}-{chunk}.db"))
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{dim}] distance_metric=cosine, "
                     f"chunk_size={chunk})")
        start = time.perf_counter()
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO v (rowid, embedding) VALUES (?, ?)",
                         ((i + 1, vectors[i].tobytes()) for i in range(n)))
        conn.execute("COMMIT")
        inserted = n / (time.perf_counter() - start)
        start = time.perf_counter()
        for i in wanted:
            conn.execute("SELECT embedding FROM v WHERE rowid = ?", (int(i),)).fetchall()
        lookup = 1e6 * (time.perf_counter() - start) / len(wanted)
        print(f"vec0 {dim}-d, chunks of {chunk:>3} ({chunk * dim * 4 // 1024:>4} KB): "
              f"point lookup {lookup:6.0f} µs, insert {inserted:7.0f}/s", flush=True)
        conn.close()


def row_major_hamming(bits: np.ndarray, query: np.ndarray) -> np.ndarray:
    counts = np.bitwise_count(bits ^ query)
    distance = counts[:, 0].astype(np.uint16)
    for word in range(1, counts.shape[1]):
        distance += counts[:, word]
    return distance


def whole_approx(codes: np.ndarray, rows: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return codes[rows].astype(np.float32) @ weights


def stages(dim: int, n: int = 100000) -> None:
    rng = np.random.default_rng(2)
    words = dim // 64
    bits = rng.integers(0, 2**63, size=(n, words), dtype=np.uint64)
    word_major, query = np.ascontiguousarray(bits.T), bits[5].copy()
    print(f"{dim}-d, {n:,} memories:", flush=True)
    print(f"  Hamming, row-major {median_ms(lambda: row_major_hamming(bits, query)):.2f} ms, "
          f"word-major {median_ms(lambda: vectors.hamming(word_major, query)):.2f} ms", flush=True)
    distance = vectors.hamming(word_major, query)
    keep = n * vectors.COARSE_BITS // dim
    print(f"  cut to {keep:,}: argpartition {median_ms(lambda: np.argpartition(distance, keep - 1)[:keep]):.2f} ms, "
          f"histogram {median_ms(lambda: vectors.nearest(distance, keep)):.2f} ms", flush=True)
    index = vectors.VectorIndex(words, dim)
    index.codes = rng.integers(-127, 127, size=(n, dim), dtype=np.int8)
    quantizer = vectors.Quantizer.identity(dim)
    rows, vector = rng.choice(n, keep, replace=False), rng.normal(size=dim).astype(np.float32)
    weights = vector * quantizer.scale
    print(f"  int8 estimates for {keep:,} rows: all at once "
          f"{median_ms(lambda: whole_approx(index.codes, rows, weights)):.2f} ms, in blocks "
          f"{median_ms(lambda: index._approx(rows, vector, quantizer)):.2f} ms", flush=True)


def keyword_thread(tmp: Path, n: int, dim: int = 384, repeats: int = 3) -> None:
    rows, vectors = core_bench.texts(n), core_bench.e5_like(n, dim)
    qvecs = core_bench.e5_like(len(core_bench.QUESTIONS), dim, seed=5)
    embedder = core_bench.Precomputed(dict(zip(rows, vectors)), dict(zip(core_bench.QUESTIONS, qvecs)), dim)
    threshold = search_mod.KEYWORD_THREAD_FROM
    times: dict[str, list[float]] = {"inline": [], "thread": []}
    with Brain.open(tmp / f"brain-{n}.db", embedder=embedder) as brain:
        for start in range(0, n, 10000):
            brain.remember_many([{"content": t} for t in rows[start:start + 10000]], near=False)
        brain.search(core_bench.QUESTIONS[0])
        for _ in range(repeats):
            for question in core_bench.QUESTIONS:
                for name, at in (("inline", 10**12), ("thread", 0)):
                    search_mod.KEYWORD_THREAD_FROM = at
                    began = time.perf_counter()
                    brain.search(question, track=False)
                    times[name].append(time.perf_counter() - began)
    search_mod.KEYWORD_THREAD_FROM = threshold
    print(f"Brain.search, {n:,} memories at {dim}-d, p50: keyword query inline "
          f"{1e3 * statistics.median(times['inline']):.1f} ms, on the worker thread "
          f"{1e3 * statistics.median(times['thread']):.1f} ms (threshold now {threshold:,})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[10000, 100000],
                        help="brain sizes for the keyword-thread comparison")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        vec0_lookups(tmp, 384, [256, 128, 64])
        vec0_lookups(tmp, 1536, [256, 64, 32])
        for dim in (384, 1536):
            stages(dim)
        for n in args.sizes:
            keyword_thread(tmp, n)


if __name__ == "__main__":
    main()
