"""The MCP server end to end: the SDK's own client spawns `python -m maxmem mcp` over stdio."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

TOOLS = {"search", "remember", "get", "forget", "commit", "context", "query"}


def server_params(db: Path, home: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")}
    env["MAXMEM_HOME"] = str(home)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "maxmem", "--db", str(db), "--embedder", "none", "mcp"],
                                 env=env)


async def session_run(db: Path, home: Path, steps) -> Any:
    async with stdio_client(server_params(db, home)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await steps(session)


def call(session, name: str, **arguments):
    return session.call_tool(name, arguments)


def payload(result) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data["result"] if set(data) == {"result"} else data
    return result.content[0].text


def test_tools_over_stdio(tmp_path, maxmem_home):
    db = tmp_path / "brain.db"

    async def steps(session):
        listed = await session.list_tools()
        schemas = {t.name: t.input_schema for t in listed.tools}
        assert set(schemas) >= TOOLS
        assert schemas["remember"]["required"] == ["content"]
        assert schemas["remember"]["properties"]["importance"]["maximum"] == 1
        assert set(schemas["remember"]["properties"]["category"]["anyOf"][0]["enum"]
                   if "anyOf" in schemas["remember"]["properties"]["category"]
                   else schemas["remember"]["properties"]["category"]["enum"]) == {
            "core", "daily", "conversation", "project"}

        stored = payload(await call(session, "remember", content="The user prefers dark mode",
                                    category="core", kind="preference", tags=["ui"], importance=0.8))
        assert stored["id"] == 1 and stored["tags"] == ["ui"]
        payload(await call(session, "remember", content="Deployed the billing service on Friday",
                           category="daily", kind="milestone"))

        hits = payload(await call(session, "search", query="dark mode preference"))["hits"]
        assert hits[0]["content"] == "The user prefers dark mode" and hits[0]["score"] > 0
        filtered = payload(await call(session, "search", query="billing", category="core"))["hits"]
        assert filtered == []

        got = payload(await call(session, "get", id=stored["uid"]))
        assert got["id"] == 1 and got["importance"] == 0.8
        assert payload(await call(session, "get", id=1))["uid"] == stored["uid"]

        brief = payload(await call(session, "context", budget_tokens=500))
        assert brief.startswith("# Memory brief") and "dark mode" in brief

        answer = payload(await call(session, "query", question="preferences about dark mode"))
        assert answer["interpretation"] == 'kind preference; text "dark mode"'
        assert [r["id"] for r in answer["results"]] == [1]

        committed = payload(await call(session, "commit", trigger="decision",
                                       content="We decided to keep one brain.db per agent.",
                                       tags=["storage"]))
        assert (committed["category"], committed["kind"], committed["action"]) == (
            "core", "decision", "added")
        again = payload(await call(session, "commit", trigger="decision",
                                   content="We decided to keep one brain.db per agent."))
        assert again["id"] == committed["id"] and again["action"] != "added"
        bad = await call(session, "commit", trigger="gossip", content="x y z")
        assert bad.is_error

        gone = payload(await call(session, "forget", id="1"))
        assert gone == {"forgotten": 1, "uid": stored["uid"]}
        return True

    assert asyncio.run(session_run(db, maxmem_home, steps))


def test_errors_are_tool_errors_not_crashes(tmp_path, maxmem_home):
    db = tmp_path / "brain.db"

    async def steps(session):
        missing = await call(session, "get", id="999")
        assert missing.is_error and "no memory '999'" in missing.content[0].text
        empty = await call(session, "remember", content="   ")
        assert empty.is_error and "content is empty" in empty.content[0].text
        schema = await call(session, "remember", content="x", importance=5)
        assert schema.is_error and "importance" in schema.content[0].text
        vague = await call(session, "query", question="what did I do a while ago")
        assert vague.is_error and "too vague" in vague.content[0].text
        unknown = await call(session, "remember", content="x", category="nowhere")
        assert unknown.is_error
        # the server is still serving after all of that
        ok = payload(await call(session, "remember", content="still alive"))
        return ok["id"]

    assert asyncio.run(session_run(db, maxmem_home, steps)) == 1


def test_missing_sdk_names_the_pip_command(monkeypatch):
    import builtins

    from maxmem import MissingDependency
    from maxmem.mcp import _sdk

    real_import = builtins.__import__

    def no_mcp(name, *args, **kwargs):
        if name == "mcp" or name.startswith("mcp."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mcp)
    with pytest.raises(MissingDependency, match=r"pip install 'maxmem\[mcp\]'"):
        _sdk()
