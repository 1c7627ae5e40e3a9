"""The records maxmem hands out, and the checks every stored value passes first."""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from .clock import to_iso
from .errors import InvalidInput
from .store.db import check_identifier

CATEGORIES = ("core", "daily", "conversation", "project")
STATUSES = ("active", "ongoing", "resolved", "superseded")
KIND = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
MAX_CONTENT_BYTES = 1_000_000
MAX_TITLE_CHARS = 500
MAX_TAG_CHARS = 64
MAX_TAGS = 256  # tags of one memory (an import line, an MCP call or a sync record may give a million)
MAX_METADATA_BYTES = 1_000_000  # a memory's metadata as JSON, as its content
# Every token budget in maxmem (capture's chunks, the boot brief) counts with this one
# estimate: four bytes of UTF-8 a token.
BYTES_PER_TOKEN = 4
# How `Brain.list` can order memories (SQL over the memories table aliased `m`).
ORDERS = {
    "recent": "m.created_at DESC, m.id DESC",
    "oldest": "m.created_at ASC, m.id ASC",
    "importance": "m.importance DESC, m.created_at DESC",
    "updated": "m.updated_at DESC, m.id DESC",
}


@dataclass
class Memory:
    """One stored memory; field names are the columns of the memories table."""

    id: int
    uid: str
    category: str
    kind: str
    title: str | None
    content: str
    tags: list[str]
    importance: float
    status: str
    started_at: str | None
    resolved_at: str | None
    source: str
    agent: str | None
    session_id: str | None
    metadata: dict[str, Any]
    content_hash: str
    pinned: bool
    superseded_by: str | None
    created_at: str
    updated_at: str
    last_recalled_at: str | None = None
    recall_count: int = 0
    embedded_at: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Memory:
        data = dict(row)
        data["tags"] = json.loads(data.get("tags") or "[]")
        data["metadata"] = json.loads(data.get("metadata") or "{}")
        data["pinned"] = bool(data.get("pinned"))
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})

    def to_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["tags"], data["metadata"] = list(self.tags), dict(self.metadata)
        return data


@dataclass
class Hit:
    """A search result: the memory and why it ranked where it did."""

    memory: Memory
    score: float
    vector_score: float | None = None
    keyword_score: float | None = None
    explain: dict[str, Any] = field(default_factory=dict)
    # How likely the hit is to be what the query asks about, on one scale for every query
    # (relevance.py); None when it was not computed.
    relevance: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": round(self.score, 6),
            "relevance": None if self.relevance is None else round(self.relevance, 4),
            "vector_score": None if self.vector_score is None else round(self.vector_score, 6),
            "keyword_score": None if self.keyword_score is None else round(self.keyword_score, 6),
            "memory": self.memory.to_dict(),
            **({"explain": self.explain} if self.explain else {}),
        }


def estimate_tokens(text: str) -> int:
    """About four bytes of UTF-8 per token: close for English and German, and a CJK
    character (three bytes) or an emoji (four) counts as most of a token or one, as
    tokenizers see them. A text of N tokens or fewer is at most N × BYTES_PER_TOKEN bytes."""
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def new_uid(now_ms: int | None = None) -> str:
    """A UUIDv7: 48 bits of milliseconds, then random bits; sorts by creation time."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 68) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def clean_text(text: str) -> str:
    """Text SQLite and FTS5 store whole: NULs and lone surrogates become U+FFFD."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


def check_content(content: Any) -> str:
    if not isinstance(content, str):
        raise InvalidInput(f"content must be text, not {type(content).__name__}")
    content = clean_text(content)
    if not content.strip():
        raise InvalidInput("content is empty: give the text to remember")
    if len(content.encode("utf-8")) > MAX_CONTENT_BYTES:
        raise InvalidInput("content is larger than 1 MB: split it into several memories")
    return content


def check_category(category: Any) -> str:
    if category not in CATEGORIES:
        raise InvalidInput(f"unknown category {category!r}: use one of {', '.join(CATEGORIES)}")
    return str(category)


def check_status(status: Any) -> str:
    if status not in STATUSES:
        raise InvalidInput(f"unknown status {status!r}: use one of {', '.join(STATUSES)}")
    return str(status)


def check_kind(kind: Any) -> str:
    if not isinstance(kind, str) or not KIND.match(kind):
        shown = repr(kind) if len(repr(kind)) <= 40 else repr(kind)[:37] + "…"
        raise InvalidInput(f"kind {shown} is not allowed: use a short lowercase word (at most 32 characters) "
                           "like note, decision, fact")
    return kind


def check_flag(value: Any, what: str) -> bool:
    """A yes/no field: true/false (or 1/0, as SQLite stores it), never a word: "false"
    would otherwise count as true."""
    if value is None:
        return False
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise InvalidInput(f"{what} must be true or false, not {value!r}")


def check_importance(importance: Any) -> float:
    try:
        value = float(importance)
    except (TypeError, ValueError):
        raise InvalidInput(f"importance must be a number from 0 to 1, not {importance!r}") from None
    if isinstance(importance, bool) or math.isnan(value) or not 0.0 <= value <= 1.0:
        raise InvalidInput(f"importance must be from 0 to 1, not {importance!r}")
    return value


def check_title(title: Any) -> str | None:
    if title is None:
        return None
    if not isinstance(title, str):
        raise InvalidInput(f"title must be text, not {type(title).__name__}")
    title = clean_text(title).strip()
    if len(title) > MAX_TITLE_CHARS:
        raise InvalidInput(f"title is longer than {MAX_TITLE_CHARS} characters")
    return title or None


def check_tags(tags: Any) -> list[str]:
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = tags.split(",")
    if not isinstance(tags, (list, tuple, set, frozenset)):
        raise InvalidInput(f"tags must be a list of words, not {type(tags).__name__}")
    if len(tags) > MAX_TAGS:
        raise InvalidInput(f"{len(tags)} tags are more than a memory holds ({MAX_TAGS})")
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidInput(f"tag {tag!r} must be text")
        tag = clean_text(tag).strip()
        if not tag:
            continue
        if len(tag) > MAX_TAG_CHARS:
            raise InvalidInput(f"tag {tag[:20]!r}… is longer than {MAX_TAG_CHARS} characters")
        if tag not in out:
            out.append(tag)
    return out


def check_metadata(metadata: Any) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInput(f"metadata must be an object of key: value, not {type(metadata).__name__}")
    for key in metadata:
        check_identifier(key, "metadata key")
    try:
        text = json.dumps(dict(metadata), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"metadata must be plain JSON values: {exc}") from None
    if len(text.encode("utf-8", "surrogatepass")) > MAX_METADATA_BYTES:  # (a lone surrogate counts too)
        raise InvalidInput("metadata is larger than 1 MB (as JSON): keep the text in the content")
    return json.loads(text)


def check_time(value: Any, what: str) -> str | None:
    if value is None:
        return None
    try:
        return to_iso(value)
    except InvalidInput as exc:
        raise InvalidInput(f"{what}: {exc}") from None


UID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")


def check_uid(value: Any, what: str = "uid") -> str | None:
    """A uid given by the caller (imports keep theirs): short, plain ASCII, no spaces."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a uid (text), not {type(value).__name__} {str(value)[:40]}")
    if not UID.match(value):
        raise InvalidInput(f"{what} {value[:40]!r} is not allowed: use letters, digits, '-', '_', '.' or ':'")
    return value


def check_count(value: Any, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise InvalidInput(f"{what} must be a whole number ≥ 0, not {str(value)[:40]!r}")
    return value


def parse_pairs(pairs: Iterable[str], what: str = "--meta") -> dict[str, Any] | None:
    """key=value pairs (repeated, or one a line) as metadata: values that parse as JSON
    (numbers, true, null) keep their type."""
    out: dict[str, Any] = {}
    for value in pairs:
        for pair in value.splitlines() or [value]:
            if not pair.strip():
                continue
            key, sep, text = pair.partition("=")
            if not sep:
                raise InvalidInput(f"{what} {pair.strip()!r}: write key=value")
            try:
                out[key.strip()] = json.loads(text)
            except json.JSONDecodeError:
                out[key.strip()] = text.strip()
    return out or None


def check_short(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 200:
        raise InvalidInput(f"{what} must be text of at most 200 characters")
    return clean_text(value)




# -- filters ------------------------------------------------------------------

Names = str | Sequence[str] | None


@dataclass(frozen=True, kw_only=True)
class Filters:
    """What a memory must match: the one filter vocabulary of search, list, the CLI,
    MCP, sync and Postgres search. Checked when made (InvalidInput names the field);
    `sql` is its WHERE clause over the memories table aliased `m`.

    `include_superseded` is False by default (search's default); `Brain.list` lists
    superseded memories too unless told otherwise.
    """

    category: Names = None
    kind: Names = None
    tags: Sequence[str] | None = None
    since: Any = None
    until: Any = None
    min_importance: float | None = None
    max_importance: float | None = None
    metadata: Mapping[str, Any] | None = None
    status: Names = None
    agent: Names = None
    session_id: str | None = None
    pinned: bool | None = None
    include_superseded: bool = False

    def __post_init__(self) -> None:
        if self.metadata is not None and not isinstance(self.metadata, Mapping):
            raise InvalidInput(
                f"the metadata filter must be an object of key: value, not {type(self.metadata).__name__}")
        self.sql  # noqa: B018 - checks every field now, not at the first query

    @classmethod
    def of(cls, filters: Filters | None = None, **fields: Any) -> Filters:
        """`filters` with `fields` changed (None values are not given), or Filters(**fields)."""
        given = {k: v for k, v in fields.items() if v is not None}
        if filters is None:
            return cls(**given)
        if not isinstance(filters, Filters):
            raise InvalidInput(f"filters must be a Filters, not {type(filters).__name__}")
        return replace(filters, **given) if given else filters

    def to_dict(self) -> dict[str, Any]:
        """The fields that are set (for JSON output and explanations)."""
        return {k: v for k, v in self.__dict__.items()
                if k in self.__dataclass_fields__ and v not in (None, False, [], (), {})}

    def is_empty(self) -> bool:
        """True when only the default (no superseded memories) applies.

        Then the vector stage runs over the whole index and drops the few superseded
        candidates afterwards, instead of first listing every allowed id.
        """
        return not (self.to_dict() or self.include_superseded)

    @cached_property
    def sql(self) -> tuple[str, list[Any]]:
        """(WHERE clause, bound parameters)."""
        return _where(self)


def _names(column: str, value: Any, allowed: Sequence[str] | None = None) -> list[str]:
    if not isinstance(value, (str, list, tuple, set, frozenset)):
        raise InvalidInput(f"{column} filter must be text or a list of text, not {type(value).__name__}")
    values = [value] if isinstance(value, str) else list(value)
    for v in values:
        if not isinstance(v, str) or not v:
            raise InvalidInput(f"{column} filter must be text, not {v!r}")
        if allowed and v not in allowed:
            raise InvalidInput(f"unknown {column} {v!r}: use one of {', '.join(allowed)}")
    return values


def _bound_importance(value: Any, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{what} must be a number from 0 to 1, not {value!r}"[:200]) from None
    if isinstance(value, bool) or not 0.0 <= number <= 1.0:  # NaN and ±inf too
        raise InvalidInput(f"{what} must be a number from 0 to 1, not {value!r}"[:200])
    return number


def _where(f: Filters) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for column, value, allowed in (("category", f.category, CATEGORIES), ("kind", f.kind, None),
                                   ("status", f.status, STATUSES), ("agent", f.agent, None)):
        values = _names(column, value, allowed) if value else []
        if values:
            clauses.append(f"m.{column} IN ({','.join('?' * len(values))})")
            params.extend(values)
    if not f.status and not f.include_superseded:
        clauses.append("m.status != 'superseded'")
    tags = [f.tags] if isinstance(f.tags, str) else f.tags or ()
    if not isinstance(tags, (list, tuple, set, frozenset)) or not all(isinstance(t, str) for t in tags):
        raise InvalidInput("the tags filter must be a list of text")
    for tag in tags:
        clauses.append("EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ?)")
        params.append(tag)
    for column, op, value in (("created_at", ">=", f.since), ("created_at", "<", f.until)):
        if value is not None:
            clauses.append(f"m.{column} {op} ?")
            params.append(to_iso(value))
    for op, bound, what in ((">=", f.min_importance, "min_importance"), ("<=", f.max_importance, "max_importance")):
        if bound is not None:
            clauses.append(f"m.importance {op} ?")
            params.append(_bound_importance(bound, what))
    if f.session_id:
        if not isinstance(f.session_id, str):
            raise InvalidInput(f"the session_id filter must be text, not {type(f.session_id).__name__}")
        clauses.append("m.session_id = ?")
        params.append(f.session_id)
    if f.pinned is not None:
        clauses.append("m.pinned = ?")
        params.append(int(check_flag(f.pinned, "pinned")))
    for key, value in (f.metadata or {}).items():
        check_identifier(key, "metadata key")
        if value is not None and not isinstance(value, (str, int, float)):
            raise InvalidInput(f"metadata filter {key!r} must be a plain value, not {type(value).__name__}")
        if isinstance(value, bool):
            value = int(value)
        elif isinstance(value, int) and not -(2**63) <= value < 2**63:
            value = float(value)  # SQLite keeps integers this large as REAL too
        clauses.append(f"json_extract(m.metadata, '$.{key}') = ?")
        params.append(value)
    # Text as it is stored: a lone surrogate or NUL in a filter cannot be bound as UTF-8.
    params = [clean_text(p) if isinstance(p, str) else p for p in params]
    return " AND ".join(clauses) or "1", params
