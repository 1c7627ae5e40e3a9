"""`maxmem retain --apply` killed with SIGKILL at random points strands nothing.

Over a brain of 5,000 expiring memories (and 600 expiring captured turns with their
tool calls), a real `python -m maxmem retain --apply` is killed at a random moment,
again and again, each time on a fresh copy. After each kill every memory is in
brain.db or in a complete archive (counted, and imported back into a copy of the
killed brain.db to prove it), doctor's check flags the interrupted run, and a re-run
finishes: brain.db holds no expired row, and every expired row is in exactly one
complete archive.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import apsw
import pytest

from maxmem import Brain
from maxmem import archive as archive_mod
from maxmem.retention.archives import check_archives

KILLS = 21
EXPIRING = 5000
KEPT = 50
TURNS = 600


def _copy(source: Path, target: Path) -> None:
    """A consistent copy through SQLite's backup API."""
    src = apsw.Connection(str(source), flags=apsw.SQLITE_OPEN_READONLY)
    dst = apsw.Connection(str(target))
    with dst.backup("main", src, "main") as backup:
        backup.step()
    dst.close()
    src.close()


@pytest.fixture(scope="module")
def seed(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("seed") / "brain.db"
    with Brain.open(path, embedder="none") as b:
        b.remember_many(
            [{"content": f"expiring memory {i} about topic {i % 97} " + "filler words " * 12,
              "category": "conversation" if i % 2 else "daily", "created_at": "2020-01-01T00:00:00Z"}
             for i in range(EXPIRING)]
            + [{"content": f"core fact {i}", "category": "core", "created_at": "2020-01-01T00:00:00Z"}
               for i in range(KEPT)],
            embed=False,
        )
        with b.db.atomic():
            b.db.execute("INSERT INTO sessions (id, format) VALUES ('s1', 'jsonl')")
            for n in range(1, TURNS + 1):
                b.db.execute(
                    "INSERT INTO turns (id, session_id, seq, key, fingerprint, role, text, created_at) "
                    "VALUES (?, 's1', ?, ?, ?, 'assistant', ?, '2020-01-01T00:00:00.000Z')",
                    (n, n, f"k{n}", f"f{n}", f"turn {n}"))
                b.db.execute("INSERT INTO tool_calls (session_id, call_id, turn_id, name, started_at) "
                             "VALUES ('s1', ?, ?, 'bash', '2020-01-01T00:00:00.000Z')", (f"c{n}", n))
    return path


def _keys(db_path: Path) -> tuple[set, set, list[str]]:
    """(expiring keys in brain.db, kept uids in brain.db, journal entries)."""
    conn = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = {("memories", uid) for uid, category in conn.execute("SELECT uid, category FROM memories")
                if category != "core"}
        kept = {uid for (uid,) in conn.execute("SELECT uid FROM memories WHERE category = 'core'")}
        rows |= {("turns", i) for (i,) in conn.execute("SELECT id FROM turns")}
        rows |= {("tool_calls", s, c) for s, c in conn.execute("SELECT session_id, call_id FROM tool_calls")}
        journal = [k for (k,) in conn.execute("SELECT key FROM meta WHERE key LIKE 'retention_pending:%'")]
    finally:
        conn.close()
    return rows, kept, journal


def _archives(folder: Path) -> tuple[Counter, dict]:
    """How often each key is archived, over complete archives only (a damaged one fails)."""
    counts: Counter = Counter()
    memories: dict = {}
    for path in sorted(folder.glob("brain.retention-*.jsonl.gz")):
        reading = archive_mod.read(path)
        assert reading.complete, reading.note()
        for record in reading.records:
            key = archive_mod.record_key(record)
            counts[key] += 1
            if key[0] == "memories":
                memories[key] = record
    return counts, memories


def _retain(db_path: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "maxmem", "--db", str(db_path), "--embedder", "none",
                             "retain", "--apply"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.slow
def test_sigkill_at_random_points_strands_no_memory(seed, tmp_path):
    everything, kept, _ = _keys(seed)
    assert len(everything) == EXPIRING + 2 * TURNS and len(kept) == KEPT
    # One uninterrupted run gives the span to kill within.
    whole = tmp_path / "whole"
    whole.mkdir()
    _copy(seed, whole / "brain.db")
    started = time.monotonic()
    done = _retain(whole / "brain.db")
    first = last = None  # when the first and the last archive appeared: the span of the deletes
    seen = 0
    while done.poll() is None:
        now = len(list(whole.glob("brain.retention-*.jsonl.gz")))
        if now != seen:
            seen, last = now, time.monotonic() - started
            first = first or last
        time.sleep(0.005)
    _, err = done.communicate(timeout=300)
    assert done.returncode == 0, err.decode()[-500:]
    assert first is not None and last is not None
    span = time.monotonic() - started
    counts, _ = _archives(whole)
    assert set(counts) == everything and set(counts.values()) == {1}

    rng = random.Random()
    seed_value = rng.randrange(1 << 30)
    rng.seed(seed_value)
    landed = {"before any delete": 0, "mid-run": 0, "after the end": 0, "journal pending": 0,
              "archive in place, rows not yet deleted": 0}
    for n in range(KILLS):
        folder = tmp_path / f"run{n}"
        folder.mkdir()
        db_path = folder / "brain.db"
        _copy(seed, db_path)
        child = _retain(db_path)
        # mostly while batches are archived and deleted, sometimes before or after
        delay = rng.uniform(max(0.05, first - 0.3), last + 0.3) if n % 4 else rng.uniform(0.05, span)
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        where = f"kill {n} at {delay:.2f} s of {span:.2f} s (random seed {seed_value})"

        # After the kill: every row in brain.db or a complete archive, nothing archived twice.
        in_db, kept_now, journal = _keys(db_path)
        counts, archived_memories = _archives(folder)
        assert kept_now == kept, where
        assert everything <= in_db | set(counts), f"{where}: {len(everything - in_db - set(counts))} rows stranded"
        assert set(counts.values()) <= {1}, f"{where}: a row archived twice"
        only_archived = [archived_memories[k] for k in archived_memories if k not in in_db]
        both = in_db & set(counts)
        landed["journal pending"] += bool(journal)
        landed["archive in place, rows not yet deleted"] += bool(both)
        landed["before any delete" if len(in_db) == len(everything) and not counts else
               "after the end" if not in_db else "mid-run"] += 1
        # The archived memories import back: a copy of the killed brain.db gets every memory again.
        restored = folder / "restored.db"
        _copy(db_path, restored)
        with Brain.open(restored, embedder="none") as b:
            assert b.import_records(only_archived)["added"] == len(only_archived), where
            assert b.stats()["memories"] == EXPIRING + KEPT, where
        # doctor's finding: an interrupted run is flagged while it is not finished
        with Brain.open(db_path, embedder="none") as b:
            findings = check_archives(b)
        leftovers = list(folder.glob(".brain.retention-*.tmp"))
        flagged = not all(f["ok"] for f in findings)
        assert flagged == bool(journal or leftovers), f"{where}: {findings}"
        if both:
            assert journal, f"{where}: rows both in brain.db and an archive, and no journal entry to finish them"

        # The re-run finishes the job: nothing expired left, each row in exactly one archive.
        rerun = _retain(db_path)
        _, err = rerun.communicate(timeout=300)
        assert rerun.returncode == 0, f"{where}: {err.decode()[-500:]}"
        in_db, kept_now, journal = _keys(db_path)
        counts, _ = _archives(folder)
        assert not in_db and kept_now == kept and not journal, where
        assert set(counts) == everything and set(counts.values()) == {1}, f"{where}: duplicates or losses"
        assert not list(folder.glob(".brain.retention-*.tmp")), where
        with Brain.open(db_path, embedder="none") as b:
            assert all(f["ok"] for f in check_archives(b)), where
        for extra in (restored, Path(f"{restored}-wal"), Path(f"{restored}-shm")):
            extra.unlink(missing_ok=True)
    print(f"\n{KILLS} kills (seed {seed_value}) over a {span:.2f} s run (archives from {first:.2f} "
          f"to {last:.2f} s): {landed}")
    assert landed["mid-run"] >= KILLS // 2, landed  # the kills must land mid-run to mean anything
    assert os.path.exists(whole / "brain.db")
