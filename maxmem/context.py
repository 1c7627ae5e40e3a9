"""Compaction hooks: save a session before its context is compacted, brief it after.

`save_context(brain, data)` is the pre-compaction hook. It takes one JSON document —
the session's exchanges (with their tool calls) and the observations the agent
curated — checks all of it before writing anything, and stores it in one
transaction: each exchange as a `conversation` memory of kind "exchange", each
observation as a memory whose kind is its type. Every item carries a `save_key` in
its metadata (a hash of what identifies it), so saving the same document twice, or
a later document that repeats earlier exchanges, stores nothing twice.

`build_context(brain, session=...)` is the post-compaction / session-start brief: a
compact Markdown page within a token budget — core memories (pinned, then most
important), work in progress with how long it has been open, today's and yesterday's
daily notes, the session's latest exchanges, and the last day's important
observations. Tokens are estimated at 4 characters each.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any, Mapping, Sequence

from .clock import iso, parse_time
from .errors import InvalidInput
from .memory import Memory, check_importance, check_kind, check_tags
from .work import active, category_for, format_hours

CHARS_PER_TOKEN = 4
DEFAULT_BUDGET_TOKENS = 2000
MIN_BUDGET_TOKENS = 100
MAX_TEXT = 200_000  # per message: larger ones are cut (the rest is in the transcript)
MAX_TOOL_TEXT = 2_000  # tool params / results kept per call
MAX_THINKING = 4_000
MAX_OBSERVATION = 100_000
MAX_ITEMS = 10_000

SAVED_KEYS_SQL = """
SELECT json_extract(metadata, '$.save_key') AS save_key FROM memories
WHERE session_id = ? AND json_extract(metadata, '$.save_key') IS NOT NULL
"""

# The share of the budget each section of the brief starts with; what a section does
# not use goes to the sections that were cut short, in this order.
SHARES = (
    ("core", 0.30),
    ("work", 0.20),
    ("daily", 0.20),
    ("session", 0.20),
    ("recent", 0.10),
)


# --- save-context -----------------------------------------------------------------------


@dataclass
class SaveReport:
    """What save_context stored and what it found already saved."""

    session_key: str
    exchanges_stored: int = 0
    exchanges_already_saved: int = 0
    tool_calls_stored: int = 0
    observations_stored: int = 0
    observations_already_saved: int = 0
    same_content_elsewhere: int = 0
    ids: list[int] = field(default_factory=list)

    def describe(self) -> str:
        text = (
            f"session {self.session_key}: stored {self.exchanges_stored} exchange(s)"
            f" with {self.tool_calls_stored} tool call(s) and {self.observations_stored}"
            f" observation(s); already saved: {self.exchanges_already_saved} exchange(s),"
            f" {self.observations_already_saved} observation(s)"
        )
        if self.same_content_elsewhere:
            text += f"; {self.same_content_elsewhere} identical to a memory stored before"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


def _text(value: Any, where: str, *, required: bool = True, limit: int = MAX_TEXT) -> str | None:
    if value is None:
        if required:
            raise InvalidInput(f"{where} is missing")
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{where} must be text, not {type(value).__name__}")
    return value[:limit]


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{where} must be an object, not {type(value).__name__}")
    return value


def _array(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInput(f"{where} must be a list, not {type(value).__name__}")
    if len(value) > MAX_ITEMS:
        raise InvalidInput(f"{where} has more than {MAX_ITEMS} items: save in parts")
    return value


def _json_text(value: Any, limit: int) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more characters]"


def _key(*parts: Any) -> str:
    digest = hashlib.sha256("\x1f".join("" if p is None else str(p) for p in parts).encode())
    return digest.hexdigest()[:32]


def _tool_call(value: Any, where: str) -> dict[str, Any]:
    call = _object(value, where)
    name = _text(call.get("name"), f"{where}.name", limit=200)
    if not name or not name.strip():
        raise InvalidInput(f"{where}.name is empty")
    status = _text(call.get("status"), f"{where}.status", required=False, limit=40)
    duration = call.get("duration_ms")
    if duration is not None and (
        isinstance(duration, bool) or not isinstance(duration, (int, float)) or duration < 0
    ):
        raise InvalidInput(f"{where}.duration_ms must be a number of milliseconds ≥ 0")
    out: dict[str, Any] = {"name": name.strip()}
    if call.get("params") is not None:
        out["params"] = _json_text(call.get("params"), MAX_TOOL_TEXT)
    if call.get("result") is not None:
        out["result"] = _json_text(call.get("result"), MAX_TOOL_TEXT)
    if status:
        out["status"] = status
    if duration is not None:
        out["duration_ms"] = int(duration)
    return out


def _exchange(value: Any, where: str, session_key: str,
              now: datetime) -> tuple[dict[str, Any], dict[str, Any]]:
    ex = _object(value, where)
    user = _text(ex.get("user_message"), f"{where}.user_message") or ""
    assistant = _text(ex.get("assistant_response"), f"{where}.assistant_response") or ""
    if not user.strip() and not assistant.strip():
        raise InvalidInput(f"{where}: user_message and assistant_response are both empty")
    thinking = _text(ex.get("thinking"), f"{where}.thinking", required=False, limit=MAX_THINKING)
    model = _text(ex.get("model"), f"{where}.model", required=False, limit=200)
    timestamp = ex.get("timestamp")
    at: datetime | None = None
    if timestamp is not None:
        try:
            at = parse_time(timestamp)
        except InvalidInput as exc:
            raise InvalidInput(f"{where}.timestamp: {exc}") from None
    calls = [
        _tool_call(c, f"{where}.tool_calls[{i}]")
        for i, c in enumerate(_array(ex.get("tool_calls"), f"{where}.tool_calls"))
    ]
    parts = []
    if user.strip():
        parts.append(f"User: {user.strip()}")
    if assistant.strip():
        parts.append(f"Assistant: {assistant.strip()}")
    if calls:
        parts.append("Tools: " + ", ".join(
            c["name"] + (f" ({c['status']})" if c.get("status") else "") for c in calls))
    metadata: dict[str, Any] = {
        "save_key": _key("exchange", session_key, at and iso(at), user, assistant)
    }
    if model:
        metadata["model"] = model
    if thinking:
        metadata["thinking"] = thinking
    if calls:
        metadata["tool_calls"] = calls
    title = " ".join(user.split())[:80] or None
    item = {
        "content": "\n\n".join(parts),
        "title": title,
        "category": "conversation",
        "kind": "exchange",
        "created_at": iso(at or now),
        "metadata": metadata,
    }
    raw = {"user": user.strip(), "assistant": assistant.strip(), "model": model,
           "at": item["created_at"], "calls": calls}
    return item, raw


def _observation(value: Any, where: str, session_key: str) -> dict[str, Any]:
    ob = _object(value, where)
    kind_text = _text(ob.get("type"), f"{where}.type", limit=64) or ""
    try:
        kind = check_kind(kind_text.strip().lower())
    except InvalidInput as exc:
        raise InvalidInput(f"{where}.type: {exc}") from None
    content = _text(ob.get("content"), f"{where}.content", limit=MAX_OBSERVATION + 1) or ""
    if not content.strip():
        raise InvalidInput(f"{where}.content is empty")
    if len(content) > MAX_OBSERVATION:
        raise InvalidInput(f"{where}.content is longer than {MAX_OBSERVATION} characters: split it")
    title = _text(ob.get("title"), f"{where}.title", required=False, limit=500)
    item: dict[str, Any] = {
        "content": content.strip(),
        "title": title.strip() if title else None,
        "kind": kind,
        "category": category_for(kind),
        "metadata": {"save_key": _key("observation", session_key, kind, title, content.strip())},
    }
    if ob.get("importance") is not None:
        try:
            item["importance"] = check_importance(ob.get("importance"))
        except InvalidInput as exc:
            raise InvalidInput(f"{where}.importance: {exc}") from None
    try:
        item["tags"] = check_tags(ob.get("tags"))
    except InvalidInput as exc:
        raise InvalidInput(f"{where}.tags: {exc}") from None
    return item


@dataclass
class ContextDocument:
    """A checked save-context document: memory items, and each exchange's raw parts."""

    session_key: str
    agent: str | None
    exchanges: list[dict[str, Any]]
    raw_exchanges: list[dict[str, Any]]
    observations: list[dict[str, Any]]
    metadata: dict[str, Any]


def parse_context(data: Any, now: datetime) -> ContextDocument:
    """Check a save-context document, all of it, before anything is written.
    Raises InvalidInput naming the first bad field, e.g. exchanges[3].user_message."""
    doc = _object(data, "the document")
    session_key = _text(doc.get("session_key"), "session_key", limit=200)
    if not session_key or not session_key.strip():
        raise InvalidInput("session_key is empty")
    session_key = session_key.strip()
    agent = _text(doc.get("agent"), "agent", required=False, limit=200)
    if doc.get("metadata") is not None:
        _object(doc.get("metadata"), "metadata")
    parsed = [
        _exchange(e, f"exchanges[{i}]", session_key, now)
        for i, e in enumerate(_array(doc.get("exchanges"), "exchanges"))
    ]
    observations = [
        _observation(o, f"observations[{i}]", session_key)
        for i, o in enumerate(_array(doc.get("observations"), "observations"))
    ]
    if not parsed and not observations:
        raise InvalidInput("nothing to save: exchanges and observations are both empty")
    return ContextDocument(session_key, agent, [item for item, _ in parsed],
                           [raw for _, raw in parsed], observations,
                           dict(doc.get("metadata") or {}))


def save_context(brain: Any, data: Any) -> SaveReport:
    """Store a session's exchanges and observations in one transaction, idempotently.

    Exchanges become conversation memories and, when brain.db has the capture tables,
    turns and tool calls of the session too (with the capture job's dedup keys, so a
    transcript captured later does not store them twice). Texts are embedded before
    the write transaction opens; tool parameters, results and thinking are redacted
    like memory content.
    """
    doc = parse_context(data, brain.clock.now())
    report = SaveReport(doc.session_key)
    saved = {row["save_key"] for row in brain.db.rows(SAVED_KEYS_SQL, (doc.session_key,))}
    new: list[dict[str, Any]] = []
    new_raw: list[dict[str, Any]] = []
    seen: set[str] = set()
    raws = {id(item): raw for item, raw in zip(doc.exchanges, doc.raw_exchanges)}
    for item in [*doc.exchanges, *doc.observations]:
        key = item["metadata"]["save_key"]
        is_exchange = id(item) in raws
        if key in saved or key in seen:
            if is_exchange:
                report.exchanges_already_saved += 1
            else:
                report.observations_already_saved += 1
            continue
        seen.add(key)
        if doc.metadata:
            item["metadata"]["context"] = doc.metadata
        if is_exchange:
            new_raw.append({**raws[id(item)], "save_key": key})
        new.append({**item, "session_id": doc.session_key, "agent": doc.agent, "source": "agent"})
    if not new:
        return report
    _redact_metadata(brain, new, new_raw)
    brain.prefetch_vectors(new)  # embed outside the write transaction
    with brain.db.atomic():  # all or nothing
        stored = brain.remember_many(new, embed=False)
        if new_raw and brain.db.table_exists("turns"):
            _store_turns(brain, doc, new_raw)
    for item, memory in zip(new, stored):
        report.ids.append(memory.id)
        if memory.metadata.get("save_key") != item["metadata"]["save_key"]:
            report.same_content_elsewhere += 1
            continue
        if item["category"] == "conversation":
            report.exchanges_stored += 1
            report.tool_calls_stored += len(item["metadata"].get("tool_calls", []))
        else:
            report.observations_stored += 1
    return report


def _redact_metadata(brain: Any, items: list[dict[str, Any]], raws: list[dict[str, Any]]) -> None:
    """Secrets in tool calls and thinking are removed as they are from memory content."""
    if not brain.config.redact_on_remember:
        return
    from .redact import redact

    def clean(text: str | None) -> str | None:
        return None if text is None else redact(text)[0]

    for item in items:
        meta = item["metadata"]
        if "thinking" in meta:
            meta["thinking"] = clean(meta["thinking"])
        for call in meta.get("tool_calls", []):
            for field_name in ("params", "result"):
                if field_name in call:
                    call[field_name] = clean(call[field_name])
    for raw in raws:
        raw["user"], raw["assistant"] = clean(raw["user"]), clean(raw["assistant"])


def _store_turns(brain: Any, doc: ContextDocument, raws: list[dict[str, Any]]) -> None:
    """The exchanges as the session's turns and tool calls (inside the caller's transaction)."""
    from .capture import store
    from .capture.model import Session, ToolCall, Turn

    db = brain.db
    session = Session(id=doc.session_key, format="save-context", agent=doc.agent or "unknown")
    store.upsert_session(db, session, source_file="save-context", updated_at=None, new_turns=0)
    seq = store.max_seq(db, doc.session_key)
    added = 0
    latest = None
    for raw in raws:
        key = raw["save_key"]
        assistant_turn = None
        for role, text in (("user", raw["user"]), ("assistant", raw["assistant"])):
            if not text:
                continue
            turn = Turn(session_id=doc.session_key, key=f"save-context:{key}:{role}", role=role,
                        text=text, timestamp=raw["at"],
                        model=raw["model"] if role == "assistant" else None)
            turn_id = store.insert_turn(db, turn, seq + 1, "save-context")
            if turn_id is not None:
                seq, added = seq + 1, added + 1
                latest = max(latest or raw["at"], raw["at"])
            if role == "assistant":
                assistant_turn = turn_id
        for number, call in enumerate(raw["calls"]):
            store.upsert_call(db, doc.session_key, ToolCall(
                call_id=f"save-context:{key}:{number}", name=call["name"],
                arguments=call.get("params"), result=call.get("result"),
                status=call.get("status"), duration_ms=call.get("duration_ms"),
                started_at=raw["at"],
            ), assistant_turn)
    store.upsert_session(db, session, source_file="save-context", updated_at=latest,
                         new_turns=added)


# --- the brief --------------------------------------------------------------------------


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _label(memory: Memory, limit: int = 240) -> str:
    body = _one_line(memory.content, limit)
    if memory.title and not memory.content.startswith(memory.title):
        return f"**{_one_line(memory.title, 80)}** — {body}"
    return body


@dataclass
class Section:
    name: str
    heading: str
    lines: list[str]
    ids: list[int]
    shown: int = 0

    def render(self, budget_chars: int) -> tuple[str, int]:
        """The section's Markdown within `budget_chars`; returns (text, lines shown)."""
        if not self.lines:
            return "", 0
        head = f"## {self.heading}\n"
        if len(head) >= budget_chars:
            return "", 0
        out, used, shown = [head], len(head), 0
        for line in self.lines:
            more = len(self.lines) - shown - 1
            tail = f"- … {more} more\n" if more else ""
            if used + len(line) + 1 + len(tail) > budget_chars:
                break
            out.append(line + "\n")
            used += len(line) + 1
            shown += 1
        if shown == 0:
            return "", 0
        if shown < len(self.lines):
            out.append(f"- … {len(self.lines) - shown} more\n")
        return "".join(out), shown


@dataclass
class Brief:
    """The boot context: Markdown within the budget, and what went into it."""

    markdown: str
    budget_tokens: int
    sections: dict[str, list[int]]

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.markdown)

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget_tokens": self.budget_tokens,
            "tokens": self.tokens,
            "sections": self.sections,
            "markdown": self.markdown,
        }


def _time(at: str, tz: tzinfo) -> str:
    return parse_time(at).astimezone(tz).strftime("%H:%M")


def build_context(
    brain: Any,
    session: str | None = None,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    tz: tzinfo = timezone.utc,
    exchanges: int = 10,
) -> Brief:
    """A Markdown brief of what the agent should know on waking, within the budget."""
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int):
        raise InvalidInput("budget-tokens must be a whole number")
    if budget_tokens < MIN_BUDGET_TOKENS:
        raise InvalidInput(f"budget-tokens must be at least {MIN_BUDGET_TOKENS}")
    now = brain.clock.now()
    local_now = now.astimezone(tz)
    today = local_now.date()
    start_yesterday = datetime.combine(today - timedelta(days=1), datetime.min.time(), tzinfo=tz)

    shown_ids: set[int] = set()

    def fresh(memories: Sequence[Memory]) -> list[Memory]:
        """The memories not shown yet, each once (pinned core memories come in twice)."""
        out = []
        for m in memories:
            if m.id not in shown_ids:
                shown_ids.add(m.id)
                out.append(m)
        return out

    pinned = brain.list(category="core", pinned=True, order="importance", limit=200,
                        include_superseded=False)
    core = fresh([*pinned, *brain.list(category="core", order="importance", limit=200,
                                       include_superseded=False)])
    core_lines = [("- 📌 " if m.pinned else "- ") + _label(m) + f" (#{m.id})" for m in core]

    work = [w for w in active(brain, limit=200) if w.memory.id not in shown_ids]
    shown_ids.update(w.memory.id for w in work)
    work_lines = [
        f"- {_label(w.memory, 200)} — {w.memory.status}, open {format_hours(w.hours_open)}"
        f" (#{w.memory.id})"
        for w in work
    ]

    # The last day's important observations are taken before the daily notes, so a
    # high-importance note is listed there once rather than lost among the others.
    important = fresh([
        m for m in brain.list(since=iso(now - timedelta(days=1)), min_importance=0.7,
                              order="importance", limit=100, include_superseded=False)
        if m.category != "conversation"
    ])
    recent_lines = [f"- {_label(m, 200)} ({m.kind}, #{m.id})" for m in important]

    daily = fresh(brain.list(category="daily", since=iso(start_yesterday), order="recent",
                             limit=200, include_superseded=False))
    daily_lines = []
    for m in daily:
        day = parse_time(m.created_at).astimezone(tz).date()
        when = "today" if day == today else "yesterday"
        daily_lines.append(f"- {when} {_time(m.created_at, tz)} {_label(m, 200)} (#{m.id})")

    session_lines: list[str] = []
    session_ids: list[int] = []
    if session:
        recent = brain.list(category="conversation", session_id=session, order="recent",
                            limit=max(1, exchanges))
        for m in reversed(fresh(recent)):
            session_lines.append(f"- {_time(m.created_at, tz)} {_one_line(m.content, 400)}")
            session_ids.append(m.id)

    sections = [
        Section("core", "Core", core_lines, [m.id for m in core]),
        Section("work", "Work in progress", work_lines, [w.memory.id for w in work]),
        Section("daily", "Daily notes (today and yesterday)", daily_lines,
                [m.id for m in daily]),
        Section("session", f"This session ({session})" if session else "This session",
                session_lines, session_ids),
        Section("recent", "Important in the last day", recent_lines,
                [m.id for m in important]),
    ]
    header = f"# Memory brief — {local_now.strftime('%Y-%m-%d %H:%M %Z')}\n\n"
    total = budget_tokens * CHARS_PER_TOKEN - len(header)
    texts = _fit(sections, total)
    body = "\n".join(t for t in texts if t)
    if not body:
        body = "(nothing remembered yet)\n"
    markdown = header + body
    return Brief(
        markdown=markdown,
        budget_tokens=budget_tokens,
        sections={s.name: s.ids[: s.shown] for s in sections if s.shown},
    )


def _fit(sections: list[Section], total_chars: int) -> list[str]:
    """Render every section within its share; then hand what was left over to the
    sections that were cut short, in order of importance."""
    shares = dict(SHARES)
    budgets = {s.name: int(total_chars * shares[s.name]) for s in sections}
    texts: dict[str, str] = {}
    for s in sections:
        texts[s.name], s.shown = s.render(budgets[s.name])
    for _ in range(2):
        left = total_chars - sum(len(t) + 1 for t in texts.values() if t)
        for s in sections:
            if left <= 0:
                break
            if s.shown < len(s.lines):
                budget = len(texts[s.name]) + left
                text, shown = s.render(budget - (0 if texts[s.name] else 1))
                left -= len(text) - len(texts[s.name]) + (1 if text and not texts[s.name] else 0)
                texts[s.name], s.shown = text, shown
    return [texts[s.name] for s in sections]
