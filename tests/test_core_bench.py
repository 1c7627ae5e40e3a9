"""bench/core_bench.py end to end at toy sizes, so the script that checks the speed
targets cannot rot (its figures come from full runs, never from a test)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import core_bench  # noqa: E402


def test_the_benchmark_runs_and_reports_every_figure(tmp_path):
    out = tmp_path / "core.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "core_bench.py"), "--sizes", "300", "--dims", "32",
         "--repeats", "1", "--ingest-repeats", "1", "--recall-n", "0", "--json", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "| 300 | 32 |" in result.stdout
    (row,) = json.loads(out.read_text())["speed"]
    for key in ("ingest_per_s", "raw_per_s", "search_p50_ms", "search_p95_ms", "floor_p50_ms", "floor_p95_ms",
                "tracked_p50_ms", "tracked_p95_ms", "floor_default_p50_ms", "floor_one_thread_p50_ms"):
        assert row[key] > 0
    # the floor is the faster of its two ways (numpy's BLAS threads, one thread)
    assert row["floor_p50_ms"] == min(row["floor_default_p50_ms"], row["floor_one_thread_p50_ms"])
    assert row["bytes_unchanged_by_search"] == {"unchanged_after_search": True, "written_at_close": True}
    assert "usage tracking:" in result.stdout
    assert "with numpy's BLAS threads" in result.stdout


def test_the_exact_ranking_matches_search_on_a_small_brain(tmp_path):
    """recall_check's reference: with every vector a candidate the fast path is exact."""
    rows = core_bench.texts(200, seed=3)
    vectors = core_bench.e5_like(200, 32, seed=4)
    queries = core_bench.QUESTIONS[:5]
    qvecs = core_bench.e5_like(5, 32, seed=6)
    embedder = core_bench.Precomputed(dict(zip(rows, vectors)), dict(zip(queries, qvecs)), 32)
    from maxmem import Brain

    with Brain.open(tmp_path / "b.db", embedder=embedder) as brain:
        brain.remember_many([{"content": t} for t in rows])
        stored = list(brain.db.execute("SELECT rowid, embedding FROM memories_vec ORDER BY rowid"))
        ids = np.array([r[0] for r in stored])
        matrix = np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in stored])
        for q, qv in zip(queries, qvecs):
            got = [h.memory.id for h in brain.search(q, limit=10, track=False, min_relevance=0)]
            assert got == core_bench.exact_hybrid(brain, q, qv, matrix, ids)


def test_the_vector_stage_figures_script_runs():
    """bench/vector_stages.py backs the figures quoted in search/hybrid.py and brain.py."""
    result = subprocess.run([sys.executable, str(ROOT / "bench" / "vector_stages.py"), "--sizes", "2000"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    for expected in ("point lookup", "word-major", "histogram", "in blocks", "on the worker thread"):
        assert expected in result.stdout


def test_the_forget_cost_script_runs():
    """bench/forget_cost.py backs the secure_delete cost quoted in the README."""
    result = subprocess.run([sys.executable, str(ROOT / "bench" / "forget_cost.py"), "--n", "400", "--rounds", "1"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    for step in ("ingest", "update x300", "forget x300", "forget_many 10%"):
        assert any(line.startswith(step) and len(line.split()) >= 4 for line in result.stdout.splitlines()), step
