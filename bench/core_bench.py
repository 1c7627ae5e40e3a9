#!/usr/bin/env python3
"""Core benchmark: ingest and hybrid-search speed at 10k/100k memories, 384/1536 dimensions.

Everything is measured side by side in one run, so the ratios hold on a noisy machine:

- ingest: `Brain.remember_many` (memories/s) next to a raw apsw insert of the same rows
  into the same schema (memories + FTS5 triggers + vec0) in one transaction; the two
  alternate (--ingest-repeats, default 2) and the best run of each is kept. The rows are
  a corpus of distinct notes, loaded with `near=False` as a bulk load of one is: the
  near-duplicate check compares a batch with every stored memory of its category, a
  cost that grows with the brain, measured apart by bench/dedup_cost.py;
- search: hybrid `Brain.search` p50/p95 next to the floor for the same query: exact KNN
  by numpy over the same float32 matrix held in RAM, plus one FTS5 bm25 query (search
  ranks by the cosine around the vectors' mean; exact KNN by it costs the same one
  matrix product over a matrix centred once, so the floor times the plain product).
  The floor is timed both ways, with numpy's BLAS threads and with one, and the faster
  of the two is the floor. OpenBLAS's threads are told to sleep as soon as a product is
  done (OPENBLAS_THREAD_TIMEOUT=4): by default they spin for a tenth of a second, and
  the search timed next ran on one core while they held the other
  (OPENBLAS_THREAD_TIMEOUT=28 times it that way);
- recall@10 of the hybrid search against the exact hybrid ranking (the same fusion over
  an exact vector top-k), on real multilingual-e5-small vectors.

Vectors are precomputed (embedding time excluded): synthetic, e5-like (a shared mean
direction plus noise) for the speed runs; for the recall check, real e5 vectors of
generated notes, embedded once and cached in bench/out/.

    python bench/core_bench.py                 # 10k and 100k at 384 and 1536 (a few minutes)
    python bench/core_bench.py --sizes 10000   # quicker
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

# OpenBLAS's threads, once woken by a matrix product, spin for 2**28 cycles (a tenth of a
# second) before they sleep, holding a core whatever runs then; with 2**4 they sleep at
# once. Set before numpy loads OpenBLAS, when run as a script only (importing this module
# changes no environment); an explicit setting is kept (28: OpenBLAS's own).
if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import apsw  # noqa: E402
import numpy as np  # noqa: E402
from threadpoolctl import ThreadpoolController  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from maxmem import Brain  # noqa: E402
from maxmem.memory import Filters, new_uid  # noqa: E402
from maxmem.search import hybrid as search_mod  # noqa: E402
from maxmem.search.vectors import centred_cosine, vector_table_sql  # noqa: E402
from maxmem.store.records import FIELDS, content_hash  # noqa: E402

INSERT_SQL = f"INSERT INTO memories (id, {', '.join(FIELDS)}) VALUES ({', '.join('?' * (len(FIELDS) + 1))})"

OUT = Path(__file__).resolve().parent / "out"

SUBJECTS = ["the backup job", "the staging API", "Grafana", "the invoice parser", "Jellyfin",
            "the NAS", "Home Assistant", "the mobile app", "Postgres", "the router", "Tailscale",
            "the CI pipeline", "the laptop", "Docker compose", "the Stripe webhook", "restic",
            "the kids' calendar", "the dentist", "the accountant", "the garden sensors"]
VERBS = ["was moved to", "now runs on", "failed because of", "depends on", "was replaced by",
         "needs an update for", "talks to", "is blocked by", "was fixed with", "is scheduled after"]
OBJECTS = ["port 8443", "the new SSD", "a cron job at 02:30", "an expired API key", "Caddy",
           "the UPS", "a read-only volume", "Prometheus", "Watchtower", "the VAT deadline",
           "a Tuesday appointment", "Backblaze B2", "the 4 TB disk", "React Native", "Tesseract 5",
           "the old Raspberry Pi", "a DNS change", "Debian 12", "a firmware bug", "the family photos"]
EXTRA = ["", " Priority is high.", " Check again next week.", " Sam asked for a summary.",
         " This happened twice.", " Logged by the agent.", " See the runbook.", ""]
QUESTIONS = ["why did the backup fail?", "which port does the staging API use?", "what runs on the NAS?",
             "what is blocking the mobile app?", "when is the dentist appointment?",
             "what replaced the old Raspberry Pi?", "how is Grafana deployed?",
             "what depends on Postgres?", "what did we fix with Caddy?", "where are the family photos?",
             "what is scheduled after the cron job?", "which disk was added to the NAS?",
             "what talks to Prometheus?", "what needs a firmware update?", "what is the VAT deadline?",
             "what happened with the Stripe webhook?", "how does the laptop reach the NAS?",
             "what runs on Debian 12?", "what failed because of an expired key?", "what uses Tesseract?"]


def texts(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (note {i}).{rng.choice(EXTRA)}"
            for i in range(n)]


def e5_like(n: int, dim: int, seed: int = 11) -> np.ndarray:
    """Unit vectors in a narrow cone, as embedding models produce (mean cosine ≈ 0.75)."""
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=dim).astype(np.float32)
    mean /= np.linalg.norm(mean)
    topics = rng.normal(size=(64, dim)).astype(np.float32)
    topics /= np.linalg.norm(topics, axis=1, keepdims=True)
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 20000):
        m = min(20000, n - start)
        t = topics[rng.integers(0, 64, m)]
        noise = rng.normal(size=(m, dim)).astype(np.float32) / np.sqrt(dim)
        v = 2.2 * mean + 0.9 * t + 0.7 * noise
        out[start:start + m] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def recall_questions() -> list[str]:
    """The 20 speed-run questions and 80 more from templates, for the recall check."""
    templates = ["what happened with {}?", "is anything blocking {}?", "what changed about {}?",
                 "when was {} last mentioned?"]
    return QUESTIONS + [t.format(s) for t in templates for s in SUBJECTS]


class Precomputed:
    """An Embedder that hands out vectors computed beforehand (embedding time excluded)."""

    provider, model = "bench", "precomputed"

    def __init__(self, table: dict[str, np.ndarray], queries: dict[str, np.ndarray], dim: int):
        # keyed as asked too: Brain.search embeds the question without its "?"
        asked = {search_mod.vector_query(q): v for q, v in queries.items()}
        self.table, self.queries, self._dim = table, {**asked, **queries}, dim

    @property
    def dim(self) -> int:
        return self._dim

    def embed_documents(self, batch: Sequence[str]) -> np.ndarray:
        return np.vstack([self.table[t] for t in batch])

    def embed_query(self, text: str) -> np.ndarray:
        return self.queries[text]


def raw_insert(path: Path, rows: list[str], vectors: np.ndarray) -> float:
    """The same rows through plain apsw: one transaction, executemany, no maxmem code."""
    with Brain.open(path, embedder="none") as b:  # just the schema
        b.db.execute(vector_table_sql(vectors.shape[1]))  # the vec0 table a brain creates
    conn = apsw.Connection(str(path))
    import sqlite_vec
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.execute("PRAGMA synchronous=FULL")
    now = "2026-11-30T00:00:00.000Z"
    start = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(INSERT_SQL, (
        [i + 1, new_uid(), "daily", "note", None, t, "[]", 0.5, "active", None, None, "manual", None,
         None, "{}", content_hash(t), 0, None, now, now, None, 0, now]
        for i, t in enumerate(rows)))
    conn.executemany("INSERT INTO memories_vec (rowid, embedding) VALUES (?, ?)",
                     ((i + 1, v.tobytes()) for i, v in enumerate(vectors)))
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


def exact_hybrid(brain: Brain, query: str, qvec: np.ndarray, matrix: np.ndarray, ids: np.ndarray,
                 limit: int = 10) -> list[int]:
    """The same fusion as Brain.search, with an exact vector pool from numpy (the same
    similarity: the cosine around the brain's quantizer centre, search.centred_cosine)."""
    pool = max(50, 5 * limit)
    filters = Filters()
    keyword = search_mod.keyword_candidates(brain.db, query, filters, pool)
    center = brain.vectors.quantizer().center
    sims = centred_cosine(matrix @ qvec, matrix @ center, qvec, center)
    top = np.argpartition(-sims, pool - 1)[:pool]
    vector = {int(ids[i]): float(sims[i]) for i in top}
    position = {int(i): k for k, i in enumerate(ids)}
    for i in keyword:
        vector.setdefault(i, float(sims[position[i]]))
    asking = search_mod.questions(brain.db, set(vector) | set(keyword))  # as search does
    fused = search_mod.fuse(vector, keyword, brain.config.vector_weight, brain.config.keyword_weight,
                            asking=asking)
    return [s.id for s in fused[:limit]]


# The kinds of search timed, in turn for each query: hybrid Brain.search, the floor, the
# same search counting its hits (usage tracking), and the floor with one BLAS thread.
KINDS = ("search", "floor", "tracked", "floor_one_thread")
BLAS = ThreadpoolController()


def timed(kind: str, brain: Brain, match_sql: str, query: str, qvec: np.ndarray, vectors: np.ndarray) -> float:
    """Seconds one search of `kind` (KINDS) takes."""
    start = time.perf_counter()
    if kind in ("search", "tracked"):
        brain.search(query, limit=10, track=kind == "tracked")  # tracked: store/usage.py, written in batches
    elif kind == "floor":
        floor_search(brain, match_sql, query, qvec, vectors)
    else:
        with BLAS.limit(limits=1, user_api="blas"):
            floor_search(brain, match_sql, query, qvec, vectors)
    return time.perf_counter() - start


def floor_search(brain: Brain, match_sql: str, query: str, qvec: np.ndarray, vectors: np.ndarray) -> None:
    """The floor: exact top 10 by numpy over the float32 matrix, and the FTS5 query."""
    sims = vectors @ qvec
    top = np.argpartition(-sims, 9)[:10]
    top[np.argsort(-sims[top])]
    list(brain.db.execute(match_sql, (search_mod.fts_query(query), 50)))


def run_size(n: int, dim: int, queries: list[str], qvecs: np.ndarray, rows: list[str],
             vectors: np.ndarray, tmp: Path, repeats: int, ingest_repeats: int = 2) -> dict:
    table = dict(zip(rows, vectors))
    embedder = Precomputed(table, dict(zip(queries, qvecs)), dim)
    path = tmp / f"brain-{n}-{dim}.db"
    raw_seconds = ingest_seconds = float("inf")
    for _ in range(ingest_repeats):  # interleaved, best of each: the machine is shared
        for p in tmp.glob(f"*-{n}-{dim}.db*"):
            p.unlink()
        raw_seconds = min(raw_seconds, raw_insert(tmp / f"raw-{n}-{dim}.db", rows, vectors))
        start = time.perf_counter()
        with Brain.open(path, embedder=embedder) as brain:
            for s in range(0, n, 10000):
                brain.remember_many([{"content": t} for t in rows[s:s + 10000]], near=False)
        ingest_seconds = min(ingest_seconds, time.perf_counter() - start)
    result = {"n": n, "dim": dim, "ingest_per_s": n / ingest_seconds, "raw_per_s": n / raw_seconds}
    with Brain.open(path, embedder=embedder) as brain:
        brain.search(queries[0])  # loads the RAM index once, as a long-lived agent would
        ids = np.arange(1, n + 1)
        match_sql = search_mod.KEYWORD_SQL_UNFILTERED.format(
            table="memories_fts", w=", ".join(map(str, search_mod.BM25_WEIGHTS)))
        times: dict[str, list[float]] = {kind: [] for kind in KINDS}
        for _ in range(repeats):
            for q, qv in zip(queries, qvecs):
                for kind in KINDS:
                    times[kind].append(timed(kind, brain, match_sql, q, qv, vectors))
        ours, tracked = times["search"], times["tracked"]
        floor = min(times["floor"], times["floor_one_thread"], key=statistics.median)
        result.update(
            search_p50_ms=1e3 * statistics.median(ours),
            search_p95_ms=1e3 * float(np.percentile(ours, 95)),
            tracked_p50_ms=1e3 * statistics.median(tracked),
            tracked_p95_ms=1e3 * float(np.percentile(tracked, 95)),
            floor_p50_ms=1e3 * statistics.median(floor),
            floor_p95_ms=1e3 * float(np.percentile(floor, 95)),
            floor_default_p50_ms=1e3 * statistics.median(times["floor"]),
            floor_one_thread_p50_ms=1e3 * statistics.median(times["floor_one_thread"]),
        )
        del ids
    result["bytes_unchanged_by_search"] = search_leaves_bytes(path, embedder, queries[0])
    for p in tmp.glob(f"*-{n}-{dim}.db*"):
        p.unlink()
    return result


def file_digest(path: Path) -> str:
    """brain.db and its WAL, hashed together: what a read must leave as it was."""
    digest = hashlib.sha256()
    for part in (path, Path(f"{path}-wal")):
        digest.update(part.read_bytes() if part.exists() else b"")
    return digest.hexdigest()


def search_leaves_bytes(path: Path, embedder: Precomputed, query: str) -> dict:
    """Whether a tracked search leaves brain.db's bytes as they were until the batched
    usage write (here: the flush at close), and whether that write then happens."""
    with Brain.open(path, embedder=embedder) as brain:
        before = file_digest(path)
        hits = brain.search(query, limit=10)
        after_search = file_digest(path)
    return {"unchanged_after_search": before == after_search and bool(hits),
            "written_at_close": file_digest(path) != after_search}


def real_vectors(count: int) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """Real e5 vectors of generated notes and questions, cached in bench/out/."""
    OUT.mkdir(exist_ok=True)
    cache = OUT / f"e5-{count}.npz"
    rows, questions = texts(count, seed=99), recall_questions()
    docs = queries = None
    if cache.exists():
        data = np.load(cache)
        docs = data["docs"]
        if "questions" in data and data["questions"].tolist() == questions:
            queries = data["queries"]
    if docs is not None and queries is not None:
        return rows, docs, questions, queries
    from maxmem import LocalEmbedder
    e5 = LocalEmbedder()
    if docs is None:
        print(f"embedding {count} notes with the local model once (cached in {cache}) …", flush=True)
        docs = np.vstack([e5.embed_documents(rows[s:s + 512]) for s in range(0, count, 512)])
    queries = np.vstack([e5.embed_query(q) for q in questions])
    np.savez(cache, docs=docs, queries=queries, questions=np.array(questions))
    return rows, docs, questions, queries


def locomo_items(path: Path) -> tuple[list[dict], np.ndarray, list[str], np.ndarray]:
    """LoCoMo's turns (as bench/locomo.py stores them: conversation memories with their
    sessions) and questions, with real e5 vectors from that benchmark's cache."""
    import locomo  # bench/locomo.py, beside this script

    from maxmem import LocalEmbedder

    conversations = locomo.load(path)
    embedder = locomo.CachedEmbedder(LocalEmbedder(), locomo.OUT / "locomo-embeddings.sqlite")
    items = [item for c in conversations for item in c.items]
    questions = [q.text for c in conversations for q in c.questions]
    docs = embedder.embed_documents([item["content"] for item in items])
    queries = np.vstack([embedder.embed_query(search_mod.vector_query(q)) for q in questions])
    embedder.close()
    return items, docs, questions, queries


def recall_check(count: int, tmp: Path, locomo_path: Path | None = None) -> dict:
    rows, docs, queries, qvecs = real_vectors(count)
    items = [{"content": t} for t in rows]
    table, asked = dict(zip(rows, docs)), dict(zip(queries, qvecs))
    if locomo_path is not None:  # real chat turns and questions besides the generated notes
        turns, turn_vectors, questions, question_vectors = locomo_items(locomo_path)
        items += turns
        table.update(zip((t["content"] for t in turns), turn_vectors))
        asked.update(zip(questions, question_vectors))
        queries, qvecs = [*queries, *questions], np.vstack([qvecs, question_vectors])
    embedder = Precomputed(table, asked, docs.shape[1])
    path = tmp / "recall.db"
    with Brain.open(path, embedder=embedder) as brain:
        brain.remember_many(items, near=False)
        # the vectors as stored (a conversation turn's is blended with its neighbours')
        stored = list(brain.db.execute("SELECT rowid, embedding FROM memories_vec ORDER BY rowid"))
        ids = np.array([row[0] for row in stored])
        matrix = np.vstack([np.frombuffer(row[1], dtype=np.float32) for row in stored])
        recalls = []
        for q, qv in zip(queries, qvecs):
            got = [h.memory.id for h in brain.search(q, limit=10, track=False, min_relevance=0)]
            want = exact_hybrid(brain, q, qv, matrix, ids)
            recalls.append(len(set(got) & set(want)) / len(want))
    for p in tmp.glob("recall.db*"):
        p.unlink()
    return {"n": len(items), "recall_at_10": float(np.mean(recalls)), "queries": len(queries),
            "locomo": locomo_path is not None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[10000, 100000],
                        help="brain sizes for the speed runs (none: only the recall check)")
    parser.add_argument("--dims", type=int, nargs="+", default=[384, 1536])
    parser.add_argument("--repeats", type=int, default=3, help="passes over the 20 queries")
    parser.add_argument("--ingest-repeats", type=int, default=2,
                        help="interleaved ingest runs (raw, maxmem, raw, …); the best of each is kept")
    parser.add_argument("--recall-n", type=int, default=5000, help="real e5 vectors for the recall check")
    parser.add_argument("--recall-data", type=Path, metavar="LOCOMO_JSON",
                        help="also store LoCoMo's 5,882 turns and ask its 1,982 questions in the "
                             "recall check (real chat text; vectors from bench/locomo.py's cache)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if args.recall_data and not args.recall_data.is_file():
        parser.error(f"--recall-data {args.recall_data}: no such file (LoCoMo-10's data/locomo10.json, "
                     "from https://github.com/snap-research/LoCoMo)")
    results = {"speed": [], "recall": None}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for dim in args.dims:
            qvecs = e5_like(len(QUESTIONS), dim, seed=5)
            for n in args.sizes:
                rows = texts(n)
                vectors = e5_like(n, dim)
                r = run_size(n, dim, QUESTIONS, qvecs, rows, vectors, tmp, args.repeats, args.ingest_repeats)
                results["speed"].append(r)
                print(f"n={n:>6} dim={dim:>4}  ingest {r['ingest_per_s']:>7.0f}/s vs raw {r['raw_per_s']:>7.0f}/s "
                      f"(ratio {r['ingest_per_s'] / r['raw_per_s']:.2f})  search p50 {r['search_p50_ms']:.1f} ms "
                      f"p95 {r['search_p95_ms']:.1f} ms vs floor p50 {r['floor_p50_ms']:.1f} ms "
                      f"p95 {r['floor_p95_ms']:.1f} ms (ratio {r['search_p50_ms'] / r['floor_p50_ms']:.2f})",
                      flush=True)
                print(f"            floor p50 {r['floor_default_p50_ms']:.1f} ms with numpy's BLAS threads, "
                      f"{r['floor_one_thread_p50_ms']:.1f} ms with one (the faster is the floor)", flush=True)
                bytes_check = r["bytes_unchanged_by_search"]
                print(f"            usage tracking: search p50 {r['tracked_p50_ms']:.1f} ms p95 "
                      f"{r['tracked_p95_ms']:.1f} ms tracked vs {r['search_p50_ms']:.1f} / {r['search_p95_ms']:.1f} ms "
                      f"untracked (p95 ratio {r['tracked_p95_ms'] / r['search_p95_ms']:.2f}); brain.db bytes "
                      f"unchanged after a tracked search: {bytes_check['unchanged_after_search']}, "
                      f"written at close: {bytes_check['written_at_close']}", flush=True)
        if args.recall_n:
            rc = recall_check(args.recall_n, tmp, args.recall_data)
            results["recall"] = rc
            what = " (generated notes + LoCoMo turns)" if rc["locomo"] else " (generated notes)"
            print(f"recall@10 of hybrid search vs exact hybrid ranking, {rc['n']} real e5 vectors{what}, "
                  f"{rc['queries']} queries: {rc['recall_at_10']:.4f}")
    print()
    print("| memories | dim | ingest/s (maxmem) | ingest/s (raw apsw) | ratio | search p50 / p95 ms "
          "| floor p50 / p95 ms | p50 ratio |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results["speed"]:
        print(f"| {r['n']:,} | {r['dim']} | {r['ingest_per_s']:,.0f} | {r['raw_per_s']:,.0f} | "
              f"{r['ingest_per_s'] / r['raw_per_s']:.2f} | {r['search_p50_ms']:.1f} / {r['search_p95_ms']:.1f} | "
              f"{r['floor_p50_ms']:.1f} / {r['floor_p95_ms']:.1f} | {r['search_p50_ms'] / r['floor_p50_ms']:.2f} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
