"""`maxmem import --from`: the first import, a re-import that changes nothing, a re-import
of a few edits, next to the bulk path that loads the same memories from JSONL.

    python bench/import_bench.py [--observations 10000] [--edits 100] [--repeat 3]

A claude-mem database with --observations observations (claude-mem's own schema,
tests/claude_mem_layout.py) is imported into a fresh brain.db with the embedder off (the
import stores first and embeds later), then imported again unchanged, then again after
--edits observations were edited. Side by side, in the same run: `Brain.import_records`
(what `maxmem import FILE.jsonl` does) loading the memories the first import made, as
exported, into another fresh brain.db. Medians of --repeat runs, wall seconds, and the
ratio of each to the JSONL load.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from claude_mem_layout import claude_mem_db  # noqa: E402  (tests/, for claude-mem's schema)

from maxmem import Brain  # noqa: E402
from maxmem.importers import import_agent  # noqa: E402


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def one_run(folder: Path, observations: int, edits: int) -> dict[str, float]:
    source = claude_mem_db(folder / "claude-mem.db", extra=observations)
    env = {"HOME": str(folder)}
    out: dict[str, float] = {}
    with Brain.open(folder / "imported.db", embedder="none") as brain:
        out["first import"] = timed(lambda: import_agent(brain, "claude-mem", source, env=env))
        out["again, unchanged"] = timed(lambda: import_agent(brain, "claude-mem", source, env=env))
        with sqlite3.connect(source) as db:
            db.execute("UPDATE observations SET narrative = narrative || ' (edited)' WHERE id IN "
                       "(SELECT id FROM observations ORDER BY id DESC LIMIT ?)", (edits,))
        report = import_agent(brain, "claude-mem", source, env=env)
        assert report.totals()["updated"] == edits, report.summary()
        with sqlite3.connect(source) as db:
            db.execute("UPDATE observations SET narrative = narrative || ' (again)' WHERE id IN "
                       "(SELECT id FROM observations ORDER BY id DESC LIMIT ?)", (edits,))
        out[f"again, {edits} edited"] = timed(lambda: import_agent(brain, "claude-mem", source, env=env))
        records = list(brain.export_records())
    with Brain.open(folder / "jsonl.db", embedder="none") as brain:
        out["JSONL load of the same"] = timed(lambda: brain.import_records(records))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--observations", type=int, default=10_000)
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="maxmem-import-bench-") as folder:
            runs.append(one_run(Path(folder), args.observations, args.edits))
    medians = {name: statistics.median(r[name] for r in runs) for name in runs[0]}
    floor = medians["JSONL load of the same"]
    print(f"import --from claude-mem, {args.observations} observations, embedder off, median of {args.repeat}")
    print(f"{'':<26} {'seconds':>8} {'× JSONL':>8}")
    for name, seconds in medians.items():
        print(f"{name:<26} {seconds:8.2f} {seconds / floor:8.2f}")


if __name__ == "__main__":
    main()
