"""What every transcript reader produces: sessions, turns and tool calls in one shape.

Readers are incremental. Each is handed the complete lines past a file's cursor (as
`Record`s) together with the small JSON state it left behind last time, and returns a
`Parsed`: the new turns, the offset up to which everything is fully accounted for, and
the state to store with the cursor. The readers never touch the database.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..agents import AGENTS
from ..clock import iso, parse_time
from ..errors import MaxmemError

# Each agent's own (its record's name), then the formats of exports and other tools.
FORMATS = (*(a.format for a in AGENTS), "jsonl", "chatgpt", "markdown")

# Roles a Turn can have. "tool" turns carry a tool result; "summary" turns carry a
# compaction or branch summary written by the agent itself.
ROLES = ("user", "assistant", "tool", "summary", "system")


@dataclass
class Record:
    """One complete line of a transcript: where it starts and ends, and its JSON value."""

    offset: int
    end: int
    value: Any


@dataclass
class ToolCall:
    """A tool invocation. Call and result usually arrive in different records, so a
    ToolCall may be partial (only arguments, or only the result); storage merges the
    two halves by (session, call_id)."""

    call_id: str
    name: str | None = None
    arguments: str | None = None  # JSON text (or free text, e.g. a patch)
    result: str | None = None  # redacted and truncated before storage
    status: str | None = None  # "pending", "ok", "error", "aborted"
    duration_ms: int | None = None
    started_at: str | None = None
    finished_at: str | None = None
    entry_id: str | None = None


@dataclass
class Turn:
    """One utterance: a user prompt, an assistant reply (all its split lines merged), a
    tool result, or a summary. `key` is the idempotency key, unique within the session."""

    session_id: str
    key: str
    role: str
    text: str
    timestamp: str  # fixed-width UTC ISO-8601
    model: str | None = None
    usage: dict[str, Any] | None = None
    entry_ids: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    kind: str = "message"  # message, compaction, branch_summary, tool_result
    speaker: str | None = None  # who spoke, in group chats
    # Content identity: the same words by the same role at the same time. Catches
    # copies whose ids changed (a pi v1 file migrated to v3 gets new random ids;
    # forks and successor transcripts re-contain old entries).
    fingerprint: str = ""

    def __post_init__(self) -> None:
        if not self.fingerprint:
            # Call ids tell apart parallel tool results (or tool-only replies) that have
            # the same text at the same millisecond; copies keep their call ids.
            calls = ",".join(sorted(c.call_id for c in self.tool_calls))
            self.fingerprint = parts_hash(self.role, self.timestamp, self.text, calls)


@dataclass
class Session:
    id: str
    format: str
    agent: str
    title: str | None = None
    cwd: str | None = None
    started_at: str | None = None
    model: str | None = None
    parent_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Parsed:
    """What one reader pass over new records found."""

    sessions: dict[str, Session] = field(default_factory=dict)
    turns: list[Turn] = field(default_factory=list)
    # Tool calls not issued inside an assistant turn (Codex writes them as records
    # of their own), as (session id, call).
    calls: list[tuple[str, ToolCall]] = field(default_factory=list)
    consumed: int | None = None  # offset up to which records are accounted for
    state: dict[str, Any] = field(default_factory=dict)
    unknown: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)

    def session(self, session: Session) -> Session:
        """Register a session (first registration wins, later ones fill blanks)."""
        known = self.sessions.get(session.id)
        if known is None:
            self.sessions[session.id] = session
            return session
        for name in ("title", "cwd", "started_at", "model", "parent_id"):
            if getattr(known, name) is None and getattr(session, name) is not None:
                setattr(known, name, getattr(session, name))
        return known


class CaptureFormatError(MaxmemError):
    """A whole file cannot be read as the format it was given as."""


def parts_hash(*parts: object) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(str(part).encode("utf-8", "surrogatepass"))
        digest.update(b"\x1f")
    return digest.hexdigest()[:16]


def utc(value: Any, default: str | None = None) -> str | None:
    """Any transcript time (ISO string, epoch s or ms, datetime) as stored UTC text."""
    if value is None or value == "":
        return default
    try:
        return iso(parse_time(value))
    except (MaxmemError, ValueError, TypeError, OverflowError):
        return default


def json_text(value: Any) -> str:
    """Arguments as JSON text: strings that already hold JSON are kept as they are."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@dataclass
class ReadContext:
    """What a reader knows about the file besides its lines."""

    path: str
    default_time: str  # used when a record carries no time (the file's mtime)
    final: bool = True  # the file is idle: flush anything held back for more lines
    tool_result_chars: int = 2000
    deadline: float | None = None  # time.monotonic(): a read that has found no line by then stops there
