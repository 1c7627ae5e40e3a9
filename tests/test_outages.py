"""The embedding API down, slow, rate limited, failing or refusing the key.

Against the loopback OpenAI-compatible server (tests/embed_server.py), through the
CLI: the memory is stored anyway, search still answers by keyword, the user sees
one warning line that says what happens next, `maxmem embed` fails
cleanly while the outage lasts and backfills once the API is back.
"""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from conftest import run_cli

KEY = "sk-test-key"
CONTENT = "the spare house key is under the blue flowerpot by the door"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


run = run_cli


@pytest.fixture
def openai_env(maxmem_home, embedding_server, monkeypatch):
    maxmem_home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (maxmem_home / "config.toml").write_text(
        'embedder = "openai"\nopenai_model = "e5-test"\nembed_timeout = 20.0\nembed_max_retries = 1\n')
    monkeypatch.setenv("MAXMEM_OPENAI_BASE_URL", embedding_server.base_url)
    monkeypatch.setenv("MAXMEM_OPENAI_API_KEY", KEY)
    embedding_server.failures.clear()
    embedding_server.delay = 0.0
    yield embedding_server
    embedding_server.failures.clear()
    embedding_server.delay = 0.0


FAILURES = {
    "connection refused": "cannot be reached: Connection refused",
    "timeout": "timed out after 1 s",
    "429 rate limited": "is rate limiting (HTTP 429)",
    "500 server error": "failed with HTTP 500",
    "key refused": "refused the API key (401)",
}


@pytest.mark.parametrize("failure", list(FAILURES))
def test_outage_stores_the_memory_keeps_keyword_search_and_backfills_later(failure, openai_env, monkeypatch,
                                                                           capsys, maxmem_home):
    server = openai_env
    code, out, err = run(["remember", "warm up: the vector table and the dimension exist now"], capsys)
    assert code == 0 and err == ""

    def break_it() -> None:
        if failure == "connection refused":
            monkeypatch.setenv("MAXMEM_OPENAI_BASE_URL", f"http://127.0.0.1:{closed_port()}/v1")
        elif failure == "timeout":
            config = maxmem_home / "config.toml"
            config.write_text(config.read_text().replace("embed_timeout = 20.0", "embed_timeout = 1.0"))
            server.delay = 2.5
        elif failure.startswith("429"):
            server.failures[:] = [429] * 50
        elif failure.startswith("500"):
            server.failures[:] = [500] * 50
        else:
            monkeypatch.setenv("MAXMEM_OPENAI_API_KEY", "sk-wrong-key-0123456789abcdef")

    def repair() -> None:
        monkeypatch.setenv("MAXMEM_OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("MAXMEM_OPENAI_API_KEY", KEY)
        server.failures.clear()
        server.delay = 0.0
        config = maxmem_home / "config.toml"
        config.write_text(config.read_text().replace("embed_timeout = 1.0", "embed_timeout = 20.0"))

    break_it()
    code, out, err = run(["remember", CONTENT], capsys)
    assert code == 0 and out.startswith("remembered #2"), err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("maxmem: warning:"), err
    assert FAILURES[failure] in err
    assert "maxmem embed" in err
    assert "sk-wrong-key" not in err and KEY not in err

    code, out, err = run(["search", "flowerpot door"], capsys)
    assert code == 0 and "flowerpot" in out.splitlines()[0]
    assert "keyword" in err and "Traceback" not in err

    code, out, err = run(["embed", "--pending"], capsys)
    assert code == 1
    assert err.strip().count("\n") == 0 and err.startswith("maxmem: error:") and FAILURES[failure] in err

    code, out, err = run(["doctor"], capsys)  # a fresh wait is no alarm: the next tick embeds it
    assert "ok   pending embeddings: 1 memories waiting for a vector, the oldest stored" in out

    repair()
    code, out, err = run(["embed", "--pending", "--json"], capsys)
    assert code == 0 and '"pending": 0' in out
    code, out, err = run(["search", "--mode", "vector", "where did I hide the key to the house?"], capsys)
    assert code == 0 and "flowerpot" in out.splitlines()[0]


def test_recovery_within_the_retries_embeds_at_once(openai_env, capsys):
    code, out, err = run(["remember", "warm up"], capsys)
    openai_env.failures[:] = [429]  # one rate-limited answer, then fine: the retry succeeds
    code, out, err = run(["remember", CONTENT, "--json"], capsys)
    assert code == 0 and '"embedded_at": null' not in out and err == ""


def test_a_bad_key_in_a_real_process_is_one_line_without_the_key(openai_env, maxmem_home, tmp_path):
    import os

    env = {**os.environ, "MAXMEM_OPENAI_API_KEY": "sk-wrong-key-0123456789abcdef"}
    result = subprocess.run([sys.executable, "-m", "maxmem", "embed", "--pending"], env=env,
                            capture_output=True, text=True, timeout=60)
    # A new brain.db: nothing pending, the key is never used.
    assert result.returncode == 0
    result = subprocess.run([sys.executable, "-m", "maxmem", "remember", CONTENT], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert result.stderr.splitlines() == [
        f"maxmem: warning: embedding server {openai_env.base_url} refused the API key (401): "
        "check OPENAI_API_KEY / openai_api_key;"
        " the memory is kept and will be embedded by  maxmem embed"
    ]
    result = subprocess.run([sys.executable, "-m", "maxmem", "embed", "--pending"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"maxmem: error: embedding server {openai_env.base_url} refused the API key (401): "
        "check OPENAI_API_KEY / openai_api_key"
    ]


def test_during_an_outage_the_api_is_not_waited_on_again_and_again(openai_config, embedding_server, tmp_path):
    """After one failure, a Brain stores new memories pending and searches by keyword
    without calling the API for EMBED_PAUSE_SECONDS; `embed_pending` always tries."""
    from maxmem import Brain

    config = openai_config.with_(embed_max_retries=1)
    with Brain.open(tmp_path / "o.db", config=config) as brain:
        brain.remember("warm up")
        embedding_server.failures[:] = [500] * 50
        first = brain.remember("the first memory during the outage")
        requests = len(embedding_server.requests)
        more = [brain.remember(f"memory {i} during the outage") for i in range(5)]
        hits = brain.search("outage memory")
        assert len(embedding_server.requests) == requests, "the API was called again"
        assert all(m.embedded_at is None for m in [first, *more]) and hits
        assert len(brain.warnings) == 2  # the write's warning and the search's, once each
        embedding_server.failures.clear()
        assert brain.embed_pending().embedded == 6 and brain.pending_count() == 0
