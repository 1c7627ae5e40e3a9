"""Before compaction: save a session's exchanges and observations (`maxmem save-context`).

`save_context(brain, data)` is the pre-compaction hook. It takes one JSON document —
the session's exchanges (with their tool calls) and the observations the agent
curated — checks all of it before writing anything, and stores it in one
transaction: each exchange as a `conversation` memory of kind "exchange", each
observation as a memory whose kind is its type. Every item carries a `save_key` in
its metadata (a hash of what identifies it), so saving the same document twice, or
a later document that repeats earlier exchanges, stores nothing twice. After
compaction, the agent reads the boot brief (brief.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .capture import store
from .capture.model import Session, ToolCall, Turn
from .clock import iso, parse_time
from .envelopes import strip
from .errors import InvalidInput
from .memory import check_importance, check_kind, check_tags
from .work import category_for

if TYPE_CHECKING:  # pragma: no cover
    from .brain import Brain

MAX_TEXT = 200_000  # per message: larger ones are cut (the rest is in the transcript)
TITLE_CHARS = 80  # an exchange's title: the start of the user's message, on one line
MAX_TOOL_TEXT = 2_000  # tool params / results kept per call
MAX_THINKING = 4_000
MAX_OBSERVATION = 100_000
MAX_ITEMS = 10_000

SAVED_KEYS_SQL = """
SELECT json_extract(metadata, '$.save_key') AS save_key FROM memories
WHERE session_id = ? AND json_extract(metadata, '$.save_key') IS NOT NULL
"""


@dataclass
class SaveReport:
    """What save_context stored and what it found already saved."""

    session_id: str
    exchanges_stored: int = 0
    exchanges_already_saved: int = 0
    tool_calls_stored: int = 0
    observations_stored: int = 0
    observations_already_saved: int = 0
    same_content_elsewhere: int = 0
    ids: list[int] = field(default_factory=list)

    def describe(self) -> str:
        text = (
            f"session {self.session_id}: stored {self.exchanges_stored} exchange(s)"
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


def _json_text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _cut(text: str, limit: int) -> str:
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
        out["params"] = _json_text(call.get("params"))  # cut once redacted (_clean_calls)
    if call.get("result") is not None:
        out["result"] = _json_text(call.get("result"))
    if status:
        out["status"] = status
    if duration is not None:
        out["duration_ms"] = int(duration)
    return out


def _exchange(value: Any, where: str, session_id: str,
              now: datetime) -> tuple[dict[str, Any], dict[str, Any]]:
    ex = _object(value, where)
    written = _text(ex.get("user_message"), f"{where}.user_message") or ""
    envelope = strip(written)  # a harness's timestamp / sender envelope, a system reminder
    user = envelope.text
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
    # The key is of the document as written, so a document saved again is known.
    metadata: dict[str, Any] = {
        "save_key": _key("exchange", session_id, at and iso(at), written, assistant)
    }
    if envelope.hint():
        metadata["envelope"] = envelope.hint()
    if at is None and envelope.at is not None:
        at = parse_time(envelope.at)  # the envelope's time, only when the exchange has none
    if model:
        metadata["model"] = model
    if thinking:
        metadata["thinking"] = thinking
    if calls:
        metadata["tool_calls"] = calls
    title = " ".join(user.split())[:TITLE_CHARS] or None
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


def _observation(value: Any, where: str, session_id: str) -> dict[str, Any]:
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
        "metadata": {"save_key": _key("observation", session_id, kind, title, content.strip())},
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
class SaveDocument:
    """A checked save-context document: memory items, and each exchange's raw parts."""

    session_id: str
    agent: str | None
    exchanges: list[dict[str, Any]]
    raw_exchanges: list[dict[str, Any]]
    observations: list[dict[str, Any]]
    metadata: dict[str, Any]


def parse_context(data: Any, now: datetime) -> SaveDocument:
    """Check a save-context document, all of it, before anything is written.
    Raises InvalidInput naming the first bad field, e.g. exchanges[3].user_message."""
    doc = _object(data, "the document")
    # `session_key`: the older spelling of session_id, still read.
    named = "session_key" if "session_id" not in doc and "session_key" in doc else "session_id"
    session_id = _text(doc.get(named), named, limit=200)
    if not session_id or not session_id.strip():
        raise InvalidInput(f"{named} is empty")
    session_id = session_id.strip()
    agent = _text(doc.get("agent"), "agent", required=False, limit=200)
    if doc.get("metadata") is not None:
        _object(doc.get("metadata"), "metadata")
    parsed = [
        _exchange(e, f"exchanges[{i}]", session_id, now)
        for i, e in enumerate(_array(doc.get("exchanges"), "exchanges"))
    ]
    observations = [
        _observation(o, f"observations[{i}]", session_id)
        for i, o in enumerate(_array(doc.get("observations"), "observations"))
    ]
    if not parsed and not observations:
        raise InvalidInput("nothing to save: exchanges and observations are both empty")
    return SaveDocument(session_id, agent, [item for item, _ in parsed],
                           [raw for _, raw in parsed], observations,
                           dict(doc.get("metadata") or {}))


def save_context(brain: Brain, data: Any) -> SaveReport:
    """Store a session's exchanges and observations in one transaction, idempotently.

    Exchanges become conversation memories and, when brain.db has the capture tables,
    turns and tool calls of the session too (with the capture job's dedup keys, so a
    transcript captured later does not store them twice). Texts are embedded before
    the write transaction opens; tool parameters, results and thinking are redacted
    like memory content.
    """
    doc = parse_context(data, brain.clock.now())
    report = SaveReport(doc.session_id)
    saved = {row["save_key"] for row in brain.db.rows(SAVED_KEYS_SQL, (doc.session_id,))}
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
        new.append({**item, "session_id": doc.session_id, "agent": doc.agent, "source": "agent"})
    if not new:
        return report
    _clean_calls(brain, new, new_raw)
    brain.prefetch_vectors(new)  # embed outside the write transaction
    with brain.db.atomic():  # all or nothing
        # One memory per exchange and observation, each keyed by its save_key (a restated
        # one is kept beside the other): what makes saving the same document twice a no-op.
        stored = brain.remember_many(new, embed=False, near=False)
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


def _clean_calls(brain: Brain, items: list[dict[str, Any]], raws: list[dict[str, Any]]) -> None:
    """Secrets out of tool calls and thinking, as out of memory content (the raw turns
    and tool_calls rows are made from these too); tool parameters are redacted as
    decoded JSON (so an escaped secret is found) and only then cut to MAX_TOOL_TEXT."""
    redactor = brain.redacting

    def clean(text: str | None) -> str | None:
        if text is None or redactor is None:
            return text
        return redactor.redact_json(text)[0]

    for item in items:
        meta = item["metadata"]
        if "thinking" in meta:
            meta["thinking"] = clean(meta["thinking"])
        for call in meta.get("tool_calls", []):
            for field_name in ("params", "result"):
                if call.get(field_name) is not None:
                    call[field_name] = _cut(clean(call[field_name]) or "", MAX_TOOL_TEXT)
    if redactor is None:
        return
    titled = {item["metadata"]["save_key"]: item for item in items}
    for raw in raws:
        raw["user"], raw["assistant"] = clean(raw["user"]), clean(raw["assistant"])
        exchange = titled.get(raw["save_key"])
        if exchange is not None and exchange.get("title"):
            # The title is the user's words on one line: taken from them once redacted, as
            # a secret whose name is on the line before would not be found on one line.
            exchange["title"] = " ".join((raw["user"] or "").split())[:TITLE_CHARS] or None


def _store_turns(brain: Brain, doc: SaveDocument, raws: list[dict[str, Any]]) -> None:
    """The exchanges as the session's turns and tool calls (inside the caller's transaction)."""
    db = brain.db
    session = Session(id=doc.session_id, format="save-context", agent=doc.agent or "unknown")
    store.upsert_session(db, session, source_file="save-context", updated_at=None, new_turns=0)
    seq = store.max_seq(db, doc.session_id)
    added = 0
    latest = None
    for raw in raws:
        key = raw["save_key"]
        assistant_turn = None
        for role, text in (("user", raw["user"]), ("assistant", raw["assistant"])):
            if not text:
                continue
            turn = Turn(session_id=doc.session_id, key=f"save-context:{key}:{role}", role=role,
                        text=text, timestamp=raw["at"],
                        model=raw["model"] if role == "assistant" else None)
            turn_id = store.insert_turn(db, turn, seq + 1, "save-context")
            if turn_id is not None:
                seq, added = seq + 1, added + 1
                latest = max(latest or raw["at"], raw["at"])
            if role == "assistant":
                assistant_turn = turn_id
        for number, call in enumerate(raw["calls"]):
            store.upsert_call(db, doc.session_id, ToolCall(
                call_id=f"save-context:{key}:{number}", name=call["name"],
                arguments=call.get("params"), result=call.get("result"),
                status=call.get("status"), duration_ms=call.get("duration_ms"),
                started_at=raw["at"],
            ), assistant_turn)
    store.upsert_session(db, session, source_file="save-context", updated_at=latest,
                         new_turns=added)
