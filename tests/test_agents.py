"""Every agent is one record (maxmem.agents), and every layer has its part of each.

`missing_parts` is what a contributor adding an agent runs into: a record whose reader,
transcript finder, setup module or import reader is missing is named here, part by part.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from maxmem.agents import AGENTS, DEFAULT, NAMES, Agent, Hook, Transcripts, agent_named
from maxmem.capture import CaptureSettings, agents_folders, discover, only_agent
from maxmem.capture.model import FORMATS
from maxmem.capture.readers import DOCUMENT_FORMATS, LINE_FORMATS
from maxmem.capture.roots import FINDERS
from maxmem.cli import cli
from maxmem.config import Config
from maxmem.hooks import HARNESSES, harness_named, spellings
from maxmem.hooks.events import EVENTS, added_context, run_hook
from maxmem.importers import READERS, SOURCES
from maxmem.settings import MIN_BRIEF_TOKENS
from maxmem.wiring import AGENTS as SETUP_AGENTS
from maxmem.wiring import SETUP, TARGETS

SETUP_PARTS = ("plan", "unplan", "commands", "detect", "checks")


def missing_parts(agent: Agent) -> list[str]:
    """What of `agent` no layer has: each a phrase naming the layer."""
    out = []
    if agent.format not in LINE_FORMATS and agent.format not in DOCUMENT_FORMATS:
        out.append(f"a transcript reader for format {agent.format!r} (maxmem.capture.readers)")
    if agent.name not in FINDERS:
        out.append("a transcript finder (maxmem.capture.roots.FINDERS)")
    if agent.transcripts.setting not in {f.name for f in dataclasses.fields(CaptureSettings)}:
        out.append(f"the [capture] setting {agent.transcripts.setting!r} (maxmem.settings.CaptureSettings)")
    module = SETUP.get(agent.name)
    if module is None:
        out.append("a setup module (maxmem.wiring.SETUP)")
    else:
        out += [f"setup's {part}()" for part in SETUP_PARTS if not callable(getattr(module, part, None))]
    if agent.imports and agent.name not in READERS:
        out.append("an import reader (maxmem.importers.READERS)")
    out += [f"hook word {h.word!r} (maxmem.hooks.events.EVENTS)" for h in agent.hooks if h.word not in EVENTS]
    if agent.context_chars < MIN_BRIEF_TOKENS * 4:
        out.append(f"context_chars of at least {MIN_BRIEF_TOKENS * 4} (the smallest brief)")
    return out


@pytest.mark.parametrize("agent", AGENTS, ids=NAMES)
def test_every_agent_has_every_part(agent):
    assert missing_parts(agent) == []


def test_a_record_without_its_parts_is_named_part_by_part():
    made_up = Agent(name="made-up", title="Made Up", home="~/.made-up",
                    transcripts=Transcripts(env="MADE_UP_HOME", defaults=(".made-up",), setting="made_up_dirs",
                                            look_in="logs"),
                    hooks=(Hook("Start", "session-start", 10), Hook("Wave", "wave", 10)),
                    output="hook-json", context_chars=100, setup="nothing yet")
    missing = missing_parts(made_up)
    assert len(missing) == 7, missing
    assert any("transcript reader" in m for m in missing) and any("setup module" in m for m in missing)
    assert any("'wave'" in m for m in missing) and any("import reader" in m for m in missing)


def test_the_layers_take_their_names_from_the_records():
    assert HARNESSES == NAMES == SETUP_AGENTS
    assert set(NAMES) <= set(FORMATS) and set(NAMES) <= set(TARGETS)
    assert {a.name for a in AGENTS if a.imports} <= set(SOURCES)
    assert DEFAULT in NAMES


def test_names_and_older_spellings_name_one_agent_each():
    words = [w for a in AGENTS for w in (a.name, *a.aliases)]
    assert len(words) == len(set(words))
    assert not set(words) & {"cron", "systemd", "launchd", "jsonl", "chatgpt", "markdown", "claude-mem"}
    for agent in AGENTS:
        for word in (agent.name, *agent.aliases):
            assert agent_named(word) is agent and harness_named(word) == agent.name
            assert word in spellings(agent.name)
    assert agent_named("nobody") is None and harness_named("nobody") == "nobody"


@pytest.mark.parametrize("agent", AGENTS, ids=NAMES)
def test_added_context_has_the_shape_the_record_says(agent):
    for hook in agent.hooks:
        if hook.word not in ("session-start", "user-prompt"):
            continue
        out = added_context(agent.name, hook.word, "remembered")
        if agent.output == "plain":
            assert out == "remembered"
        else:
            payload = json.loads(out)["hookSpecificOutput"]
            assert payload == {"hookEventName": hook.event, "additionalContext": "remembered"}
    assert added_context(agent.name, "user-prompt", "") == ""


def test_each_agent_reads_its_own_variable_and_only_its_own_folders(tmp_path):
    env = {a.transcripts.env: str(tmp_path / a.name) for a in AGENTS}
    settings = agents_folders(Config().capture, env=env, home=tmp_path / "home")
    for agent in AGENTS:
        assert getattr(settings, agent.transcripts.setting) == (tmp_path / agent.name,)
        own = only_agent(settings, agent.name)
        for other in AGENTS:
            expected = (tmp_path / agent.name,) if other is agent else ()
            assert getattr(own, other.transcripts.setting) == expected


def test_a_hook_that_captures_all_of_its_agents_sessions_leaves_other_agents_alone(tmp_path, monkeypatch):
    """A hook whose event names no transcript (OpenClaw's Gateway) reads that agent's
    sessions, not a Claude Code transcript lying in the folders the tick reads."""
    home = tmp_path / "home"
    claude = home / ".claude" / "projects" / "-p"
    claude.mkdir(parents=True)
    (claude / "s.jsonl").write_text(json.dumps({
        "type": "user", "sessionId": "s", "uuid": "u1", "timestamp": "2026-12-01T10:00:00Z",
        "message": {"role": "user", "content": "Decision: that transcript stays out of this hook."}}) + "\n")
    monkeypatch.setenv("HOME", str(home))
    settings = agents_folders(Config().capture, env={}, home=home)
    assert discover(settings), "the tick finds the Claude Code transcript"
    capturing = [a for a in AGENTS if a.capture_all]
    assert capturing
    for agent in capturing:
        assert not [s for s in discover(only_agent(settings, agent.name)) if s.format != agent.format]
        config = Config(db_path=tmp_path / "brain.db")
        result = run_hook("stop", agent.name, json.dumps({"session_id": "x"}), config, {"HOME": str(home)})
        assert result.ok, result.line
        assert " 0 files " in result.line, result.line


def test_help_names_every_agent():
    runner = CliRunner()
    for argv in (["hook", "--help"], ["setup", "--help"]):
        out = runner.invoke(cli, argv).output
        for name in NAMES:
            assert name in out, (argv, out)


def test_records_say_where_transcripts_live_relative_to_home():
    for agent in AGENTS:
        assert agent.home.startswith("~/")
        assert all(not Path(d).is_absolute() for d in agent.transcripts.defaults)
        assert agent.hooks and agent.context_chars > 0
