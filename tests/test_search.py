"""Hybrid search: safe keyword queries, honest normalisation, filters before top-k."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maxmem import Brain, Config, InvalidInput
from maxmem.search import hybrid
from maxmem.search.hybrid import fts_query, scale
from maxmem.search.vectors import Quantizer, VectorIndex, hamming, nearest
from maxmem.settings import SearchSettings

NASTY = ['AND', 'OR NOT', '"unclosed', "it's", "a*b", "-x", "col:value", "NEAR(a b)",
         "(((", "^start", "emoji 🧠🔥", "  ", "", "SELECT * FROM memories; --", "\\", "'\"'",
         "a AND OR NOT b", "title:secret", "{ } [ ]", "x" * 5000]


@pytest.mark.parametrize("query", NASTY)
def test_any_text_is_a_safe_query(brain, query):
    brain.remember("AND OR NOT are words too, like emoji 🧠 and title:secret", category="daily")
    if not query.strip():
        with pytest.raises(InvalidInput, match="search query is empty"):
            brain.search(query)
    else:
        brain.search(query)  # never an FTS5 syntax error


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_fts_query_never_breaks_fts5(text):
    import apsw

    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')")
    conn.execute("INSERT INTO t VALUES ('hello world')")
    match = fts_query(text)
    if match is not None:
        list(conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,)))


def test_natural_question_finds_keyword_matches_not_an_and(tmp_path, clock):
    with Brain.open(tmp_path / "k.db", embedder="none", clock=clock) as b:
        b.remember("The grafana dashboard lives on port 3000", category="project")
        b.remember("Lunch was pasta", category="daily")
        hits = b.search("which port is the grafana dashboard running on these days?")
        assert hits and hits[0].memory.content.startswith("The grafana")


def test_keyword_scores_are_not_all_one(tmp_path, clock):
    with Brain.open(tmp_path / "k.db", embedder="none", clock=clock) as b:
        b.remember("docker docker docker compose file for the media server", category="project")
        b.remember("docker is installed", category="project")
        b.remember("the media server runs jellyfin", category="project")
        hits = b.search("docker compose media server")
        scores = [h.keyword_score for h in hits]
        assert scores[0] == 1.0 and len(set(scores)) == len(scores), scores
        assert hits[0].memory.content.startswith("docker docker")


def test_filtered_search_returns_best_k_among_matching(brain):
    # 40 daily memories that match the query strongly, 3 core ones that match weakly.
    brain.remember_many([{"content": f"kubernetes cluster upgrade step {i}", "category": "daily"}
                         for i in range(40)])
    brain.remember_many([{"content": f"kubernetes mention {i} in a core note", "category": "core"}
                         for i in range(3)])
    # (the core notes match one common word of three: min_relevance 0 keeps them whatever the default)
    hits = brain.search("kubernetes cluster upgrade", limit=3, category="core", min_relevance=0)
    assert len(hits) == 3 and all(h.memory.category == "core" for h in hits)


def test_filters_by_tag_time_importance_metadata_session(brain, clock):
    brain.remember("deploy notes alpha", tags=["ops"], importance=0.9, metadata={"env": "prod"},
                   session_id="s1")
    clock.advance(days=2)
    brain.remember("deploy notes beta", tags=["dev"], importance=0.2, metadata={"env": "dev"},
                   session_id="s2")
    q = "deploy notes"
    assert [h.memory.content for h in brain.search(q, tags=["ops"])] == ["deploy notes alpha"]
    assert [h.memory.content for h in brain.search(q, since="2026-12-01")] == ["deploy notes beta"]
    assert [h.memory.content for h in brain.search(q, until="2026-12-01")] == ["deploy notes alpha"]
    assert [h.memory.content for h in brain.search(q, min_importance=0.5)] == ["deploy notes alpha"]
    assert [h.memory.content for h in brain.search(q, metadata={"env": "dev"})] == ["deploy notes beta"]
    assert [h.memory.content for h in brain.search(q, session_id="s1")] == ["deploy notes alpha"]
    with pytest.raises(InvalidInput, match="metadata key"):
        brain.search(q, metadata={"env') OR 1=1 --": "x"})
    with pytest.raises(InvalidInput, match="unknown category"):
        brain.search(q, category="weekly")


def test_superseded_memories_are_hidden_unless_asked(brain):
    old = brain.remember("the backup runs at 2am", category="core")
    brain.remember("the backup runs at 4am", category="core")
    brain.update(old.id, status="superseded")
    assert all(h.memory.id != old.id for h in brain.search("backup runs"))
    assert any(h.memory.id == old.id for h in brain.search("backup runs", include_superseded=True))


def test_explain_gives_components_that_add_up(brain):
    brain.remember_many([{"content": f"note about topic {i} and rust programming"} for i in range(10)])
    hits = brain.search("rust programming topic 3", explain=True)
    for h in hits:
        assert h.score == pytest.approx(0.7 * (h.vector_score or 0) + 0.3 * (h.keyword_score or 0))
        assert set(h.explain) >= {"vector", "keyword", "cosine", "bm25"}


def test_modes(brain):
    brain.remember_many([{"content": f"alpha beta {i}"} for i in range(5)])
    assert all(h.keyword_score is not None for h in brain.search("alpha", mode="keyword"))
    assert brain.search("alpha", mode="vector")
    with pytest.raises(InvalidInput):
        brain.search("alpha", mode="magic")


def test_search_sees_writes_of_another_connection(tmp_path, hash_embedder, clock):
    path = tmp_path / "shared.db"
    with Brain.open(path, embedder=hash_embedder, clock=clock) as reader, \
            Brain.open(path, embedder=hash_embedder, clock=clock) as writer:
        writer.remember("first fact about zebras")
        assert reader.search("zebras", mode="vector")[0].memory.content == "first fact about zebras"
        m = writer.remember("second fact about giraffes")
        assert reader.search("giraffes", mode="vector")[0].memory.id == m.id
        writer.forget(m.id)
        assert all(h.memory.id != m.id for h in reader.search("giraffes", mode="vector"))


def test_quantizer_is_refitted_until_enough_vectors_and_codes_follow(tmp_path, hash_embedder, clock):
    from maxmem.search import vectors as vectors_mod

    with Brain.open(tmp_path / "c.db", embedder=hash_embedder, clock=clock) as b:
        b.remember("first memory")
        assert b.db.get_meta("quantizer_n") == "1"
        n = vectors_mod.CENTER_SAMPLE + 10
        b.remember_many([{"content": f"memory {i} words {i % 7} more {i % 13}"} for i in range(n)])
        assert int(b.db.get_meta("quantizer_n")) == n + 1
        b.remember_many([{"content": f"later memory {i}"} for i in range(5)])
        assert int(b.db.get_meta("quantizer_n")) == n + 1, "frozen after CENTER_SAMPLE"
        quantizer = Quantizer.from_meta(b.db.get_meta("quantizer"))
        row = b.db.one("SELECT rowid, embedding FROM memories_vec ORDER BY rowid DESC LIMIT 1")
        stored = b.db.one("SELECT bits, codes FROM vector_codes WHERE id = ?", (row["rowid"],))
        vector = np.frombuffer(row["embedding"], np.float32)
        assert stored["bits"] == quantizer.bits(vector)[0].tobytes()
        assert stored["codes"] == quantizer.codes(vector)[0].tobytes()
        hit = b.search("memory 500 words 3 more 6", mode="vector", limit=1)[0]
        assert hit.memory.content == "memory 500 words 3 more 6"


def test_vector_index_buffers_updates():
    q = Quantizer.identity(64)
    index = VectorIndex(words=1, dim=64)
    a, b, c = (np.eye(64, dtype=np.float32)[i] for i in (0, 1, 2))
    index.add([1, 2], q.bits(np.vstack([a, b])), q.codes(np.vstack([a, b])))
    index.add([2], q.bits(c), q.codes(c))  # an update keeps the newest codes
    index.remove([1])
    assert len(index) == 1
    assert index.codes.tolist() == q.codes(c).tolist()
    assert list(index.candidates(c, q, 5)) == [2]


def test_vector_index_removals_wait_for_the_fold_and_take_back_pending_appends():
    q = Quantizer.identity(64)
    index = VectorIndex(words=1, dim=64)
    a, b, c = (np.eye(64, dtype=np.float32)[i] for i in (0, 1, 2))
    index.add([1, 2], q.bits(np.vstack([a, b])), q.codes(np.vstack([a, b])))
    assert len(index) == 2
    folded = index.codes
    index.remove([1])  # an update: the old row goes at the next fold ...
    index.add([1], q.bits(c), q.codes(c))  # ... and the new one comes
    index.add([3], q.bits(a), q.codes(a))
    index.remove([3])  # a pending append taken back
    assert index.codes is folded  # nothing was copied on the way
    assert len(index) == 2 and index.ids.tolist() == [1, 2]
    assert index.codes[0].tolist() == q.codes(c)[0].tolist()
    assert list(index.candidates(c, q, 1)) == [1]


def test_above_scores_every_row_as_a_plain_computation_does(monkeypatch):
    from maxmem.search import vectors as vectors_mod

    monkeypatch.setattr(vectors_mod, "ABOVE_ROWS", 700)  # blocks of rows and of queries cross
    monkeypatch.setattr(vectors_mod, "ABOVE_QUERIES", 16)
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(3000, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    quantizer = Quantizer.fit(vectors)
    index = VectorIndex(words=1, dim=64)
    index.add(np.arange(1, 3001), *quantizer.encode(vectors))
    queries = vectors[:40] + 0.3 * rng.normal(size=(40, 64)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    found = index.above(queries, quantizer, 0.3, 4)
    codes = index.codes.astype(np.float64) * quantizer.scale + quantizer.center
    for query, got in zip(queries, found):
        scores = codes @ query
        wanted = [int(i) + 1 for i in np.argsort(-scores)[:4] if scores[i] >= 0.3]
        assert sorted(got, key=lambda i: -got[i]) == wanted
        assert all(abs(got[i] - scores[i - 1]) < 1e-4 for i in got)
    assert found[0] and next(iter(sorted(found[0], key=lambda i: -found[0][i]))) == 1
    narrowed = index.restricted(np.arange(1, 3001, 2))
    assert set().union(*narrowed.above(queries, quantizer, 0.3, 4)) <= set(range(1, 3001, 2))


def test_candidate_stages_match_a_plain_computation():
    """Word-major Hamming, the histogram cut and the blocked int8 estimate agree with the
    obvious numpy; sizes cross the blocks and ties sit at the cut."""
    rng = np.random.default_rng(3)
    dim = 200
    vectors = rng.normal(size=(3000, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    quantizer = Quantizer.fit(vectors)
    bits, codes = quantizer.encode(vectors)
    assert np.array_equal(bits, quantizer.bits(vectors)) and np.array_equal(codes, quantizer.codes(vectors))
    index = VectorIndex(words=bits.shape[1], dim=dim)
    index.add(np.arange(1, 3001), bits, codes)
    query = vectors[7]
    query_bits = quantizer.bits(query)[0]
    plain = np.array([sum(bin(int(w ^ q)).count("1") for w, q in zip(row, query_bits)) for row in bits])
    assert len(index) == 3000 and np.array_equal(hamming(index.bits, query_bits), plain)
    for count in (1, 37, 500, 2999):
        chosen = nearest(plain, count)
        assert len(chosen) == len(set(chosen.tolist())) == count
        assert plain[chosen].max() <= np.sort(plain)[count - 1]
    rows = rng.permutation(3000)[:2500]  # more rows than one block of 200-d float32
    estimate = index._approx(rows, query, quantizer)
    exact = (codes[rows].astype(np.float64) * quantizer.scale) @ query + float(query @ quantizer.center)
    assert np.allclose(estimate, exact, atol=1e-4)
    assert np.max(np.abs(estimate - vectors[rows] @ query)) < 0.02
    assert list(index.candidates(query, quantizer, 1)) == [8]


def test_keyword_query_on_a_worker_thread_ranks_the_same(brain, monkeypatch):
    from maxmem.search import hybrid as search_mod

    brain.remember_many([{"content": f"note {i} about {w} and the garden"} for i, w in
                         enumerate(["tomatoes", "basil", "the boiler", "taxes", "the NAS"] * 8)])
    inline = [(h.memory.id, h.score) for h in brain.search("tomatoes in the garden", track=False)]
    filtered = [h.memory.id for h in brain.search("garden", category="daily", track=False)]
    monkeypatch.setattr(search_mod, "KEYWORD_THREAD_FROM", 0)
    assert [(h.memory.id, h.score) for h in brain.search("tomatoes in the garden", track=False)] == inline
    assert [h.memory.id for h in brain.search("garden", category="daily", track=False)] == filtered
    brain.db.execute("DROP TABLE memories_fts")  # a failure in the thread reaches the caller
    with pytest.raises(Exception, match="memories_fts"):
        brain.search("tomatoes", track=False)


def test_reads_on_the_spare_connection_change_no_result(brain, monkeypatch):
    """From KEYWORD_THREAD_FROM a search reads what needs no keyword result (the default
    filter, which vector candidates are questions, the head's stored vectors, the query's
    term counts) on a second connection while the keyword query runs: hits, scores,
    relevance and the explain rows stay those of the inline search."""
    from maxmem.search import hybrid as search_mod

    words = ["tomatoes", "basil", "the boiler", "taxes", "the NAS"]
    brain.remember_many([{"content": f"note {i} about {w} and the garden"} for i, w in enumerate(words * 8)]
                        + [{"content": f"what about {w} in the garden?"} for w in words])
    brain.supersede(3, 4)
    brain.forget(5)
    brain.update(6, content="the garden boiler was replaced")
    queries = ["tomatoes in the garden", "garden boiler?", "taxes", "basil and tomatoes in the garden"]

    def results():
        return [[(h.memory.id, h.score, h.relevance, h.explain) for h in
                 brain.search(q, track=False, explain=True, min_relevance=0, mode=mode)]
                for q in queries for mode in ("hybrid", "vector")]

    inline = results()
    monkeypatch.setattr(search_mod, "KEYWORD_THREAD_FROM", 0)
    read_on = []  # the connections the head's stored vectors were read on
    real = search_mod.stored_vectors
    monkeypatch.setattr(search_mod, "stored_vectors", lambda db, ids: read_on.append(db) or real(db, ids))
    assert results() == inline
    assert read_on and all(db is not brain.db for db in read_on)  # the spare was used
    with brain.db.atomic():  # a transaction open here: the spare would not see its writes
        brain.remember("the zucchini glut of the garden")
        assert brain.search("zucchini", track=False)[0].memory.content == "the zucchini glut of the garden"


def test_a_memory_database_has_no_reader():
    from maxmem.store.db import Database

    db = Database(":memory:")
    assert db.reader() is None
    db.close()


def test_vector_table_chunks_stay_small_at_any_dimension(tmp_path, hash_embedder):
    from maxmem.search.vectors import vector_table_sql

    assert "chunk_size=128" in vector_table_sql(384) and "chunk_size=32" in vector_table_sql(1536)
    assert "chunk_size=256" in vector_table_sql(64) and "chunk_size=16" in vector_table_sql(4096)
    with Brain.open(tmp_path / "v.db", embedder=hash_embedder) as b:
        b.remember("one memory with a vector")
        ddl = b.db.scalar("SELECT sql FROM sqlite_master WHERE name = 'memories_vec'")
        assert ddl == vector_table_sql(hash_embedder.dim)


def test_scale():
    assert scale({}) == {}
    assert scale({1: 5.0}) == {1: 1.0}
    assert scale({1: 1.0, 2: 3.0}) == {1: 0.0, 2: 1.0}


def test_real_local_embedder_finds_a_paraphrase(tmp_path, local_embedder, clock):
    with Brain.open(tmp_path / "e5.db", embedder=local_embedder, clock=clock) as b:
        b.remember_many([
            {"content": "We moved the family photos to the Synology NAS in the basement", "category": "core"},
            {"content": "Dinner reservation at 7pm on Friday", "category": "daily"},
            {"content": "The kids' dentist appointment is next Tuesday", "category": "daily"},
        ])
        hits = b.search("where are our pictures stored?", mode="vector")
        assert hits[0].memory.content.startswith("We moved the family photos")


def test_the_query_is_embedded_without_its_question_mark(brain, hash_embedder):
    from maxmem.search.hybrid import vector_query

    assert vector_query("what do you play? ") == "what do you play"
    assert vector_query("¿qué tocas？") == "¿qué tocas" and vector_query("??") == "??"


def test_a_memory_that_is_a_question_pays_the_asking_penalty(brain):
    from maxmem.search.hybrid import ASKING_PENALTY

    asks = brain.remember("Do you play the clarinet?", category="conversation")
    tells = brain.remember("I play the clarinet on Sundays", category="conversation")
    hits = {h.memory.id: h for h in brain.search("clarinet", explain=True, track=False)}
    for memory, penalty in ((asks, ASKING_PENALTY), (tells, 0.0)):
        h = hits[memory.id]
        assert h.score == pytest.approx(0.7 * h.vector_score + 0.3 * h.keyword_score - penalty)
        assert h.explain["penalty"] == penalty
    # the ablation modes rank by one side only
    keyword = brain.search("clarinet", mode="keyword", explain=True, track=False)
    assert all(h.score == pytest.approx(h.keyword_score) for h in keyword)


def test_a_memory_without_a_vector_is_ranked_by_its_keyword_score_in_hybrid_search(brain, hash_embedder):
    """What capture stored and embed_pending has not reached yet is found by hybrid
    search, ranked by its keyword score, among memories that do have vectors."""
    for i in range(12):
        brain.remember(f"the boiler service was booked for week {i} with the heating firm", category="daily")
    brain.remember("a note about the garden shed roof", category="daily")
    (late,) = brain.remember_many([{"content": "the boiler pressure valve is the grey one behind the heating pump",
                                    "category": "conversation"}], embed=False)
    assert late.embedded_at is None and brain.pending_count() == 1
    hits = brain.search("boiler pressure valve heating pump", mode="hybrid", explain=True)
    assert hits[0].memory.id == late.id
    assert hits[0].vector_score is None and hits[0].keyword_score == 1.0  # its keyword score stands for both
    assert brain.search("grey pressure valve", mode="vector", min_relevance=0) and late.id not in {
        h.memory.id for h in brain.search("grey pressure valve", mode="vector", min_relevance=0)}
    assert brain.embed_pending().pending == 0
    assert late.id in {h.memory.id for h in brain.search("grey pressure valve", mode="vector", min_relevance=0)}


def test_the_limit_changes_how_many_hits_are_listed_never_which_or_whether(brain):
    """Whether a search finds something relevant, and which hits it lists, are decided
    on a ranking of fixed depth: a smaller limit lists a prefix of a larger one's."""
    for i in range(9):
        brain.remember(f"note {i} about the allotment: sowed beans in row {i}", category="daily")
    for query in ("write a haiku about autumn", "beans sowed in row 4", "allotment"):
        for threshold in (None, 0.0, 0.3):
            lists = [[h.memory.id for h in brain.search(query, limit=n, min_relevance=threshold, track=False)]
                     for n in (1, 2, 3, 10, 50)]
            longest = lists[-1]
            for n, listed in zip((1, 2, 3, 10, 50), lists):
                assert listed == longest[:n], (query, threshold, n)
            kept = brain.search(query, limit=50, min_relevance=threshold, track=False)
            floor = brain.config.min_relevance if threshold is None else threshold
            assert all(h.relevance is None or h.relevance >= floor for h in kept)  # nothing below the gate


def test_rank_scores_stay_within_zero_and_one_with_the_question_penalty(brain):
    brain.remember("I play the clarinet on Sundays", category="conversation")
    brain.remember("What's the weather like?", category="conversation")  # a question, far from the query
    brain.remember("the clarinet reeds are in the drawer", category="daily")
    for mode in ("hybrid", "keyword", "vector"):
        hits = brain.search("clarinet", mode=mode, min_relevance=0, track=False, limit=10)
        assert hits and all(0.0 <= h.score <= 1.0 for h in hits)


def test_explain_weights_are_those_the_search_fused_with(tmp_path, clock):
    """Without an embedder the search ranks by keywords alone, and --explain says so."""
    with Brain.open(tmp_path / "kw.db", embedder="none", clock=clock) as b:
        b.remember("the boiler pressure valve is grey", category="daily")
        (hit,) = b.search("boiler valve", explain=True, min_relevance=0)
        assert hit.explain["weights"] == [0.0, 1.0]
        assert hit.score == pytest.approx(hit.explain["weights"][1] * hit.keyword_score)


def test_searching_an_empty_a_one_memory_and_an_all_pending_brain(tmp_path, local_embedder, clock):
    """Clear answers, no crash: nothing in an empty brain; the one memory when relevant;
    a brain whose vectors are all pending searches by keyword and says so."""
    with Brain.open(tmp_path / "edge.db", embedder=local_embedder, clock=clock) as b:
        assert list(b.search("where are the spare keys?")) == []
        b.remember("The spare house keys are in the fake rock by the back door.", category="core")
        assert [h.memory.id for h in b.search("where are the spare house keys?")] == [1]
        assert list(b.search("fix the import order in utils.py")) == []
    with Brain.open(tmp_path / "pending.db", embedder=local_embedder, clock=clock) as b:
        b.remember_many([{"content": "The spare house keys are in the fake rock by the back door.",
                          "category": "core"}], embed=False)
        hits = b.search("spare house keys")
        assert [h.memory.id for h in hits] == [1] and "keyword-only" in (hits.plan.note or "")


def test_the_candidate_pool_of_the_default_settings_is_what_it_was():
    """[search] candidates = 50 (the default) gives each side the pool it always had."""
    for limit in range(1, 300):
        assert hybrid.pool_size(50, limit) == max(50, 5 * limit)


def test_search_candidates_bounds_what_each_side_brings(tmp_path, hash_embedder, clock):
    items = [{"content": f"the allotment row {i} has beans and onions"} for i in range(40)]
    pools = {}
    for candidates in (10, 50):
        config = Config().with_(search=SearchSettings(candidates=candidates))
        with Brain.open(tmp_path / f"pool{candidates}.db", embedder=hash_embedder, clock=clock,
                        config=config) as b:
            b.remember_many(items, near=False)
            pools[candidates] = b.search("allotment beans", min_relevance=0, track=False).plan.keyword_candidates
    assert pools == {10: 10, 50: 40}


def dated_brain(path: Path, embedder, clock, config: Config) -> Brain:
    brain = Brain.open(path, embedder=embedder, clock=clock, config=config)
    brain.remember_many([
        {"content": "the boiler pressure valve is grey and the boiler pressure is low",
         "created_at": "2026-01-01T10:00:00Z"},
        {"content": "boiler pressure checked", "created_at": "2026-01-31T10:00:00Z"},
        {"content": "the boiler was fine", "created_at": "2026-03-02T10:00:00Z"},
    ], near=False)
    return brain


def test_recency_is_off_by_default_and_the_ranking_unchanged(tmp_path, hash_embedder, clock):
    with dated_brain(tmp_path / "a.db", hash_embedder, clock, Config()) as plain, \
            dated_brain(tmp_path / "b.db", hash_embedder, clock,
                        Config().with_(search=SearchSettings(recency_weight=0.0, recency_half_life=1.0))) as off:
        for query in ("boiler pressure", "grey valve", "boiler"):
            a = plain.search(query, min_relevance=0, explain=True, track=False)
            b = off.search(query, min_relevance=0, explain=True, track=False)
            assert [(h.memory.id, h.score) for h in a] == [(h.memory.id, h.score) for h in b]
            assert all("recency" not in h.explain for h in a)


def test_recency_weight_puts_newer_memories_first_halving_every_half_life(tmp_path, hash_embedder, clock):
    config = Config().with_(search=SearchSettings(recency_weight=1.0, recency_half_life=30.0))
    with dated_brain(tmp_path / "r.db", hash_embedder, clock, config) as brain:
        hits = brain.search("boiler pressure", min_relevance=0, explain=True, track=False)
        assert [h.memory.id for h in hits] == [3, 2, 1]  # the score is recency alone: newest first
        assert [h.explain["recency"] for h in hits] == [1.0, 0.5, 0.25]
    config = Config().with_(search=SearchSettings(recency_weight=0.2, recency_half_life=30.0))
    with dated_brain(tmp_path / "s.db", hash_embedder, clock, config) as brain:
        for h in brain.search("boiler pressure", min_relevance=0, explain=True, track=False):
            fused = h.explain["weights"][0] * (h.vector_score or 0) + h.explain["weights"][1] * (h.keyword_score or 0)
            assert h.score == pytest.approx(0.8 * (fused - h.explain["penalty"]) + 0.2 * h.explain["recency"],
                                            abs=1e-3)
