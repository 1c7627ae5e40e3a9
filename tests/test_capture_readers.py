"""Each transcript reader on the shared fixtures and on hand-made edge cases."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from maxmem.capture import readers
from maxmem.capture.model import CaptureFormatError, ReadContext

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
OPENCLAW = FIXTURES / "openclaw/agents/main/sessions/5e0c7a2d-91b4-4f3e-8c62-1d7f3a9b0e54.jsonl"
CLAUDE = FIXTURES / "claude-code/projects/-home-user-proj/7b3e9f12-4c6a-4d8e-a1b5-2f0c9e7d3a61.jsonl"
CODEX = FIXTURES / ("codex/sessions/2026/11/28/"
                    "rollout-2026-11-28T10-00-00-01a22161-fe80-73c1-ae5f-4b2d9c07e816.jsonl")
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
DEFAULT_TIME = "2030-01-01T00:00:00.000Z"


def parse(path, fmt=None, offset=0, state=None, final=True):
    fmt = fmt or readers.detect_format(path)
    ctx = ReadContext(str(path), DEFAULT_TIME, final=final, tool_result_chars=2000)
    return readers.read(path, fmt, offset, state or {}, ctx)


def texts(result):
    return [t.text for t in result.parsed.turns]


def write_lines(path: Path, lines: list[dict], tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines) + tail,
                    encoding="utf-8")
    return path


def test_fixtures_are_detected_by_content():
    assert readers.detect_format(OPENCLAW) == "openclaw"
    assert readers.detect_format(CLAUDE) == "claude-code"
    assert readers.detect_format(CODEX) == "codex"


@pytest.mark.parametrize("path", [OPENCLAW, CLAUDE, CODEX], ids=["openclaw", "claude-code", "codex"])
def test_fixture_common_contract(path):
    result = parse(path)
    data = path.read_bytes()
    # The half-written last record is never consumed.
    assert not data.endswith(b"\n")
    assert result.end == data.rindex(b"\n") + 1
    assert result.stats.malformed == 0
    assert not result.parsed.unknown
    keys = [(t.session_id, t.key) for t in result.parsed.turns]
    assert len(keys) == len(set(keys)), "idempotency keys are unique"
    for turn in result.parsed.turns:
        assert ISO.match(turn.timestamp), turn.timestamp
        assert turn.role in ("user", "assistant", "tool", "summary")
        assert "base64" not in turn.text and "iVBORw0KGgo" not in turn.text
        assert "Signature" not in turn.text
    # Reading the same bytes again gives the same keys (idempotent re-reads).
    assert [(t.session_id, t.key) for t in parse(path).parsed.turns] == keys


# --- OpenClaw ---------------------------------------------------------------------------

def test_openclaw_session_and_turns():
    result = parse(OPENCLAW)
    (session,) = result.parsed.sessions.values()
    assert session.id == "5e0c7a2d-91b4-4f3e-8c62-1d7f3a9b0e54"
    assert session.agent == "openclaw:main"
    assert session.title == "Notizen & Erinnerungen"
    assert session.cwd == "/home/user/.openclaw/workspace"
    turns = result.parsed.turns
    first = turns[0]
    assert first.role == "user" and first.speaker == "Lena Okafor"
    assert first.text.startswith("Kannst du meine Notizen von gestern zusammenfassen?")
    assert "untrusted metadata" not in first.text and "message_id" not in first.text
    assert first.timestamp == "2026-11-28T09:58:13.431Z"
    assert first.key == "d90b3f4e"


def test_openclaw_drops_delivery_mirror_thinking_and_errors():
    result = parse(OPENCLAW)
    all_text = "\n".join(texts(result))
    assert all_text.count("Hier die Kurzfassung deiner Notizen") == 1
    assert "She wants a summary" not in all_text  # thinking
    assert result.parsed.dropped["delivery-mirror"] == 1
    assert result.parsed.dropped["error"] == 1  # the empty 529 reply


def test_openclaw_tool_calls_and_results():
    turns = parse(OPENCLAW).parsed.turns
    calls = {c.call_id: c for t in turns if t.role == "assistant" for c in t.tool_calls}
    assert calls["toolu_01HxQv7pZ3mKc9WfTn2LbR4s"].name == "read"
    assert json.loads(calls["toolu_01HxQv7pZ3mKc9WfTn2LbR4s"].arguments) == {"path": "notes/2026-11-27.md"}
    results = {t.tool_calls[0].call_id: t.tool_calls[0] for t in turns if t.role == "tool"}
    assert results["toolu_01Pq8s2VnYc4TzR1mK7bWd3F"].status == "error"
    assert results["toolu_01HxQv7pZ3mKc9WfTn2LbR4s"].status == "ok"
    assert "heating repair moved to Tuesday" in results["toolu_01HxQv7pZ3mKc9WfTn2LbR4s"].result
    bash = [t for t in turns if t.tool_calls and t.tool_calls[0].name == "bash"]
    assert bash and "2026-11-28.md" in bash[0].text


def test_openclaw_summaries_models_and_usage():
    turns = parse(OPENCLAW).parsed.turns
    kinds = [t.kind for t in turns if t.role == "summary"]
    assert kinds == ["compaction", "branch_summary"]
    japanese = next(t for t in turns if "火曜日" in t.text)
    assert japanese.model == "gpt-5.2" and japanese.usage["totalTokens"] == 3225
    assert turns[-1].text == "Lies bitte auch die Notiz von heute."


def test_openclaw_silent_replies_and_system_notices(tmp_path):
    path = write_lines(tmp_path / "agents/ops/sessions/s1.jsonl", [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-11-28T09:00:00.000Z", "cwd": "/w"},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-11-28T09:00:01.000Z",
         "message": {"role": "user", "content": "System: exec completed (code 0)"}},
        {"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-11-28T09:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "NO_REPLY"}]}},
        {"type": "message", "id": "a3", "parentId": "a2", "timestamp": "2026-11-28T09:00:03.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "HEARTBEAT_OK"}]}},
        {"type": "message", "id": "a4", "parentId": "a3", "timestamp": "2026-11-28T09:00:04.000Z",
         "message": {"role": "user", "content": [{"type": "image", "data": "QUJD" * 100, "mimeType": "image/png"}]}},
        {"type": "brand_new_entry", "id": "a5", "parentId": "a4", "timestamp": "2026-11-28T09:00:05.000Z"},
        {"type": "message", "id": "a6", "parentId": "a5", "timestamp": "2026-11-28T09:00:06.000Z",
         "message": {"role": "user", "content": "real question"}},
    ])
    result = parse(path)
    assert texts(result) == ["real question"]
    assert result.parsed.dropped["system-notice"] == 1
    assert result.parsed.dropped["silent-reply"] == 2
    assert result.parsed.unknown["brand_new_entry"] == 1
    assert next(iter(result.parsed.sessions.values())).agent == "openclaw:ops"


def test_openclaw_v1_file_without_ids_uses_offsets(tmp_path):
    path = write_lines(tmp_path / "old.jsonl", [
        {"type": "session", "id": "old", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/",
         "provider": "anthropic", "modelId": "claude-3-5-sonnet"},
        {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "hi", "timestamp": 1735689601000}},
        {"type": "message", "timestamp": "2025-01-01T00:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}},
    ])
    turns = parse(path, "openclaw").parsed.turns
    assert [t.text for t in turns] == ["hi", "hello"]
    assert turns[0].key.startswith("b") and turns[0].key != turns[1].key
    assert turns[1].model == "claude-3-5-sonnet"


def test_openclaw_resumes_with_state_from_the_previous_run(tmp_path):
    lines = [
        {"type": "session", "version": 3, "id": "sx", "timestamp": "2026-11-28T09:00:00.000Z", "cwd": "/"},
        {"type": "model_change", "id": "m1", "parentId": None, "timestamp": "2026-11-28T09:00:00.500Z",
         "provider": "openai", "modelId": "gpt-5.2"},
        {"type": "message", "id": "u1", "parentId": "m1", "timestamp": "2026-11-28T09:00:01.000Z",
         "message": {"role": "user", "content": "one"}},
    ]
    path = write_lines(tmp_path / "other-name.jsonl", lines)
    first = parse(path)
    lines.append({"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-11-28T09:00:02.000Z",
                  "message": {"role": "assistant", "content": [{"type": "text", "text": "two"}]}})
    write_lines(path, lines)
    second = parse(path, offset=first.end, state=first.parsed.state)
    (turn,) = second.parsed.turns
    assert turn.session_id == "sx" and turn.model == "gpt-5.2" and turn.text == "two"


# --- Claude Code ------------------------------------------------------------------------

def test_claude_split_assistant_lines_are_one_turn():
    turns = parse(CLAUDE).parsed.turns
    first = next(t for t in turns if t.key == "msg_01Gq7TzW4nKx2bR9vLcP5sHe")
    assert first.text == "Let me look at the current implementation."
    assert [c.name for c in first.tool_calls] == ["Read"]
    assert len(first.entry_ids) == 3
    assert first.usage["output_tokens"] == 131
    assert sum(1 for t in turns if t.key == "msg_01Gq7TzW4nKx2bR9vLcP5sHe") == 1


def test_claude_noise_is_dropped():
    result = parse(CLAUDE)
    all_text = "\n".join(texts(result))
    assert "ISO week 1 is the week containing Jan 4th" not in all_text  # thinking
    assert "local-command-caveat" not in all_text and "Caveat:" not in all_text
    assert "command-name" not in all_text and "Compacted (ctrl+o" not in all_text
    assert "adding a positive test instead" not in all_text  # agent_progress echo
    assert all_text.count("also add a test for week 53 please") == 1  # queue-operation twin
    screenshot = next(t for t in result.parsed.turns if "week 53 please" in t.text)
    assert screenshot.text.endswith("[image]")


def test_claude_session_title_summary_and_tool_results():
    result = parse(CLAUDE)
    (session,) = result.parsed.sessions.values()
    assert session.title == "iso-week-fix"  # custom-title beats ai-title and summary
    assert session.cwd == "/home/user/proj" and session.metadata["gitBranch"] == "fix/date-parse"
    turns = result.parsed.turns
    summary = next(t for t in turns if t.role == "summary")
    assert summary.kind == "compaction" and "Primary request" in summary.text
    results = {t.tool_calls[0].call_id: t.tool_calls[0] for t in turns if t.role == "tool"}
    assert results["toolu_01Rk5yHd2Wm9Qp3ZxN7cBv1T"].status == "error"
    assert results["toolu_01Qd3Xw8Nz5Kc2Rt7Vm1Yb4L"].duration_ms == 32400
    assert turns[-1].text == "commit it with a conventional message"


def _claude_line(kind, uuid, parent, content, **extra):
    line = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/p",
            "sessionId": "sess-1", "version": "2.1.150", "type": kind, "uuid": uuid,
            "timestamp": extra.pop("timestamp", "2026-11-28T10:00:00.000Z")}
    line.update(extra)
    if kind == "user":
        line["message"] = {"role": "user", "content": content}
    else:
        line["message"] = {"model": "claude-x", "id": extra.get("mid", "msg_1"), "type": "message",
                           "role": "assistant", "content": content,
                           "stop_reason": extra.get("stop"), "usage": {"output_tokens": 1}}
    return line


def test_claude_growing_response_is_held_back_until_complete(tmp_path):
    lines = [
        _claude_line("user", "u1", None, "question"),
        _claude_line("assistant", "a1", "u1", [{"type": "text", "text": "part one"}], mid="msg_9"),
    ]
    path = write_lines(tmp_path / "sess-1.jsonl", lines)
    first = parse(path, "claude-code", final=False)
    assert texts(first) == ["question"]
    assert first.end == len(json.dumps(lines[0], ensure_ascii=False)) + 1  # stops before the open response
    lines.append(_claude_line("assistant", "a2", "a1", [{"type": "text", "text": "part two"}], mid="msg_9",
                              stop="end_turn"))
    write_lines(path, lines)
    second = parse(path, "claude-code", offset=first.end, state=first.parsed.state, final=False)
    (turn,) = second.parsed.turns
    assert turn.text == "part one\n\npart two" and turn.key == "msg_9"


def test_claude_idle_file_flushes_a_response_without_stop_reason(tmp_path):
    path = write_lines(tmp_path / "sess-1.jsonl", [
        _claude_line("user", "u1", None, "question"),
        _claude_line("assistant", "a1", "u1", [{"type": "text", "text": "cut off"}], mid="msg_9"),
    ])
    assert texts(parse(path, "claude-code", final=False)) == ["question"]
    idle = parse(path, "claude-code", final=True)
    assert texts(idle) == ["question", "cut off"]
    assert idle.end == path.stat().st_size


def test_claude_sidechain_lines_get_their_own_session(tmp_path):
    path = write_lines(tmp_path / "sess-1/subagents/agent-a77.jsonl", [
        _claude_line("user", "s1", None, "sub task", isSidechain=True, agentId="a77"),
        _claude_line("assistant", "s2", "s1", [{"type": "text", "text": "sub done"}], isSidechain=True,
                     agentId="a77", mid="msg_s", stop="end_turn"),
    ])
    result = parse(path, "claude-code")
    (session,) = result.parsed.sessions.values()
    assert session.id == "sess-1:a77" and session.parent_id == "sess-1"
    assert texts(result) == ["sub task", "sub done"]


def test_claude_foreign_summary_is_not_a_title(tmp_path):
    path = write_lines(tmp_path / "sess-1.jsonl", [
        {"type": "summary", "summary": "someone else's session", "leafUuid": "not-here"},
        _claude_line("user", "u1", None, "hello"),
    ])
    result = parse(path, "claude-code")
    assert next(iter(result.parsed.sessions.values())).title is None
    assert result.parsed.dropped["foreign-summary"] == 1


def test_claude_system_reminders_and_interrupts(tmp_path):
    path = write_lines(tmp_path / "sess-1.jsonl", [
        _claude_line("user", "u1", None, "fix it<system-reminder>internal note</system-reminder>"),
        _claude_line("user", "u2", "u1", [{"type": "text", "text": "[Request interrupted by user]"}]),
        _claude_line("assistant", "a1", "u2", [{"type": "text", "text": "x"}], isApiErrorMessage=True,
                     mid="msg_e", stop="stop_sequence"),
    ])
    result = parse(path, "claude-code")
    assert texts(result) == ["fix it"]


# --- Codex ------------------------------------------------------------------------------

def test_codex_takes_text_from_events_once():
    result = parse(CODEX)
    turns = result.parsed.turns
    all_text = "\n".join(t.text for t in turns)
    assert all_text.count("Add a `--json` flag to `tidewatch forecast`") == 1
    assert all_text.count("yes please, and check whether serde_json") == 1
    assert "permissions instructions" not in all_text and "environment_context" not in all_text
    assert "Locating the forecast command" not in all_text  # reasoning
    assert [t.role for t in turns if t.role in ("user", "assistant")] == ["user", "assistant", "user", "assistant"]
    user = turns[0]
    assert user.timestamp == "2026-11-28T09:00:05.105Z"  # UTC from the line, not the local file name
    assistant = next(t for t in turns if t.role == "assistant")
    assert assistant.model == "gpt-5.1-codex" and assistant.usage["output_tokens"] == 97


def test_codex_tool_calls_outputs_and_compaction():
    result = parse(CODEX)
    calls = {c.call_id: c for _, c in result.parsed.calls}
    assert calls["call_Qm7Zt2Xk9Lw4Rn1Vb8Hc3Ds6"].name == "shell_command"
    assert json.loads(calls["call_Qm7Zt2Xk9Lw4Rn1Vb8Hc3Ds6"].arguments)["command"].startswith("rg -n")
    assert calls["call_Vn3Kc8Wq1Zt6Lx9Rb2Md5Hy7"].name == "apply_patch"
    assert any(c.name == "web_search" for c in calls.values())
    outputs = {t.tool_calls[0].call_id: t.tool_calls[0] for t in result.parsed.turns if t.role == "tool"}
    failed = outputs["call_Hd4Rt9Zm2Wk7Nc1Xq6Lb3Vs8"]
    assert failed.status == "error" and failed.duration_ms == 17400
    assert failed.result.startswith("error[E0063]")
    assert outputs["call_Vn3Kc8Wq1Zt6Lx9Rb2Md5Hy7"].result.startswith("Success.")
    summaries = [t for t in result.parsed.turns if t.role == "summary"]
    assert len(summaries) == 1 and summaries[0].text.startswith("Summary of the thread so far")
    (session,) = result.parsed.sessions.values()
    assert session.id == "01a22161-fe80-73c1-ae5f-4b2d9c07e816"
    assert session.cwd == "/home/user/code/tidewatch" and session.metadata["git_branch"] == "main"


def test_codex_unknown_kinds_and_ordinals(tmp_path):
    path = write_lines(tmp_path / "rollout-2026-01-01T00-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl", [
        {"timestamp": "2026-01-01T00:00:00Z", "ordinal": 0, "type": "session_meta",
         "payload": {"id": "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000", "timestamp": "2026-01-01T00:00:00Z"}},
        {"timestamp": "2026-01-01T00:00:01Z", "ordinal": 1, "type": "world_state", "payload": {}},
        {"timestamp": "2026-01-01T00:00:02Z", "ordinal": 2, "type": "event_msg",
         "payload": {"type": "user_message", "message": "hi"}},
        {"timestamp": "2026-01-01T00:00:03Z", "ordinal": 3, "type": "session_meta",
         "payload": {"id": "some-fork-source"}},
    ])
    result = parse(path)
    assert result.parsed.unknown["world_state"] == 1
    (turn,) = result.parsed.turns
    assert turn.key == "o2" and turn.session_id == "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000"
    assert turn.timestamp == "2026-01-01T00:00:02.000Z"  # second precision normalised


def test_codex_0171_rollout_text_from_item_completed_once(tmp_path):
    """codex-cli 0.171.0 writes no user_message/agent_message events: the text is in
    item_completed items (and in response_item twins, which stay dropped)."""
    tid = "01a24292-3881-7343-aac7-2477cfb79a5d"
    turn_id = "01a24292-38d0-7221-b316-6ae892931d9b"
    path = write_lines(tmp_path / f"rollout-2026-12-04T19-40-11-{tid}.jsonl", [
        {"timestamp": "2026-12-04T19:40:11.100Z", "ordinal": 0, "type": "session_meta",
         "payload": {"session_id": tid, "id": tid, "timestamp": "2026-12-04T19:40:10.900Z", "cwd": "/home/user/proj",
                     "originator": "codex_exec", "cli_version": "0.171.0"}},
        {"timestamp": "2026-12-04T19:40:11.101Z", "ordinal": 1, "type": "event_msg",
         "payload": {"type": "task_started", "turn_attribution": {"turn_id": turn_id}}},
        {"timestamp": "2026-12-04T19:40:11.645Z", "ordinal": 3, "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": (
             "<environment_context>\n  <cwd>/home/user/proj</cwd>\n</environment_context>")}]}},
        {"timestamp": "2026-12-04T19:40:11.700Z", "ordinal": 4, "type": "world_state", "payload": {"full": True}},
        {"timestamp": "2026-12-04T19:40:11.701Z", "ordinal": 5, "type": "turn_context",
         "payload": {"turn_id": turn_id, "model": "fake-model", "cwd": "/home/user/proj"}},
        {"timestamp": "2026-12-04T19:40:13.406Z", "ordinal": 8, "type": "response_item",
         "payload": {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "hello zqq question"}]}},
        {"timestamp": "2026-12-04T19:40:13.407Z", "ordinal": 9, "type": "event_msg",
         "payload": {"type": "item_completed", "thread_id": tid, "turn_id": turn_id, "item": {
             "type": "UserMessage", "id": "01a24292-4ade-7b62-927e-18015f42893e",
             "content": [{"type": "text", "text": "hello zqq question", "text_elements": []}]}}},
        {"timestamp": "2026-12-04T19:40:13.460Z", "ordinal": 10, "type": "event_msg",
         "payload": {"type": "item_completed", "thread_id": tid, "turn_id": turn_id, "item": {
             "type": "AgentMessage", "id": "msg_0001", "content": [{"type": "Text", "text": "Answer zqa."}]}}},
        {"timestamp": "2026-12-04T19:40:13.470Z", "ordinal": 11, "type": "response_item",
         "payload": {"type": "message", "role": "assistant", "id": "msg_0001",
                     "content": [{"type": "output_text", "text": "Answer zqa."}]}},
        {"timestamp": "2026-12-04T19:40:13.480Z", "ordinal": 12, "type": "event_msg",
         "payload": {"type": "token_count", "info": {"total_token_usage": {"output_tokens": 10},
                                                     "last_token_usage": {"output_tokens": 10}}}},
        {"timestamp": "2026-12-04T19:40:13.490Z", "ordinal": 13, "type": "event_msg",
         "payload": {"type": "item_completed", "item": {"type": "Reasoning", "id": "r1"}}},
        {"timestamp": "2026-12-04T19:40:14.000Z", "ordinal": 14, "type": "event_msg",
         "payload": {"type": "task_complete", "turn_id": turn_id, "last_agent_message": "Answer zqa."}},
    ])
    turns = parse(path).parsed.turns
    assert [(t.role, t.text) for t in turns] == [("user", "hello zqq question"), ("assistant", "Answer zqa.")]
    assert turns[1].model == "fake-model" and turns[1].usage == {"output_tokens": 10}
    # A build that writes both kinds: the first one seen wins, the other is a twin.
    both = write_lines(tmp_path / f"rollout-2026-12-04T19-40-12-{tid[:-1]}e.jsonl", [
        {"timestamp": "2026-12-04T19:40:13.000Z", "ordinal": 0, "type": "event_msg",
         "payload": {"type": "user_message", "message": "hello zqq question"}},
        {"timestamp": "2026-12-04T19:40:13.407Z", "ordinal": 1, "type": "event_msg",
         "payload": {"type": "item_completed", "item": {"type": "UserMessage",
                                                        "content": [{"type": "text", "text": "hello zqq question"}]}}},
    ])
    assert [t.text for t in parse(both).parsed.turns] == ["hello zqq question"]


# --- generic formats --------------------------------------------------------------------

def test_plain_jsonl(tmp_path):
    path = write_lines(tmp_path / "chat.jsonl", [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "What port does the API use?", "timestamp": "2026-02-01T10:00:00Z"},
        {"role": "assistant", "content": [{"type": "text", "text": "Port 8080."}], "model": "m1"},
        {"role": "tool", "name": "docker_ps", "content": "0.0.0.0:5432->5432/tcp"},
        {"speaker": "dolphin", "content": "??"},
    ])
    result = parse(path)
    assert readers.detect_format(path) == "jsonl"
    assert texts(result) == ["What port does the API use?", "Port 8080.", "0.0.0.0:5432->5432/tcp"]
    turns = result.parsed.turns
    assert turns[0].session_id.startswith("chat-") and turns[0].timestamp == "2026-02-01T10:00:00.000Z"
    assert result.parsed.state["default_session"] == turns[0].session_id  # kept with the cursor
    assert turns[1].timestamp == DEFAULT_TIME and turns[1].model == "m1"
    assert turns[2].tool_calls[0].name == "docker_ps"
    assert result.parsed.dropped["role:system"] == 1 and result.parsed.unknown["role:dolphin"] == 1


CHATGPT_EXPORT = [{
    "id": "conv-1", "title": "Trip planning", "create_time": 1764324000.5, "update_time": 1764325000.0,
    "current_node": "n4", "default_model_slug": "gpt-4o",
    "mapping": {
        "root": {"id": "root", "parent": None, "children": ["n1"], "message": None},
        "n1": {"id": "n1", "parent": "root", "children": ["n2", "n2b"], "message": {
            "id": "n1", "author": {"role": "user"}, "create_time": 1764324001.0,
            "content": {"content_type": "text", "parts": ["Where should we go in May?"]}, "metadata": {}}},
        "n2b": {"id": "n2b", "parent": "n1", "children": [], "message": {
            "id": "n2b", "author": {"role": "assistant"}, "create_time": 1764324002.0,
            "content": {"content_type": "text", "parts": ["(regenerated, not shown)"]}, "metadata": {}}},
        "n2": {"id": "n2", "parent": "n1", "children": ["n3"], "message": {
            "id": "n2", "author": {"role": "assistant"}, "create_time": 1764324003.0,
            "content": {"content_type": "text", "parts": ["Lisbon is lovely in May."]},
            "metadata": {"model_slug": "gpt-4o"}}},
        "n3": {"id": "n3", "parent": "n2", "children": ["n4"], "message": {
            "id": "n3", "author": {"role": "system"}, "create_time": 1764324004.0,
            "content": {"content_type": "text", "parts": ["hidden context"]},
            "metadata": {"is_visually_hidden_from_conversation": True}}},
        "n4": {"id": "n4", "parent": "n3", "children": [], "message": {
            "id": "n4", "author": {"role": "user"}, "create_time": 1764324005.0,
            "content": {"content_type": "multimodal_text",
                        "parts": [{"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"},
                                  "Is this Lisbon?"]}, "metadata": {}}},
    },
}, {
    "uuid": "claude-conv", "name": "Claude.ai chat", "created_at": "2026-01-02T03:04:05.000Z",
    "chat_messages": [
        {"uuid": "m1", "sender": "human", "text": "hello claude", "created_at": "2026-01-02T03:04:06.000Z"},
        {"uuid": "m2", "sender": "assistant", "text": "hello human", "created_at": "2026-01-02T03:04:07.000Z"},
    ],
}]


def test_chatgpt_export_follows_current_node(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(CHATGPT_EXPORT), encoding="utf-8")
    result = parse(path)
    chatgpt = [t for t in result.parsed.turns if t.session_id == "conv-1"]
    assert [t.text for t in chatgpt] == ["Where should we go in May?", "Lisbon is lovely in May.",
                                        "[image]\nIs this Lisbon?"]
    assert [t.key for t in chatgpt] == ["n1", "n2", "n4"]
    assert chatgpt[0].timestamp == "2025-11-28T10:00:01.000Z"
    assert result.parsed.sessions["conv-1"].title == "Trip planning"
    claude = [t for t in result.parsed.turns if t.session_id == "claude-conv"]
    assert [(t.role, t.text) for t in claude] == [("user", "hello claude"), ("assistant", "hello human")]
    assert result.end == path.stat().st_size


def test_chatgpt_bad_file_is_a_format_error(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(CaptureFormatError, match="not a JSON chat export"):
        parse(path)


MARKDOWN = """# Session: 2026-01-16 14:30:00 UTC

- **Session Key**: agent:main:main
- **Session ID**: abc123def456
- **Source**: telegram

## Conversation Summary

user: Can you remind me what we decided about the vendor?
It was the one with the green logo.

assistant: You chose **Acme** because their API has webhooks.

**User:** thanks!
"""


def test_markdown_transcript(tmp_path):
    path = tmp_path / "2026-01-16-vendor.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    result = parse(path)
    turns = result.parsed.turns
    assert [(t.role, t.text) for t in turns] == [
        ("user", "Can you remind me what we decided about the vendor?\nIt was the one with the green logo."),
        ("assistant", "You chose **Acme** because their API has webhooks."),
        ("user", "thanks!"),
    ]
    assert turns[0].session_id == "abc123def456"
    assert turns[0].timestamp == "2026-01-16T14:30:00.000Z"
    session = result.parsed.sessions["abc123def456"]
    assert session.metadata["session_key"] == "agent:main:main"
    # Editing one turn leaves the other keys alone.
    path.write_text(MARKDOWN.replace("thanks!", "thanks a lot!"), encoding="utf-8")
    again = parse(path).parsed.turns
    assert [t.key for t in again][:2] == [t.key for t in turns][:2]
    assert again[2].key != turns[2].key


def test_unknown_format_is_an_error(tmp_path):
    path = write_lines(tmp_path / "x.jsonl", [{"a": 1}])
    with pytest.raises(CaptureFormatError, match="unknown transcript format"):
        readers.read(path, "yaml", 0, {}, ReadContext(str(path), DEFAULT_TIME))
