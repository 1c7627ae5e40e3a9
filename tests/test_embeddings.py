"""The openai provider against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import numpy as np
import pytest

from maxmem import Brain, Config, EmbeddingError
from maxmem.config import load_config
from maxmem.embeddings import make_embedder


def test_openai_embedder_batches_and_matches_local_vectors(openai_config, embedding_server, local_embedder):
    embedder = make_embedder("openai", openai_config.with_(embed_batch_size=2))
    before = len(embedding_server.requests)
    texts = ["alpha one", "beta two", "gamma three", "delta four", "epsilon five"]
    vectors = embedder.embed_documents(texts)
    sizes = [len(r["input"]) for r in embedding_server.requests[before:]]
    assert sizes[-3:] == [2, 2, 1], "5 texts in batches of 2 (after one dimension probe)"
    assert vectors.shape == (5, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors, local_embedder.embed_documents(texts), atol=1e-4)


def test_brain_with_openai_provider_end_to_end(tmp_path, openai_config, embedding_server):
    with Brain.open(tmp_path / "o.db", config=openai_config) as b:
        assert b.embedder.provider == "openai"
        b.remember_many([{"content": "The router admin page is at 192.168.1.1"},
                         {"content": "Grandma's birthday is on March 3rd"}])
        hit = b.search("when is grandmother's birthday", mode="vector")[0]
        assert hit.memory.content.startswith("Grandma")
        assert b.stats()["embedder"] == "openai:e5-test:384"


def test_retries_429_and_5xx_then_succeeds(openai_config, embedding_server):
    embedder = make_embedder("openai", openai_config)
    assert embedder.dim  # probe first
    embedding_server.failures[:] = [429, 500, 503]
    before = len(embedding_server.requests)
    vectors = embedder.embed_documents(["retry me"])
    assert vectors.shape == (1, 384)
    assert len(embedding_server.requests) - before == 4


def test_bad_key_is_one_clear_line(openai_config):
    embedder = make_embedder("openai", openai_config.with_(openai_api_key="sk-wrong", openai_dimensions=384))
    with pytest.raises(EmbeddingError, match="refused the API key") as info:
        embedder.embed_documents(["x"])
    assert "\n" not in str(info.value)


def test_missing_key_and_no_endpoint_is_refused():
    with pytest.raises(EmbeddingError, match="OPENAI_API_KEY"):
        make_embedder("openai", Config())


def test_outage_keeps_the_memory_pending_then_backfills(tmp_path, openai_config, embedding_server):
    config = openai_config.with_(openai_dimensions=None, embed_max_retries=1)
    with Brain.open(tmp_path / "o.db", config=config) as b:
        b.remember("warm up so the dimension is known")
        embedding_server.failures[:] = [500] * 4
        m = b.remember("stored during an outage: the wifi password is in the drawer")
        assert m.embedded_at is None and b.pending_count() == 1
        assert any("maxmem embed" in w for w in b.warnings)
        hits = b.search("wifi drawer")
        assert hits[0].memory.id == m.id  # keyword side still answers
        assert b.warnings[-1].startswith("search fell back to keywords: ")
        assert hits.plan.note is None  # an embedder is configured: the warning says what failed
        embedding_server.failures.clear()  # the API is back
        assert b.embed_pending().embedded == 1 and b.pending_count() == 0


def test_auto_prefers_what_the_database_was_built_with(tmp_path, hash_embedder):
    config = Config(openai_api_key="sk-x")
    assert make_embedder("auto", config, recorded_provider="local").provider == "local"
    assert make_embedder("auto", config).provider == "openai"
    assert make_embedder("auto", Config()).provider == "local"
    assert make_embedder("none", config) is None


def test_config_layers(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    path.write_text('embedder = "none"\nvector_weight = 0.6\nkeyword_weight = 0.4\n'
                    '[retention]\ndaily = 45\n')
    config = load_config(env={"MAXMEM_HOME": str(tmp_path), "OPENAI_API_KEY": "sk-env"}, path=path)
    assert (config.embedder, config.vector_weight, config.openai_api_key) == ("none", 0.6, "sk-env")
    assert config.retention.daily == 45
    assert config.db_path == tmp_path / "brain.db"
    env = {"MAXMEM_HOME": str(tmp_path), "MAXMEM_EMBEDDER": "local"}
    assert load_config(env=env, path=path).embedder == "local"
    assert load_config(env=env, path=path, embedder="openai").embedder == "openai"
    assert "sk-env" not in repr(config)
    path.write_text('embedder = "magic"\n')
    from maxmem import ConfigError
    with pytest.raises(ConfigError, match="embedder must be one of"):
        load_config(env={}, path=path)
