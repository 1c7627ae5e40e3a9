#!/usr/bin/env python3
"""Folder sync benchmark: `maxmem sync folder` beside `maxmem export` + `maxmem import`.

Side by side in one run, on the same brain of N memories (default 10k, 384-d):

- the first full sync: machine A writes its files, machine B applies them, against A
  exporting JSONL and a fresh B importing it (the code the two commands run);
- an incremental sync of 100 changes (50 edits, 50 new memories) written on A and
  applied on B, against exporting those 100 memories as JSONL and importing them;
- the folder's bytes beside the gzip'd JSONL of the same memories, with vectors
  travelling (the default) and without ([sync.folder] vectors = false);
- growth and repacking: the folder's bytes after the first sync and after each of
  --rounds rounds that edit the text of --share of the memories (another share each
  round, synced after each, repacking on its own when it is worthwhile), then after
  `--repack`, beside the gzip'd JSONL of the live memories; how long the repack
  takes, and how long a machine that applied the old files takes to apply the new
  ones (changing nothing). With vectors and without.

Each timing is the median of --repeat runs, the two ways alternating. The embedder is a
fake, deterministic one (precomputed e5-like unit vectors, bench/core_bench.py): it
stands in for the model so that no embedding time is counted on either side. With
the same embedder on both machines the sync carries the vectors and B embeds nothing;
`import` takes them from the same table.

    python bench/sync_folder_bench.py               # 10k memories
    python bench/sync_folder_bench.py --n 2000      # quicker
    python bench/sync_folder_bench.py --repeat 0    # growth and repacking only
"""

from __future__ import annotations

import argparse
import gzip
import random
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
from maxmem.sync.folder import FolderSettings, status, sync  # noqa: E402

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
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each sync (0: none)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of edits before repacking (0: none)")
    parser.add_argument("--share", type=float, default=0.1, help="share of the memories edited each round")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="maxmem-folder-bench-"))
    try:
        if args.repeat:
            run(work, args.n, args.dim, args.changes, args.repeat)
        if args.rounds:
            for vectors in (True, False):
                growth(work / f"growth-{vectors}", args.n, args.dim, args.rounds, args.share, vectors)
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


def growth(work: Path, n: int, dim: int, rounds: int, share: float, vectors: bool) -> None:
    """The folder as edits pile up, then repacked (see the module's docstring)."""
    words = texts(n)
    rng = random.Random(5)
    picks = [rng.sample(range(n), int(n * share)) for _ in range(rounds)]
    edits = {(r, i): f"{words[i]} (edit {r + 1})" for r, chosen in enumerate(picks) for i in chosen}
    table = dict(zip(words + list(edits.values()), e5_like(n + len(edits), dim)))
    embedder = Precomputed(table, {}, dim)
    folder, a_home, b_home, c_home = (work / name for name in ("shared", "a", "b", "c"))
    for place in (folder, a_home, b_home, c_home):
        place.mkdir(parents=True)
    with Brain.open(a_home / "brain.db", embedder=embedder) as a, \
            Brain.open(b_home / "brain.db", embedder=embedder) as b:
        a.remember_many([{"content": t, "category": CATEGORIES[i % 3]} for i, t in enumerate(words)], near=False)
        sync(a, settings(a_home, folder, vectors))
        shutil.copy2(a_home / "sync.key", b_home / "sync.key")
        sync(b, settings(b_home, folder, vectors))
        uids = [m.uid for m in a.list(limit=n, order="oldest")]
        rows = [("after the first sync", folder_size(folder), own_records(a))]
        for r, chosen in enumerate(picks):
            with a.db.atomic():
                for i in chosen:
                    a.update(uids[i], content=edits[r, i])
            report = sync(a, settings(a_home, folder, vectors))
            sync(b, settings(b_home, folder, vectors))
            done = " (repacked on its own)" if report.repack else ""
            rows.append((f"round {r + 1}: {len(chosen)} edits{done}", folder_size(folder), own_records(a)))
        started = time.perf_counter()
        report = sync(a, settings(a_home, folder, vectors), repack=True)
        whole = time.perf_counter() - started
        repack = report.repack
        assert repack is not None, report.summary()
        rows.append(("after --repack", folder_size(folder), own_records(a)))
        started = time.perf_counter()
        applied = sync(b, settings(b_home, folder, vectors))
        receiver = time.perf_counter() - started
        assert applied.applied_files == repack.files_after and applied.added == applied.updated == 0
        jsonl = work / "live.jsonl"
        write_private(jsonl, lambda handle: write_jsonl(a.export_records(), handle))
        gz = len(gzip.compress(jsonl.read_bytes(), 6))
    with Brain.open(c_home / "brain.db", embedder=embedder) as c:  # a machine that joins now
        shutil.copy2(a_home / "sync.key", c_home / "sync.key")
        joined = sync(c, settings(c_home, folder, vectors))
        assert joined.added == n, joined.summary()
    print(f"growth, {'vectors travelling' if vectors else 'vectors = false'}: {n} memories, then {rounds} rounds "
          f"editing the text of {share:.0%} of them; gzip'd JSONL of the live memories {gz:,} bytes")
    for what, size, records in rows:
        print(f"  {what:<44} folder {size:>12,} bytes ({size / gz:6.2f}x the gzip'd JSONL), {records:,} records")
    print(f"  repack: {repack.files_before} file(s), {repack.records_before:,} records -> "
          f"{repack.files_after} file(s), {repack.records_after:,} records in {repack.seconds:.2f} s "
          f"(the whole --repack run {whole:.2f} s); a machine that applied the old files applies the new ones in "
          f"{receiver:.2f} s, changing nothing; one that joins afterwards gets the same {n} memories")


def own_records(brain: Brain) -> int:
    return sum(row.records for row in status(brain) if row.this_machine)


if __name__ == "__main__":
    main()
