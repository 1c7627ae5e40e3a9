"""How much mixed load one brain.db holds: writes/s, searches/s, worst wait.

    python bench/concurrency_bench.py [--seconds 15] [--seed-memories 2000]

Runs the processes of tests/stress_worker.py against a fresh brain.db, first the
agent (remember + search) alone, then the agent together with a bulk writer,
capture, retention, a sync whose PostgreSQL is down, a search-only reader and a
probe (a one-row write every 20 ms, whose wait is how long the others held the
write lock). Prints each side by side, with the ratio mixed / alone. Vectors come
from the deterministic hash embedder of tests/conftest.py, so the figures are
SQLite's, not an embedding model's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKER = ROOT / "tests" / "stress_worker.py"
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))


def seed(db: Path, n: int) -> None:
    from conftest import HashEmbedder

    from maxmem import Brain

    with Brain.open(db, embedder=HashEmbedder()) as brain:
        for start in range(0, n, 500):
            brain.remember_many([{"content": f"seed memory {i} about kilo lima mike {i % 13}",
                                  "category": "core"} for i in range(start, min(n, start + 500))], near=False)


def run(roles: list[str], seconds: float, seed_memories: int) -> dict[str, list[dict]]:
    with tempfile.TemporaryDirectory(prefix="maxmem-bench-") as tmp:
        folder = Path(tmp)
        db = folder / "brain.db"
        seed(db, seed_memories)
        procs = {}
        for role in roles:
            procs[role] = subprocess.Popen(
                [sys.executable, str(WORKER), role, str(db), str(seconds), str(folder / f"{role}.log"),
                 "--folder", str(folder / role)],
                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for role, proc in procs.items():
            _, err = proc.communicate(timeout=seconds + 120)
            if proc.returncode:
                print(f"{role} crashed:\n{err}", file=sys.stderr)
        events = {}
        for role in roles:
            log = folder / f"{role}.log"
            events[role] = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        return events


def summarise(events: dict[str, list[dict]], seconds: float) -> dict[str, float]:
    everything = [e for evs in events.values() for e in evs]
    writes = [e for e in everything if e["op"] == "remember"]
    searches = [e for e in everything if e["op"] == "search"]
    probes = [e for e in everything if e["op"] == "probe"]
    errors = [e for e in everything if e["op"] == "error" and e["role"] != "sync"]
    locked = [e for e in everything if "locked" in json.dumps(e).lower()]
    agent_writes = [e["wait"] for e in events.get("agent", []) if e["op"] == "remember"]
    agent_searches = [e["wait"] for e in events.get("agent", []) if e["op"] == "search"]

    def pct(values: list[float], q: float) -> float:
        if not values:
            return float("nan")
        values = sorted(values)
        return values[min(len(values) - 1, int(q * len(values)))]

    return {
        "memory writes/s (all processes)": len(writes) / seconds,
        "searches/s (all processes)": len(searches) / seconds,
        "agent remember median ms": 1000 * statistics.median(agent_writes) if agent_writes else float("nan"),
        "agent remember p99 ms": 1000 * pct(agent_writes, 0.99),
        "agent remember worst ms": 1000 * max(agent_writes, default=float("nan")),
        "agent search median ms": 1000 * statistics.median(agent_searches) if agent_searches else float("nan"),
        "agent search worst ms": 1000 * max(agent_searches, default=float("nan")),
        "worst write wait ms (any)": 1000 * max((e["wait"] for e in writes), default=float("nan")),
        "worst search ms (any)": 1000 * max((e["wait"] for e in searches), default=float("nan")),
        "probe lock wait p99 ms": 1000 * pct([e["wait"] for e in probes], 0.99),
        "probe lock wait worst ms": 1000 * max((e["wait"] for e in probes), default=float("nan")),
        "errors (not sync)": float(len(errors)),
        "'database is locked' seen": float(len(locked)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--seed-memories", type=int, default=2000)
    args = parser.parse_args()
    alone_roles = ["agent", "probe"]
    mixed_roles = ["agent", "writer", "capture", "retention", "sync", "searcher", "probe"]
    started = time.time()
    alone = summarise(run(alone_roles, args.seconds, args.seed_memories), args.seconds)
    mixed = summarise(run(mixed_roles, args.seconds, args.seed_memories), args.seconds)
    print(f"concurrency bench: {args.seconds:g} s per run, {args.seed_memories} seed memories, "
          f"hash embedder; alone = {' + '.join(alone_roles)}, mixed = {' + '.join(mixed_roles)}")
    print(f"{'':38} {'alone':>10} {'mixed':>10} {'mixed/alone':>12}")
    for key in mixed:
        a, m = alone[key], mixed[key]
        ratio = f"{m / a:.2f}" if a and a == a and m == m else "—"
        print(f"{key:38} {a:>10.1f} {m:>10.1f} {ratio:>12}")
    print(f"(wall time {time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
