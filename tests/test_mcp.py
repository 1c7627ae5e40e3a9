"""The MCP server end to end: the SDK's own client spawns `maxmem mcp` over stdio.

Every tool is listed with a title, annotations and an output schema, and called once
with good arguments (the client checks the structured result against the declared
schema) and once with bad ones (a one-line tool error, the server still serving);
the three resources are read and the prompts fetched.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from maxmem import Brain  # noqa: E402
from maxmem.tune import fetched_questions  # noqa: E402
from maxmem.work import observe  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
READ_ONLY = {"search", "get", "list", "query", "brief", "active", "timeline", "history", "stats"}
WRITING = {"remember", "update", "forget", "pin", "supersede", "commit", "observe", "resolve", "save_context"}


def command() -> list[str]:
    """The installed `maxmem` script next to this Python, or `python -m maxmem`."""
    script = Path(sys.executable).with_name("maxmem")
    return [str(script)] if script.exists() else [sys.executable, "-m", "maxmem"]


def server_params(db: Path, home: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")}
    env["MAXMEM_HOME"] = str(home)
    env["PYTHONPATH"] = str(ROOT)
    first, *rest = command()
    return StdioServerParameters(command=first, args=[*rest, "--db", str(db), "--embedder", "none", "mcp"],
                                 env=env)


def session_run(db: Path, home: Path, steps) -> Any:
    async def run():
        async with stdio_client(server_params(db, home)) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()  # the client validates results against these schemas
                return await steps(session)
    return asyncio.run(run())


def seed(db: Path) -> dict[str, Any]:
    with Brain.open(db, embedder="none") as brain:
        dark = brain.remember("The user prefers dark mode in every editor", category="core",
                              kind="preference", tags=["ui"], importance=0.8, pinned=True)
        brain.remember("Deployed the billing service on Friday", category="daily", kind="milestone")
        old = brain.remember("The staging database listens on port 5432", category="project", kind="fact")
        new = brain.remember("The staging database listens on port 5433 since the move", category="project",
                             kind="fact")
        doomed = brain.remember("A scratch note to forget", category="daily")
        work = observe(brain, "project", "Build the memory system", title="maxmem", ongoing=True,
                       importance=0.9)
        return {"dark": dark.id, "dark_uid": dark.uid, "old": old.id, "new": new.id, "doomed": doomed.id,
                "work": work.id}


def structured(result) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == result.structured_content, "the JSON text repeats it"
    return result.structured_content


def calls(ids: dict[str, Any]) -> list[tuple[str, dict, dict, str]]:
    """(tool, good arguments, bad arguments, what the error must say)."""
    exchange = {"user_message": "[Sat 2026-11-28 19:00 GMT+1] Where is staging?",
                "assistant_response": "On port 5433.", "timestamp": "2026-11-28T18:03:00Z",
                "tool_calls": [{"name": "bash", "params": {"cmd": "ss -lnt"}, "status": "ok"}]}
    return [
        ("search", {"query": "dark mode preference"}, {"query": "dark mode", "limit": 0},
         "limit: input should be greater than or equal to 1"),
        ("get", {"ids": [ids["dark"], ids["dark_uid"]]}, {"ids": [999]}, "no memory 999"),
        ("list", {"category": "core"}, {"category": "nowhere"}, "category: input should be"),
        ("query", {"question": "preferences about dark mode"}, {"question": "what did I do a while ago"},
         "too vague"),
        ("brief", {"budget_tokens": 500}, {"budget_tokens": 10},
         "budget_tokens: input should be greater than or equal to 100"),
        ("active", {"min_importance": 0.5}, {"min_importance": 2},
         "min_importance: input should be less than or equal to 1"),
        ("timeline", {"days": 7}, {"days": 0}, "days: input should be greater than or equal to 1"),
        ("history", {"id": ids["dark"]}, {"id": "no-such-uid"}, "no recorded history"),
        ("stats", {}, {"verbose": True}, "unknown argument(s) verbose; stats takes no arguments"),
        ("remember", {"content": "Standup moved to 9:30", "tags": ["team"]}, {"content": "   "},
         "content is empty"),
        ("update", {"id": ids["new"], "tags": ["staging", "db"], "importance": 0.7}, {"id": ids["new"]},
         "nothing to update"),
        ("pin", {"id": ids["new"]}, {"id": "999"}, "no memory '999'"),
        ("supersede", {"old": ids["old"], "new": ids["new"]}, {"old": ids["new"], "new": ids["new"]},
         "cannot supersede itself"),
        ("commit", {"trigger": "decision", "content": "We decided to keep one brain.db per agent."},
         {"trigger": "gossip", "content": "x y z"}, "trigger: input should be 'decision'"),
        ("observe", {"type": "failure", "content": "Login returns 500 for long cookies", "ongoing": True,
                     "started": "2 days ago"},
         {"type": "failure", "content": "x", "started": "next week"}, "is in the future"),
        ("resolve", {"id": ids["work"], "content": "shipped v1"}, {"id": ids["work"]}, "already resolved"),
        ("save_context", {"session_id": "agent:main:main", "exchanges": [exchange]},
         {"session_id": "agent:main:main"}, "nothing to save"),
        ("forget", {"ids": [ids["doomed"]]}, {"ids": [ids["doomed"]]}, "no memory"),
    ]


def test_tools_resources_and_prompts_are_listed_with_their_metadata(tmp_path, maxmem_home):
    async def steps(session):
        tools = (await session.list_tools()).tools
        resources = (await session.list_resources()).resources
        templates = (await session.list_resource_templates()).resource_templates
        prompts = (await session.list_prompts()).prompts
        return tools, resources, templates, prompts

    tools, resources, templates, prompts = session_run(tmp_path / "brain.db", maxmem_home, steps)
    by_name = {t.name: t for t in tools}
    assert len(tools) >= 16 and set(by_name) == READ_ONLY | WRITING
    for tool in tools:
        assert tool.title and tool.description, tool.name
        hints = tool.annotations
        assert hints is not None and hints.open_world_hint is False, tool.name
        assert hints.read_only_hint is (tool.name in READ_ONLY), tool.name
        if tool.name in WRITING:
            assert hints.destructive_hint is not None and hints.idempotent_hint is not None, tool.name
        assert tool.output_schema and tool.output_schema["type"] == "object" and tool.output_schema["properties"]
        assert tool.input_schema["type"] == "object"
    assert by_name["forget"].annotations.destructive_hint is True
    assert {n for n, t in by_name.items() if t.annotations.destructive_hint} == {"forget"}
    assert by_name["resolve"].annotations.idempotent_hint is False
    assert by_name["remember"].input_schema["required"] == ["content"]
    assert by_name["remember"].input_schema["properties"]["importance"]["maximum"] == 1
    assert by_name["get"].input_schema["properties"]["ids"]["type"] == "array"
    assert set(by_name["search"].output_schema["$defs"]["HitOut"]["required"]) >= {
        "id", "date", "category", "relevance", "score"}

    assert {str(r.uri) for r in resources} == {"memory://brief", "memory://core"}
    assert all(r.title and r.mime_type == "text/markdown" for r in resources)
    assert [t.uri_template for t in templates] == ["memory://{id}"]
    assert {p.name for p in prompts} == {"recall", "save_before_compaction", "session_start"}
    assert all(p.title and p.description for p in prompts)


def test_every_tool_once_well_and_once_badly(tmp_path, maxmem_home):
    db = tmp_path / "brain.db"
    ids = seed(db)
    table = calls(ids)

    async def steps(session):
        done = {}
        for name, good, bad, message in table:
            done[name] = structured(await session.call_tool(name, good))
            failed = await session.call_tool(name, bad)
            text = failed.content[0].text
            assert failed.is_error, (name, text)
            assert "\n" not in text and text.startswith(f"Error executing tool {name}: "), (name, text)
            assert message in text, (name, text)
        # arguments the schema refuses are named, their values are not repeated
        secret = await session.call_tool("remember", {"content": "x", "importance": "sk-not-a-number"})
        assert secret.is_error and "importance" in secret.content[0].text
        assert "sk-not-a-number" not in secret.content[0].text
        done["alive"] = structured(await session.call_tool("stats", {}))
        return done

    done = session_run(db, maxmem_home, steps)
    assert {name for name, *_ in table} == READ_ONLY | WRITING

    [hit] = done["search"]["hits"]
    assert hit["id"] == ids["dark"] and hit["category"] == "core" and hit["date"].endswith("Z")
    assert 0 < hit["relevance"] <= 1 and hit["snippet"] == "The user prefers dark mode in every editor"
    assert "content" not in hit, "compact by default"
    got = done["get"]["memories"]
    assert [m["id"] for m in got] == [ids["dark"], ids["dark"]]
    assert got[0]["content"] == "The user prefers dark mode in every editor" and got[0]["metadata"] == {}
    assert [m["category"] for m in done["list"]["memories"]] == ["core"]
    assert done["query"]["interpretation"] == 'kind preference; text "dark mode"'
    assert done["brief"]["tokens"] <= 500 and "dark mode" in done["brief"]["text"]
    assert done["brief"]["text"].startswith("maxmem memory brief: ")
    assert [w["memory"]["id"] for w in done["active"]["work"]] == [ids["work"]]
    assert done["timeline"]["events"]
    assert [v["version"] for v in done["history"]["versions"]] == [1]
    assert done["stats"]["memories"] == 6 and done["alive"]["memories"] > 6
    assert done["remember"]["action"] == "added" and done["remember"]["memory"]["tags"] == ["team"]
    assert done["update"]["memory"]["tags"] == ["staging", "db"]
    assert done["pin"]["memory"]["pinned"] is True
    assert done["supersede"]["old"]["status"] == "superseded"
    assert (done["commit"]["action"], done["commit"]["memory"]["category"]) == ("added", "core")
    assert done["observe"]["memory"]["status"] == "ongoing"
    assert done["resolve"]["memory"]["status"] == "resolved"
    assert done["save_context"]["exchanges_stored"] == 1 and done["save_context"]["tool_calls_stored"] == 1
    assert done["forget"] == {"forgotten": [ids["doomed"]], "uids": [done["forget"]["uids"][0]]}

    with Brain.open(db, embedder="none") as brain:
        [saved] = brain.list(category="conversation")
        assert saved.content.startswith("User: Where is staging?"), "the envelope came off"
        assert [v["version"] for v in brain.history(ids["new"])] == [1, 2, 3, 4], "update, pin, supersede"


def test_search_full_text_and_nothing_relevant(tmp_path, maxmem_home):
    db = tmp_path / "brain.db"
    with Brain.open(db, embedder="none") as brain:
        brain.remember("Long note. " * 40 + "The heating repair is on Tuesday. " + "More words. " * 40)

    async def steps(session):
        compact = structured(await session.call_tool("search", {"query": "heating repair"}))
        full = structured(await session.call_tool("search", {"query": "heating repair", "full": True}))
        nothing = structured(await session.call_tool("search", {"query": "quantum chromodynamics"}))
        return compact, full, nothing

    compact, full, nothing = session_run(db, maxmem_home, steps)
    [hit] = compact["hits"]
    assert "heating repair" in hit["snippet"] and len(hit["snippet"]) <= 240
    assert hit["snippet"].startswith("…") and hit["snippet"].endswith("…")
    assert full["hits"][0]["content"].count("Long note.") == 40 and "snippet" not in full["hits"][0]
    assert nothing["hits"] == [] and nothing["note"]


def test_a_search_then_a_get_of_its_hit_is_a_question_for_tune(tmp_path, maxmem_home):
    db = tmp_path / "brain.db"
    ids = seed(db)

    async def steps(session):
        hits = structured(await session.call_tool("search", {"query": "staging database port"}))["hits"]
        structured(await session.call_tool("get", {"ids": [ids["dark"]]}))  # not among the hits
        structured(await session.call_tool("get", {"ids": [hits[0]["id"]]}))
        return hits[0]["id"]

    fetched = session_run(db, maxmem_home, steps)
    with Brain.open(db, embedder="none") as brain:
        (question,) = fetched_questions(brain)
    assert (question.query, question.gold, question.source) == ("staging database port", {fetched}, "fetched")
    assert fetched in (ids["old"], ids["new"])


def test_a_search_then_a_read_of_its_hit_as_a_resource_is_a_question_for_tune(tmp_path, maxmem_home):
    db = tmp_path / "brain.db"
    ids = seed(db)

    async def steps(session):
        hits = structured(await session.call_tool("search", {"query": "staging database port"}))["hits"]
        await session.read_resource(f"memory://{ids['dark']}")  # not among the hits
        one = await session.read_resource(f"memory://{hits[0]['uid']}")
        return hits[0]["id"], json.loads(one.contents[0].text)["id"]

    fetched, read = session_run(db, maxmem_home, steps)
    with Brain.open(db, embedder="none") as brain:
        (question,) = fetched_questions(brain)
    assert read == fetched
    assert (question.query, question.gold, question.source) == ("staging database port", {fetched}, "fetched")


def test_resources(tmp_path, maxmem_home):
    db = tmp_path / "brain.db"
    ids = seed(db)

    async def steps(session):
        brief = await session.read_resource("memory://brief")
        core = await session.read_resource("memory://core")
        one = await session.read_resource(f"memory://{ids['dark']}")
        by_uid = await session.read_resource(f"memory://{ids['dark_uid']}")
        with pytest.raises(MCPError, match="no memory '999'"):
            await session.read_resource("memory://999")
        return brief, core, one, by_uid

    brief, core, one, by_uid = session_run(db, maxmem_home, steps)
    [text] = brief.contents
    assert text.mime_type == "text/markdown" and text.text.startswith("maxmem memory brief: ")
    assert "```markdown\n# Memory brief" in text.text and "dark mode" in text.text
    [core_text] = core.contents
    assert core_text.text.startswith("maxmem core memories: ") and "```markdown\n# Core memories\n" in core_text.text
    assert f"- 📌 The user prefers dark mode in every editor (#{ids['dark']}, preference)" in core_text.text
    memory = json.loads(one.contents[0].text)
    assert one.contents[0].mime_type == "application/json"
    assert memory["id"] == ids["dark"] and memory["content"].startswith("The user prefers") and memory["pinned"]
    assert json.loads(by_uid.contents[0].text) == memory


def test_prompts(tmp_path, maxmem_home):
    db = tmp_path / "brain.db"
    ids = seed(db)

    async def steps(session):
        recall = await session.get_prompt("recall", {"question": "does the user like dark mode?"})
        unknown = await session.get_prompt("recall", {"question": "quantum chromodynamics lecture"})
        save = await session.get_prompt("save_before_compaction", {"session_id": "agent:main:main"})
        start = await session.get_prompt("session_start", {})
        with pytest.raises(MCPError, match="question"):
            await session.get_prompt("recall", {})
        return recall, unknown, save, start

    recall, unknown, save, start = session_run(db, maxmem_home, steps)
    text = recall.messages[0].content.text
    assert recall.messages[0].role == "user" and f"#{ids['dark']} [core/preference" in text
    assert "relevance" in text and "do not remember" in text
    assert "nothing relevant" in unknown.messages[0].content.text
    saving = save.messages[0].content.text
    assert "save_context" in saving and "session_id agent:main:main" in saving
    assert "```markdown\n# Memory brief" in start.messages[0].content.text


def test_without_the_sdk_the_command_names_the_pip_install(tmp_path, maxmem_home):
    """`maxmem mcp` without the extra: one line naming the install, exit code 1."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nclass Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mcp' or name.startswith('mcp.'):\n"
        "            raise ImportError('no mcp here')\n"
        "sys.meta_path.insert(0, Block())\n")
    env = {**os.environ, "PYTHONPATH": f"{blocker}{os.pathsep}{ROOT}", "MAXMEM_HOME": str(maxmem_home)}
    done = subprocess.run([sys.executable, "-m", "maxmem", "--db", str(tmp_path / "b.db"), "mcp"],
                          capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1, done.stderr
    assert "pip install 'maxmem[mcp]'" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    stats = subprocess.run([sys.executable, "-m", "maxmem", "--embedder", "none", "remember", "works"],
                           capture_output=True, text=True, env=env, timeout=60)
    assert stats.returncode == 0, "the rest of the CLI works without the SDK"
