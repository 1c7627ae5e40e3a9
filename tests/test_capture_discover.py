"""Where capture looks: default roots, the agents' variables, [capture] settings, side files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_capture import cbrain, home, settings_for, turns  # noqa: F401  (fixtures)

from maxmem import Config, load_config
from maxmem.capture import CaptureSettings, agents_folders, discover, run_capture, sources_for_path
from maxmem.errors import ConfigError, InvalidInput


def names(sources) -> set[str]:
    return {s.path.name for s in sources}


def test_default_roots_and_the_agents_variables(tmp_path):
    home_dir = tmp_path / "h"
    default = agents_folders(Config().capture, env={}, home=home_dir)
    assert default.openclaw_dirs[0] == home_dir / ".openclaw" and home_dir / ".moltbot" in default.openclaw_dirs
    assert default.claude_dirs == (home_dir / ".claude", home_dir / ".config" / "claude")
    assert default.codex_dirs == (home_dir / ".codex",)
    env = {"OPENCLAW_STATE_DIR": "/srv/oc", "CLAUDE_CONFIG_DIR": "/a, /b", "CODEX_HOME": "/c"}
    custom = agents_folders(Config().capture, env=env, home=home_dir)
    assert custom.openclaw_dirs == (Path("/srv/oc"),)
    assert custom.claude_dirs == (Path("/a"), Path("/b"))
    assert custom.codex_dirs == (Path("/c"),)


def test_capture_table_in_the_config_file(tmp_path):
    config_file = tmp_path / "config.toml"
    config_file.write_text(
        '[capture]\nclaude_dirs = ["/x/claude"]\ntool_result_chars = 500\n'
        'redact_patterns = ["ACME-[0-9]+"]\nsettle_seconds = 30\n', encoding="utf-8")
    config = load_config(env={}, path=config_file)
    settings = agents_folders(config.capture, env={"CLAUDE_CONFIG_DIR": "/ignored"}, home=tmp_path)
    assert settings.claude_dirs == (Path("/x/claude"),)  # the file wins over the variable
    assert settings.tool_result_chars == 500 and settings.settle_seconds == 30.0
    assert settings.redact_patterns == ("ACME-[0-9]+",)
    config_file.write_text("[capture]\ntool_results = 5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"config.toml: \[capture\]: unknown setting 'tool_results' \(known: "):
        load_config(env={}, path=config_file)
    config_file.write_text('[capture]\nredact_patterns = ["(oops"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[capture\] redact_patterns\[0\]: bad redaction pattern"):
        load_config(env={}, path=config_file)
    config_file.write_text('[capture]\nchunk_tokens = "many"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[capture\] chunk_tokens = 'many' must be a whole number"):
        load_config(env={}, path=config_file)


def test_extra_redaction_patterns_apply_to_captured_turns(cbrain, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"role": "user", "content": "ticket ACME-4711 is about the VPN"}\n', encoding="utf-8")
    report = run_capture(cbrain, paths=[path], settings=CaptureSettings(redact_patterns=("ACME-[0-9]+",)))
    assert report.redactions == 1
    assert [t["text"] for t in turns(cbrain)] == ["ticket [REDACTED:custom] is about the VPN"]


def test_openclaw_side_files_are_not_transcripts(home):
    sessions = home / "openclaw" / "agents" / "main" / "sessions"
    line = '{"type": "session", "version": 3, "id": "x", "timestamp": "2026-11-28T09:00:00.000Z"}\n'
    for name in ("5e0c7a2d-91b4-4f3e-8c62-1d7f3a9b0e54.jsonl.lock", "old.jsonl.bak.1",
                 "abc.checkpoint.0f1e2d3c.jsonl", "abc.trajectory.jsonl", "abc.trajectory-path.json",
                 "sessions.json.bak.2"):
        (sessions / name).write_text(line, encoding="utf-8")
    (sessions / "abc-topic-42.jsonl").write_text(line, encoding="utf-8")
    (sessions / "abc.jsonl.reset.2026-11-27T10-00-00.000Z").write_text(line, encoding="utf-8")
    (home / "openclaw" / "agents" / "work" / "sessions").mkdir(parents=True)
    (home / "openclaw" / "agents" / "work" / "sessions" / "w1.jsonl").write_text(line, encoding="utf-8")
    found = discover(settings_for(home))
    live = {s.path.name for s in found if s.format == "openclaw" and not s.archived}
    assert live == {"5e0c7a2d-91b4-4f3e-8c62-1d7f3a9b0e54.jsonl", "abc-topic-42.jsonl", "w1.jsonl"}
    archived = {s.path.name for s in found if s.archived}
    assert archived == {"abc.jsonl.reset.2026-11-27T10-00-00.000Z"}


def test_openclaw_store_can_point_outside_the_sessions_folder(home, tmp_path):
    elsewhere = tmp_path / "elsewhere" / "legacy.jsonl"
    elsewhere.parent.mkdir()
    elsewhere.write_text('{"type": "session", "version": 3, "id": "legacy"}\n', encoding="utf-8")
    store = home / "openclaw" / "agents" / "main" / "sessions" / "sessions.json"
    entries = json.loads(store.read_text())
    entries["agent:main:old"] = {"sessionId": "legacy", "sessionFile": str(elsewhere)}
    store.write_text(json.dumps(entries), encoding="utf-8")
    assert "legacy.jsonl" in names(discover(settings_for(home)))


def test_claude_sub_agents_and_codex_archives_are_found(cbrain, home):
    project = home / "claude-code" / "projects" / "-home-user-proj"
    sub = project / "7b3e9f12-4c6a-4d8e-a1b5-2f0c9e7d3a61" / "subagents" / "agent-a4c81f2e9b7d3605.jsonl"
    sub.parent.mkdir(parents=True)
    base = {"isSidechain": True, "agentId": "a4c81f2e9b7d3605", "cwd": "/home/user/proj",
            "sessionId": "7b3e9f12-4c6a-4d8e-a1b5-2f0c9e7d3a61", "timestamp": "2026-11-28T10:01:45.000Z"}
    sub.write_text(
        json.dumps(dict(base, type="user", uuid="s-1", parentUuid=None,
                        message={"role": "user", "content": "Add a pytest case for week 53"})) + "\n"
        + json.dumps(dict(base, type="assistant", uuid="s-2", parentUuid="s-1", message={
            "id": "msg_sub", "role": "assistant", "model": "claude-haiku", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "2026 has 53 ISO weeks; added a positive test."}]})) + "\n",
        encoding="utf-8")
    archive = home / "codex" / "archived_sessions"
    archive.mkdir()
    (archive / "rollout-2026-10-01T08-00-00-0199bbbb-0000-7000-8000-000000000001.jsonl").write_text(
        '{"timestamp": "2026-10-01T06:00:00.000Z", "type": "session_meta", '
        '"payload": {"id": "0199bbbb-0000-7000-8000-000000000001"}}\n'
        '{"timestamp": "2026-10-01T06:00:01.000Z", "type": "event_msg", '
        '"payload": {"type": "user_message", "message": "an archived question"}}\n', encoding="utf-8")
    report = run_capture(cbrain, settings=settings_for(home))
    assert report.files == 5 and report.errors == 0
    sub_session = cbrain.db.one("SELECT * FROM sessions WHERE id = ?",
                                ("7b3e9f12-4c6a-4d8e-a1b5-2f0c9e7d3a61:a4c81f2e9b7d3605",))
    assert sub_session["parent_id"] == "7b3e9f12-4c6a-4d8e-a1b5-2f0c9e7d3a61"
    assert [t["text"] for t in turns(cbrain, sub_session["id"])][1].startswith("2026 has 53 ISO weeks")
    assert [t["text"] for t in turns(cbrain, "0199bbbb-0000-7000-8000-000000000001")] == ["an archived question"]


def test_explicit_paths(tmp_path):
    folder = tmp_path / "exports"
    (folder / "deep").mkdir(parents=True)
    (folder / "deep" / "a.jsonl").write_text('{"role": "user", "content": "x"}\n', encoding="utf-8")
    (folder / "conversations.json").write_text("[]", encoding="utf-8")
    (folder / "notes.md").write_text("user: hi\n", encoding="utf-8")
    (folder / "settings.json").write_text("{}", encoding="utf-8")
    assert names(sources_for_path(folder)) == {"a.jsonl", "conversations.json"}
    assert names(sources_for_path(folder, "markdown")) == {"notes.md"}
    assert [s.format for s in sources_for_path(folder / "notes.md")] == ["markdown"]
    with pytest.raises(InvalidInput, match="does not exist"):
        sources_for_path(tmp_path / "missing")
    (tmp_path / "blob.bin").write_bytes(b"\x00")
    with pytest.raises(InvalidInput, match="--format"):
        sources_for_path(tmp_path / "blob.bin")


def test_public_names_are_the_functions_whatever_is_imported_first():
    import subprocess
    import sys

    code = ("from maxmem.capture import CaptureSettings, discover, run_capture, sources_for_path\n"
            "import maxmem.capture.job, maxmem.capture as c\n"
            "assert callable(discover) and callable(c.discover) and callable(c.sources_for_path)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
