"""Committing triggers to core: API, CLI, capture hook, sweep, never expiring."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from maxmem import Brain, Config, InvalidInput
from maxmem.capture import run_capture
from maxmem.cli import cli
from maxmem.errors import ConfigError
from maxmem.retention.run import apply
from maxmem.triggers.commit import commit, commit_detections, commit_new_turns, sweep, turns_of


def test_commit_writes_a_core_memory_with_provenance(brain, clock):
    result = commit(brain, "decision", "We decided to use PostgreSQL because we need JSONB.",
                    tags=["db"], project="ledger", session_id="s-1", agent="claw",
                    source_turns=["t-7"], at="2026-11-29T10:00:00Z")
    m = result.memory
    assert result.action == "added"
    assert (m.category, m.kind, m.source, m.importance) == ("core", "decision", "trigger", 0.9)
    assert (m.session_id, m.agent, m.created_at) == ("s-1", "claw", "2026-11-29T10:00:00.000Z")
    assert m.metadata == {"trigger": "decision", "project": "ledger", "source_turns": ["t-7"]}
    assert m.tags == ["db"]


def test_the_same_trigger_twice_is_unchanged_then_merged(brain):
    first = commit(brain, "lesson", "Always snapshot the database before a migration.", source_turns=["a"])
    same = commit(brain, "lesson", "Always snapshot the database before a migration.", source_turns=["a"])
    assert same.action == "unchanged" and same.memory.id == first.memory.id
    more = commit(brain, "lesson", "Always snapshot the database before a migration.", source_turns=["b"],
                  tags=["ops"])
    assert more.action == "updated" and more.memory.id == first.memory.id
    assert more.memory.metadata["source_turns"] == ["a", "b"] and more.memory.tags == ["ops"]
    assert brain.stats()["categories"]["core"] == 1


def test_a_restated_trigger_updates_the_existing_memory(tmp_path, local_embedder, clock):
    with Brain.open(tmp_path / "brain.db", embedder=local_embedder, clock=clock) as b:
        first = commit(b, "remember", "My passport expires in March 2027.")
        again = commit(b, "remember", "Remember that my passport expires in March 2027.", source_turns=["x"])
        other = commit(b, "remember", "My driving licence expires in March 2027.")
        assert again.action == "updated" and again.memory.id == first.memory.id
        assert other.action == "added" and other.memory.id != first.memory.id
        assert again.memory.metadata["restated"] == 1


def test_commit_writes_core(brain):
    m = commit(brain, "preference", "I prefer tabs over spaces.", importance=0.95).memory
    assert m.kind == "preference" and m.importance == 0.95 and m.category == "core"


@pytest.mark.parametrize("args, kwargs, fragment", [
    (("gossip", "text"), {}, "unknown trigger"),
    (("decision", "   "), {}, "empty"),
    (("decision", 42), {}, "empty"),
    (("decision", "We chose Go."), {"importance": 3}, "importance"),
    (("decision", "We chose Go."), {"project": " "}, "project"),
    (("decision", "We chose Go."), {"at": "not a time"}, "time"),
    (("decision", "We chose Go."), {"tags": 42}, "tags"),
])
def test_commit_bad_inputs(brain, args, kwargs, fragment):
    with pytest.raises(InvalidInput) as err:
        commit(brain, *args, **kwargs)
    assert fragment in str(err.value)
    assert brain.stats()["memories"] == 0


def test_importance_default_from_config(tmp_path, hash_embedder):
    config = Config.from_tables({"triggers": {"importance": 0.8}})
    with Brain.open(tmp_path / "b.db", embedder=hash_embedder, config=config) as b:
        assert commit(b, "milestone", "We shipped v2.0 today.").memory.importance == 0.8
    with pytest.raises(ConfigError, match=r"^\[triggers\] importance = 'very' must be a number from 0 to 1$"):
        Config.from_tables({"triggers": {"importance": "very"}})


def test_trigger_memories_never_expire(brain, clock):
    commit(brain, "failure", "The deploy failed because the migration locked the table.",
           at="2020-01-01T00:00:00Z")
    brain.update(1, category="daily")  # even filed elsewhere later
    clock.advance(days=3650)
    assert apply(brain)["deleted_total"] == 0
    assert brain.get(1).kind == "failure"


# -- detections from turns ------------------------------------------------------------

def test_commit_detections_keeps_the_source_turns(brain):
    turns = [
        {"id": 11, "role": "user", "content": "Hi! We decided to move the standup to 9:30.", "session_id": "s"},
        {"id": 12, "role": "assistant", "content": "Noted. Anything else?"},
        {"id": 13, "role": "user", "content": "Remember that the office is closed on Fridays."},
    ]
    result = commit_new_turns(brain, turns)
    assert (result["detections"], result["added"]) == (2, 2)
    kinds = {m.kind: m for m in result["memories"]}
    assert kinds["decision"].metadata["source_turns"] == ["11"] and kinds["decision"].session_id == "s"
    assert kinds["remember"].content == "Remember that the office is closed on Fridays."
    assert commit_detections(brain, [])["added"] == 0


def test_capture_commits_triggers_of_new_turns(tmp_path, hash_embedder, clock):
    log = tmp_path / "chat.jsonl"
    log.write_text(
        '{"role": "user", "content": "Lesson learned: always pin the base image digest.", '
        '"timestamp": "2026-11-30T10:00:00Z"}\n'
        '{"role": "assistant", "content": "Good idea, I will pin it.", "timestamp": "2026-11-30T10:00:05Z"}\n'
        '{"role": "tool", "content": "We decided to use Postgres.", "timestamp": "2026-11-30T10:00:06Z"}\n',
        encoding="utf-8")
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=clock) as b:
        run_capture(b, paths=[log], format="jsonl")
        core = b.list(category="core")
        assert [(m.kind, m.content) for m in core] == [("lesson", "Lesson learned: always pin the base image digest.")]
        assert core[0].session_id.startswith("chat") and core[0].metadata["source_turns"]
        run_capture(b, paths=[log], format="jsonl")
        assert len(b.list(category="core")) == 1


def test_capture_hook_can_be_turned_off(tmp_path, hash_embedder):
    config = Config.from_tables({"triggers": {"capture": False}})
    with Brain.open(tmp_path / "b.db", embedder=hash_embedder, config=config) as b:
        result = commit_new_turns(b, [{"role": "user", "content": "We decided to use Go for the CLI."}])
        assert result["detections"] == 0 and b.stats()["memories"] == 0


# -- sweep over conversation memories ------------------------------------------------

def test_turns_of_a_conversation_memory():
    text = ("user: We decided to use Go.\nassistant: Fine.\n→ bash(cmd=ls)\n"
            "tool bash(cmd=echo a: b): We decided nothing\ntool read (error):\nuser (anna): I prefer tabs.")
    assert turns_of(text) == [
        {"role": "user", "content": "We decided to use Go."},
        {"role": "assistant", "content": "Fine."},
        {"role": "tool", "content": "b): We decided nothing"},
        {"role": "tool", "content": ""},
        {"role": "user", "content": "I prefer tabs."},
    ]
    assert turns_of("no roles here, we decided to use Go.") == [
        {"role": "user", "content": "no roles here, we decided to use Go."}]


def test_sweep_commits_once(brain, clock):
    brain.remember("user: The root cause was a full disk on the backup host; we added log rotation.\n"
                   "assistant: Thanks, noted.", category="conversation", session_id="s9",
                   created_at="2026-11-30T06:00:00Z")
    brain.remember("user: We decided to use Go.", category="conversation", created_at="2026-11-01T00:00:00Z")
    result = sweep(brain, since="1d")
    assert (result["scanned"], result["detections"], result["added"]) == (1, 1, 1)
    [m] = brain.list(category="core")
    assert m.kind == "failure" and m.session_id == "s9" and m.created_at == "2026-11-30T06:00:00.000Z"
    again = sweep(brain, since="1d")
    assert (again["added"], again["unchanged"]) == (0, 1)
    with pytest.raises(InvalidInput):
        sweep(brain, since="sometime")


# -- CLI -------------------------------------------------------------------------------

def test_cli_commit_detect_sweep(tmp_path):
    runner = CliRunner()
    args = ["--db", str(tmp_path / "cli.db"), "--embedder", "none"]
    out = runner.invoke(cli, [*args, "commit", "decision", "We chose SQLite because it runs offline.",
                              "--tags", "db,storage", "--project", "maxmem", "-i", "0.95", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["action"] == "added" and data["memory"]["tags"] == ["db", "storage"]
    assert data["memory"]["metadata"]["project"] == "maxmem" and data["memory"]["importance"] == 0.95
    out = runner.invoke(cli, [*args, "commit", "decision", "We chose SQLite because it runs offline."])
    assert out.output.strip() == f"unchanged #{data['memory']['id']} core/decision"
    out = runner.invoke(cli, [*args, "triggers", "detect", "Should we decide? We decided to use Go."])
    assert out.exit_code == 0 and out.output.startswith("decision   We decided to use Go.")
    out = runner.invoke(cli, [*args, "triggers", "detect", "--json"], input="nothing to see here")
    assert json.loads(out.output) == []
    out = runner.invoke(cli, [*args, "triggers", "sweep", "--since", "2d"])
    assert out.exit_code == 0 and out.output.startswith("triggers: scanned 0 conversation memories")


def test_cli_commit_bad_inputs(tmp_path, capsys):
    from maxmem.cli import main

    args = ["--db", str(tmp_path / "cli.db"), "--embedder", "none"]
    for argv, code in (
        (["commit", "gossip", "x"], 2),
        (["commit", "decision", " "], 2),
        (["commit", "decision", "ok then", "-i", "7"], 2),
        (["triggers", "sweep", "--since", "whenever"], 2),
    ):
        with pytest.raises(SystemExit) as exit_info:
            main([*args, *argv])
        err = capsys.readouterr().err
        assert exit_info.value.code == code, (argv, err)
        assert err.count("\n") == 1, err


# -- the OpenClaw skill --------------------------------------------------------------------

def test_skill_front_matter_and_commands_run(tmp_path):
    import re
    import shlex
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "skill" / "SKILL.md").read_text(encoding="utf-8")
    front = text.split("---\n")[1]
    assert re.search(r"^name: maxmem$", front, re.M) and re.search(r"^description: .{40,}", front, re.M)
    for trigger in ("decision", "milestone", "preference", "failure", "lesson", "remember"):
        assert f"maxmem commit {trigger} " in text
    commands = re.findall(r"`(maxmem [^`]+)`", text) + re.findall(r"^(maxmem [^\n#]+?)\s*(?:#.*)?$", text, re.M)
    runner = CliRunner()
    args = ["--db", str(tmp_path / "skill.db"), "--embedder", "none"]
    ran = 0
    for command in dict.fromkeys(commands):
        argv = shlex.split(command)[1:]
        if argv[0] in ("supersede", "history", "get") or argv == ["commit"]:
            continue  # they name ids of the example
        result = runner.invoke(cli, [*args, *argv])
        assert result.exit_code == 0, (command, result.output)
        ran += 1
    assert ran >= 12
