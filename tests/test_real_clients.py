"""maxmem inside the real Claude Code (`claude -p`) and Codex (`codex exec`) CLIs.

Each test wires a temp HOME with `maxmem setup` run as cron would (`env -i HOME=…`),
stores a conversation memory, and runs the real CLI against a model server of the
tests' own on 127.0.0.1 (tests/model_servers.py). What the server received is what
reached the model: the memory next to a question about it, nothing next to "run
the tests", and, on a scripted second turn, the answer of maxmem's MCP `search`
inside the client. The Stop hook's capture is read back from brain.db.

The CLIs come from MAXMEM_CLIENTS_BIN (a folder holding `claude` and `codex`) or
the checkout's .clients/node_modules/.bin (scripts/test installs the pinned packages
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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from model_servers import AnthropicServer, Reply, Request, ResponsesServer, Text, ToolCall, tool_names
from processes import processes_naming

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
                      "--prefix .clients @anthropic-ai/claude-code @openai/codex  (as scripts/test does)")
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
def home(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    done = maxmem(home, "remember", "-c", "conversation", "-t", "invoice storage", "--created-at",
                  "2026-10-02T15:00:00Z", MEMORY)
    assert done.returncode == 0, done.stderr
    done = maxmem(home, "embed")
    assert done.returncode == 0, done.stderr
    yield home
    # Undo the wiring as a user would: that also stops the prompt hook's warm recall
    # servers, which must not outlive it.
    for target, folder in (("claude-code", ".claude"), ("codex", ".codex")):
        if (home / folder).is_dir():
            done = subprocess.run([str(MAXMEM), "setup", target, "--uninstall"], env=codex_env(home),
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 10  # asked to stop (SIGTERM): give them a moment to go
    while (left := processes_naming(home, b"maxmem.hooks.server")) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in left:
        os.kill(pid, 15)
    assert not left, "recall servers still running 10 s after setup --uninstall"


def messages_text(request: Request) -> str:
    """The conversation of a Messages API request as text (Claude Code 2.1.197 puts the
    hooks' additionalContext there, in a "system" message labelled with the hook's event)."""
    return json.dumps(request.body.get("messages", []), ensure_ascii=False)


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
    with_unhurried_claude_prompt_hook(home)


def with_unhurried_claude_prompt_hook(home: Path) -> None:
    """Claude Code's prompt hook, as `maxmem setup claude-code` wrote it, given a budget no
    loaded machine overruns (its --budget, and the hook's timeout above it), as
    `with_unhurried_prompt_hook` does for Codex: this test checks the wiring, not the speed."""
    path = home / ".claude" / "settings.json"
    settings = json.loads(path.read_text(encoding="utf-8"))
    (entry,) = [h for group in settings["hooks"]["UserPromptSubmit"] for h in group["hooks"]
                if h["command"].endswith("hook user-prompt --harness claude-code")]
    assert entry["timeout"] == 10, entry
    entry["command"] += " --budget 60"
    entry["timeout"] = 90
    path.write_text(json.dumps(settings, indent=2), encoding="utf-8")


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
    brief = maxmem(home, "brief")
    assert MARK not in brief.stdout  # so only the prompt hook can bring it
    timings = {}
    with AnthropicServer(reply=answer("Postgres on the NAS (zqanswer01).")) as server:
        started = time.monotonic()
        done = run_claude(home, server, QUESTION)
        timings["question"] = time.monotonic() - started
        assert done.returncode == 0, done.stderr + done.stdout
        assert "zqanswer01" in done.stdout
        (first, *_) = claude_session_requests(server, QUESTION)
        context = messages_text(first)
        assert MARK in context and "UserPromptSubmit" in context, context[:3000]

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


# -- Codex -------------------------------------------------------------------------

def codex_config(server: ResponsesServer) -> str:
    return (f'model = "fake-model"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
            f'base_url = "{server.url}/v1"\nenv_key = "FAKE_MODEL_KEY"\nwire_api = "responses"\n')


def codex_env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "PATH": node_path(), "CODEX_HOME": str(home / ".codex"),
            "FAKE_MODEL_KEY": "not-a-key"}


def setup_codex(home: Path, server: ResponsesServer) -> None:
    (home / ".codex").mkdir(exist_ok=True)
    (home / ".codex" / "config.toml").write_text(codex_config(server), encoding="utf-8")
    done = subprocess.run([str(MAXMEM), "setup", "codex"], env=codex_env(home), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


def with_unhurried_prompt_hook(home: Path) -> None:
    """Codex's prompt hook, as `maxmem setup codex` wrote it, given a budget no loaded
    machine overruns (its --budget, and Codex's timeout above it): a prompt hook over its
    budget adds nothing, by design, and this test checks the wiring, not the speed
    (bench/hook_bench.py times the hook)."""
    path = home / ".codex" / "config.toml"
    written = 'hook user-prompt --harness codex"\ntimeout = 10\n'
    text = path.read_text(encoding="utf-8")
    assert text.count(written) == 1, text
    path.write_text(text.replace(written, 'hook user-prompt --harness codex --budget 60"\ntimeout = 90\n'),
                    encoding="utf-8")


def run_codex(home: Path, prompt: str, *extra: str) -> subprocess.CompletedProcess[str]:
    assert BIN is not None
    return subprocess.run([str(BIN / "codex"), "exec", "--skip-git-repo-check", *extra, prompt],
                          cwd=home / "proj", env=codex_env(home), capture_output=True, text=True, timeout=300)


def codex_search_script(body: dict[str, Any]) -> Reply:
    """Call maxmem's search (in Codex's mcp__maxmem namespace), then answer."""
    items = body.get("input") or []
    if any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items):
        return Text("Found it (zqanswer12).")
    if "mcp__maxmem/search" in set(tool_names_of(body)):
        return ToolCall("search", {"query": SEARCH_QUERY}, namespace="mcp__maxmem")
    return Text("maxmem's tools were not listed (zqanswer12).")


def tool_names_of(body: dict[str, Any]) -> list[str]:
    return list(tool_names(Request("POST", "", body)))


def codex_inputs(request: Request) -> str:
    """The conversation items of a Responses API request (Codex puts a hook's
    additionalContext there as a developer message), as text."""
    return json.dumps(request.body.get("input") or [], ensure_ascii=False)


def stop_leftovers(home: Path) -> None:
    """End the processes Codex's TUI left behind for this HOME (its app-server daemon's
    helpers), by their ids: the ones whose command line names this test's CODEX_HOME."""
    for pid in processes_naming(home / ".codex", b"codex"):
        try:
            os.kill(pid, 15)
        except ProcessLookupError:
            continue


def screen_text(screen: Any) -> str:
    return "\n".join(line.rstrip() for line in screen.display if line.strip())


def trust_codex_hooks(home: Path) -> str:
    """Start the Codex TUI as the user would, choose "Trust all and continue" on its
    "Hooks need review" screen, and quit. Returns the screen text seen."""
    pexpect = pytest.importorskip("pexpect", reason="pexpect drives Codex's TUI to trust the hooks")
    pyte = pytest.importorskip("pyte", reason="pyte reads Codex's TUI screen")
    assert BIN is not None
    screen = pyte.Screen(140, 40)
    stream = pyte.Stream(screen)
    child = pexpect.spawn(str(BIN / "codex"), [], cwd=str(home / "proj"), dimensions=(40, 140), encoding="utf-8",
                          env={**codex_env(home), "TERM": "xterm-256color"}, timeout=30)

    def until(text: str, seconds: float = 40) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                stream.feed(child.read_nonblocking(65536, timeout=0.3))
            except pexpect.TIMEOUT:
                pass
            if text in screen_text(screen):
                return screen_text(screen)
        raise AssertionError(f"Codex's TUI never showed {text!r}:\n{screen_text(screen)}")

    try:
        seen = until("Trust all and continue")
        child.send("\x1b[B")  # down: from "1. Review hooks" to "2. Trust all and continue"
        until("› 2. Trust all")
        child.send("\r")
        until("Ask Codex to do anything")
        child.send("/quit")
        until("/quit")
        child.send("\r")
        child.expect(pexpect.EOF, timeout=20)
    finally:
        child.close(force=True)
        # The TUI leaves Codex's app-server daemon running: stop it as a user would.
        subprocess.run([str(BIN / "codex"), "app-server", "daemon", "stop"], env=codex_env(home),
                       capture_output=True, timeout=30)
        stop_leftovers(home)
    return seen


def doctor_wiring(home: Path) -> list[str]:
    done = subprocess.run([str(MAXMEM), "doctor", "--json"], env=codex_env(home), capture_output=True, text=True,
                          timeout=120)
    checks = json.loads(done.stdout)["checks"]
    return [c["detail"] for c in checks if c["name"] == "wiring"]


def test_codex_trusted_in_its_tui_then_recalls_captures_and_searches_over_mcp(home):
    timings = {}
    with ResponsesServer(reply=answer("Postgres (zqanswer11).")) as server:
        setup_codex(home, server)
        config = tomllib.loads((home / ".codex" / "config.toml").read_text())
        assert config["features"] == {"hooks": True}  # the name this Codex knows: no deprecation warning
        with_unhurried_prompt_hook(home)  # before the user trusts the hooks, as a user's own edit would be
        assert any("not trusted" in d for d in doctor_wiring(home))

        started = time.monotonic()
        seen = trust_codex_hooks(home)
        timings["trust in the TUI"] = time.monotonic() - started
        assert "4 hooks are new or changed" in seen, seen
        states = tomllib.loads((home / ".codex" / "config.toml").read_text())["hooks"]["state"]
        assert len([k for k, v in states.items() if v.get("trusted_hash")]) == 4, states
        assert not any("not trusted" in d for d in doctor_wiring(home))

        started = time.monotonic()
        done = run_codex(home, QUESTION)
        timings["question"] = time.monotonic() - started
        assert done.returncode == 0, done.stderr
        assert "codex_hooks is deprecated" not in done.stderr and "zqanswer11" in done.stdout
        (first, *_) = server.model_requests()
        assert MARK in codex_inputs(first), codex_inputs(first)[-2000:]
        assert "mcp__maxmem/search" in tool_names_of(first.body)  # maxmem's tools in the first request

    with ResponsesServer(reply=answer("Ran them (zqanswer13).")) as server:
        config_path = home / ".codex" / "config.toml"
        config_path.write_text(re_point(config_path.read_text(), server), encoding="utf-8")
        started = time.monotonic()
        done = run_codex(home, OFF_TOPIC)
        timings["off-topic"] = time.monotonic() - started
        assert done.returncode == 0, done.stderr
        assert server.model_requests() and not any(MARK in r.text for r in server.model_requests())

    with ResponsesServer(reply=codex_search_script) as server:
        config_path.write_text(re_point(config_path.read_text(), server), encoding="utf-8")
        started = time.monotonic()
        done = run_codex(home, "Look it up in maxmem: " + QUESTION)
        timings["MCP search"] = time.monotonic() - started
        assert done.returncode == 0, done.stderr
        outputs = [i for r in server.model_requests() for i in r.body.get("input") or []
                   if isinstance(i, dict) and i.get("type") == "function_call_output"]
        assert outputs and MARK in json.dumps(outputs[-1]), [json.dumps(o)[:500] for o in outputs]
        assert "zqanswer12" in done.stdout

    texts = " ".join(str(row.get("content")) for row in brain_rows(home))
    assert "zqanswer11" in texts and "zqanswer13" in texts  # the Stop hook captured each run
    print(f"codex: {timings}", file=sys.stderr)


def re_point(text: str, server: ResponsesServer) -> str:
    """config.toml with the fake provider's base_url moved to `server` (the hooks, and
    their trust, untouched)."""
    lines = [f'base_url = "{server.url}/v1"' if line.startswith("base_url = ") else line
             for line in text.splitlines()]
    return "\n".join(lines) + "\n"
