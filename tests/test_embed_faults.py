"""A hanging, rate-limiting or dead embedding server costs one deadline, not minutes.

Against the loopback OpenAI-compatible server (tests/embed_server.py) in its hang and
429 + Retry-After modes, through OpenAIEmbedder and through Brain.
"""

from __future__ import annotations

import itertools
import time

import pytest

from maxmem import Brain, Config
from maxmem.embeddings import Breaker, EmbeddingUnavailable, OpenAIEmbedder, for_batch
from maxmem.errors import ConfigError, EmbeddingError


def embedder(server, **options) -> OpenAIEmbedder:
    settings = {"model": "e5-test", "api_key": server.api_key, "base_url": server.base_url,
                "dimensions": None, "max_retries": 4, "deadline": 2.0, "pause": 60.0,
                "breaker": Breaker(options.pop("pause", 60.0)), **options}
    made = OpenAIEmbedder(**settings)
    made._dim = 384  # known, as Brain knows it from brain.db: no dimension probe
    return made


@pytest.fixture
def server(embedding_server):
    embedding_server.reset()
    yield embedding_server
    embedding_server.reset()


def test_twenty_calls_to_a_hanging_server_cost_one_deadline(server):
    e = embedder(server, deadline=2.0)
    server.hang = True
    before = len(server.requests)
    messages = []
    for i in range(20):
        with pytest.raises(EmbeddingUnavailable) as caught:
            e.embed_documents([f"memory {i}"])
        messages.append(str(caught.value))
    assert len(server.requests) - before == 1  # the breaker kept the other 19 off the server
    assert messages[0] == f"embedding server {server.base_url} timed out after 2 s"
    assert messages[1].startswith(messages[0] + " ") and "not asked again for" in messages[1]
    assert all("\n" not in m for m in messages)


def test_the_deadline_covers_retries(server):
    e = embedder(server, deadline=1.5, max_retries=10)
    server.failures[:] = [500] * 100
    with pytest.raises(EmbeddingUnavailable, match=r"failed with HTTP 500 \(\d+ attempts in [\d.]+ s\)$"):
        e.embed_query("anything")
    assert len(server.failures) > 100 - 11  # the deadline stopped the retries before max_retries did


def test_a_request_waits_no_longer_than_the_call_has_left(server):
    e = embedder(server, deadline=1.0, timeout=30.0)
    server.delay = 3.0
    with pytest.raises(EmbeddingUnavailable, match="timed out after 1 s"):  # not after the request's 30 s
        e.embed_query("slow")


@pytest.mark.slow
def test_retry_after_is_honoured_across_retries_and_calls(server):
    e = embedder(server, deadline=7.0)
    server.retry_after = 2
    server.failures[:] = [429] * 6
    first = len(server.arrivals)
    with pytest.raises(EmbeddingUnavailable) as caught:
        e.embed_documents(["rate limited"])
    assert str(caught.value).startswith(f"embedding server {server.base_url} is rate limiting "
                                        "(HTTP 429, Retry-After 2 s) (4 attempts in 6")
    # an interactive call now fails at once, without a request; a batch call waits its turn
    requests = len(server.arrivals)
    with pytest.raises(EmbeddingUnavailable, match="not asked again"):
        e.embed_query("at once")
    assert len(server.arrivals) == requests
    vectors = for_batch(e).embed_documents(["after the wait"])  # two more 429s, then an answer
    assert vectors.shape == (1, 384)
    arrivals = server.arrivals[first:]
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert len(arrivals) == 7 and min(gaps) >= 2.0, gaps
    e.embed_query("the breaker closed on that success")


def test_a_retry_after_longer_than_the_deadline_fails_at_once(server):
    e = embedder(server, deadline=3.0, batch_deadline=3.0)
    server.retry_after = 30
    server.failures[:] = [429] * 3
    with pytest.raises(EmbeddingUnavailable, match=r"Retry-After 30 s\)$"):
        e.embed_query("x")
    assert len(server.failures) == 2  # one request, no wait for a second
    with pytest.raises(EmbeddingUnavailable, match=r"asks to wait (29|30) s more \(Retry-After\), longer than "
                                                   r"this call may take \(3 s\)"):
        for_batch(e).embed_query("x")
    assert len(server.failures) == 2  # no request went out


def test_the_breaker_reopens_to_a_call_after_its_pause(server):
    e = embedder(server, pause=0.5, max_retries=0)
    server.failures[:] = [500]
    with pytest.raises(EmbeddingUnavailable):
        e.embed_query("fails")
    with pytest.raises(EmbeddingUnavailable, match="not asked again for 0.[345]"):
        e.embed_query("refused at once")
    time.sleep(0.6)
    assert e.embed_query("the server is back").shape == (384,)


def test_a_refused_key_does_not_open_the_breaker(server):
    e = embedder(server, api_key="sk-wrong")
    for _ in range(2):
        with pytest.raises(EmbeddingError, match=r"refused the API key \(401\)") as caught:
            e.embed_query("x")
        assert not isinstance(caught.value, EmbeddingUnavailable)


def test_twenty_adds_against_a_hanging_server_in_one_process(server, tmp_path):
    config = Config(embedder="openai", openai_api_key=server.api_key, openai_base_url=server.base_url,
                    openai_model="e5-test", embed_deadline=2.0)
    with Brain.open(tmp_path / "o.db", config=config) as brain:
        brain.remember("warm up: the dimension is recorded")
        server.hang = True
        before = len(server.requests)
        stored = [brain.remember(f"note {i} about the quince tree") for i in range(20)]
        assert len(server.requests) - before == 1  # the breaker kept the other 19 off the server
        assert all(m.embedded_at is None for m in stored)
        found = {h.memory.id for h in brain.search("quince tree", mode="keyword", limit=50)}
        assert {m.id for m in stored} <= found
        assert any("timed out after 2 s" in w for w in brain.warnings)


@pytest.mark.parametrize("name", ["embed_deadline", "embed_batch_deadline", "embed_timeout"])
def test_deadlines_must_be_positive(name, tmp_path):
    from maxmem.config import load_config

    path = tmp_path / "config.toml"
    for bad in ("0", "-1", "nan"):
        path.write_text(f"{name} = {bad}\n")
        with pytest.raises(ConfigError, match=name):
            load_config(env={}, path=path)


class PoisonedModel:
    """The server's model, but a text holding "poison" gets a vector of NaN (an endpoint
    broken, or hostile: JSON's NaN parses)."""

    def __init__(self, model) -> None:
        self.model = model

    def passage(self, texts):
        import numpy as np

        vectors = np.array(self.model.passage(texts), dtype=np.float32).reshape(len(texts), -1)
        for row, text in enumerate(texts):
            if "poison" in text:
                vectors[row] = np.nan
        return vectors


def test_a_vector_of_nan_from_the_endpoint_is_not_stored(server, tmp_path, monkeypatch):
    """Stored, one NaN vector made every score of every later search NaN."""
    import math

    monkeypatch.setattr(server, "model", PoisonedModel(server.model))
    config = Config(embedder="openai", openai_api_key=server.api_key, openai_base_url=server.base_url,
                    openai_model="e5-test", embed_deadline=5.0, embed_pause=0.01)
    with Brain.open(tmp_path / "o.db", config=config) as brain:
        kept = brain.remember("the quince tree is pruned in February")
        poisoned = brain.remember("poison: the quince tree needs water")
        assert kept.embedded_at is not None and poisoned.embedded_at is None
        assert any("NaN or infinity" in w for w in brain.warnings), brain.warnings
        time.sleep(0.05)  # past the breaker's pause: the query is embedded
        hits = brain.search("quince tree")
        assert {h.memory.id for h in hits} == {kept.id, poisoned.id}
        assert all(math.isfinite(h.score) for h in hits), [h.score for h in hits]
