"""A memory as it is about to be stored: input checked, secrets out, the row's values.

The first step of every write (remember, update, import, capture, a trigger commit):
`check_record` turns what a caller gave into the row of the memories table, or raises
InvalidInput naming the field. Nothing here touches the database.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..clock import parse_time
from ..embeddings import text_hash
from ..errors import InvalidInput
from ..memory import (
    MAX_TAG_CHARS,
    Memory,
    check_category,
    check_content,
    check_count,
    check_flag,
    check_importance,
    check_kind,
    check_metadata,
    check_short,
    check_status,
    check_tags,
    check_time,
    check_title,
    check_uid,
    new_uid,
)
from ..redact import Redactor

# The columns of a memory row (besides id), in INSERT order.
FIELDS = (
    "uid", "category", "kind", "title", "content", "tags", "importance", "status",
    "started_at", "resolved_at", "source", "agent", "session_id", "metadata",
    "content_hash", "pinned", "superseded_by", "created_at", "updated_at",
    "last_recalled_at", "recall_count", "embedded_at",
)
# What a caller may give for a new memory.
REMEMBER_ARGS = (
    "content", "category", "kind", "title", "tags", "importance", "metadata", "created_at",
    "source", "agent", "session_id", "status", "pinned", "started_at", "resolved_at",
    "uid", "updated_at", "superseded_by", "last_recalled_at", "recall_count",
)
# What `Brain.update` may change.
UPDATABLE = frozenset({
    "content", "title", "tags", "importance", "status", "kind", "category", "metadata",
    "pinned", "started_at", "resolved_at", "superseded_by", "agent", "session_id",
    "created_at", "source",
})
# Fields whose change moves a memory among its session neighbours (search/neighbours.py).
NEIGHBOUR_FIELDS = frozenset({"content", "title", "session_id", "category", "created_at"})


def content_hash(content: str) -> str:
    return text_hash(content.strip())


def embed_text(title: str | None, content: str) -> str:
    """The text whose vector stands for a memory."""
    return f"{title}\n{content}" if title else content


@dataclass(frozen=True)
class Checked:
    """A checked row and how many secrets were taken out of it."""

    record: dict[str, Any]
    redacted: int


def check_record(item: Mapping[str, Any], *, now: str, agent: str | None, redactor: Redactor | None) -> Checked:
    """A memories row from user input, checked; raises InvalidInput naming the field.
    `redactor` (None: redaction is off) takes secrets out of content, title, tags,
    metadata, source and agent: every write of a memory comes through here."""
    unknown = set(item) - set(REMEMBER_ARGS)
    if unknown:
        raise InvalidInput(f"unknown field(s) {', '.join(sorted(unknown))}")
    if "content" not in item:
        raise InvalidInput("content is missing: give the text to remember")
    content, title = check_content(item["content"]), check_title(item.get("title"))
    tags, metadata = check_tags(item.get("tags")), check_metadata(item.get("metadata"))
    source = check_short(item.get("source", "manual"), "source") or "manual"
    agent = check_short(item.get("agent", agent), "agent")
    found = 0
    if redactor is not None:  # (a session id is an identifier, kept as given: it ties the memory to its turns)
        (content, title, tags, metadata, source, agent), found = redactor.redact_value(
            [content, title, tags, metadata, source, agent])
        tags = [t[:MAX_TAG_CHARS] for t in tags]  # a marker can be longer than the secret it replaced
        if not content.strip():
            raise InvalidInput("content is empty once secrets and <private> parts are taken out")
    return Checked({
        "uid": check_uid(item.get("uid")) or new_uid(),
        "category": check_category(item.get("category", "daily")),
        "kind": check_kind(item.get("kind", "note")),
        "title": title,
        "content": content,
        "tags": tags,
        "importance": check_importance(item.get("importance", 0.5)),
        "status": check_status(item.get("status", "active")),
        "started_at": check_time(item.get("started_at"), "started_at"),
        "resolved_at": check_time(item.get("resolved_at"), "resolved_at"),
        "source": source,
        "agent": agent,
        "session_id": check_short(item.get("session_id"), "session_id"),
        "metadata": metadata,
        "content_hash": content_hash(content),
        "pinned": check_flag(item.get("pinned", False), "pinned"),
        "superseded_by": check_uid(item.get("superseded_by"), "superseded_by"),
        "created_at": _not_ahead(check_time(item.get("created_at"), "created_at"), now) or now,
        "updated_at": check_time(item.get("updated_at"), "updated_at") or now,
        "last_recalled_at": check_time(item.get("last_recalled_at"), "last_recalled_at"),
        "recall_count": check_count(item.get("recall_count"), "recall_count"),
        "embedded_at": None,
    }, found)


# How far ahead of now a memory's time may be (clocks of machines and transcripts drift):
# a creation time in the year 3000 would keep a memory from ever expiring.
MAX_AHEAD = timedelta(days=1)


def _not_ahead(created: str | None, now: str) -> str | None:
    if created is not None and parse_time(created) > parse_time(now) + MAX_AHEAD:
        raise InvalidInput(f"created_at {created[:10]} is in the future: give the time it happened "
                           "(at most a day ahead of this machine's clock)")
    return created


def check_records(items: Iterable[Mapping[str, Any]], *, now: str, agent: str | None,
                  redactor: Redactor | None) -> list[Checked]:
    """`check_record` for each item; an error names the item's number."""
    out = []
    for number, item in enumerate(items, start=1):
        if not isinstance(item, Mapping):
            raise InvalidInput(f"item {number}: must be an object with at least content")
        try:
            out.append(check_record(item, now=now, agent=agent, redactor=redactor))
        except InvalidInput as exc:
            raise InvalidInput(f"item {number}: {exc}") from None
    return out


def item_of(memory: Memory) -> dict[str, Any]:
    """A stored memory as the input that would store it again (for updates)."""
    data = memory.to_dict()
    return {k: data[k] for k in REMEMBER_ARGS if k in data}


def column_value(name: str, value: Any) -> Any:
    """A field as the memories table stores it."""
    if name in ("tags", "metadata"):
        if not value:  # most memories: no tags, no metadata (a bulk-load hot path)
            return "[]" if name == "tags" else "{}"
        return json.dumps(value, ensure_ascii=False)
    if name == "pinned":
        return int(bool(value))
    return value


_CONVERTED = tuple((FIELDS.index(name) + 1, name) for name in ("tags", "metadata", "pinned"))


def row_values(memory_id: int, record: Mapping[str, Any]) -> list[Any]:
    """The INSERT parameters of a record (the bulk-load hot path: only the three
    columns that need converting go through column_value)."""
    row = [memory_id, *map(record.__getitem__, FIELDS)]
    for position, name in _CONVERTED:
        row[position] = column_value(name, row[position])
    return row
