"""`maxmem mcp` answers initialize and tools/list from what the server answered at an
earlier start, before the SDK is loaded; everything else is the SDK's, in order. The
SDK's own client drives it twice over the same state folder: the second session, whose
first answers came from what was kept, lists the same tools and calls them, reads a
resource and gets a prompt."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from maxmem import Brain  # noqa: E402
from maxmem.mcp_start import KEPT, install_stamp  # noqa: E402

MAXMEM = Path(sys.executable).with_name("maxmem")
pytestmark = pytest.mark.skipif(not MAXMEM.exists(), reason="the maxmem entry point is not installed")


def params(db: Path, home: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    env["MAXMEM_HOME"] = str(home)
    return StdioServerParameters(command=str(MAXMEM), args=["--db", str(db), "--embedder", "none", "mcp"], env=env)


def session(db: Path, home: Path) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        async with stdio_client(params(db, home)) as (read, write), ClientSession(read, write) as client:
            init = await client.initialize()
            tools = await client.list_tools()
            found = await client.call_tool("search", {"query": "quince tree", "min_relevance": 0})
            stored = await client.call_tool("remember", {"content": "the pear tree was planted in 2024"})
            core = await client.read_resource("memory://core")
            prompt = await client.get_prompt("recall", {"question": "when was the pear tree planted?"})
            return {"server": init.server_info.name, "tools": sorted(t.name for t in tools.tools),
                    "found": found.structured_content, "stored": not stored.is_error,
                    "core": core.contents[0].text, "prompt": prompt.messages[0].content.text}

    return asyncio.run(run())


def test_the_second_start_answers_from_what_was_kept_and_the_session_goes_on(tmp_path):
    db, home = tmp_path / "brain.db", tmp_path / "home"
    with Brain.open(db, embedder="none") as brain:
        brain.remember("the quince tree by the shed flowers in April", category="core")
    first = session(db, home)
    kept = home / "logs" / KEPT.format(stamp=install_stamp())
    assert kept.exists() and oct(kept.stat().st_mode & 0o777) == "0o600"
    answers = json.loads(kept.read_text())
    assert sorted(t["name"] for t in answers["tools"]["tools"]) == first["tools"]
    assert answers["initialize"]["serverInfo"]["name"] == "maxmem" and "2025-06-18" in answers["versions"]
    second = session(db, home)
    assert second["tools"] == first["tools"] and second["server"] == "maxmem"
    assert "quince" in json.dumps(second["found"]) and second["stored"]
    assert "quince" in second["core"] and "pear tree" in second["prompt"]


def test_a_client_that_sends_nothing_and_closes_ends_the_server(tmp_path):
    done = subprocess.run([str(MAXMEM), "--db", str(tmp_path / "b.db"), "--embedder", "none", "mcp"], input=b"",
                          capture_output=True, env={"MAXMEM_HOME": str(tmp_path / "home"),
                                                    "PATH": os.environ.get("PATH", "")}, timeout=120)
    assert done.returncode == 0 and done.stdout == b"", done.stderr


def test_setup_keeps_the_first_answers_before_an_agent_starts_the_server(tmp_path):
    from agent_layout import codex_home

    home = tmp_path / "home"
    codex_home(home)
    done = subprocess.run([str(MAXMEM), "setup", "codex"], env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "its first answers are kept" in done.stdout, done.stdout
    kept = home / ".local" / "state" / "maxmem" / KEPT.format(stamp=install_stamp())
    assert json.loads(kept.read_text())["tools"]["tools"]
