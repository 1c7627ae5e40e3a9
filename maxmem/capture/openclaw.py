"""OpenClaw transcripts (the pi-coding-agent session format, v1 to v3).

One JSON entry per line; line 1 is a `session` header. Entries form a tree through
`parentId`; every entry is kept (abandoned branches included) and identified by its
`id`. Dropped: delivery-mirror copies, the envelopes around user text (timestamp
prefixes and channel metadata blocks, see maxmem.envelopes), NO_REPLY and
HEARTBEAT_OK housekeeping, `System:` exec notices, thinking, extension state.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..envelopes import strip
from .model import Parsed, ReadContext, Record, Session, ToolCall, Turn, json_text, parts_hash, utc
from .text import blocks_text, clean, only_placeholders, truncate

FORMAT = "openclaw"

SILENT_REPLIES = {"NO_REPLY", "HEARTBEAT_OK"}

_SYSTEM_NOTICE = re.compile(r"^System(?: \(untrusted\))?:")

KNOWN_SKIPPED = {
    "thinking_level_change",
    "label",
    "custom",
    "custom_message",
}


def agent_of(path: str) -> str:
    parts = Path(path).parts
    if len(parts) >= 3 and parts[-2] == "sessions" and len(parts) >= 4 and parts[-4] == "agents":
        return f"openclaw:{parts[-3]}"
    return "openclaw"


def session_id_of(path: str) -> str:
    name = Path(path).name
    return name.split(".jsonl", 1)[0]


def parse(records: Iterable[Record], state: dict[str, Any], ctx: ReadContext) -> Parsed:
    out = Parsed(state=dict(state))
    st = out.state
    agent = agent_of(ctx.path)

    def session() -> Session:
        sid = st.get("session_id") or session_id_of(ctx.path)
        st["session_id"] = sid
        return out.session(Session(id=sid, format=FORMAT, agent=agent))

    for record in records:
        entry = record.value
        kind = entry.get("type")
        when = utc(entry.get("timestamp"))
        if kind == "session":
            if st.get("session_id") and st["session_id"] != entry.get("id"):
                # A second header: the file was rewritten under us; the cursor code
                # re-reads such files from 0, so keep the first identity.
                out.dropped["header"] += 1
                continue
            st["session_id"] = str(entry.get("id") or session_id_of(ctx.path))
            st["version"] = entry.get("version", 1)
            meta = {"version": st["version"]}
            if entry.get("parentSession"):
                meta["parent_session_file"] = entry["parentSession"]
            out.session(Session(id=st["session_id"], format=FORMAT, agent=agent,
                                cwd=entry.get("cwd"), started_at=when, metadata=meta,
                                model=entry.get("modelId")))
            if entry.get("modelId"):
                st["model"] = entry["modelId"]
            continue
        sess = session()
        key = str(entry.get("id") or f"b{record.offset}:{parts_hash(json.dumps(entry, sort_keys=True))[:8]}")
        if kind == "message":
            _message(out, sess, entry, key, when, ctx)
        elif kind == "model_change":
            st["model"] = entry.get("modelId") or st.get("model")
            sess.model = st["model"]
        elif kind == "custom" and entry.get("customType") == "model-snapshot":
            data = entry.get("data") or {}
            st["model"] = data.get("modelId") or st.get("model")
        elif kind == "compaction" or kind == "branch_summary":
            summary = clean(str(entry.get("summary") or ""))
            if summary:
                out.turns.append(Turn(sess.id, key, "summary", summary, when or ctx.default_time,
                                      entry_ids=[key], kind=kind))
        elif kind == "session_info":
            if entry.get("name"):
                sess.title = str(entry["name"])
        elif kind in KNOWN_SKIPPED:
            out.dropped[kind] += 1
        else:
            out.unknown[str(kind)] += 1
    return out


def _message(out: Parsed, sess: Session, entry: dict, key: str, when: str | None, ctx: ReadContext) -> None:
    message = entry.get("message") or {}
    role = message.get("role")
    when = when or utc(message.get("timestamp"), ctx.default_time) or ctx.default_time
    if role == "user":
        stripped = strip(clean(blocks_text(message.get("content"))))
        text, speaker = stripped.text, stripped.sender
        if not entry.get("timestamp") and not message.get("timestamp") and stripped.at:
            when = stripped.at  # the envelope's time only when the entry has none of its own
        if not text or only_placeholders(text):
            out.dropped["empty"] += 1
            return
        if _SYSTEM_NOTICE.match(text):
            out.dropped["system-notice"] += 1
            return
        out.turns.append(Turn(sess.id, key, "user", text, when, entry_ids=[key], speaker=speaker))
    elif role == "assistant":
        if message.get("provider") == "openclaw" and message.get("model") == "delivery-mirror":
            out.dropped["delivery-mirror"] += 1
            return
        content = message.get("content") or []
        text = clean(blocks_text(content, text_types=("text",)))
        calls = [
            ToolCall(call_id=str(block.get("id")), name=block.get("name"),
                     arguments=json_text(block.get("arguments")), status="pending",
                     started_at=when, entry_id=key)
            for block in content
            if isinstance(block, dict) and block.get("type") == "toolCall" and block.get("id")
        ]
        if text in SILENT_REPLIES and not calls:
            out.dropped["silent-reply"] += 1
            return
        if not text and not calls:
            out.dropped["error" if message.get("stopReason") in ("error", "aborted") else "empty"] += 1
            return
        model = message.get("model") or out.state.get("model")
        out.turns.append(Turn(sess.id, key, "assistant", text, when, model=model,
                              usage=message.get("usage"), entry_ids=[key], tool_calls=calls))
        if model:
            sess.model = model
    elif role == "toolResult":
        result = truncate(clean(blocks_text(message.get("content"))), ctx.tool_result_chars)
        call = ToolCall(call_id=str(message.get("toolCallId") or key), name=message.get("toolName"),
                        result=result, status="error" if message.get("isError") else "ok",
                        finished_at=when, entry_id=key)
        out.turns.append(Turn(sess.id, key, "tool", result, when, entry_ids=[key],
                              tool_calls=[call], kind="tool_result"))
    elif role == "bashExecution":
        output = truncate(str(message.get("output") or ""), ctx.tool_result_chars)
        failed = message.get("cancelled") or (message.get("exitCode") not in (0, None))
        call = ToolCall(call_id=key, name="bash", arguments=json_text({"command": message.get("command")}),
                        result=output, status="error" if failed else "ok",
                        started_at=when, finished_at=when, entry_id=key)
        out.turns.append(Turn(sess.id, key, "tool", output, when, entry_ids=[key],
                              tool_calls=[call], kind="tool_result"))
    elif role in ("custom", "hookMessage"):
        out.dropped["custom"] += 1
    else:
        out.unknown[f"message:{role}"] += 1
