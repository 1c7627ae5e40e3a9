#!/usr/bin/env python3
"""Folder sync benchmark: `maxmem sync folder` beside `maxmem export` + `maxmem import`.

Side by side in one run, on the same brain of N memories (default 10k, 384-d):

- the first full sync: machine A writes its files, machine B applies them, against A
  exporting JSONL and a fresh B importing it (the code the two commands run);
- an incremental sync of 100 changes (50 edits, 50 new memories) written on A and
  applied on B, against exporting those 100 memories as JSONL and importing them;
- the folder's bytes beside the gzip'd JSONL of the same memories, with vectors
  travelling (the default) and without ([sync.folder] vectors = false).

Each timing is the median of --repeat runs, the two ways alternating. The embedder is a
fake, deterministic one (precomputed e5-like unit vectors, bench/core_bench.py): it
stands in for the model so that no embedding time is counted on either side. With
the same embedder on both machines the sync carries the vectors and B embeds nothing;
`import` takes them from the same table.

    python bench/sync_folder_bench.py               # 10k memories
    python bench/sync_folder_bench.py --n 2000      # quicker
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import apsw

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from core_bench import Precomputed, e5_like, texts  # noqa: E402

from maxmem import Brain, archive  # noqa: E402
from maxmem.files import write_private  # noqa: E402
from maxmem.jsonl import write_jsonl  # noqa: E402
from maxmem.sync.folder import FolderSettings, sync  # noqa: E402

CATEGORIES = ("core", "project", "daily", "conversation")


def copy_db(source: Path, target: Path) -> None:
    """A consistent copy through SQLite's backup API."""
    src = apsw.Connection(str(source), flags=apsw.SQLITE_OPEN_READONLY)
    dst = apsw.Connection(str(target))
    with dst.backup("main", src, "main") as backup:
        backup.step()
    dst.close()
    src.close()


def settings(home: Path, folder: Path, vectors: bool = True) -> FolderSettings:
    return FolderSettings(folder, home / "sync.key", home / "sync.machine", vectors)


def export_import(source: Brain, target: Brain, path: Path, uids: set[str] | None = None) -> float:
    """`maxmem export FILE` then `maxmem import FILE`: the code the two commands run."""
    started = time.perf_counter()
    records = (r for r in source.export_records() if uids is None or r["uid"] in uids)
    write_private(path, lambda handle: write_jsonl(records, handle))
    target.import_records(archive.read(path).records)
    return time.perf_counter() - started


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="memories (default 10000)")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="maxmem-folder-bench-"))
    try:
        run(work, args.n, args.dim, args.changes, args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work: Path, n: int, dim: int, changes: int, repeat: int) -> None:
    rounds = 2 * repeat
    words = texts(n)
    edits = [f"{t} (edited)" for t in words[:rounds * changes]]
    news = [f"{t} (new)" for t in texts(rounds * changes, seed=8)]
    vectors = e5_like(len(words) + len(edits) + len(news), dim)
    table = dict(zip(words + edits + news, vectors))
    embedder = Precomputed(table, {}, dim)
    print(f"brain: {n} memories, {dim}-d vectors from a fake deterministic embedder (precomputed e5-like "
          "unit vectors, no embedding time on either side)")
    pristine = work / "pristine.db"
    with Brain.open(pristine, embedder=embedder) as brain:
        brain.remember_many([{"content": t, "category": CATEGORIES[i % 4],
                              "session_id": f"s{i // 40}" if i % 4 == 3 else None}
                             for i, t in enumerate(words[:n])], near=False)

    full_sync, full_pair, incr_sync, incr_pair = [], [], [], []
    sizes: dict[str, int] = {}
    for attempt in range(repeat):
        case = work / f"case{attempt}"
        folder = case / "shared"
        folder.mkdir(parents=True)
        a_home, b_home, c_home = case / "a", case / "b", case / "c"
        for home in (a_home, b_home, c_home):
            home.mkdir()
        copy_db(pristine, a_home / "brain.db")
        with Brain.open(a_home / "brain.db", embedder=embedder) as a, \
                Brain.open(b_home / "brain.db", embedder=embedder) as b, \
                Brain.open(c_home / "brain.db", embedder=embedder) as c:
            pair_seconds = export_import(a, c, case / "export.jsonl")
            started = time.perf_counter()
            sync(a, settings(a_home, folder))
            shutil.copy2(a_home / "sync.key", b_home / "sync.key")
            report = sync(b, settings(b_home, folder))
            sync_seconds = time.perf_counter() - started
            assert report.added == n, report.summary()
            full_sync.append(sync_seconds)
            full_pair.append(pair_seconds)
            if attempt == 0:
                sizes["folder"] = folder_size(folder)
                with open(case / "export.jsonl", "rb") as raw:
                    sizes["jsonl"] = (case / "export.jsonl").stat().st_size
                    sizes["jsonl.gz"] = len(gzip.compress(raw.read(), 6))
                plain = case / "plain"
                plain.mkdir()
                copy_db(pristine, case / "plain.db")
                with Brain.open(case / "plain.db", embedder=embedder) as again:
                    sync(again, settings(case, plain, vectors=False))
                sizes["folder, no vectors"] = folder_size(plain)
            for step in range(2):  # the first of each pair warms up: not counted
                base = (attempt * 2 + step) * changes // 2
                touched = {m.uid for m in a.list(limit=changes // 2, offset=base, order="oldest")}
                for memory in a.get_many(sorted(touched)):
                    a.update(memory.uid, content=f"{memory.content} (edited)")
                first = (attempt * 2 + step) * changes
                fresh = a.remember_many([{"content": news[first + j], "category": "daily"}
                                         for j in range(changes - len(touched))], near=False)
                touched |= {m.uid for m in fresh}
                pair_seconds = export_import(a, c, case / "changes.jsonl", touched)
                started = time.perf_counter()
                sync(a, settings(a_home, folder))
                report = sync(b, settings(b_home, folder))
                sync_seconds = time.perf_counter() - started
                assert report.added + report.updated == changes, report.summary()
                if step:
                    incr_sync.append(sync_seconds)
                    incr_pair.append(pair_seconds)
        shutil.rmtree(case)

    def line(what: str, synced: list[float], paired: list[float]) -> None:
        s, p = statistics.median(synced), statistics.median(paired)
        print(f"{what:<34} sync folder {s:7.3f} s   export+import {p:7.3f} s   ratio {s / p:5.2f}x  (target <= 1.5x)")

    print(f"median of {repeat} runs each, alternating:")
    line(f"first full sync ({n} memories)", full_sync, full_pair)
    line(f"incremental ({changes} changes)", incr_sync, incr_pair)
    gz = sizes["jsonl.gz"]
    print(f"bytes: folder {sizes['folder']:,} ({sizes['folder'] / gz:.2f}x the gzip'd JSONL, vectors included); "
          f"folder without vectors {sizes['folder, no vectors']:,} ({sizes['folder, no vectors'] / gz:.2f}x); "
          f"JSONL {sizes['jsonl']:,}, gzip'd {gz:,}  (target <= 1.5x)")


if __name__ == "__main__":
    main()
