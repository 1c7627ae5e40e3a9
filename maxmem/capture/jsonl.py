"""Plain JSONL chat logs: one message per line with a role and some content.

Accepted line shapes (field names are tried in order):
  {"role": "user", "content": "…", "timestamp": "…", "session_id": "…", "id": "…", "model": "…"}
  {"message": {"role": …, "content": …}, …}      (the envelope many agents use)
`role` may also be `author`/`speaker`/`from`; content may be `text`/`message`/`body`
and a string or a list of typed blocks. Roles human/ai/bot/model are mapped to
user/assistant; system and developer lines are dropped. Lines are keyed by their own
`id`, else by byte offset. The session is the line's `session_id`, else the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .model import Parsed, ReadContext, Record, Session, ToolCall, Turn, parts_hash, utc
from .text import blocks_text, clean, only_placeholders, truncate

FORMAT = "jsonl"

ROLE_NAMES = {
    "user": "user", "human": "user", "me": "user",
    "assistant": "assistant", "ai": "assistant", "bot": "assistant", "model": "assistant",
    "agent": "assistant",
    "tool": "tool", "function": "tool", "toolresult": "tool", "tool_result": "tool",
    "summary": "summary",
    "system": None, "developer": None,
}


def _first(obj: dict, *names: str) -> Any:
    for name in names:
        value = obj.get(name)
        if value not in (None, ""):
            return value
    return None


def parse(records: Iterable[Record], state: dict[str, Any], ctx: ReadContext) -> Parsed:
    out = Parsed(state=dict(state))
    # Without a session id in the lines, the file is the session: its stem plus a hash
    # of where it was first seen (two chat.jsonl in two folders are two sessions; the
    # id travels with the cursor when the file is renamed).
    default_session = out.state.setdefault(
        "default_session", f"{Path(ctx.path).name.rsplit('.', 1)[0]}-{parts_hash(ctx.path)[:8]}")
    for record in records:
        line = record.value
        message = line.get("message") if isinstance(line.get("message"), dict) else line
        role_value = _first(message, "role", "author", "speaker", "from", "sender")
        if isinstance(role_value, dict):  # {"author": {"role": "user"}}
            role_value = role_value.get("role")
        role_name = str(role_value or "").strip().lower()
        if role_name not in ROLE_NAMES:
            out.unknown[f"role:{role_name or '-'}"] += 1
            continue
        role = ROLE_NAMES[role_name]
        if role is None:
            out.dropped[f"role:{role_name}"] += 1
            continue
        content = _first(message, "content", "text", "body", "message")
        text = clean(blocks_text(content))
        if not text or only_placeholders(text):
            out.dropped["empty"] += 1
            continue
        raw_time = _first(line, "timestamp", "time", "created_at", "ts", "date") or _first(
            message, "timestamp", "time", "created_at")
        when = utc(raw_time, ctx.default_time) or ctx.default_time
        sid = str(_first(line, "session_id", "sessionId", "conversation_id", "thread_id") or default_session)
        out.session(Session(id=sid, format=FORMAT, agent=str(line.get("agent") or "jsonl")))
        line_id = _first(line, "id", "uuid", "message_id")
        key = str(line_id) if line_id is not None else f"b{record.offset}"
        # Without a time of its own, a line's identity is its place in the file.
        fingerprint = "" if raw_time else parts_hash(sid, key, role, text)
        calls: list[ToolCall] = []
        kind = "message"
        if role == "tool":
            text = truncate(text, ctx.tool_result_chars)
            call_id = str(_first(message, "tool_call_id", "call_id", "toolCallId") or key)
            calls = [ToolCall(call_id=call_id, name=_first(message, "name", "tool", "tool_name"),
                              result=text, status="ok", finished_at=when, entry_id=key)]
            kind = "tool_result"
        out.turns.append(Turn(sid, key, role, text, when, model=_first(message, "model"),
                              usage=message.get("usage") if isinstance(message.get("usage"), dict) else None,
                              entry_ids=[key], tool_calls=calls, kind=kind, fingerprint=fingerprint))
    return out
