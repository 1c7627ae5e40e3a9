"""Chat exports: ChatGPT `conversations.json` (and the Claude.ai export of the same name).

Both are one-shot snapshots, read whole and imported idempotently: ChatGPT turns are
keyed by (conversation id, node id), Claude.ai turns by message uuid. For ChatGPT only
the visible thread is kept — the path from `current_node` up through `parent`; other
children are regenerations or edits.
"""

from __future__ import annotations

import json
from typing import Any

from .model import CaptureFormatError, Parsed, ReadContext, Session, ToolCall, Turn, utc
from .text import IMAGE, clean, only_placeholders, truncate

FORMAT = "chatgpt"

HIDDEN_CONTENT = {"thoughts", "reasoning_recap", "user_editable_context", "model_editable_context",
                  "system_error", "tether_browsing_display"}


def parse_document(data: bytes, ctx: ReadContext) -> Parsed:
    try:
        value = json.loads(data.decode("utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        raise CaptureFormatError(f"not a JSON chat export ({exc.msg} at line {exc.lineno})") from None
    if isinstance(value, dict):
        value = value.get("conversations", [value])
    if not isinstance(value, list):
        raise CaptureFormatError("not a chat export: expected a list of conversations")
    out = Parsed()
    for conversation in value:
        if not isinstance(conversation, dict):
            out.unknown["not-a-conversation"] += 1
        elif "mapping" in conversation:
            _chatgpt(out, conversation, ctx)
        elif "chat_messages" in conversation:
            _claude_ai(out, conversation, ctx)
        else:
            out.unknown["conversation-shape"] += 1
    return out


def _thread(mapping: dict, current: Any) -> list[dict]:
    """The visible thread: from current_node up to the root, in reading order."""
    path: list[dict] = []
    seen: set[str] = set()
    node_id = current
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        path.append(node)
        node_id = node.get("parent")
    if not path:  # no current_node: fall back to insertion order
        path = [node for node in mapping.values() if isinstance(node, dict)]
        path.reverse()
    path.reverse()
    return path


def _parts_text(content: dict) -> str:
    kind = content.get("content_type")
    if kind in HIDDEN_CONTENT:
        return ""
    if kind == "code" and isinstance(content.get("text"), str):
        return content["text"]
    parts = []
    for part in content.get("parts") or []:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict):
            if part.get("content_type") == "image_asset_pointer" or "asset_pointer" in part:
                parts.append(IMAGE)
            elif isinstance(part.get("text"), str):
                parts.append(part["text"])
    if not parts and isinstance(content.get("text"), str):
        parts.append(content["text"])
    return "\n".join(parts)


def _chatgpt(out: Parsed, conversation: dict, ctx: ReadContext) -> None:
    sid = str(conversation.get("conversation_id") or conversation.get("id") or "")
    if not sid:
        out.unknown["conversation-without-id"] += 1
        return
    started = utc(conversation.get("create_time"), ctx.default_time)
    sess = out.session(Session(id=sid, format=FORMAT, agent="chatgpt", title=conversation.get("title"),
                               started_at=started, model=conversation.get("default_model_slug")))
    mapping = found if isinstance(found := conversation.get("mapping"), dict) else {}
    for node in _thread(mapping, conversation.get("current_node")):
        message = node.get("message")
        if not isinstance(message, dict):
            continue
        role = (message.get("author") or {}).get("role")
        metadata = found if isinstance(found := message.get("metadata"), dict) else {}
        if role not in ("user", "assistant", "tool") or metadata.get("is_visually_hidden_from_conversation"):
            out.dropped[f"role:{role}"] += 1
            continue
        text = clean(_parts_text(message.get("content") or {}))
        if not text or only_placeholders(text):
            out.dropped["empty"] += 1
            continue
        key = str(node.get("id") or message.get("id"))
        when = utc(message.get("create_time"), started) or ctx.default_time
        calls: list[ToolCall] = []
        kind = "message"
        if role == "tool":
            text = truncate(text, ctx.tool_result_chars)
            calls = [ToolCall(call_id=key, name=(message.get("author") or {}).get("name"), result=text,
                              status="ok", finished_at=when, entry_id=key)]
            kind = "tool_result"
        model = metadata.get("model_slug")
        if model:
            sess.model = model
        out.turns.append(Turn(sid, key, role, text, when, model=model, entry_ids=[key],
                              tool_calls=calls, kind=kind))


def _claude_ai(out: Parsed, conversation: dict, ctx: ReadContext) -> None:
    sid = str(conversation.get("uuid") or "")
    if not sid:
        out.unknown["conversation-without-id"] += 1
        return
    started = utc(conversation.get("created_at"), ctx.default_time)
    out.session(Session(id=sid, format=FORMAT, agent="claude.ai", title=conversation.get("name"),
                        started_at=started))
    for message in conversation.get("chat_messages") or []:
        if not isinstance(message, dict):
            continue
        role = {"human": "user", "assistant": "assistant"}.get(str(message.get("sender")))
        if role is None:
            out.dropped[f"role:{message.get('sender')}"] += 1
            continue
        text = message.get("text")
        if not text and isinstance(message.get("content"), list):
            text = "\n".join(str(b.get("text")) for b in message["content"]
                             if isinstance(b, dict) and b.get("type") == "text" and b.get("text"))
        text = clean(str(text or ""))
        if not text:
            out.dropped["empty"] += 1
            continue
        key = str(message.get("uuid"))
        out.turns.append(Turn(sid, key, role, text, utc(message.get("created_at"), started) or ctx.default_time,
                              entry_ids=[key]))
