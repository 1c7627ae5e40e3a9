"""What "forget really forgets" costs: brain.db with PRAGMA secure_delete on (maxmem's
setting) next to the same work with it off, side by side in one run.

    python bench/forget_cost.py [--n 20000] [--rounds 2]

Each round builds two copies of the same brain from scratch, one with secure_delete
on and one with it off (FTS5's secure-delete option is on in both: it is part of the
schema), and times on each:
- bulk ingest: N memories, 90 % conversation turns in sessions of 40 (their context
  rows are rewritten as neighbours arrive: updates that free bytes), 10 % notes;
- 300 single `update`s of a note's content (fewer when N is small);
- 300 single `forget`s of other notes (each also empties the WAL: Brain._truncate_wal);
- one `forget_many` of 10 % of the memories, as retention deletes.
Rounds alternate which side runs first (the machine is shared and noisy); the table
shows each side's median over the rounds and the ratio on / off.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.core_bench import texts  # noqa: E402
from bench.dedup_cost import CheapEmbedder  # noqa: E402
from maxmem import Brain  # noqa: E402

STEPS = ("ingest", "update x300", "forget x300", "forget_many 10%")


def items(n: int) -> list[dict]:
    notes = texts(n)
    out = []
    for i, text in enumerate(notes):
        if i % 10:
            out.append({"content": text, "category": "conversation", "session_id": f"s{i // 40}",
                        "created_at": f"2026-11-{1 + (i // 4000) % 28:02d}T{(i // 40) % 24:02d}:00:{i % 40:02d}Z"})
        else:
            out.append({"content": text, "category": "daily"})
    return out


def one_side(path: Path, secure: bool, batch: list[dict], seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    times: dict[str, float] = {}
    with Brain.open(path, embedder=CheapEmbedder()) as brain:
        if not secure:
            brain.db.execute("PRAGMA secure_delete=OFF")
        started = time.perf_counter()
        for start in range(0, len(batch), 1000):
            brain.remember_many(batch[start:start + 1000], near=False)
        times["ingest"] = time.perf_counter() - started
        notes = [m.id for m in brain.list(category="daily", limit=len(batch))]
        half = min(300, len(notes) // 2)
        chosen = rng.sample(notes, 2 * half)
        started = time.perf_counter()
        for memory_id in chosen[:half]:
            brain.update(memory_id, content=f"rewritten note {memory_id} with other words")
        times["update x300"] = time.perf_counter() - started
        started = time.perf_counter()
        for memory_id in chosen[half:]:
            brain.forget(memory_id)
        times["forget x300"] = time.perf_counter() - started
        gone = brain.list(category="conversation", limit=len(batch) // 10, order="oldest")
        started = time.perf_counter()
        brain.forget_many(gone)
        times["forget_many 10%"] = time.perf_counter() - started
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000, help="memories (default 20000)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, each side once per round (default 2)")
    args = parser.parse_args()
    batch = items(args.n)
    runs: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for secure in ((True, False) if r % 2 == 0 else (False, True)):
                path = Path(tmp) / f"r{r}-{int(secure)}.db"
                runs[secure].append(one_side(path, secure, batch, seed=r))
    print(f"{args.n:,} memories, {args.rounds} rounds; seconds, median of rounds")
    print(f"{'step':<18}{'secure_delete on':>18}{'off':>10}{'on / off':>10}")
    for step in STEPS:
        on = statistics.median(t[step] for t in runs[True])
        off = statistics.median(t[step] for t in runs[False])
        print(f"{step:<18}{on:>18.3f}{off:>10.3f}{on / off:>10.2f}")


if __name__ == "__main__":
    main()
