"""How long the agent-facing jobs take on a brain of N memories (keyword-only, so the
numbers are maxmem's own work, not the embedder's).

    python bench/agent_integration.py            # N = 20000
    python bench/agent_integration.py --n 100000

Prints one line per operation: median of --repeat runs, in milliseconds, and the
per-item rate where it applies. Seeding uses remember_many in one transaction.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from maxmem import Brain, FixedClock  # noqa: E402
from maxmem.brief import build_brief  # noqa: E402
from maxmem.compaction import save_context  # noqa: E402
from maxmem.markdown.export import export_markdown  # noqa: E402
from maxmem.markdown.merge import import_markdown  # noqa: E402
from maxmem.search.nlquery import answer, interpret  # noqa: E402

WORDS = ("sqlite postgres deploy docker login cookie billing report laptop backup cron "
         "vector search memory agent project release bug fix lesson decision").split()


def seed(brain: Brain, clock: FixedClock, n: int) -> None:
    rng = random.Random(7)
    start = clock.now() - timedelta(days=60)
    categories = ["core", "daily", "daily", "conversation", "conversation", "project"]
    kinds = ["note", "decision", "fact", "failure", "lesson", "milestone", "preference"]
    items = []
    for i in range(n):
        category = rng.choice(categories)
        items.append({
            "content": f"memory {i}: " + " ".join(rng.choice(WORDS) for _ in range(18)),
            "category": category,
            "kind": "exchange" if category == "conversation" else rng.choice(kinds),
            "importance": round(rng.random(), 2),
            "status": rng.choice(["active"] * 8 + ["ongoing", "resolved"]),
            "created_at": start + timedelta(minutes=rng.randrange(60 * 24 * 60)),
            "session_id": f"s{rng.randrange(200)}" if category == "conversation" else None,
            "tags": [rng.choice(WORDS)],
        })
    brain.remember_many(items, near=False)


def timed(fn, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - t) * 1000)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    clock = FixedClock("2026-11-30T12:00:00Z")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with Brain.open(root / "brain.db", embedder="none", clock=clock) as brain:
            t = time.perf_counter()
            seed(brain, clock, args.n)
            seed_ms = (time.perf_counter() - t) * 1000
            print(f"brain: {args.n} memories, keyword-only; seeded in {seed_ms:.0f} ms")

            ms = timed(lambda: build_brief(brain, session_id="s7", budget_tokens=2000), args.repeat)
            print(f"context brief (2000 tokens, session s7)      {ms:8.1f} ms")
            q1 = interpret("high-importance unresolved projects from last week", clock)
            ms = timed(lambda: answer(brain, q1), args.repeat)
            print(f"query, filters only (list)                  {ms:8.1f} ms")
            q2 = interpret("decisions about docker deploy this month", clock)
            ms = timed(lambda: answer(brain, q2), args.repeat)
            print(f"query with text (keyword search)            {ms:8.1f} ms")
            ms = timed(lambda: interpret("top 10 critical tasks tagged with cron since March 3",
                                         clock), 50)
            print(f"interpret one question (no DB)              {ms:8.3f} ms")

            doc = {"session_id": "bench", "agent": "bench", "exchanges": [
                {"user_message": f"question {i} about " + " ".join(random.sample(WORDS, 6)),
                 "assistant_response": "answer " + " ".join(random.choices(WORDS, k=30)),
                 "timestamp": (clock.now() - timedelta(minutes=200 - i)).isoformat(),
                 "tool_calls": [{"name": "bash", "params": {"cmd": f"ls {i}"}, "result": "ok",
                                 "status": "ok"}]}
                for i in range(200)]}
            t = time.perf_counter()
            report = save_context(brain, doc)
            first = (time.perf_counter() - t) * 1000
            again = timed(lambda: save_context(brain, doc), 3)
            print(f"save-context, 200 exchanges, first time     {first:8.1f} ms"
                  f"  ({report.exchanges_stored} stored, {200 / first * 1000:.0f}/s)")
            print(f"save-context, same document again (no-op)   {again:8.1f} ms")

            t = time.perf_counter()
            exported = export_markdown(brain, root / "ws")
            ms = (time.perf_counter() - t) * 1000
            print(f"export --format markdown                    {ms:8.1f} ms"
                  f"  ({exported.memories} memories, {len(exported.files)} files)")
        with Brain.open(root / "fresh.db", embedder="none", clock=clock) as fresh:
            t = time.perf_counter()
            imported = import_markdown(fresh, root / "ws")
            ms = (time.perf_counter() - t) * 1000
            added = sum(f["added"] for f in imported.files)
            print(f"import --format markdown into a fresh brain {ms:8.1f} ms  ({added} added)")
            t = time.perf_counter()
            import_markdown(fresh, root / "ws")
            print(f"import again (every file skipped)           {(time.perf_counter() - t) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
