"""Session context: conversation memories indexed and embedded with their neighbours."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import database_at_version

from maxmem import Brain
from maxmem.search import neighbours

DAY = "2023-05-08T13:56:00.000Z"
TURNS = [
    "Caroline: Do you play any instruments these days?",
    "Melanie: Yes, since I was young, it keeps me calm.",
    "Caroline: That is lovely, what do you play at home?",
    "Melanie: Mostly Bach on Sunday mornings before breakfast.",
    "Caroline: I went hiking near the lake yesterday.",
]


def conversation(brain: Brain, turns=TURNS, session="s1", created_at=DAY) -> list[int]:
    """The turns stored as capture stores them: each its own memory."""
    stored = brain.remember_many([
        {"content": t, "category": "conversation", "session_id": session, "created_at": created_at}
        for t in turns
    ], near=False)
    return [m.id for m in stored]


def context_of(brain: Brain, memory_id: int) -> str | None:
    return brain.db.scalar("SELECT context FROM memories WHERE id = ?", (memory_id,))


def stored_vector(brain: Brain, memory_id: int) -> np.ndarray:
    blob = brain.db.scalar("SELECT embedding FROM memories_vec WHERE rowid = ?", (memory_id,))
    return np.frombuffer(blob, dtype=np.float32)


def keyword_ids(brain: Brain, query: str) -> list[int]:
    # What the keyword index finds, without the "nothing relevant" cut-off (in a brain this
    # small a date every memory shares carries no weight).
    return [h.memory.id for h in brain.search(query, mode="keyword", limit=20, track=False, min_relevance=0)]


def test_a_turn_is_indexed_with_the_turns_around_it(brain):
    ids = conversation(brain)
    assert "instruments" in context_of(brain, ids[1]) and "Bach" in context_of(brain, ids[1])
    # two neighbours each side, no further
    assert "hiking" in context_of(brain, ids[2]) and "hiking" not in context_of(brain, ids[1])
    # the reply that never names the instrument is found by the question's word
    assert ids[1] in keyword_ids(brain, "instruments")
    # the memory's own words still rank first
    assert keyword_ids(brain, "instruments")[0] == ids[0]


def test_a_memory_outside_a_session_has_no_context_but_its_date_is_searchable(brain):
    note = brain.remember("Renew the passport", category="core", created_at=DAY)
    turn = brain.remember_many([{"content": "Melanie: hello", "category": "conversation", "created_at": DAY}])[0]
    assert context_of(brain, note.id) is None and context_of(brain, turn.id) is None
    assert set(keyword_ids(brain, "what happened on 8 May 2023")) == {note.id, turn.id}
    assert keyword_ids(brain, "9 June 2024") == []


def test_other_categories_and_sessions_are_not_neighbours(brain):
    ids = conversation(brain)
    note = brain.remember("Melanie's violin teacher is called Ana", category="core", session_id="s1")
    other = conversation(brain, ["Jon: my dance studio opened"], session="s2")
    assert context_of(brain, note.id) is None
    assert "Ana" not in context_of(brain, ids[-1]) and "dance" not in context_of(brain, ids[-1])
    assert context_of(brain, other[0]) == ""


def test_the_stored_vector_blends_the_own_vectors_of_the_neighbours(brain, hash_embedder):
    ids = conversation(brain)
    own = {i: hash_embedder.embed_query(t) for i, t in zip(ids, TURNS)}
    expected = neighbours.blend(own[ids[2]], [own[ids[1]], own[ids[0]], own[ids[3]], own[ids[4]]])
    assert np.allclose(stored_vector(brain, ids[2]), expected, atol=2e-3)  # the cache keeps float16
    assert not np.allclose(stored_vector(brain, ids[2]), own[ids[2]], atol=1e-3)
    # the cache still holds the memory's own vector, so a re-blend never calls the embedder
    calls = len(hash_embedder.calls)
    conversation(brain, ["Melanie: and Vivaldi in the evening."])
    assert len(hash_embedder.calls) == calls + 1  # only the new text
    expected = neighbours.blend(own[ids[4]], [own[ids[3]], own[ids[2]], hash_embedder.embed_query(
        "Melanie: and Vivaldi in the evening.")])
    assert np.allclose(stored_vector(brain, ids[4]), expected, atol=2e-3)  # the cache keeps float16


def test_a_new_turn_updates_its_neighbours(brain):
    ids = conversation(brain)
    new = conversation(brain, ["Melanie: The clarinet, mostly."])[0]
    assert "clarinet" in context_of(brain, ids[-1]) and "clarinet" in context_of(brain, ids[-2])
    assert "clarinet" not in context_of(brain, ids[-3])
    assert ids[-1] in keyword_ids(brain, "clarinet") and new in keyword_ids(brain, "clarinet")


def test_forgetting_a_turn_removes_its_text_from_the_neighbours(brain):
    ids = conversation(brain)
    brain.forget(ids[3])
    assert all("Bach" not in (context_of(brain, i) or "") for i in ids if i != ids[3])
    assert keyword_ids(brain, "Bach breakfast") == []
    # the window closes over the gap
    assert "hiking" in context_of(brain, ids[2])
    assert "lovely" in context_of(brain, ids[4]) and "instruments" not in context_of(brain, ids[4])
    brain.db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")


def test_moving_a_turn_to_another_session_updates_both(brain):
    ids = conversation(brain)
    brain.update(ids[3], session_id="s9")
    assert "Bach" not in context_of(brain, ids[2]) and "Bach" not in context_of(brain, ids[4])
    assert context_of(brain, ids[3]) == ""
    brain.update(ids[0], content="Caroline: Do you play the oboe?")
    assert "oboe" in context_of(brain, ids[1]) and "instruments" not in context_of(brain, ids[1])
    brain.db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")


def test_pending_turns_are_blended_once_embedded(brain, hash_embedder):
    stored = brain.remember_many([
        {"content": t, "category": "conversation", "session_id": "s1", "created_at": DAY} for t in TURNS
    ], embed=False)
    ids = [m.id for m in stored]
    assert "Bach" in context_of(brain, ids[2])  # text context needs no vectors
    assert brain.embed_pending().embedded == len(TURNS)
    own = {i: hash_embedder.embed_query(t) for i, t in zip(ids, TURNS)}
    expected = neighbours.blend(own[ids[0]], [own[ids[1]], own[ids[2]]])
    assert np.allclose(stored_vector(brain, ids[0]), expected, atol=2e-3)  # the cache keeps float16


def test_turns_are_ordered_by_time_within_a_session(brain):
    early, late = "2023-05-08T10:00:00.000Z", "2023-05-08T11:00:00.000Z"
    a = brain.remember_many([{"content": "Jon: late turn", "category": "conversation",
                              "session_id": "s", "created_at": late}])[0]
    b = brain.remember_many([{"content": "Gina: early turn", "category": "conversation",
                              "session_id": "s", "created_at": early}])[0]
    assert context_of(brain, a.id) == "Gina: early turn" and context_of(brain, b.id) == "Jon: late turn"


def test_long_neighbours_are_cut_to_the_part_next_to_the_memory(brain):
    long_before = "start " + "word " * 300 + "nearend"
    long_after = "nearstart " + "word " * 300 + "farend"
    ids = conversation(brain, [long_before, "middle turn", long_after])
    text = context_of(brain, ids[1])
    assert "nearend" in text and "nearstart" in text
    assert "start " not in text[:6] and "farend" not in text
    assert len(text) <= 2 * neighbours.CONTEXT_CHARS + 1


@pytest.mark.parametrize("stop", [4])
def test_upgrade_backfills_the_context_of_stored_conversations(tmp_path, monkeypatch, stop):
    path = tmp_path / "old.db"
    with database_at_version(path, monkeypatch, stop) as db, db.atomic():
        for n, text in enumerate(TURNS, start=1):
            db.execute(
                "INSERT INTO memories (id, uid, category, content, content_hash, created_at, updated_at, session_id) "
                "VALUES (?, ?, 'conversation', ?, 'h', ?, ?, 's1')", (n, f"u{n}", text, DAY, DAY))
    with Brain.open(path, embedder="none") as brain:
        assert "Bach" in context_of(brain, 2)
        assert 2 in keyword_ids(brain, "breakfast") and 1 in keyword_ids(brain, "8 May 2023")
        brain.db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
