"""OpenAI Codex CLI rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-…-<threadId>.jsonl).

Codex writes most things twice. Human and assistant text are taken from `event_msg`
(`user_message`, `agent_message`), or, in builds that write neither (0.171.0), from
`event_msg` `item_completed` (`UserMessage`, `AgentMessage` items): whichever of the
two a rollout shows first, never both; tool calls and their outputs from `response_item`.
The `response_item` message twins, developer/permission items, environment context,
reasoning (summaries and encrypted content) and `compacted.replacement_history`
are dropped; the compaction summary itself becomes a summary turn.

Lines have no ids: a line is keyed by its `ordinal` when the build writes one,
otherwise by its byte offset (stable while the file only grows; content
fingerprints catch re-serialised copies).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .model import Parsed, ReadContext, Record, Session, ToolCall, Turn, json_text, utc
from .text import IMAGE, blocks_text, clean, truncate

FORMAT = "codex"
AGENT = "codex"

SKIPPED_EVENTS = {
    "agent_reasoning", "agent_reasoning_raw_content", "agent_reasoning_section_break",
    "task_started", "turn_started", "task_complete", "turn_complete", "turn_aborted",
    "context_compacted", "thread_rolled_back", "patch_apply_end", "mcp_tool_call_end",
    "web_search_end", "image_generation_end", "entered_review_mode", "exited_review_mode",
    "thread_goal_updated", "sub_agent_activity", "exec_command_end",
    "exec_command_begin", "mcp_tool_call_begin", "patch_apply_begin", "token_count",
    "thread_name_updated", "plan_update", "background_event", "stream_error", "error",
}
SKIPPED_ITEMS = {
    "message", "reasoning", "compaction", "compaction_summary", "context_compaction",
    "ghost_snapshot", "additional_tools", "agent_message", "tool_search_call",
    "tool_search_output", "image_generation_call",
}
_PLAIN_OUTPUT = re.compile(
    r"\AExit code: (-?\d+)\s*\nWall time: ([\d.]+) seconds\s*\n(?:Total output lines: \d+\s*\n)?Output:\n?",
)


def session_id_of(path: str) -> str:
    match = re.search(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl",
                      Path(path).name)
    return match.group(1) if match else Path(path).name.split(".jsonl", 1)[0]


def parse(records: Iterable[Record], state: dict[str, Any], ctx: ReadContext) -> Parsed:
    out = Parsed(state=dict(state))
    st = out.state
    last_assistant: Turn | None = None

    def session() -> Session:
        sid = st.get("session_id") or session_id_of(ctx.path)
        st["session_id"] = sid
        return out.session(Session(id=sid, format=FORMAT, agent=st.get("agent", AGENT)))

    for record in records:
        line = record.value
        kind = line.get("type")
        payload = line.get("payload")
        if not isinstance(payload, dict):
            payload = {}
        when = utc(line.get("timestamp"), ctx.default_time) or ctx.default_time
        key = f"o{line['ordinal']}" if isinstance(line.get("ordinal"), int) else f"b{record.offset}"
        if kind == "session_meta":
            if st.get("session_id") and st.get("meta_seen"):
                out.dropped["copied-session-meta"] += 1  # forks copy the source's meta
                continue
            _meta(out, st, payload, ctx)
            continue
        sess = session()
        if kind == "turn_context":
            if payload.get("model"):
                st["model"] = payload["model"]
                sess.model = payload["model"]
        elif kind == "event_msg":
            last_assistant = _event(out, sess, payload, key, when, st, last_assistant)
        elif kind == "response_item":
            _item(out, sess, payload, key, when, ctx)
        elif kind == "compacted":
            summary = clean(str(payload.get("message") or ""))
            if summary:
                out.turns.append(Turn(sess.id, key, "summary", summary, when, entry_ids=[key],
                                      kind="compaction"))
        else:
            out.unknown[str(kind)] += 1
    return out


def _meta(out: Parsed, st: dict, payload: dict, ctx: ReadContext) -> None:
    st["meta_seen"] = True
    st["session_id"] = str(payload.get("id") or payload.get("session_id") or session_id_of(ctx.path))
    source = payload.get("source")
    parent = payload.get("parent_thread_id") or payload.get("forked_from_id")
    if isinstance(source, dict):
        spawn = (source.get("subagent") or {}).get("thread_spawn") if isinstance(source.get("subagent"), dict) else None
        if isinstance(spawn, dict):
            parent = parent or spawn.get("parent_thread_id")
    if payload.get("agent_nickname"):
        st["agent"] = f"{AGENT}:{payload['agent_nickname']}"
    git = found if isinstance(found := payload.get("git"), dict) else {}
    meta = {k: v for k, v in {
        "originator": payload.get("originator"), "cli_version": payload.get("cli_version"),
        "source": source if isinstance(source, str) else None,
        "git_branch": git.get("branch"), "git_commit": git.get("commit_hash"),
        "repository": git.get("repository_url"),
    }.items() if v}
    out.session(Session(id=st["session_id"], format=FORMAT, agent=st.get("agent", AGENT),
                        cwd=payload.get("cwd"), started_at=utc(payload.get("timestamp")),
                        parent_id=str(parent) if parent else None, metadata=meta))


def _event(out: Parsed, sess: Session, payload: dict, key: str, when: str, st: dict,
           last_assistant: Turn | None) -> Turn | None:
    kind = payload.get("type")
    if kind in ("user_message", "agent_message", "item_completed"):
        source = "item" if kind == "item_completed" else "event"
        found = payload.get("item")
        item: dict[str, Any] = found if isinstance(found, dict) else {}
        if source == "item" and item.get("type") not in ITEM_ROLES:
            out.dropped["event:item_completed"] += 1
            return last_assistant
        if st.setdefault("text_from", source) != source:
            out.dropped[f"twin:{kind}"] += 1
            return last_assistant
        if source == "item":
            return _item_message(out, sess, item, key, when, st) or last_assistant
    if kind == "user_message":
        text = clean(str(payload.get("message") or ""))
        if payload.get("images") or payload.get("local_images"):
            text = (text + "\n" + IMAGE).strip()
        if text:
            out.turns.append(Turn(sess.id, key, "user", text, when, entry_ids=[key]))
        else:
            out.dropped["empty"] += 1
    elif kind == "agent_message":
        text = clean(str(payload.get("message") or ""))
        if text:
            turn = Turn(sess.id, key, "assistant", text, when, model=st.get("model"), entry_ids=[key])
            out.turns.append(turn)
            return turn
        out.dropped["empty"] += 1
    elif kind == "token_count":
        info = payload.get("info")
        if isinstance(info, dict):
            if isinstance(info.get("total_token_usage"), dict):
                sess.metadata["usage"] = info["total_token_usage"]  # cumulative: never sum
            if last_assistant is not None and last_assistant.usage is None and isinstance(
                    info.get("last_token_usage"), dict):
                last_assistant.usage = info["last_token_usage"]
        out.dropped["token_count"] += 1
    elif kind in SKIPPED_EVENTS:
        out.dropped[f"event:{kind}"] += 1
    else:
        out.unknown[f"event:{kind}"] += 1
    return last_assistant


ITEM_ROLES = {"UserMessage": "user", "AgentMessage": "assistant"}


def _item_message(out: Parsed, sess: Session, item: dict, key: str, when: str, st: dict) -> Turn | None:
    """A turn from an `item_completed` UserMessage or AgentMessage; the assistant's turn
    is returned (token counts attach to it)."""
    content = item.get("content")
    parts: list[Any] = content if isinstance(content, list) else []
    text = clean("\n".join(str(c.get("text") or "") for c in parts if isinstance(c, dict)))
    if any(isinstance(c, dict) and "image" in str(c.get("type", "")).lower() for c in parts):
        text = (text + "\n" + IMAGE).strip()
    if not text:
        out.dropped["empty"] += 1
        return None
    role = ITEM_ROLES[item["type"]]
    turn = Turn(sess.id, key, role, text, when, model=st.get("model") if role == "assistant" else None,
                entry_ids=[key])
    out.turns.append(turn)
    return turn if role == "assistant" else None


def _item(out: Parsed, sess: Session, payload: dict, key: str, when: str, ctx: ReadContext) -> None:
    kind = payload.get("type")
    if kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
        call_id = str(payload.get("call_id") or payload.get("id") or key)
        if kind == "function_call":
            arguments = json_text(payload.get("arguments"))
        elif kind == "custom_tool_call":
            arguments = json_text(payload.get("input"))
        else:
            arguments = json_text(payload.get("action"))
        name = payload.get("name") or {"local_shell_call": "local_shell",
                                        "web_search_call": "web_search"}.get(kind)
        status = payload.get("status")
        status = "ok" if status == "completed" else ("error" if status in ("failed", "incomplete") else "pending")
        if kind == "web_search_call" and status == "pending":
            status = "ok"
        out.calls.append((sess.id, ToolCall(call_id=call_id, name=name, arguments=arguments,
                                            status=status, started_at=when, entry_id=key)))
    elif kind in ("function_call_output", "custom_tool_call_output"):
        result, status, duration = _output(payload.get("output"))
        result = truncate(clean(result), ctx.tool_result_chars)
        call = ToolCall(call_id=str(payload.get("call_id") or key), result=result, status=status,
                        duration_ms=duration, finished_at=when, entry_id=key)
        out.turns.append(Turn(sess.id, key, "tool", result, when, entry_ids=[key],
                              tool_calls=[call], kind="tool_result"))
    elif kind in SKIPPED_ITEMS:
        out.dropped[f"item:{kind}"] += 1
    else:
        out.unknown[f"item:{kind}"] += 1


def _output(output: Any) -> tuple[str, str, int | None]:
    """A tool output as (text, status, duration in ms), whichever shape Codex wrote."""
    if isinstance(output, list):
        return blocks_text(output), "ok", None
    if isinstance(output, dict):
        text = output.get("content") or output.get("output") or ""
        ok = output.get("success", True)
        return (text if isinstance(text, str) else blocks_text(text)), ("ok" if ok else "error"), None
    text = "" if output is None else str(output)
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict) and "output" in value:
            meta = found if isinstance(found := value.get("metadata"), dict) else {}
            code = meta.get("exit_code")
            seconds = meta.get("duration_seconds")
            return (str(value.get("output") or ""), "error" if code not in (0, None) else "ok",
                    int(seconds * 1000) if isinstance(seconds, (int, float)) else None)
    match = _PLAIN_OUTPUT.match(text)
    if match:
        code = int(match.group(1))
        return text[match.end():], "ok" if code == 0 else "error", int(float(match.group(2)) * 1000)
    return text, "ok", None
