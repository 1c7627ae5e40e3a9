"""Relevance: evidence read from the real keyword index, and a calibrated scale."""

from __future__ import annotations

import math

import pytest

from maxmem import relevance as rel

NOTES = [
    "We deploy the web app with Watchtower on the atlas server",
    "Ada adopted a grey cat called Pixel",
    "The atlas server has 64 GB of memory",
    "Lunch with Ben on Friday at the noodle bar",
]


@pytest.fixture
def filled(brain):
    ids = [brain.remember(text, category="daily").id for text in NOTES]
    return brain, ids


def test_idf_is_bm25s():
    assert rel.idf(100, 0) == pytest.approx(math.log(1 + 100.5 / 0.5))
    assert rel.idf(100, 100) < rel.idf(100, 10) < rel.idf(100, 1)


def test_query_terms_weigh_rare_words_and_count_unknown_ones(filled):
    brain, _ = filled
    terms = rel.query_terms(brain.db, "How do we deploy to atlas with kubernetes?")
    assert set(terms.weights) == {"deploy", "atlas", "kubernetes"}
    # "atlas" is in two memories, "deploy" in one, "kubernetes" in none
    assert terms.weights["kubernetes"] > terms.weights["deploy"] > terms.weights["atlas"]
    total = sum(terms.weights.values())
    assert terms.unknown == pytest.approx(terms.weights["kubernetes"] / total)
    assert terms.cover(["deploy", "atlas"]) == pytest.approx(1 - terms.unknown)
    assert rel.query_terms(brain.db, "deploy atlas").unknown == 0.0


def test_matched_terms_read_the_index_with_its_stemmer(filled):
    brain, ids = filled
    found = rel.matched_terms(brain.db, ["deploying", "atlas", "cat"], ids)
    assert found[ids[0]] == {"deploying", "atlas"}  # porter: deploying ~ deploy
    assert found[ids[1]] == {"cat"} and found[ids[2]] == {"atlas"} and found[ids[3]] == set()
    assert rel.matched_terms(brain.db, ["atlas"], []) == {}


def test_evidence_of_each_hit(filled):
    brain, ids = filled
    found = rel.evidence(brain.db, "deploy on atlas", {ids[0]: 0.4, ids[3]: None})
    assert found[ids[0]] == rel.Evidence(0.4, pytest.approx(1.0), 0.0)
    assert found[ids[3]].cosine is None and found[ids[3]].cover == 0.0


def test_relevance_is_a_probability_that_grows_with_the_evidence():
    weak, strong = rel.Evidence(0.1, 0.2, 0.0), rel.Evidence(0.5, 0.9, 0.0)
    assert 0.0 <= rel.relevance(weak) < rel.relevance(strong) <= 1.0
    unknown = rel.Evidence(0.1, 0.2, 0.7)
    assert rel.relevance(unknown) < rel.relevance(weak)
    # without a cosine the keyword evidence alone decides, on the same scale
    assert rel.relevance(rel.Evidence(None, 0.2, 0.7)) < rel.relevance(rel.Evidence(None, 0.9, 0.0))
    assert 0.0 < rel.relevance(rel.Evidence(5.0, 1.0, 0.0)) < 1.0  # a cosine out of range is clipped
