#!/usr/bin/env python3
"""PostgreSQL sync benchmark: full push of N memories, incremental runs, shared search.

Side by side in one run, against a real PostgreSQL 16 + pgvector (started from the
pgserver wheel, as the tests do, or --dsn):

- full push of N memories (default 100k, 384-d): `maxmem sync postgres` memories/s,
  with the HNSW build at the end shown apart; next to the floor: the server copying
  the same rows from one table into an identical one (same GIN + generated tsvector,
  HNSW built after), i.e. the cost with no Python, no SQLite and no network;
- incremental runs of 100 changes (40 new, 40 updated, 20 forgotten) and a run with
  nothing new: seconds each (median of 3);
- `sync search` p50 at N (hybrid, in PostgreSQL) next to local `Brain.search` p50;
- with --cjk M, M of the N memories written in Korean and Chinese (a topic, a deed and a
  number, as tests/test_sync_postgres.py's): the p50 of questions in those languages too,
  whose keyword side adds memories_spaced's bm25 to FTS5's in both.

Vectors are precomputed (no embedding time): synthetic e5-like unit vectors from
bench/core_bench.py, the same texts generator.

    python bench/sync_bench.py                  # 100k (several minutes on 2 cores)
    python bench/sync_bench.py --n 20000        # quicker
    python bench/sync_bench.py --n 5000 --cjk 1000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from core_bench import QUESTIONS, Precomputed, e5_like, texts  # noqa: E402

from maxmem import Brain, Config  # noqa: E402
from maxmem.sync import pgsearch  # noqa: E402
from maxmem.sync.pgconnect import DEFAULT_INDEX_MEMORY  # noqa: E402
from maxmem.sync.pgpush import push  # noqa: E402

FLOOR_SQL = """
DROP TABLE IF EXISTS public.floor_copy;
CREATE TABLE public.floor_copy (LIKE maxmem.memories INCLUDING DEFAULTS INCLUDING GENERATED);
CREATE INDEX ON public.floor_copy USING gin (tsv);
CREATE INDEX ON public.floor_copy USING gin (spaced_tsv);
"""
CJK_TOPICS = ["서버 백업", "데이터베이스 비밀번호", "회의 일정", "항공권 예약", "인증서 갱신", "모니터링 경보",
              "发票存放", "服务器备份", "会议时间", "证书续期", "路由器断线", "预算审查"]
CJK_DEEDS = ["문제를 해결했다", "다음 주로 미뤘다", "담당자에게 전달했다", "설정을 바꿨다", "已经完成了",
             "推迟到下周", "交给运维同事", "需要再确认"]
CJK_QUESTIONS = ["서버 백업은 언제 실패했어?", "회의 일정을 바꿨나요", "인증서 갱신 담당자", "发票存放在哪里",
                 "服务器备份完成了吗", "证书续期交给谁", "Hetzner 서버 backup", "预算审查 budget"]


def cjk_texts(n: int, seed: int = 13) -> list[str]:
    import random

    rng = random.Random(seed)
    return [f"{rng.choice(CJK_TOPICS)}: {rng.choice(CJK_DEEDS)} (메모 {i})" for i in range(n)]


def server(dsn: str | None):
    if dsn:
        return None, dsn
    import pg_fixture

    cluster = pg_fixture._start_cluster("bench")
    return cluster, cluster.dsn(cluster.create_database())


def floor_seconds(dsn: str) -> tuple[float, float]:
    """Server-side copy of the pushed rows into an identical table, then its HNSW index."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(FLOOR_SQL)
        columns = [r[0] for r in conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = 'maxmem.memories'::regclass "
            "AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum")]
        names = ", ".join(columns)
        start = time.perf_counter()
        conn.execute(f"INSERT INTO public.floor_copy ({names}) SELECT {names} FROM maxmem.memories")
        load = time.perf_counter() - start
        conn.execute(f"SET maintenance_work_mem = '{DEFAULT_INDEX_MEMORY}'")  # as the push does
        start = time.perf_counter()
        conn.execute("CREATE INDEX ON public.floor_copy USING hnsw (embedding vector_cosine_ops)")
        index = time.perf_counter() - start
        conn.execute("DROP TABLE public.floor_copy")
    return load, index


def changes(brain: Brain, new_texts: list[str], round_: int) -> None:
    ids = [r[0] for r in brain.db.execute("SELECT id FROM memories ORDER BY random() LIMIT 60")]
    brain.remember_many([{"content": t} for t in new_texts[40 * round_:40 * round_ + 40]], near=False)
    for memory_id in ids[:40]:
        brain.update(memory_id, importance=0.9 - round_ / 10)  # metadata-only: no re-embedding
    for memory_id in ids[40:60]:
        brain.forget(memory_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--dsn", help="an existing database to use (default: start one)")
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--cjk", type=int, default=0, help="how many of the N memories are in Korean and Chinese")
    args = parser.parse_args()

    cjk = min(args.cjk, args.n)
    english = texts(args.n - cjk + 200)
    rows = cjk_texts(cjk) + english[: args.n - cjk] + english[args.n - cjk:]  # the last 200: the changes
    vectors = e5_like(args.n + 200, args.dim)
    questions = QUESTIONS + (CJK_QUESTIONS if cjk else [])
    qvecs = e5_like(len(questions), args.dim, seed=5)
    embedder = Precomputed(dict(zip(rows, vectors)), dict(zip(questions, qvecs)), args.dim)
    cluster, dsn = server(args.dsn)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "brain.db"
            print(f"building a brain.db of {args.n} memories ({args.dim}-d, precomputed vectors) …", flush=True)
            with Brain.open(path, embedder=embedder, config=Config(agent="bench")) as brain:
                for s in range(0, args.n, 10_000):
                    brain.remember_many([{"content": t} for t in rows[s:min(args.n, s + 10_000)]], near=False)
                print("pushing …", flush=True)
                full = push(brain, dsn, batch_size=args.batch_size)
                load = full.seconds - full.index_seconds
                floor_load, floor_index = floor_seconds(dsn)
                incremental, idle = [], []
                for round_ in range(3):
                    changes(brain, rows[args.n:], round_)
                    report = push(brain, dsn, batch_size=args.batch_size)
                    assert (report.upserted, report.deleted) == (80, 20), report
                    incremental.append(report.seconds)
                    idle.append(push(brain, dsn).seconds)
                brain.search(QUESTIONS[0], track=False)  # the RAM index, loaded once
                local_ms, shared_ms = timed(brain, dsn, QUESTIONS)
                cjk_local_ms, cjk_shared_ms = timed(brain, dsn, CJK_QUESTIONS) if cjk else ([], [])
    finally:
        if cluster is not None:
            cluster.destroy()

    n = args.n
    print()
    print(f"full push of {n} memories ({args.dim}-d, batches of {args.batch_size}), vector type {full.vector_type}")
    print(f"  maxmem sync postgres: {full.seconds:7.1f} s = {n / full.seconds:7.0f} memories/s "
          f"(rows {load:.1f} s = {n / load:.0f}/s, HNSW build {full.index_seconds:.1f} s)")
    print(f"  floor (server-side copy): {floor_load + floor_index:7.1f} s = "
          f"{n / (floor_load + floor_index):7.0f} memories/s "
          f"(rows {floor_load:.1f} s = {n / floor_load:.0f}/s, HNSW build {floor_index:.1f} s)")
    print(f"  ratio maxmem / floor: {full.seconds / (floor_load + floor_index):.2f}x "
          f"(rows only {load / floor_load:.2f}x)")
    print(f"incremental run, 100 changes (40 new, 40 updated, 20 forgotten): "
          f"median {statistics.median(incremental):.3f} s (runs: {', '.join(f'{s:.3f}' for s in incremental)})")
    print(f"run with nothing new: median {statistics.median(idle):.3f} s")
    print(f"search at {n}: sync search (PostgreSQL, hybrid, connect included) p50 "
          f"{statistics.median(shared_ms):.1f} ms vs local Brain.search p50 {statistics.median(local_ms):.1f} ms "
          f"({statistics.median(shared_ms) / statistics.median(local_ms):.1f}x)")
    if cjk:
        print(f"search at {n} ({cjk} in Korean and Chinese), questions in those languages: sync search p50 "
              f"{statistics.median(cjk_shared_ms):.1f} ms vs local Brain.search p50 "
              f"{statistics.median(cjk_local_ms):.1f} ms "
              f"({statistics.median(cjk_shared_ms) / statistics.median(cjk_local_ms):.1f}x)")


def timed(brain: Brain, dsn: str, questions: list[str]) -> tuple[list[float], list[float]]:
    """Milliseconds of each question's local search and PostgreSQL search (hybrid, ten hits)."""
    local_ms, shared_ms = [], []
    for q in questions:
        t0 = time.perf_counter()
        brain.search(q, limit=10, track=False)
        t1 = time.perf_counter()
        pgsearch.search(brain, dsn, q, limit=10)
        t2 = time.perf_counter()
        local_ms.append(1e3 * (t1 - t0))
        shared_ms.append(1e3 * (t2 - t1))
    return local_ms, shared_ms


if __name__ == "__main__":
    main()
