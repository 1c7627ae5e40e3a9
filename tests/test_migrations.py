"""Schema migrations: a blank database, and one left at every earlier version."""

from __future__ import annotations

import pytest
from conftest import database_at_version

from maxmem import Brain, DatabaseError, FixedClock
from maxmem.embeddings import identity, text_hash
from maxmem.jobs.runs import last_runs, record_run
from maxmem.store import migrations
from maxmem.store.db import Database


def before(name: str) -> int:
    """The schema version just before migration `name`."""
    return [n for n, _ in migrations.MIGRATIONS].index(name)


def test_blank_database_gets_every_migration(tmp_path):
    db = Database(tmp_path / "b.db")
    applied = migrations.migrate(db)
    assert applied == [name for name, _ in migrations.MIGRATIONS]
    assert migrations.schema_version(db) == len(migrations.MIGRATIONS)
    assert migrations.migrate(db) == []
    assert db.scalar("PRAGMA integrity_check") == "ok"
    db.close()


@pytest.mark.parametrize("stop", range(1, len(migrations.MIGRATIONS)))
def test_database_from_an_earlier_version_is_upgraded_with_its_data(tmp_path, monkeypatch, stop):
    path = tmp_path / "old.db"
    with database_at_version(path, monkeypatch, stop) as db:
        assert migrations.schema_version(db) == stop
        with db.atomic():
            db.execute(
                "INSERT INTO memories (uid, category, content, content_hash, created_at, updated_at) "
                "VALUES ('u1', 'core', 'kept across upgrades', 'h', '2026-01-01T00:00:00.000Z', "
                "'2026-01-01T00:00:00.000Z')")
    with Brain.open(path, embedder="none") as brain:
        assert migrations.schema_version(brain.db) == len(migrations.MIGRATIONS)
        assert brain.get("u1").content == "kept across upgrades"
        assert brain.search("upgrades")[0].memory.uid == "u1"


def test_the_embeddings_cache_keeps_its_vectors_across_the_text_hash_rename(tmp_path, monkeypatch, hash_embedder):
    path = tmp_path / "old.db"
    text = "a text embedded by the version before"
    cached = hash_embedder.embed_documents([text])[0]
    hash_embedder.calls.clear()
    with database_at_version(path, monkeypatch, before("0010_cache_text_hash")) as db:
        with db.atomic():  # as that version's cache wrote it: keyed by a column named content_hash
            db.execute("INSERT INTO embeddings_cache (model, content_hash, vector) VALUES (?, ?, ?)",
                       (identity(hash_embedder), text_hash(text), cached.tobytes()))
    with Brain.open(path, embedder=hash_embedder) as brain:
        columns = [row["name"] for row in brain.db.rows("PRAGMA table_info(embeddings_cache)")]
        assert columns == ["model", "text_hash", "vector"]
        memory = brain.remember(text, category="core")
        assert hash_embedder.embedded_texts == []  # its vector came from the cache
        assert brain.db.scalar("SELECT count(*) FROM embeddings_cache WHERE text_hash = ?", (text_hash(text),)) == 1
        assert brain.similar(text)[0][0].id == memory.id


def test_the_runs_of_hooks_wired_as_claude_are_carried_on_as_claude_code(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    with database_at_version(path, monkeypatch, before("0011_hook_runs_claude_code")) as db:
        record_run(db, "hook:claude", True, "1 file, 4 turns", FixedClock("2026-11-30T12:00:00Z"))
    with Brain.open(path, embedder="none") as brain:
        runs = last_runs(brain.db)
        assert list(runs) == ["hook:claude-code"]
        assert runs["hook:claude-code"]["last_ok"] == "2026-11-30T12:00:00.000Z"
        assert runs["hook:claude-code"]["detail"] == "1 file, 4 turns"


def test_newer_database_is_refused(tmp_path):
    path = tmp_path / "new.db"
    with Brain.open(path, embedder="none") as brain:
        brain.db.execute(f"PRAGMA user_version = {len(migrations.MIGRATIONS) + 1}")
    with pytest.raises(DatabaseError, match="newer than this maxmem"):
        Brain.open(path, embedder="none")
