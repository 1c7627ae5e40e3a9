"""Writing Markdown memory files: memories as OpenClaw's MEMORY.md and daily files.

Core and project memories go to `MEMORY.md`, grouped under `##` headings by kind, and
everything else to the daily file of the day it was created (`memory/YYYY-MM-DD.md`),
in time order. Each memory is one bullet: `📌 ` first when it is pinned, its tags as
`#hashtags` at the end of its first line, and a trailing HTML comment (invisible when
rendered, kept by editors and Obsidian) with what Markdown has no place for — uid,
kind, importance, status — and `rev`, a hash of the memory as it was exported. The text
reads back byte for byte: what a reader would misread is written escaped (content_lines).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo
from typing import Any

from ..clock import iso, parse_time
from ..inert import ACTED_ON
from .parse import (
    BOLD_START,
    DAILY_DIR,
    ESCAPED_HASH,
    MEMORY_FILE,
    PIN_START,
    parse_markdown,
    show_controls,
    show_text,
)

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

_ESCAPABLE_RUN = re.compile(r"(?:^|(?<=\s))\\*#[^\s#\\]\S*(?:\s+\\*#[^\s#\\]\S*)*\s*$")
_TOKEN_START = re.compile(r"(?:^|(?<=\s))(\\*)#")
PIN = "📌"
_DROPPED = dict.fromkeys(ACTED_ON)  # str.translate: these characters out
EXPORT_MARK = "written by maxmem export"
PARTIAL = "partial=1"  # in the comment of a bullet that does not read back as the memory's text
# What the import would read otherwise: a fence line (an open one holds the rest of the
# file), an HTML comment's start, a task box, and after a daily bullet's time a dash.
_FENCE_LINE = re.compile(r"^\s*(```|~~~)")
_COMMENT_OPEN = re.compile(r"<(?=!--)")
_TASK_START = re.compile(r"^\[[ xX]\](?:\s|$)")  # (tags may follow)
_DASH_START = re.compile(r"^[—–-](?:\s|$)")
# Text with none of these is written as it is (but its controls): a newline first or
# last, two blank lines, a space first or last on a line, a fence, a comment.
_NEEDS_SPELLING = re.compile(r"\A\n|\n\Z|\n\n\n|^[^\S\n]|[^\S\n]$|```|~~~|<!--", re.M)
_START_MARK = re.compile(r"\[[ xX]\](?:\s|$)|[—–-](?:\s|$)")


@dataclass(frozen=True)
class RenderedFile:
    """One file of an export: its path relative to the workspace and its text."""

    path: str
    text: str
    count: int


def daily_path(day: date) -> str:
    return f"{DAILY_DIR}/{day.isoformat()}.md"


def _field(memory: Any, name: str, default: Any = None) -> Any:
    if type(memory) is dict:  # a plain check: this runs ~20 times per memory exported
        return memory.get(name, default)
    return getattr(memory, name, default)


def render_workspace(
    memories: Iterable[Any], *, tz: tzinfo = UTC, generated_at: datetime | None = None
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


def render_memory_md(memories: Iterable[Any], *, generated_at: datetime | None = None,
                     with_rev: bool = True) -> str:
    """MEMORY.md: pinned and important first within each section."""
    ordered = sorted(
        memories,
        key=lambda m: (not _field(m, "pinned"), -(_field(m, "importance") or 0.0),
                       _field(m, "created_at") or ""),
    )
    sections: dict[str, list[Any]] = {}
    for memory in ordered:
        sections.setdefault(_long_term_heading(memory), []).append(memory)
    known = [h for _, h in SECTIONS] + [PROJECTS_HEADING]
    order = [h for h in known if h in sections] + sorted(h for h in sections if h not in known)

    lines = ["# MEMORY.md — long-term memory", ""]
    if generated_at is not None:
        lines += [f"<!-- {EXPORT_MARK} at {iso(generated_at)}; maxmem import"
                  " --format markdown reads it back -->", ""]
    for heading in order:
        lines += [f"## {heading}", ""]
        for memory in sections[heading]:
            lines += _long_term_bullet(memory, heading, with_rev)
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def render_daily(day: date, memories: Iterable[Any], *, tz: tzinfo = UTC, with_rev: bool = True) -> str:
    """memory/YYYY-MM-DD.md: a dated log, one timed bullet per memory, oldest first."""
    ordered = sorted(memories, key=lambda m: _field(m, "created_at") or "")
    lines = [f"# {day.isoformat()}", ""]
    for memory in ordered:
        lines += _daily_bullet(memory, tz, with_rev)
    return "\n".join(lines).rstrip("\n") + "\n"


def _long_term_heading(memory: Any) -> str:
    if _field(memory, "category") == "project":
        return PROJECTS_HEADING
    return _heading_for(_field(memory, "kind"))


def _long_term_bullet(memory: Any, heading: str, with_rev: bool) -> list[str]:
    default_category = "core" if heading != PROJECTS_HEADING else "project"
    lines = _bullet(memory, default_category=default_category, default_kind=_kind_for(heading))
    return _with_rev(memory, lines, f"## {heading}\n\n", MEMORY_FILE) if with_rev else lines


def _daily_bullet(memory: Any, tz: tzinfo, with_rev: bool) -> list[str]:
    at = parse_time(_field(memory, "created_at")).astimezone(tz)
    lines = _bullet(memory, default_category="daily", default_kind="note", time_prefix=at.strftime("%H:%M"))
    return _with_rev(memory, lines, "", daily_path(at.date())) if with_rev else lines


def _shown(lines: list[str], before: str, path: str) -> dict[str, Any]:
    """The editable fields the bullet `lines` read back as, under `before` in `path`
    (nothing read: empty content)."""
    items = parse_markdown(before + "\n".join(lines), path=path)
    return editable(items[0] if len(items) == 1 else {"content": ""})


def _with_rev(memory: Any, lines: list[str], before: str, path: str) -> list[str]:
    """The bullet with `rev=`, the hash of what it reads back as, in its comment, and
    `partial=1` before it if that is not the memory's text and title exactly."""
    shown = _shown(lines, before, path)
    whole = shown["content"] == _field(memory, "content") and shown["title"] == (_field(memory, "title") or None)
    mark = "" if whole else f" {PARTIAL}"
    return [lines[0].removesuffix(" -->") + f"{mark} rev={state_rev(shown)} -->", *lines[1:]]


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


def tag_form(tag: str) -> str:
    """A tag as a #hashtag shows it: no spaces, no leading # or backslash, none of the
    characters a terminal acts on, no `<` opening a comment (a tag is a word: they are
    left out, not escaped; `<!--maxmem` would start the bullet's comment)."""
    return _COMMENT_OPEN.sub("", re.sub(r"\s+", "-", tag.translate(_DROPPED).strip())).lstrip("#\\")


def written_tags(tags: Iterable[str]) -> list[str]:
    """The tags as the bullet's hashtags give them back (tag_form, each once)."""
    return list(dict.fromkeys(t for t in map(tag_form, tags) if t))


def _escape_hashes(first: str) -> str:
    """The content's first line as an exported bullet shows it: each `\\#` gets one more
    backslash, and hashtag-like words ending the line are escaped (they are not tags)."""
    if "#" not in first:
        return first
    first = ESCAPED_HASH.sub(lambda m: "\\" + m[0], first)
    m = _ESCAPABLE_RUN.search(first)
    if not m:
        return first
    return first[: m.start()] + _TOKEN_START.sub(lambda t: t[0] if t[1] else "\\#", m[0])


def _bullet(
    memory: Any, *, default_category: str, default_kind: str | None, time_prefix: str | None = None,
) -> list[str]:
    # No raw control character reaches the file (parse.show_controls), and no character
    # that Markdown or the bullet's format would read otherwise (parse.show_text): read
    # back, the text is the one stored.
    title = _field(memory, "title") or ""
    pinned = bool(_field(memory, "pinned"))
    first, *more = content_lines(_field(memory, "content") or "", bare=not title,
                                 timed=time_prefix is not None and not pinned and not title)
    head = f"{time_prefix} " if time_prefix else ""
    if pinned:
        head += f"{PIN} "
    elif not title and PIN_START.match(first):  # content starting with the pin: one backslash more
        first = "\\" + first
    if not title and BOLD_START.match(first):  # not to be read as a title
        first = "\\" + first
    if title:
        head += f"**{title_shown(title)}** — "
    head += _escape_hashes(first)
    tags = written_tags(_field(memory, "tags") or [])
    if tags:
        head += " " + " ".join("#" + t for t in tags)
    attrs = _attributes(memory, default_category, default_kind, dated=time_prefix is None)
    lines = [f"- {head} <!-- maxmem {attrs} -->"]
    lines += [f"  {line}" if line else "" for line in more]
    return lines


def title_shown(title: str) -> str:
    """A title as `**…**` holds it: a `*` next to another or last, a last `:`, a newline
    and `<!--` spelled, one backslash more before each `\\#`."""
    at = [i for i, c in enumerate(title) if c == "\n" or (c == "*" and (
        i == len(title) - 1 or title[i + 1] == "*" or (i and title[i - 1] == "*")))]
    if title.endswith(":"):
        at.append(len(title) - 1)
    at += [m.start() for m in _COMMENT_OPEN.finditer(title)]
    return ESCAPED_HASH.sub(lambda m: "\\" + m[0], show_text(title, at))


def content_lines(content: str, *, bare: bool, timed: bool) -> list[str]:
    """The content as an exported bullet's lines (the first after the bullet's head, the
    others to be indented, "" a blank line), so that the import reads back exactly
    `content`. A line's first and last space, a newline the list would fold (leading,
    trailing, a second blank line outside a fence), a fence left open and `<!--` are
    spelled (`\\x20`, `\\x0a`, `\\x60`, `\\x3c`); when the content starts the bullet
    (`bare`), so is a task box `[ ] `, and after a daily bullet's time (`timed`), a dash."""
    if not _NEEDS_SPELLING.search(content) and not (bare and _START_MARK.match(content)):
        return show_controls(content).split("\n")  # the usual text: nothing to spell
    lines = content.split("\n")
    start = next(i for i, line in enumerate(lines) if line)  # content is never all newlines
    end = max(i for i, line in enumerate(lines) if line) + 1
    fences = [i for i in range(start + 1, end) if _FENCE_LINE.match(show_controls(lines[i]))]
    unclosed = fences.pop() if len(fences) % 2 else None  # it would hold every bullet after it
    # The raw text of each line written: a leading or trailing newline, or one of a second
    # blank line outside a fence, stays in the text of the line before, spelled.
    rows = ["\n" * start + lines[start]]
    fenced, unclosed_row = False, 0
    for index in range(start + 1, end):
        line = lines[index]
        if index == unclosed:
            unclosed_row = len(rows)  # (a fence line is never blank: a row of its own)
        if line or fenced:
            rows.append(line)
            fenced ^= index in fences
        elif lines[index + 1]:
            rows.append("")
        else:
            rows[-1] += "\n"  # a second blank line: Markdown folds it into the first
    rows[-1] += "\n" * (len(lines) - end)
    at = [_spell(row, first=not i) for i, row in enumerate(rows)]
    if bare and (_TASK_START.match(rows[0]) or (timed and _DASH_START.match(rows[0]))):
        at[0].append(0)
    if unclosed_row:
        row = rows[unclosed_row]
        at[unclosed_row].append(len(row) - len(row.lstrip()))  # its first ` or ~
    return [show_text(row, where) for row, where in zip(rows, at)]


def _spell(row: str, *, first: bool) -> list[int]:
    at = [i for i, c in enumerate(row) if c == "\n"] if "\n" in row else []
    if row and row[-1].isspace():
        at.append(len(row) - 1)  # a last space: an editor would take it off
    if first and row and row[0].isspace():
        at.append(0)  # a first space: the list's, not the text's
    return at + [m.start() for m in _COMMENT_OPEN.finditer(row)] if "<!--" in row else at


def _attributes(memory: Any, default_category: str, default_kind: str | None,
                dated: bool = False) -> str:
    attrs = [f"uid={_field(memory, 'uid')}"]
    if dated and _field(memory, "created_at"):
        attrs.append(f"at={_field(memory, 'created_at')}")
    if _field(memory, "category") and _field(memory, "category") != default_category:
        attrs.append(f"category={_field(memory, 'category')}")
    if _field(memory, "kind") and _field(memory, "kind") != default_kind:
        attrs.append(f"kind={_field(memory, 'kind')}")
    if _field(memory, "importance") is not None:
        attrs.append(f"importance={_number(float(_field(memory, 'importance')))}")
    if _field(memory, "status") and _field(memory, "status") != "active":
        attrs.append(f"status={_field(memory, 'status')}")
    return " ".join(attrs)


def _number(value: float) -> str:
    """0.5 as `0.5`, 0.8203125 whole (`:g` alone keeps six digits)."""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


# --- what an export shows of a memory, and its rev --------------------------------------

EDITABLE = ("content", "title", "category", "kind", "tags", "importance", "status", "pinned")


def editable(item: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a Markdown edit can change, as a parsed item gives them (with the
    defaults `Brain.remember` fills in)."""
    return {
        "content": item["content"], "title": item.get("title"), "category": item.get("category", "daily"),
        "kind": item.get("kind") or "note", "tags": list(item.get("tags") or []),
        "importance": float(item.get("importance", 0.5)), "status": item.get("status") or "active",
        "pinned": bool(item.get("pinned")),
    }


def markdown_state(memory: Any) -> dict[str, Any]:
    """The editable fields of `memory` as its exported bullet reads back: what an
    unedited bullet gives, so comparing with it never mistakes the format for an edit."""
    if _field(memory, "category") in LONG_TERM_CATEGORIES:
        heading = _long_term_heading(memory)
        return _shown(_long_term_bullet(memory, heading, with_rev=False), f"## {heading}\n\n", MEMORY_FILE)
    day = parse_time(_field(memory, "created_at")).astimezone(UTC).date()
    return _shown(_daily_bullet(memory, UTC, with_rev=False), "", daily_path(day))


def state_rev(state: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(state, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:12]


def markdown_rev(memory: Any) -> str:
    """What the export's `rev=` records: a hash of `markdown_state(memory)`."""
    return state_rev(markdown_state(memory))


