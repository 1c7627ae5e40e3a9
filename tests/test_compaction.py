"""Compaction hooks: save_context (idempotent, all-or-nothing) and the boot brief."""

from __future__ import annotations

import copy
import json
import re
from datetime import timedelta

import pytest

from maxmem import InvalidInput
from maxmem.brief import PREFACE, build_brief
from maxmem.compaction import save_context
from maxmem.memory import estimate_tokens
from maxmem.work import observe

DOC = {
    "session_id": "agent:main:main",
    "agent": "main",
    "exchanges": [
        {
            "user_message": "Can you check why the deploy failed?",
            "assistant_response": "The deploy failed because the disk was full; I cleaned /tmp.",
            "thinking": "Look at the logs first.",
            "timestamp": "2026-11-30T10:00:00Z",
            "model": "claude-sonnet",
            "tool_calls": [
                {"name": "bash", "params": {"cmd": "df -h"}, "result": "100% /",
                 "status": "ok", "duration_ms": 120},
                {"name": "bash", "params": {"cmd": "rm -rf /tmp/cache"}, "result": "",
                 "status": "ok"},
            ],
        },
        {
            "user_message": "thanks",
            "assistant_response": "You're welcome.",
            "timestamp": "2026-11-30T10:05:00Z",
        },
    ],
    "observations": [
        {"type": "failure", "title": "Deploy failed: disk full",
         "content": "The deploy failed because / was full; cleaning /tmp fixed it.",
         "importance": 0.8, "tags": ["deploy", "ops"]},
    ],
    "metadata": {"reason": "pre-compaction"},
}


def count(brain) -> int:
    return brain.stats()["memories"]


def test_save_context_stores_exchanges_tool_calls_and_observations(brain):
    report = save_context(brain, DOC)
    assert (report.exchanges_stored, report.tool_calls_stored, report.observations_stored) == (2, 2, 1)
    exchanges = brain.list(category="conversation", session_id="agent:main:main", order="oldest")
    assert [m.created_at for m in exchanges] == ["2026-11-30T10:00:00.000Z", "2026-11-30T10:05:00.000Z"]
    first = exchanges[0]
    assert first.kind == "exchange" and first.agent == "main" and first.source == "agent"
    assert first.content.startswith("User: Can you check why the deploy failed?\n\nAssistant: The deploy")
    assert first.content.endswith("Tools: bash (ok), bash (ok)")
    assert first.metadata["model"] == "claude-sonnet"
    assert first.metadata["thinking"] == "Look at the logs first."
    assert first.metadata["tool_calls"][0] == {"name": "bash", "params": '{"cmd": "df -h"}',
                                               "result": "100% /", "status": "ok", "duration_ms": 120}
    assert first.metadata["context"] == {"reason": "pre-compaction"}
    [obs] = brain.list(kind="failure")
    assert (obs.category, obs.title, obs.importance, obs.tags) == (
        "daily", "Deploy failed: disk full", 0.8, ["deploy", "ops"])
    assert obs.session_id == "agent:main:main"


def test_exchanges_also_become_the_sessions_turns_and_tool_calls(brain):
    save_context(brain, DOC)
    save_context(brain, DOC)
    session = brain.db.one("SELECT * FROM sessions WHERE id = ?", ("agent:main:main",))
    assert (session["format"], session["agent"], session["turn_count"]) == ("save-context", "main", 4)
    assert session["updated_at"] == "2026-11-30T10:05:00.000Z"
    turns = brain.db.rows("SELECT seq, role, text, model, created_at FROM turns ORDER BY seq")
    assert [(t["seq"], t["role"]) for t in turns] == [
        (1, "user"), (2, "assistant"), (3, "user"), (4, "assistant")]
    assert turns[1]["model"] == "claude-sonnet" and turns[0]["created_at"] == "2026-11-30T10:00:00.000Z"
    calls = brain.db.rows("SELECT turn_id, name, arguments, result, status, duration_ms FROM tool_calls"
                          " ORDER BY id")
    assert [(c["name"], c["arguments"], c["status"], c["duration_ms"]) for c in calls] == [
        ("bash", '{"cmd": "df -h"}', "ok", 120), ("bash", '{"cmd": "rm -rf /tmp/cache"}', "ok", None)]
    assistant_id = brain.db.scalar("SELECT id FROM turns WHERE seq = 2")
    assert {c["turn_id"] for c in calls} == {assistant_id}


def test_secrets_in_tool_calls_and_thinking_are_redacted(brain):
    doc = copy.deepcopy(DOC)
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    doc["exchanges"][0]["tool_calls"][0]["result"] = f"OPENAI_API_KEY={secret}"
    doc["exchanges"][0]["thinking"] = f"the key is {secret}"
    save_context(brain, doc)
    stored = json.dumps([m.to_dict() for m in brain.list(limit=100)])
    stored += json.dumps(brain.db.rows("SELECT * FROM tool_calls")) + json.dumps(
        brain.db.rows("SELECT text FROM turns"))
    assert secret not in stored


def test_same_document_twice_stores_nothing_twice(brain):
    save_context(brain, DOC)
    before = count(brain)
    changes = brain.db.scalar("SELECT count(*) FROM changes")
    again = save_context(brain, DOC)
    assert count(brain) == before
    assert brain.db.scalar("SELECT count(*) FROM changes") == changes
    assert (again.exchanges_stored, again.observations_stored) == (0, 0)
    assert (again.exchanges_already_saved, again.observations_already_saved) == (2, 1)


def test_a_document_naming_the_session_by_its_older_key_is_the_same_session(brain):
    older = {("session_key" if k == "session_id" else k): v for k, v in copy.deepcopy(DOC).items()}
    first = save_context(brain, older)
    assert first.session_id == "agent:main:main" and first.exchanges_stored == 2
    assert save_context(brain, DOC).exchanges_already_saved == 2  # the same session, by either name
    with pytest.raises(InvalidInput, match="session_key is empty"):
        save_context(brain, {**older, "session_key": " "})


def test_a_later_document_repeating_old_exchanges_adds_only_the_new(brain):
    save_context(brain, DOC)
    later = copy.deepcopy(DOC)
    later["exchanges"].append({"user_message": "and the backups?",
                               "assistant_response": "They ran at 03:00.",
                               "timestamp": "2026-11-30T11:00:00Z"})
    report = save_context(brain, later)
    assert (report.exchanges_stored, report.exchanges_already_saved) == (1, 2)


BAD = [
    (lambda d: d.pop("session_id"), "session_id is missing"),
    (lambda d: d.update(session_id="  "), "session_id is empty"),
    (lambda d: d.update(exchanges={"a": 1}), "exchanges must be a list"),
    (lambda d: d["exchanges"][1].update(user_message=5), "exchanges[1].user_message must be text"),
    (lambda d: d["exchanges"][1].pop("assistant_response"), "exchanges[1].assistant_response is missing"),
    (lambda d: d["exchanges"][0].update(timestamp="yesterday-ish"), "exchanges[0].timestamp"),
    (lambda d: d["exchanges"][0]["tool_calls"][1].pop("name"), "exchanges[0].tool_calls[1].name is missing"),
    (lambda d: d["exchanges"][0]["tool_calls"][0].update(duration_ms=-3),
     "exchanges[0].tool_calls[0].duration_ms"),
    (lambda d: d["exchanges"][0].update(tool_calls="bash"), "exchanges[0].tool_calls must be a list"),
    (lambda d: d["observations"][0].update(importance=3), "observations[0].importance"),
    (lambda d: d["observations"][0].update(type="Bad Type!"), "observations[0].type"),
    (lambda d: d["observations"][0].update(content=""), "observations[0].content is empty"),
    (lambda d: d["observations"][0].update(tags=[1]), "observations[0].tags"),
    (lambda d: d.update(metadata=[1]), "metadata must be an object"),
    (lambda d: d.update(exchanges=[], observations=[]), "nothing to save"),
]


@pytest.mark.parametrize("spoil,message", BAD, ids=[m for _, m in BAD])
def test_malformed_input_names_the_field_and_writes_nothing(brain, spoil, message):
    doc = copy.deepcopy(DOC)
    spoil(doc)
    with pytest.raises(InvalidInput) as excinfo:
        save_context(brain, doc)
    assert message in str(excinfo.value)
    assert count(brain) == 0


def test_not_an_object(brain):
    with pytest.raises(InvalidInput, match="the document must be an object"):
        save_context(brain, [DOC])


def test_too_long_observation_is_refused_by_field(brain):
    doc = copy.deepcopy(DOC)
    doc["observations"].append({"type": "note", "content": "x" * 100_001})
    with pytest.raises(InvalidInput, match=r"observations\[1\].content is longer than"):
        save_context(brain, doc)
    assert count(brain) == 0


def test_a_failure_while_storing_leaves_nothing_half_written(brain, monkeypatch):
    """Rows are inserted, then the change log write fails: the transaction rolls back."""
    def broken(*args, **kwargs):
        raise RuntimeError("disk full while logging changes")

    monkeypatch.setattr(brain.rows, "log", broken)
    with pytest.raises(RuntimeError):
        save_context(brain, DOC)
    monkeypatch.undo()
    assert count(brain) == 0
    assert brain.db.scalar("SELECT count(*) FROM memories_fts") == 0
    assert save_context(brain, DOC).exchanges_stored == 2, "a retry stores everything"


# --- the brief ------------------------------------------------------------------------

def seed(brain, clock):
    brain.remember("Always answer in British English", category="core", kind="preference",
                   importance=0.6)
    brain.remember("The user's name is Alex", category="core", kind="fact", importance=0.9)
    brain.remember("Deploy keys live in 1Password", category="core", kind="fact",
                   importance=0.3, pinned=True)
    observe(brain, "project", "Build the memory system", title="maxmem", ongoing=True,
            started=clock.now() - timedelta(hours=30), importance=0.8)
    brain.remember("Old daily note from last week", category="daily",
                   created_at=clock.now() - timedelta(days=6))
    brain.remember("Yesterday: upgraded the laptop", category="daily",
                   created_at=clock.now() - timedelta(days=1))
    brain.remember("Today: wrote the context brief", category="daily",
                   created_at=clock.now() - timedelta(hours=1))
    save_context(brain, DOC)


def test_brief_has_every_section_in_order(brain, clock):
    seed(brain, clock)
    brief = build_brief(brain, session_id="agent:main:main", budget_tokens=2000)
    text = brief.markdown
    assert text.startswith("# Memory brief — 2026-11-30 12:00 UTC\n")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["## Core", "## Work in progress", "## Daily notes (today and yesterday)",
                        "## Current session (agent:main:main)", "## Important in the last day"]
    core = text.split("## Core\n")[1].split("\n\n")[0].splitlines()
    assert core[0].startswith("- 📌 Deploy keys live in 1Password")
    assert "Alex" in core[1] and "British" in core[2], "pinned first, then by importance"
    assert "open 1.2 days" not in text and "open 30.0 h" in text
    assert "Yesterday: upgraded the laptop" in text and "Today: wrote" in text
    assert "Old daily note" not in text
    session = text.split("## Current session (agent:main:main)\n")[1].split("\n\n")[0].splitlines()
    assert session[0].startswith("- 10:00 User: Can you check") and session[1].startswith("- 10:05 User: thanks")
    assert "Deploy failed: disk full" in text.split("## Important in the last day")[1]
    assert brief.tokens <= 2000


@pytest.mark.parametrize("budget", [100, 150, 300, 600, 1000])
def test_brief_fits_any_budget(brain, clock, budget):
    seed(brain, clock)
    brain.remember_many([{"content": f"core fact number {i} " + "padding words " * 20,
                          "category": "core", "importance": 0.5} for i in range(60)])
    brief = build_brief(brain, session_id="agent:main:main", budget_tokens=budget)
    assert estimate_tokens(brief.text) <= budget and brief.tokens <= budget
    assert brief.markdown.startswith("# Memory brief")
    if budget >= 300:
        assert "## Core" in brief.markdown and "more" in brief.markdown
        assert "## Work in progress" in brief.markdown, "later sections keep their share"


def test_more_budget_shows_more(brain, clock):
    seed(brain, clock)
    small = build_brief(brain, session_id="agent:main:main", budget_tokens=150)
    big = build_brief(brain, session_id="agent:main:main", budget_tokens=4000)
    shown = lambda b: sum(len(ids) for ids in b.sections.values())  # noqa: E731
    assert shown(small) < shown(big)
    assert big.sections["core"][0] == brain.list(pinned=True)[0].id


def test_empty_brain_brief(brain):
    brief = build_brief(brain)
    assert "(nothing remembered yet)" in brief.markdown


def test_brief_rejects_a_tiny_budget(brain):
    with pytest.raises(InvalidInput, match="at least 100"):
        build_brief(brain, budget_tokens=10)
    with pytest.raises(InvalidInput):
        build_brief(brain, budget_tokens="lots")  # type: ignore[arg-type]


def ids_in(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"#(\d+)\)", text)]


WIDE = ["Größe und Maße: Ärger über Öl 🚀🔥 — ", "日本語のメモ、東京で会議 ", "émojis 👩‍💻🧪 naïve café ",
        "plain words "]


def seed_wide(brain, clock, count=120):
    brain.remember_many([{"content": f"{WIDE[i % 4] * 6}#{i}", "category": "core",
                          "importance": (i % 10) / 10, "pinned": i % 7 == 0} for i in range(count)])
    brain.remember_many([{"content": f"daily {WIDE[i % 4] * 4}{i}", "category": "daily",
                          "importance": 0.9 if i % 3 == 0 else 0.4,
                          "created_at": clock.now() - timedelta(hours=i % 30)} for i in range(count)])
    for i in range(30):
        observe(brain, "project", f"Projekt {WIDE[i % 4] * 3}{i}", title=f"p{i} 🚧", ongoing=True,
                started=clock.now() - timedelta(hours=i + 1), importance=0.9)


@pytest.mark.parametrize("budget", [100, 137, 400, 1000, 2503, 8000])
def test_brief_budget_is_exact_in_utf8_tokens(brain, clock, budget):
    """The whole fenced text, counted with the one estimate (UTF-8 bytes / 4), stays
    within the budget, and a brain with more to say than fits fills most of it."""
    seed(brain, clock)
    seed_wide(brain, clock)
    brief = build_brief(brain, session_id="agent:main:main", budget_tokens=budget)
    assert brief.tokens == estimate_tokens(brief.text) == -(-len(brief.text.encode("utf-8")) // 4)
    assert brief.tokens <= budget
    # what is left is less than one more line of the section that was cut last
    assert brief.tokens >= budget - 120, (brief.tokens, budget)
    assert len(brief.text) < len(brief.text.encode("utf-8")), "the test data is not plain ASCII"


@pytest.mark.parametrize("budget", [100, 300, 1500, 6000])
def test_each_memory_is_in_the_brief_at_most_once(brain, clock, budget):
    seed(brain, clock)
    seed_wide(brain, clock)
    # pinned, important, daily and ongoing at once: claimed by every section's query
    brain.remember("Pinned, important and from today", category="core", pinned=True, importance=1.0)
    observe(brain, "task", "An ongoing daily task", ongoing=True, importance=0.95)
    brief = build_brief(brain, session_id="agent:main:main", budget_tokens=budget)
    shown = ids_in(brief.markdown)
    assert len(shown) == len(set(shown)) and shown
    listed = [i for ids in brief.sections.values() for i in ids]
    assert len(listed) == len(set(listed))
    assert set(shown) <= set(listed)


def test_sections_keep_their_order_whatever_fits(brain, clock):
    seed(brain, clock)
    order = ["## Core", "## Work in progress", "## Daily notes (today and yesterday)",
             "## Current session (agent:main:main)", "## Important in the last day"]
    for budget in (100, 200, 400, 800, 3000):
        text = build_brief(brain, session_id="agent:main:main", budget_tokens=budget).markdown
        headings = [line for line in text.splitlines() if line.startswith("## ")]
        assert headings == [h for h in order if h in headings]


def test_brief_is_fenced_so_no_memory_can_close_the_fence(brain, clock):
    brain.remember("Run ````rm -rf```` never; ```code``` is quoted", category="core", importance=0.9)
    brief = build_brief(brain, budget_tokens=500)
    first, fence_line, *rest = brief.text.rstrip("\n").split("\n")
    assert first == PREFACE
    assert fence_line == "`````markdown", "one backtick longer than the longest run in the brief"
    assert rest[-1] == "`````" and "\n".join(rest[:-1]) == brief.markdown.rstrip()
    assert "`````" not in brief.markdown
