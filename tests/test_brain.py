"""Brain: storing, deduplicating, validating, changing and exporting memories."""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pytest

from maxmem import Brain, DatabaseError, InvalidInput, NotFound
from maxmem.jsonl import read_jsonl, write_jsonl


def test_remember_and_get_round_trip(brain):
    m = brain.remember("We decided to ship on Fridays", category="core", kind="decision",
                       title="Ship day", tags=["process", "release"], importance=0.9,
                       metadata={"project": "apollo", "votes": 3})
    got = brain.get(m.id)
    assert got == brain.get(m.uid)
    assert (got.category, got.kind, got.title, got.tags, got.importance) == (
        "core", "decision", "Ship day", ["process", "release"], 0.9)
    assert got.metadata == {"project": "apollo", "votes": 3}
    assert got.created_at == "2026-11-30T12:00:00.000Z"
    assert got.embedded_at is not None
    assert len(m.uid) == 36 and m.uid[14] == "7"


def test_identical_content_in_same_category_is_not_duplicated(brain, hash_embedder):
    a = brain.remember("The staging database is on port 5433", category="project")
    calls = len(hash_embedder.calls)
    b = brain.remember("The staging database is on port 5433", category="project")
    assert a.id == b.id
    assert len(hash_embedder.calls) == calls, "no new embedding call for a duplicate"
    c = brain.remember("The staging database is on port 5433", category="daily")
    assert c.id != a.id
    assert brain.stats()["memories"] == 2


def test_remember_many_is_one_batch_and_dedupes_inside_the_batch(brain, hash_embedder):
    items = [{"content": f"fact number {i}", "category": "daily"} for i in range(50)]
    items.append({"content": "fact number 3", "category": "daily"})
    memories = brain.remember_many(items)
    assert len(memories) == 51 and memories[-1].id == memories[3].id
    assert len(hash_embedder.calls) == 1 and len(hash_embedder.calls[0]) == 50


def test_each_text_is_embedded_once_while_a_memory_has_it(brain, hash_embedder):
    a = brain.remember("cache me once", category="daily")
    brain.remember("cache me once", category="core")
    brain.forget(a.id)  # another memory still has the text: its vector stays
    brain.remember("cache me once", category="project")
    assert hash_embedder.embedded_texts.count("cache me once") == 1


def test_forgetting_the_last_memory_of_a_text_drops_its_cached_vector(brain, hash_embedder):
    turn = brain.remember_many([{"content": "the vault code is 1234", "category": "conversation",
                                 "session_id": "s"}])[0]  # a session turn's own vector is a cache copy
    assert brain.db.scalar("SELECT count(*) FROM embeddings_cache") == 1
    brain.forget(turn.id)
    assert brain.db.scalar("SELECT count(*) FROM embeddings_cache") == 0  # no vector, no text hash
    brain.remember("the vault code is 1234", category="daily")
    assert hash_embedder.embedded_texts.count("the vault code is 1234") == 2


def test_forgetting_drops_the_text_from_every_models_cache(brain, hash_embedder):
    turn = brain.remember_many([{"content": "the door code is 4321", "category": "conversation",
                                 "session_id": "s"}])[0]
    key = brain.db.scalar("SELECT text_hash FROM embeddings_cache")
    for model in ("a-model-used-before:384", "z-model-used-before:384"):  # left by reindexes
        brain.db.execute("INSERT INTO embeddings_cache (model, text_hash, vector) VALUES (?, ?, x'00')",
                         (model, key))
    brain.forget(turn.id)
    assert brain.db.scalar("SELECT count(*) FROM embeddings_cache") == 0


def cached_count(brain) -> int:
    return brain.db.scalar("SELECT count(*) FROM embeddings_cache")


def test_the_cache_refers_to_a_stored_vector_instead_of_copying_it(brain, hash_embedder):
    plain = brain.remember("the NAS backup runs at 02:30", category="daily")
    assert cached_count(brain) == 0  # its vec0 row is the cache entry
    brain.remember("a titled note", title="Title", category="daily")
    brain.remember("said in a chat", category="conversation", session_id="s1")
    assert cached_count(brain) == 2  # embedded text ≠ content; a blended vector is not its own
    # the same text elsewhere is not embedded again; its vector is the stored one
    again = brain.remember("the NAS backup runs at 02:30", category="core")
    assert hash_embedder.embedded_texts.count("the NAS backup runs at 02:30") == 1
    stored = [np.frombuffer(brain.db.scalar("SELECT embedding FROM memories_vec WHERE rowid = ?", (m.id,)),
                            np.float32) for m in (plain, again)]
    assert np.array_equal(stored[0], stored[1])


def test_a_referred_vector_survives_updates_until_forgotten(brain, hash_embedder):
    m = brain.remember("first wording of the note", category="daily")
    brain.update(m.id, content="second wording of the note")
    brain.update(m.id, content="first wording of the note")
    brain.remember("second wording of the note", category="project")  # kept when the update replaced it
    brain.forget(m.id)  # the last memory with the first wording: its vector goes with it
    brain.remember("first wording of the note", category="core")
    texts = hash_embedder.embedded_texts
    assert texts.count("second wording of the note") == 1 and texts.count("first wording of the note") == 2


def test_content_with_outer_whitespace_is_cached_by_its_exact_text(brain, hash_embedder):
    brain.remember("  padded note  ", category="daily")
    brain.remember("  padded note  ", category="core")
    assert hash_embedder.embedded_texts.count("  padded note  ") == 1


def test_a_session_turn_keeps_its_own_vector_beside_a_padded_twin(brain, hash_embedder):
    """A padded note hashes like the turn's text (content_hash strips) but does not hold
    the turn's vector: the turn's own vector must stay in the cache for its blend."""
    turn, _ = brain.remember_many([
        {"content": "we chose the blue tiles", "category": "conversation", "session_id": "s1"},
        {"content": "  we chose the blue tiles  ", "category": "daily"},
    ])
    assert set(brain.vectors.own([turn.id])) == {turn.id}


def test_a_memory_leaving_its_session_gets_its_own_vector_back(brain, hash_embedder):
    turns = brain.remember_many([
        {"content": f"turn {i} about {topic}", "category": "conversation", "session_id": "s1",
         "created_at": f"2026-01-01T10:0{i}:00Z"}
        for i, topic in enumerate(["gardens", "tomatoes", "boilers"])
    ])
    middle = turns[1]
    own = hash_embedder.embed_documents(["turn 1 about tomatoes"])[0]

    def stored() -> np.ndarray:
        return np.frombuffer(brain.db.scalar("SELECT embedding FROM memories_vec WHERE rowid = ?",
                                             (middle.id,)), np.float32)

    assert float(stored() @ own) < 0.99  # blended with its neighbours
    brain.update(middle.id, category="daily")
    assert float(stored() @ own) > 0.999


@pytest.mark.parametrize("kwargs, message", [
    ({"category": "weekly"}, "unknown category"),
    ({"importance": 1.5}, "importance"),
    ({"importance": float("nan")}, "importance"),
    ({"metadata": {"bad key": 1}}, "metadata key"),
    ({"metadata": {"1x": 1}}, "metadata key"),
    ({"kind": "Not A Kind"}, "kind"),
    ({"created_at": "next blursday"}, "created_at"),
    ({"tags": [1, 2]}, "tag"),
])
def test_invalid_input_says_what_to_do(brain, kwargs, message):
    with pytest.raises(InvalidInput, match=message):
        brain.remember("something", **kwargs)
    assert brain.stats()["memories"] == 0


def test_empty_content_is_refused(brain):
    for content in ("", "   \n"):
        with pytest.raises(InvalidInput, match="empty"):
            brain.remember(content)


def test_a_bad_item_in_a_batch_stores_nothing(brain):
    with pytest.raises(InvalidInput, match="item 2"):
        brain.remember_many([{"content": "ok"}, {"content": "bad", "importance": -1}])
    assert brain.stats()["memories"] == 0


def test_nul_bytes_and_lone_surrogates_are_stored_safely(brain):
    m = brain.remember("binary\x00ish \ud800 text", category="daily")
    assert "\x00" not in brain.get(m.id).content
    assert brain.search("binary")[0].memory.id == m.id


def test_update_reembeds_and_logs_history(brain, hash_embedder):
    m = brain.remember("The API listens on port 8000", category="project")
    updated = brain.update(m.id, content="The API listens on port 9000", importance=0.8)
    assert updated.content.endswith("9000") and updated.importance == 0.8
    assert "The API listens on port 9000" in hash_embedder.embedded_texts
    assert brain.search("port 9000", limit=1)[0].memory.id == m.id
    ops = [r["op"] for r in brain.db.rows("SELECT op FROM changes WHERE uid = ? ORDER BY seq", (m.uid,))]
    assert ops == ["upsert", "upsert"]
    snapshots = [json.loads(r["data"])["content"] for r in
                 brain.db.rows("SELECT data FROM changes WHERE uid = ? ORDER BY seq", (m.uid,))]
    assert snapshots == ["The API listens on port 8000", "The API listens on port 9000"]


def test_update_rejects_unknown_fields(brain):
    m = brain.remember("x marks the spot")
    with pytest.raises(InvalidInput, match="cannot update"):
        brain.update(m.id, uid="other")


def test_forget_removes_row_fts_and_vectors(brain):
    m = brain.remember("forget this secret plan", category="daily")
    brain.forget(m.id)
    with pytest.raises(NotFound):
        brain.get(m.id)
    assert brain.search("secret plan") == []
    assert brain.db.scalar("SELECT count(*) FROM memories_vec") == 0
    assert brain.db.scalar("SELECT count(*) FROM vector_codes") == 0
    assert brain.db.scalar("SELECT op FROM changes ORDER BY seq DESC LIMIT 1") == "delete"
    logged = " ".join(r["data"] or "" for r in brain.db.rows("SELECT data FROM changes"))
    assert "secret plan" not in logged, "forget leaves no copy in the change log"


def test_pin_and_list_filters(brain, clock):
    a = brain.remember("alpha", category="core", importance=0.9)
    clock.advance(hours=1)
    brain.remember("beta", category="daily", tags=["x"])
    brain.pin(a.id)
    assert [m.content for m in brain.list()] == ["beta", "alpha"]
    assert [m.content for m in brain.list(order="oldest")] == ["alpha", "beta"]
    assert [m.content for m in brain.list(pinned=True)] == ["alpha"]
    assert [m.content for m in brain.list(tags=["x"])] == ["beta"]
    assert [m.content for m in brain.list(min_importance=0.8)] == ["alpha"]


def test_get_unknown_raises_not_found(brain):
    with pytest.raises(NotFound, match="no memory"):
        brain.get(12345)
    with pytest.raises(NotFound):
        brain.get("not-a-uid")


def test_jsonl_export_import_round_trips_every_field(brain, tmp_path, hash_embedder, clock):
    brain.remember("one", category="core", kind="decision", tags=["a"], metadata={"k": "v"}, pinned=True)
    brain.remember("two", category="conversation", session_id="s1", agent="bot")
    path = tmp_path / "out.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        write_jsonl(brain.export_records(), handle)
    exported = list(read_jsonl(path))
    with Brain.open(tmp_path / "other.db", embedder=hash_embedder, clock=clock) as other:
        assert other.import_records(read_jsonl(path)) == {"added": 2, "updated": 0, "unchanged": 0}
        assert other.import_records(read_jsonl(path)) == {"added": 0, "updated": 0, "unchanged": 2}
        again = list(other.export_records())
    strip = lambda r: {k: v for k, v in r.items() if k != "embedded_at"}  # noqa: E731
    assert [strip(r) for r in again] == [strip(r) for r in exported]


def test_import_bad_line_names_it_and_stores_nothing(brain, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"content": "fine"}\n{"content": "", "category": "core"}\n')
    with pytest.raises(InvalidInput, match="line 2"):
        brain.import_records(read_jsonl(path))
    path.write_text('{"content": "fine"}\n{not json\n')
    with pytest.raises(InvalidInput, match=":2: not valid JSON"):
        brain.import_records(read_jsonl(path))
    assert brain.stats()["memories"] == 0


def test_keyword_only_brain_embeds_later(tmp_path, hash_embedder, clock):
    path = tmp_path / "b.db"
    with Brain.open(path, embedder="none", clock=clock) as b:
        b.remember("postgres runs on the nas", category="project")
        hits = b.search("postgres")
        assert hits[0].memory.content == "postgres runs on the nas"
        assert hits.plan.note and "keyword-only" in hits.plan.note
        assert b.pending_count() == 1
    with Brain.open(path, embedder=hash_embedder, clock=clock) as b:
        hits = b.search("postgres")
        assert hits  # an embedder, but nothing embedded yet: the note says so
        assert "no memory has a vector yet" in hits.plan.note
        assert b.embed_pending().embedded == 1
        assert b.pending_count() == 0
        hits = b.search("postgres nas")
        hit = hits[0]
        assert hits.plan.note is None
        assert hit.vector_score is not None


def test_other_embedder_is_refused_until_reindex(tmp_path, hash_embedder, clock):
    from conftest import HashEmbedder

    path = tmp_path / "b.db"
    with Brain.open(path, embedder=hash_embedder, clock=clock) as b:
        b.remember_many([{"content": f"memo {i}"} for i in range(5)])
    wider = HashEmbedder(dim=512)
    with pytest.raises(DatabaseError, match="maxmem reindex"):
        Brain.open(path, embedder=wider, clock=clock)
    with Brain.open(path, embedder=wider, clock=clock, check_embedder=False) as b:
        assert b.reindex() == 5
    with Brain.open(path, embedder=wider, clock=clock) as b:
        assert b.stats()["vectors_from"] == "test:hash-bow:512"
        assert b.search("memo 3", mode="vector")[0].memory.content == "memo 3"


def test_file_modes_are_private(tmp_path, hash_embedder):
    path = tmp_path / "private" / "brain.db"
    with Brain.open(path, embedder=hash_embedder) as b:
        b.remember("private thought")
        for p in (path, path.with_name("brain.db-wal"), path.with_name("brain.db-shm")):
            if p.exists():
                assert stat.S_IMODE(os.stat(p).st_mode) == 0o600, p
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


def test_corrupt_file_gives_one_line_error(tmp_path):
    path = tmp_path / "brain.db"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(DatabaseError, match="maxmem doctor"):
        Brain.open(path, embedder="none")
    assert path.read_bytes().startswith(b"this is not"), "never written to"


def test_a_forgotten_memorys_id_is_never_given_again(tmp_path, hash_embedder):
    path = tmp_path / "ids.db"
    with Brain.open(path, embedder=hash_embedder) as b:
        first, second = b.remember("first note", category="daily"), b.remember("second note", category="daily")
        b.forget(second.id)
        third = b.remember_many([{"content": "third note", "category": "daily"}])[0]
        assert third.id == second.id + 1
        b.forget(third.id)
        with pytest.raises(NotFound):
            b.forget(third.id)  # sent twice: the second finds nothing, it does not forget another
        # A brain.db from before the high-water mark: the change log still names the ids.
        b.db.execute("DELETE FROM meta WHERE key = 'last_id'")
        b.db.execute("DELETE FROM schema_migrations WHERE name = '0007_last_id'")
        b.db.execute("PRAGMA user_version = 6")
    with Brain.open(path, embedder=hash_embedder) as b:
        assert b.remember("fourth note", category="daily").id == third.id + 1
        assert [m.id for m in b.list(limit=10, order="oldest")] == [first.id, third.id + 1]
