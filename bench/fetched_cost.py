"""What recording your searches for `maxmem tune` costs a search: `Brain.search` with
`track=True` (recall counts, and the search's words and hits kept for a later `get`)
next to `track=False` (neither), side by side in one run.

    python bench/fetched_cost.py [--n 5000] [--searches 400] [--rounds 3]

One keyword-only brain of N memories; each round runs the same searches tracked and
untracked, alternating which goes first (the machine is shared and noisy), each
followed by a `get` of its first hit (tracked or not), and closes nothing: the writes
happen where they would, in the batches of the recall counts (every few seconds, by
the next search). The table shows each side's median over the rounds, per search, and
the ratio tracked / untracked.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.core_bench import texts  # noqa: E402
from maxmem import Brain  # noqa: E402


def run(brain: Brain, queries: list[str], track: bool) -> float:
    start = time.perf_counter()
    for query in queries:
        hits = brain.search(query, limit=10, track=track, min_relevance=0)
        if hits:
            brain.get(hits[0].memory.id, track=track)
    return (time.perf_counter() - start) / len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--searches", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    notes = texts(args.n)
    queries = [" ".join(t.split()[2:6]) for t in notes[:: max(1, args.n // args.searches)]][: args.searches]
    times: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp, Brain.open(Path(tmp) / "brain.db", embedder="none") as brain:
        brain.remember_many([{"content": t} for t in notes], embed=False, near=False)
        run(brain, queries[:20], False)  # warm the caches
        for r in range(args.rounds):
            for track in ((True, False) if r % 2 == 0 else (False, True)):
                times[track].append(run(brain, queries, track))
        brain.flush_usage()
        pairs = brain.db.scalar("SELECT count(*) FROM fetched")
    tracked, untracked = statistics.median(times[True]), statistics.median(times[False])
    print(f"{args.n} memories, {len(queries)} searches each followed by a get, {args.rounds} rounds (keyword-only)")
    print(f"untracked  {1000 * untracked:8.3f} ms per search + get")
    print(f"tracked    {1000 * tracked:8.3f} ms per search + get")
    print(f"ratio tracked / untracked: {tracked / untracked:.3f}  ({pairs} pairs kept)")


if __name__ == "__main__":
    main()
