"""Claude Code transcripts (~/.claude/projects/<sanitized-cwd>/<sessionId>.jsonl).

One API response is written as several `assistant` lines sharing `message.id`; they
become one turn, keyed by that id. Every other turn is keyed by its line `uuid`, which
is global, so lines copied into another file by resume or fork are stored once.

A response whose last line so far has no `stop_reason` may still be growing: unless
the file is idle (`ctx.final`), it is held back and the cursor stops before it.

Dropped: thinking, `isMeta` and command/caveat lines, system reminders, progress
echoes of sub-agent messages, queue operations, snapshots, API errors, images.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .model import Parsed, ReadContext, Record, Session, ToolCall, Turn, json_text, utc
from .text import blocks_text, clean, only_placeholders, truncate

FORMAT = "claude-code"
AGENT = "claude-code"

KNOWN_SKIPPED = {
    "file-history-snapshot", "queue-operation", "progress", "attachment",
    "permission-mode", "mode", "last-prompt", "pr-link", "bridge-session",
    "agent-name", "agent-setting", "system",
}
TITLE_RANK = {"summary": 1, "ai-title": 2, "custom-title": 3}
_INTERRUPTED = "[Request interrupted by user"


def parse(records: Iterable[Record], state: dict[str, Any], ctx: ReadContext) -> Parsed:
    out = Parsed(state=dict(state))
    st = out.state
    stem = Path(ctx.path).name.split(".jsonl", 1)[0]
    group: list[Record] = []  # the assistant lines of the response being read
    seen_uuids: set[str] = set()
    summaries: list[dict] = []

    def session_of(line: dict) -> Session:
        sid = str(line.get("sessionId") or st.get("session_id") or stem)
        st.setdefault("session_id", sid)
        agent_id = line.get("agentId")
        if line.get("isSidechain") and agent_id:
            # A sub-agent shares its parent's sessionId; keep its turns apart.
            return out.session(Session(id=f"{sid}:{agent_id}", format=FORMAT, agent=AGENT,
                                       parent_id=sid, cwd=line.get("cwd"),
                                       metadata={"agent_id": agent_id, "sidechain": True}))
        meta = {k: line[k] for k in ("gitBranch", "version", "slug") if line.get(k)}
        return out.session(Session(id=sid, format=FORMAT, agent=AGENT, cwd=line.get("cwd"),
                                   started_at=utc(line.get("timestamp")), metadata=meta))

    def flush() -> None:
        if group:
            _assistant(out, session_of(group[0].value), [r.value for r in group], ctx)
            group.clear()

    for record in records:
        line = record.value
        kind = line.get("type")
        if line.get("uuid"):
            seen_uuids.add(str(line["uuid"]))
        if kind == "assistant":
            message = line.get("message") or {}
            if group and (group[0].value.get("message") or {}).get("id") != message.get("id"):
                flush()
            group.append(record)
            continue
        if kind == "user":
            flush()
            _user(out, session_of(line), line, ctx)
        elif kind in TITLE_RANK:
            if kind == "summary":
                summaries.append(line)
            else:
                _title(out, session_of(line), kind, line.get("customTitle") or line.get("aiTitle"))
        elif kind in KNOWN_SKIPPED:
            out.dropped[str(kind)] += 1
        else:
            out.unknown[str(kind)] += 1

    if group:
        last = (group[-1].value.get("message") or {})
        if last.get("stop_reason") is None and not ctx.final:
            out.consumed = group[0].offset  # the response may still be growing
            group.clear()
        else:
            flush()
    for line in summaries:
        # Summaries are sometimes written into another session's file: trust only
        # those whose leaf is in this file.
        if str(line.get("leafUuid")) in seen_uuids and st.get("session_id"):
            _title(out, out.session(Session(id=st["session_id"], format=FORMAT, agent=AGENT)),
                   "summary", line.get("summary"))
        else:
            out.dropped["foreign-summary"] += 1
    return out


def _title(out: Parsed, sess: Session, kind: str, title: Any) -> None:
    if not isinstance(title, str) or not title.strip():
        return
    ranks = out.state.setdefault("title_rank", {})
    if TITLE_RANK[kind] >= ranks.get(sess.id, 0):
        ranks[sess.id] = TITLE_RANK[kind]
        sess.title = title.strip()


def _user(out: Parsed, sess: Session, line: dict, ctx: ReadContext) -> None:
    key = str(line.get("uuid") or "")
    when = utc(line.get("timestamp"), ctx.default_time) or ctx.default_time
    if line.get("isMeta"):
        out.dropped["meta"] += 1
        return
    content = (line.get("message") or {}).get("content")
    if line.get("isCompactSummary"):
        text = clean(blocks_text(content))
        if text:
            out.turns.append(Turn(sess.id, key, "summary", text, when, entry_ids=[key], kind="compaction"))
        return
    blocks = content if isinstance(content, list) else []
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    for index, block in enumerate(results):
        _tool_result(out, sess, line, block, f"{key}:{index}" if index else key, when, ctx)
    text = clean(blocks_text(content))
    if not text or only_placeholders(text) or text.startswith(_INTERRUPTED):
        if not results:
            out.dropped["empty"] += 1
        return
    out.turns.append(Turn(sess.id, f"{key}:text" if results else key, "user", text, when,
                          entry_ids=[key]))


def _tool_result(out: Parsed, sess: Session, line: dict, block: dict, key: str, when: str,
                 ctx: ReadContext) -> None:
    result = truncate(clean(blocks_text(block.get("content"))), ctx.tool_result_chars)
    structured = line.get("toolUseResult")
    duration = None
    if isinstance(structured, dict):
        duration = structured.get("durationMs") or structured.get("totalDurationMs")
    call = ToolCall(call_id=str(block.get("tool_use_id") or key), result=result,
                    status="error" if block.get("is_error") else "ok",
                    duration_ms=int(duration) if isinstance(duration, (int, float)) else None,
                    finished_at=when, entry_id=str(line.get("uuid") or key))
    out.turns.append(Turn(sess.id, key, "tool", result, when, entry_ids=[str(line.get("uuid") or key)],
                          tool_calls=[call], kind="tool_result"))


def _assistant(out: Parsed, sess: Session, lines: list[dict], ctx: ReadContext) -> None:
    first = lines[0]
    message = first.get("message") or {}
    if any(line.get("isApiErrorMessage") for line in lines) or message.get("model") == "<synthetic>":
        out.dropped["api-error"] += 1
        return
    key = str(message.get("id") or first.get("uuid"))
    when = utc(first.get("timestamp"), ctx.default_time) or ctx.default_time
    texts: list[str] = []
    calls: list[ToolCall] = []
    usage = None
    for line in lines:
        msg = line.get("message") or {}
        for block in msg.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and block.get("text"):
                texts.append(block["text"])
            elif block.get("type") == "tool_use" and block.get("id"):
                calls.append(ToolCall(call_id=str(block["id"]), name=block.get("name"),
                                      arguments=json_text(block.get("input")), status="pending",
                                      started_at=utc(line.get("timestamp"), when),
                                      entry_id=str(line.get("uuid") or key)))
        if isinstance(msg.get("usage"), dict):
            # Every split line repeats usage; the last one has the final output count.
            usage = msg["usage"]
    text = clean("\n\n".join(texts))
    if not text and not calls:
        out.dropped["thinking-only"] += 1
        return
    model = message.get("model")
    if model:
        sess.model = model
    out.turns.append(Turn(sess.id, key, "assistant", text, when, model=model, usage=usage,
                          entry_ids=[str(line.get("uuid")) for line in lines if line.get("uuid")],
                          tool_calls=calls))
