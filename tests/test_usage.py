"""Recall counts: searching stays a read; the counts are written later, in one batch."""

from __future__ import annotations

import hashlib
from pathlib import Path

import apsw

from maxmem import Brain


def digest(path: Path) -> str:
    h = hashlib.sha256()
    for part in (path, Path(f"{path}-wal")):
        h.update(part.read_bytes() if part.exists() else b"")
    return h.hexdigest()


def seeded(path: Path, hash_embedder, clock) -> None:
    with Brain.open(path, embedder=hash_embedder, clock=clock) as brain:
        brain.remember_many([{"content": f"kite number {i} flies over the dunes"} for i in range(20)])


def test_a_search_leaves_the_file_as_it_was_until_the_batched_write(tmp_path, hash_embedder, clock):
    path = tmp_path / "brain.db"
    seeded(path, hash_embedder, clock)
    with Brain.open(path, embedder=hash_embedder, clock=clock) as brain:
        before = digest(path)
        hits = brain.search("kite dunes", limit=3)
        assert len(hits) == 3 and digest(path) == before
        # The brain sees its own use at once …
        assert brain.get(hits[0].memory.id).recall_count == 1
        # … and writes it in one batch.
        assert brain.flush_usage()
        assert digest(path) != before
        assert brain.db.scalar("SELECT sum(recall_count) FROM memories") == 3
    with Brain.open(path, embedder=hash_embedder, clock=clock) as brain:
        assert brain.get(hits[0].memory.id).recall_count == 1  # written once, not again at close


def test_counts_are_written_at_close(tmp_path, hash_embedder, clock):
    path = tmp_path / "brain.db"
    seeded(path, hash_embedder, clock)
    with Brain.open(path, embedder=hash_embedder, clock=clock) as brain:
        top = brain.search("kite number 7", limit=1)[0].memory.id
        brain.search("kite number 7", limit=1)
    with Brain.open(path, embedder="none", clock=clock) as brain:
        assert brain.get(top).recall_count == 2


def test_a_busy_writer_defers_the_counts_and_the_search_never_waits(tmp_path, hash_embedder, clock):
    path = tmp_path / "brain.db"
    seeded(path, hash_embedder, clock)
    other = apsw.Connection(str(path))
    with Brain.open(path, embedder=hash_embedder, clock=clock) as brain:
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        hit = brain.search("kite number 3", limit=1)[0]
        assert brain.flush_usage() is False  # no wait for the lock
        assert brain.get(hit.memory.id).recall_count == 1  # kept for the next flush
        other.execute("ROLLBACK")
        assert brain.flush_usage() is True
    other.close()
    with Brain.open(path, embedder="none", clock=clock) as brain:
        assert brain.get(hit.memory.id).recall_count == 1
