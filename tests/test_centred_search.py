"""Vector search ranks by the cosine around the stored vectors' mean (the quantizer's centre)."""

from __future__ import annotations

import numpy as np
import pytest

from maxmem.search import hybrid
from maxmem.search.vectors import Quantizer, VectorIndex, centred_cosine, exact_similarities


def cone(n: int, dim: int = 64, seed: int = 0) -> np.ndarray:
    """Unit vectors that all lean one way, as an embedding model's do."""
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, dim)).astype(np.float32) + 2.0
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_centred_cosine_is_the_cosine_of_the_offsets_from_the_centre():
    vectors = cone(50)
    center, query = vectors[:40].mean(axis=0), cone(1, seed=1)[0]
    got = centred_cosine(vectors @ query, vectors @ center, query, center)
    offsets, q = vectors - center, query - center
    want = offsets @ q / (np.linalg.norm(offsets, axis=1) * np.linalg.norm(q))
    assert got == pytest.approx(want, abs=1e-5)
    zero = np.zeros_like(center)
    assert centred_cosine(vectors @ query, vectors @ zero, query, zero) == pytest.approx(vectors @ query)


def test_int8_estimates_follow_the_exact_centred_cosine():
    vectors, query = cone(300), cone(1, seed=2)[0]
    quantizer = Quantizer.fit(vectors)
    index = VectorIndex(words=1, dim=64)
    index.add(list(range(300)), quantizer.bits(vectors), quantizer.codes(vectors))
    offsets, q = vectors - quantizer.center, query - quantizer.center
    exact = offsets @ q / (np.linalg.norm(offsets, axis=1) * np.linalg.norm(q))
    estimate = index.approximate(list(range(300)), query, quantizer, centred=True)
    assert np.array([estimate[i] for i in range(300)]) == pytest.approx(exact, abs=0.02)
    best = index.candidates(query, quantizer, 10, centred=True)
    assert len(set(best) & set(np.argsort(-exact)[:10].tolist())) >= 8
    plain = index.approximate([0, 1], query, quantizer)  # the default stays the plain cosine
    assert [plain[0], plain[1]] == pytest.approx((vectors[:2] @ query).tolist(), abs=0.02)


def test_search_scores_are_centred_cosines_of_the_stored_vectors(brain):
    brain.remember_many([{"content": f"note {i} about rust and {w}"} for i, w in
                         enumerate(["borrow checker", "cargo builds", "lifetimes", "async", "macros"] * 3)])
    hits = brain.search("rust lifetimes", mode="vector", explain=True, limit=20)
    center = Quantizer.from_meta(brain.db.get_meta("quantizer")).center
    query = brain.embedder.embed_query("rust lifetimes")
    want = exact_similarities(brain.db, [h.memory.id for h in hits], query, center)
    assert [h.explain["cosine"] for h in hits] == pytest.approx([round(want[h.memory.id], 4) for h in hits])
    assert hits[0].memory.content.endswith("lifetimes")
    assert [h.explain["cosine"] for h in hits] == sorted((h.explain["cosine"] for h in hits), reverse=True)


def test_int8_estimates_follow_the_cosine_around_another_point():
    vectors, query = cone(300), cone(1, seed=3)[0]
    quantizer = Quantizer.fit(vectors)
    index = VectorIndex(words=1, dim=64)
    index.add(list(range(300)), quantizer.bits(vectors), quantizer.codes(vectors))
    around = vectors[:30].mean(axis=0)
    offsets, q = vectors - around, query - around
    exact = offsets @ q / (np.linalg.norm(offsets, axis=1) * np.linalg.norm(q))
    estimate = index.approximate(list(range(300)), query, quantizer, centred=True, around=around)
    assert np.array([estimate[i] for i in range(300)]) == pytest.approx(exact, abs=0.02)
    global_centre = index.approximate(list(range(300)), query, quantizer, centred=True)
    assert max(abs(estimate[i] - global_centre[i]) for i in range(300)) > 0.05


def test_the_neighbourhood_mean_is_the_mean_of_the_nearest_memories():
    vectors, query = cone(300), cone(1, seed=4)[0]
    quantizer = Quantizer.fit(vectors)
    index = VectorIndex(words=1, dim=64)
    index.add(list(range(300)), quantizer.bits(vectors), quantizer.codes(vectors))
    mean = index.neighbourhood_mean(query, quantizer, 40)
    assert mean is not None
    want = vectors[np.argsort(-(vectors @ query))[:40]].mean(axis=0)
    assert float(np.linalg.norm(mean - want)) < 0.25 * float(np.linalg.norm(want - vectors.mean(axis=0))) + 0.01
    # A search takes it only in a brain of more memories than the neighbourhood holds.
    assert hybrid.neighbourhood_centred("서버 백업", lambda: hybrid.NEIGHBOURHOOD + 1)
    assert not hybrid.neighbourhood_centred("서버 백업", lambda: hybrid.NEIGHBOURHOOD)
    assert not hybrid.neighbourhood_centred("server backup", lambda: hybrid.NEIGHBOURHOOD + 1)


def test_a_question_in_hangul_is_ranked_around_its_neighbourhood(brain):
    brain.remember_many([{"content": f"메모 {i}: 서버 {w} 작업"} for i, w in
                         enumerate(["백업", "재시작", "업데이트", "점검", "이전"] * 25)]
                        + [{"content": f"note {i} about rust and {w}"} for i, w in
                           enumerate(["borrow checker", "cargo builds", "lifetimes", "async", "macros"] * 10)])
    quantizer = Quantizer.from_meta(brain.db.get_meta("quantizer"))
    index = brain.vectors.index()
    assert index is not None and len(index) > hybrid.NEIGHBOURHOOD
    for question, hangul in (("서버 백업은 언제 해?", True), ("rust lifetimes", False)):
        assert hybrid.around_neighbourhood(question) is hangul
        hits = brain.search(question, mode="vector", explain=True, limit=10)
        vector = brain.embedder.embed_query(question)
        centre = index.neighbourhood_mean(vector, quantizer, hybrid.NEIGHBOURHOOD) if hangul else quantizer.center
        want = exact_similarities(brain.db, [h.memory.id for h in hits], vector, centre)
        assert [h.explain["cosine"] for h in hits] == pytest.approx([round(want[h.memory.id], 4) for h in hits])
    assert not hybrid.around_neighbourhood("サーバーのバックアップはいつ？")
