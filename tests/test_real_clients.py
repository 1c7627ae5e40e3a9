"""maxmem inside the real Claude Code (`claude -p`) and Codex (`codex exec`) CLIs.

Each test wires a temp HOME with `maxmem setup` run as cron would (`env -i HOME=…`),
stores a conversation memory, and runs the real CLI against a model server of the
tests' own on 127.0.0.1 (tests/model_servers.py). What the server received is what
reached the model: the memory next to a question about it, nothing next to "run
the tests", and, on a scripted second turn, the answer of maxmem's MCP `search`
inside the client. The Stop hook's capture is read back from brain.db.

The CLIs come from MAXMEM_CLIENTS_BIN (a folder holding `claude` and `codex`) or
the checkout's .clients/node_modules/.bin (.ci/run installs the pinned packages
there: npm install --prefix .clients @anthropic-ai/claude-code@… @openai/codex@…).
Without node, npm or the CLIs the tests skip and say why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from model_servers import AnthropicServer, Reply, Request, ResponsesServer, Text, ToolCall, tool_names

ROOT = Path(__file__).resolve().parent.parent
MAXMEM = Path(sys.executable).parent / "maxmem"
MEMORY = ("We settled the invoice storage question: invoices go to Postgres on the NAS, with a nightly "
          "pg_dump to the Hetzner box; SQLite was dropped because three writers collide.")
MARK = "Hetzner"  # a word of the memory no prompt below carries
QUESTION = "What did we decide about where the invoices are stored?"
OFF_TOPIC = "run the tests"
SEARCH_QUERY = "invoice storage decision"


def clients_bin() -> tuple[Path | None, str]:
    """The folder holding the `claude` and `codex` CLIs, or None and why not."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return None, "node and npm are not installed: the real Claude Code and Codex CLIs cannot run"
    given = os.environ.get("MAXMEM_CLIENTS_BIN")
    folder = Path(given) if given else ROOT / ".clients" / "node_modules" / ".bin"
    if not ((folder / "claude").exists() and (folder / "codex").exists()):
        return None, (f"no claude and codex CLIs in {folder}: set MAXMEM_CLIENTS_BIN, or run  npm install "
                      "--prefix .clients @anthropic-ai/claude-code @openai/codex  (as .ci/run does)")
    return folder, ""


BIN, WHY = clients_bin()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not MAXMEM.is_file(), reason="the maxmem entry point is not installed"),
    pytest.mark.skipif(BIN is None, reason=WHY),
]


def node_path() -> str:
    """A short PATH with node (the CLIs' interpreter) and the system folders, as cron has."""
    node = shutil.which("node")
    folders = [str(Path(node).parent)] if node else []
    return ":".join([*folders, str(BIN), "/usr/bin", "/bin"])


def maxmem(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """maxmem as cron would start it: env -i HOME=… PATH=…"""
    return subprocess.run([str(MAXMEM), *args], env={"HOME": str(home), "PATH": node_path()}, input=stdin,
                          capture_output=True, text=True, timeout=120)


def brain_rows(home: Path) -> list[dict[str, Any]]:
    done = maxmem(home, "list", "--limit", "200", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    return data if isinstance(data, list) else data.get("memories", data.get("results", []))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    done = maxmem(home, "add", "-c", "conversation", "-t", "invoice storage", "--created-at",
                  "2026-10-02T15:00:00Z", MEMORY)
    assert done.returncode == 0, done.stderr
    done = maxmem(home, "embed")
    assert done.returncode == 0, done.stderr
    return home


def last_user_text(request: Request) -> str:
    """The newest user turn of a Messages API request (where Claude Code puts a
    UserPromptSubmit hook's additionalContext) as text."""
    users = [m for m in request.body.get("messages", []) if m.get("role") == "user"]
    return json.dumps(users[-1], ensure_ascii=False) if users else ""


# -- Claude Code ---------------------------------------------------------------------

def claude_env(home: Path, server: AnthropicServer) -> dict[str, str]:
    return {"HOME": str(home), "PATH": node_path(), "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key", "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"}


def run_claude(home: Path, server: AnthropicServer, prompt: str, *extra: str) -> subprocess.CompletedProcess[str]:
    assert BIN is not None
    return subprocess.run([str(BIN / "claude"), "-p", prompt, *extra], cwd=home / "proj",
                          env=claude_env(home, server), capture_output=True, text=True, timeout=100)


def setup_claude(home: Path) -> None:
    (home / ".claude").mkdir(exist_ok=True)
    done = maxmem(home, "setup", "claude-code")
    assert done.returncode == 0, done.stderr


def answer(text: str) -> Callable[[dict[str, Any]], Reply]:
    return lambda body: Text(text)


def claude_search_script(body: dict[str, Any]) -> Reply:
    """What a model would do: wait for maxmem's server if its tools are not listed yet,
    call its search, then answer once the result is back."""
    names = {t.get("name") for t in body.get("tools", []) if isinstance(t, dict)}
    results = [block for m in body.get("messages", []) if m.get("role") == "user"
               and isinstance(m.get("content"), list) for block in m["content"]
               if isinstance(block, dict) and block.get("type") == "tool_result"]
    called = json.dumps(body.get("messages", []))
    if "mcp__maxmem__search" in called and results:
        return Text("Found it (zqanswer02).")
    if "mcp__maxmem__search" in names:
        return ToolCall("mcp__maxmem__search", {"query": SEARCH_QUERY})
    if "WaitForMcpServers" in names and "WaitForMcpServers" not in called:
        return ToolCall("WaitForMcpServers", {"servers": ["maxmem"]})
    return Text("maxmem's tools never arrived (zqanswer02).")


def claude_session_requests(server: AnthropicServer, prompt: str) -> list[Request]:
    """The model requests of the main conversation (not a side call such as a title)."""
    return [r for r in server.model_requests() if prompt in json.dumps(r.body.get("messages", []))]


def test_claude_code_gets_the_memory_with_the_question_none_off_topic_and_captures(home):
    setup_claude(home)
    brief = maxmem(home, "context")
    assert MARK not in brief.stdout  # so only the prompt hook can bring it
    timings = {}
    with AnthropicServer(reply=answer("Postgres on the NAS (zqanswer01).")) as server:
        started = time.monotonic()
        done = run_claude(home, server, QUESTION)
        timings["question"] = time.monotonic() - started
        assert done.returncode == 0, done.stderr + done.stdout
        assert "zqanswer01" in done.stdout
        (first, *_) = claude_session_requests(server, QUESTION)
        assert MARK in last_user_text(first), last_user_text(first)[:2000]

    with AnthropicServer(reply=answer("Ran them (zqanswer03).")) as server:
        started = time.monotonic()
        done = run_claude(home, server, OFF_TOPIC)
        timings["off-topic"] = time.monotonic() - started
        assert done.returncode == 0, done.stderr + done.stdout
        requests = claude_session_requests(server, OFF_TOPIC)
        assert requests and not any(MARK in r.text for r in requests)

    texts = " ".join(str(row.get("content")) for row in brain_rows(home))
    assert "zqanswer01" in texts and "zqanswer03" in texts  # both sessions captured by the Stop hook
    print(f"claude -p: {timings}", file=sys.stderr)


def test_claude_code_calls_maxmem_search_over_mcp(home):
    setup_claude(home)
    with AnthropicServer(reply=claude_search_script) as server:
        started = time.monotonic()
        done = run_claude(home, server, "Look it up in maxmem: " + QUESTION)
        took = time.monotonic() - started
        assert done.returncode == 0, done.stderr + done.stdout
        requests = server.model_requests()
        results = [r for r in requests if "tool_result" in r.text and "mcp__maxmem__search" in r.text]
        assert results, [list(tool_names(r)) for r in requests]
        blocks = [b for m in results[-1].body["messages"] if isinstance(m.get("content"), list)
                  for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
        assert MARK in json.dumps(blocks[-1])  # maxmem's search answered inside the client
        assert "zqanswer02" in done.stdout and "never arrived" not in done.stdout
    print(f"claude -p with an MCP search: {took:.1f} s", file=sys.stderr)
