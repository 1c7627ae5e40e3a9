"""Memories as Markdown, both ways, in OpenClaw's workspace layout.

OpenClaw keeps an agent's memory as plain Markdown in its workspace:

- `MEMORY.md` — curated long-term memory (decisions, preferences, durable facts),
  loaded at the start of private sessions;
- `memory/YYYY-MM-DD.md` — the daily log, append-only; today's and yesterday's are
  read at session start (`memory/YYYY-MM-DD-<slug>.md` variants are written by its
  session-memory hook and belong to the same day).

Rendering writes core and project memories to `MEMORY.md`, grouped under `##`
headings by kind, and everything else to the daily file of the day it was created,
in time order. Each memory is one bullet; a trailing HTML comment (invisible when
rendered) carries what Markdown has no place for — uid, kind, importance, status — so
an export read back by `parse_markdown` gives the same memories.

Parsing reads any such file, including hand-written ones: each top-level bullet, and
each paragraph outside a list, becomes a memory; nested bullets stay in their parent;
a heading names the section (and the kind, when it is one: "## Decisions"); a daily
file's name gives the date. Nothing here touches the database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timezone, tzinfo
from pathlib import PurePath
from typing import Any, Iterable, Mapping

from .clock import iso, parse_time
from .errors import InvalidInput

MEMORY_FILE = "MEMORY.md"
DAILY_DIR = "memory"
LONG_TERM_CATEGORIES = ("core", "project")

# Section order in MEMORY.md; kinds not listed follow in alphabetical order.
SECTIONS: list[tuple[str, str]] = [
    ("preference", "Preferences"),
    ("decision", "Decisions"),
    ("fact", "Facts"),
    ("lesson", "Lessons"),
    ("task", "Tasks"),
    ("milestone", "Milestones"),
    ("failure", "Failures"),
    ("summary", "Summaries"),
    ("note", "Notes"),
]
PROJECTS_HEADING = "Projects"

# Heading words that name a kind (or the project category) when reading files back.
HEADING_KINDS: list[tuple[str, str, str]] = [
    (r"preferences?", "kind", "preference"),
    (r"decisions?", "kind", "decision"),
    (r"facts?|key\s+facts", "kind", "fact"),
    (r"lessons?(?:\s+learned)?|learnings?", "kind", "lesson"),
    (r"tasks?|to-?dos?|next\s+steps", "kind", "task"),
    (r"milestones?", "kind", "milestone"),
    (r"failures?|errors?|bugs?|mistakes?", "kind", "failure"),
    (r"summar(?:y|ies)", "kind", "summary"),
    (r"(?:active\s+)?projects?", "category", "project"),
]

_DAILY_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:-[\w.-]+)?\.md$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^( {0,3})(?:[-*+]|\d{1,9}[.)])\s+(.*)$")
_TASK_BOX = re.compile(r"^\[([ xX])\]\s+(.*)$")
_TIME_PREFIX = re.compile(r"^(\d{1,2}):(\d{2})(?::\d{2})?\s*(?:[—–-]\s+)?(.*)$")
_BOLD_TITLE = re.compile(r"^\*\*(.+?)\*\*\s*(?:[—–:-]\s*)?(.*)$", re.S)
_COMMENT = re.compile(r"\s*<!--\s*maxmem\s+(.*?)\s*-->\s*$")
_ANY_COMMENT = re.compile(r"^\s*<!--.*?-->\s*$")
_HASHTAGS = re.compile(r"(?:\s+#[A-Za-z][\w\-/.]*)+\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class RenderedFile:
    """One file of an export: its path relative to the workspace and its text."""

    path: str
    text: str
    count: int


def daily_path(day: date) -> str:
    return f"{DAILY_DIR}/{day.isoformat()}.md"


def file_date(path: str | PurePath) -> date | None:
    """The day a daily file belongs to (`memory/2026-11-30.md`, `...-slug.md`), else None."""
    m = _DAILY_NAME.match(PurePath(path).name)
    if not m:
        return None
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


# --- rendering ------------------------------------------------------------------------


def _field(memory: Any, name: str, default: Any = None) -> Any:
    if isinstance(memory, Mapping):
        return memory.get(name, default)
    return getattr(memory, name, default)


def render_workspace(
    memories: Iterable[Any], *, tz: tzinfo = timezone.utc, generated_at: datetime | None = None
) -> list[RenderedFile]:
    """All files of an export: MEMORY.md (core and project) and one file per day."""
    long_term: list[Any] = []
    by_day: dict[date, list[Any]] = {}
    for memory in memories:
        if _field(memory, "category") in LONG_TERM_CATEGORIES:
            long_term.append(memory)
        else:
            day = parse_time(_field(memory, "created_at")).astimezone(tz).date()
            by_day.setdefault(day, []).append(memory)
    files = [RenderedFile(MEMORY_FILE, render_memory_md(long_term, generated_at=generated_at),
                          len(long_term))]
    for day in sorted(by_day):
        files.append(RenderedFile(daily_path(day), render_daily(day, by_day[day], tz=tz),
                                  len(by_day[day])))
    return files


def render_memory_md(memories: Iterable[Any], *, generated_at: datetime | None = None) -> str:
    """MEMORY.md: pinned and important first within each section."""
    ordered = sorted(
        memories,
        key=lambda m: (not _field(m, "pinned"), -(_field(m, "importance") or 0.0),
                       _field(m, "created_at") or ""),
    )
    sections: dict[str, list[Any]] = {}
    for memory in ordered:
        if _field(memory, "category") == "project":
            heading = PROJECTS_HEADING
        else:
            heading = _heading_for(_field(memory, "kind"))
        sections.setdefault(heading, []).append(memory)
    known = [h for _, h in SECTIONS] + [PROJECTS_HEADING]
    order = [h for h in known if h in sections] + sorted(h for h in sections if h not in known)

    lines = ["# MEMORY.md — long-term memory", ""]
    if generated_at is not None:
        lines += [f"<!-- written by maxmem export at {iso(generated_at)}; maxmem import"
                  " --format markdown reads it back -->", ""]
    for heading in order:
        lines += [f"## {heading}", ""]
        for memory in sections[heading]:
            default_category = "core" if heading != PROJECTS_HEADING else "project"
            lines += _bullet(memory, default_category=default_category,
                             default_kind=_kind_for(heading))
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def render_daily(day: date, memories: Iterable[Any], *, tz: tzinfo = timezone.utc) -> str:
    """memory/YYYY-MM-DD.md: a dated log, one timed bullet per memory, oldest first."""
    ordered = sorted(memories, key=lambda m: _field(m, "created_at") or "")
    lines = [f"# {day.isoformat()}", ""]
    for memory in ordered:
        at = parse_time(_field(memory, "created_at")).astimezone(tz)
        lines += _bullet(memory, default_category="daily", default_kind="note",
                         time_prefix=at.strftime("%H:%M"))
    return "\n".join(lines).rstrip("\n") + "\n"


def _heading_for(kind: str | None) -> str:
    for name, heading in SECTIONS:
        if name == (kind or "note"):
            return heading
    return (kind or "note").replace("_", " ").capitalize() + "s"


def _kind_for(heading: str) -> str | None:
    for name, known in SECTIONS:
        if known == heading:
            return name
    return None


def _bullet(
    memory: Any, *, default_category: str, default_kind: str | None, time_prefix: str | None = None
) -> list[str]:
    content = (_field(memory, "content") or "").strip("\n")
    title = (_field(memory, "title") or "").strip()
    tags = [t for t in (_field(memory, "tags") or []) if t]
    first, *more = content.split("\n") or [""]
    head = f"{time_prefix} " if time_prefix else ""
    if title and title != first.strip():
        head += f"**{_one_line(title)}** — "
    head += first
    if tags:
        head += " " + " ".join("#" + re.sub(r"\s+", "-", t) for t in tags)
    attrs = _attributes(memory, default_category, default_kind)
    lines = [f"- {head.rstrip()} <!-- maxmem {attrs} -->"]
    lines += [f"  {line}" if line.strip() else "" for line in more]
    return lines


def _attributes(memory: Any, default_category: str, default_kind: str | None) -> str:
    attrs = [f"uid={_field(memory, 'uid')}"]
    if _field(memory, "category") and _field(memory, "category") != default_category:
        attrs.append(f"category={_field(memory, 'category')}")
    if _field(memory, "kind") and _field(memory, "kind") != default_kind:
        attrs.append(f"kind={_field(memory, 'kind')}")
    if _field(memory, "importance") is not None:
        attrs.append(f"importance={_field(memory, 'importance'):g}")
    if _field(memory, "status") and _field(memory, "status") != "active":
        attrs.append(f"status={_field(memory, 'status')}")
    if _field(memory, "pinned"):
        attrs.append("pinned=1")
    tags = [t for t in (_field(memory, "tags") or []) if t]
    if tags:
        attrs.append("tags=" + ",".join(re.sub(r"[\s,]+", "-", t) for t in tags))
    return " ".join(attrs)


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("**", "")


# --- parsing --------------------------------------------------------------------------


def parse_markdown(
    text: str, *, path: str | PurePath = MEMORY_FILE, tz: tzinfo = timezone.utc
) -> list[dict[str, Any]]:
    """Memories (dicts for Brain.remember_many) from one MEMORY.md or daily file.

    A daily file's memories are dated by its name (and an "HH:MM" bullet prefix, read
    in `tz`); MEMORY.md's memories are undated (the importer decides) and core.
    """
    day = file_date(path)
    default_category = "daily" if day else "core"
    items: list[_Item] = []
    section: str | None = None
    current: _Item | None = None
    in_fence = False
    lines = _strip_front_matter(text.replace("\r\n", "\n").split("\n"))

    for number, line in lines:
        indent = len(line) - len(line.lstrip(" "))
        in_bullet = current is not None and not current.paragraph
        body = line[2:] if in_bullet and indent >= 2 else line
        if _FENCE.match(line):
            opening, in_fence = not in_fence, not in_fence
            belongs = current is not None and (
                (in_bullet and indent >= 2) or (current.paragraph and not current.blank_pending)
            )
            if opening and not belongs:
                current = _Item(section, number, paragraph=True)
                items.append(current)
            current.add(body)
            continue
        if in_fence:
            if current is not None:
                current.add(body)
            continue
        if not line.strip():
            if current is not None:
                current.blank_pending = True
            continue
        if indent < 2 and (m := _HEADING.match(line)):
            if len(m[1]) == 1 and (day or m[2].strip().upper().startswith("MEMORY")):
                current = None  # the file's own title ("# 2026-11-30", "# MEMORY.md")
                continue
            section, current = m[2].strip(), None
            continue
        if _ANY_COMMENT.match(line) and not _COMMENT.search(line):
            continue  # template placeholders like <!-- Current goals -->
        if indent < 2 and (m := _BULLET.match(line)):
            current = _Item(section, number)
            current.lines.append(m[2])
            items.append(current)
            continue
        if current is not None and (
            (in_bullet and indent >= 2) or (current.paragraph and not current.blank_pending)
        ):
            current.add(body)
            continue
        current = _Item(section, number, paragraph=True)
        current.lines.append(line)
        items.append(current)

    out = []
    for item in items:
        try:
            memory = item.to_memory(day, default_category, tz)
        except ValueError as exc:
            raise InvalidInput(f"{PurePath(path).as_posix()} line {item.line}: {exc}") from None
        if memory is not None:
            memory["metadata"] = {"markdown_file": PurePath(path).as_posix(),
                                  "line": item.line, **memory.get("metadata", {})}
            if item.section:
                memory["metadata"]["section"] = item.section
            out.append(memory)
    return out


def _strip_front_matter(lines: list[str]) -> list[tuple[int, str]]:
    numbered = list(enumerate(lines, start=1))
    if lines and lines[0].strip() == "---":
        for i, line in enumerate(lines[1:], start=1):
            if line.strip() == "---":
                return numbered[i + 1:]
    return numbered


class _Item:
    """The lines of one bullet or paragraph while the file is read."""

    def __init__(self, section: str | None, line: int, paragraph: bool = False) -> None:
        self.section = section
        self.line = line
        self.paragraph = paragraph
        self.lines: list[str] = []
        self.blank_pending = False

    def add(self, line: str) -> None:
        if self.blank_pending:
            self.lines.append("")
        self.blank_pending = False
        self.lines.append(line)

    def to_memory(self, day: date | None, default_category: str, tz: tzinfo) -> dict[str, Any] | None:
        first, rest = self.lines[0], self.lines[1:]
        attrs: dict[str, str] = {}
        if m := _COMMENT.search(first):
            attrs = dict(
                part.split("=", 1) for part in m[1].split() if "=" in part
            )
            first = first[: m.start()]
        memory: dict[str, Any] = {"category": default_category}
        if self.section:
            for pattern, name, value in HEADING_KINDS:
                if re.fullmatch(pattern, self.section.strip(), re.I):
                    memory[name] = value
        at: time | None = None
        if day and (m := _TIME_PREFIX.match(first)):
            hour, minute = int(m[1]), int(m[2])
            if hour < 24 and minute < 60:
                at, first = time(hour, minute), m[3]
        if m := _TASK_BOX.match(first):
            memory["kind"] = "task"
            memory["status"] = "resolved" if m[1] in "xX" else "active"
            first = m[2]
        tags: list[str] = []
        if attrs:  # our own export: the visible hashtags repeat the tags attribute
            tags = [t for t in attrs.get("tags", "").split(",") if t]
            shown = " ".join("#" + t for t in tags)
            if tags and first.rstrip().endswith(shown):
                first = first.rstrip()[: -len(shown)]
        elif m := _HASHTAGS.search(first):
            tags = [t.lstrip("#").lower() for t in m[0].split()]
        if m := _BOLD_TITLE.match(first):
            title, first = m[1].strip().rstrip(":").strip(), m[2]
            memory["title"] = title
            if not attrs and first.strip():  # hand-written "**Name:** Atlas" reads whole
                first = f"{title}: {first}"
        content = "\n".join([first.rstrip(), *rest]).strip("\n")
        if not content.strip():
            if not memory.get("title"):
                return None
            content = memory["title"]
        memory["content"] = content
        if tags:
            memory["tags"] = list(dict.fromkeys(tags))
        for key in ("uid", "category", "kind", "status"):
            if key in attrs:
                memory[key] = attrs[key]
        if "importance" in attrs:
            try:
                memory["importance"] = float(attrs["importance"])
            except ValueError:
                raise ValueError(f"importance={attrs['importance']} is not a number") from None
        if attrs.get("pinned") == "1":
            memory["pinned"] = True
        if day:
            memory["created_at"] = iso(datetime.combine(day, at or time(0), tzinfo=tz))
        return memory
