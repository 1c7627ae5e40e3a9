"""The Markdown workspace: memories as Markdown files, both ways, in OpenClaw's layout.

OpenClaw keeps an agent's memory as plain Markdown in its workspace:

- `MEMORY.md` — curated long-term memory (decisions, preferences, durable facts),
  loaded at the start of private sessions;
- `memory/YYYY-MM-DD.md` — the daily log, append-only; today's and yesterday's are
  read at session start (`memory/YYYY-MM-DD-<slug>.md` variants are written by its
  session-memory hook and belong to the same day).

Rendering writes core and project memories to `MEMORY.md`, grouped under `##`
headings by kind, and everything else to the daily file of the day it was created,
in time order. Each memory is one bullet: `📌 ` first when it is pinned, its tags as
`#hashtags` at the end of its first line, and a trailing HTML comment (invisible when
rendered, kept by editors and Obsidian) with what Markdown has no place for — uid,
kind, importance, status — and `rev`, a hash of the memory as it was exported.

Parsing reads any such file, including hand-written ones: each top-level bullet, and
each paragraph outside a list, becomes a memory; nested bullets stay in their parent;
a heading names the section (and the kind, when it is one: "## Decisions"); a daily
file's name gives the date.

Importing the folder again is a round trip (`import_markdown`): a bullet whose uid
brain.db has is compared with what was exported (`rev`) and with brain.db now; edited
in Markdown only, the memory is updated (content, title, category, kind, tags, pin,
importance, status) through `Brain.update` — a new version in its history; edited in
both places, it is reported as a conflict and left alone. Bullets without a uid are new
memories. With `delete_missing`, memories the export wrote (listed in its
`.maxmem-export.json`) whose bullets are gone are forgotten — unless brain.db changed
them since, which is a conflict too.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, tzinfo
from pathlib import Path, PurePath
from typing import IO, TYPE_CHECKING, Any

from .clock import iso, parse_time
from .errors import InvalidInput
from .files import write_private
from .memory import Memory

if TYPE_CHECKING:  # pragma: no cover
    from .brain import Brain

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
# An exported bullet's tags: the #hashtags ending its first line. Content that ends in
# hashtag-like words is written with them escaped (\#12), one backslash more each.
_TAG_RUN = re.compile(r"(?:^|(?<=\s))#[^\s#\\]\S*(?:\s+#[^\s#\\]\S*)*\s*$")
_ESCAPABLE_RUN = re.compile(r"(?:^|(?<=\s))\\*#[^\s#\\]\S*(?:\s+\\*#[^\s#\\]\S*)*\s*$")
_ESCAPED_HASH = re.compile(r"\\+#")
_TOKEN_START = re.compile(r"(?:^|(?<=\s))(\\*)#")
PIN = "📌"
_PIN_START = re.compile(r"^(\\*)📌(?:\s|$)")
_EXPORTED_BULLET = re.compile(r"^- .*<!-- maxmem uid=(\S+) [^\n]*?rev=([0-9a-f]+) -->$", re.M)
_EXPORTED_AT = re.compile(r"<!--\s*written by maxmem export at (\S+?)[;\s]")
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
    return _with_rev(lines, f"## {heading}\n\n", MEMORY_FILE) if with_rev else lines


def _daily_bullet(memory: Any, tz: tzinfo, with_rev: bool) -> list[str]:
    at = parse_time(_field(memory, "created_at")).astimezone(tz)
    lines = _bullet(memory, default_category="daily", default_kind="note", time_prefix=at.strftime("%H:%M"))
    return _with_rev(lines, "", daily_path(at.date())) if with_rev else lines


def _shown(lines: list[str], before: str, path: str) -> dict[str, Any]:
    """The editable fields the bullet `lines` read back as, under `before` in `path`."""
    [item] = parse_markdown(before + "\n".join(lines), path=path)
    return editable(item)


def _with_rev(lines: list[str], before: str, path: str) -> list[str]:
    """The bullet with `rev=`, the hash of what it reads back as, in its comment."""
    rev = state_rev(_shown(lines, before, path))
    return [lines[0].removesuffix(" -->") + f" rev={rev} -->", *lines[1:]]


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
    """A tag as a #hashtag shows it: no spaces, no leading # or backslash."""
    return re.sub(r"\s+", "-", tag.strip()).lstrip("#\\")


def _escape_hashes(first: str) -> str:
    """The content's first line as an exported bullet shows it: each `\\#` gets one more
    backslash, and hashtag-like words ending the line are escaped (they are not tags)."""
    if "#" not in first:
        return first
    first = _ESCAPED_HASH.sub(lambda m: "\\" + m[0], first)
    m = _ESCAPABLE_RUN.search(first)
    if not m:
        return first
    return first[: m.start()] + _TOKEN_START.sub(lambda t: t[0] if t[1] else "\\#", m[0])


def _unescape_hashes(first: str) -> str:
    """Markdown's reading of `\\#`: one backslash less before each #."""
    return _ESCAPED_HASH.sub(lambda m: m[0][1:], first) if "\\#" in first else first


def _bullet(
    memory: Any, *, default_category: str, default_kind: str | None, time_prefix: str | None = None,
) -> list[str]:
    content = (_field(memory, "content") or "").strip("\n")
    title = (_field(memory, "title") or "").strip()
    tags = [t for t in (tag_form(t) for t in (_field(memory, "tags") or [])) if t]
    first, *more = content.split("\n") or [""]
    head = f"{time_prefix} " if time_prefix else ""
    titled = bool(title) and title != first.strip()
    if _field(memory, "pinned"):
        head += f"{PIN} "
    elif not titled and _PIN_START.match(first):  # content starting with the pin: one backslash more
        first = "\\" + first
    if titled:
        head += f"**{_one_line(title)}** — "
    head += _escape_hashes(first.rstrip())
    if tags:
        head += " " + " ".join("#" + t for t in tags)
    attrs = _attributes(memory, default_category, default_kind, dated=time_prefix is None)
    lines = [f"- {head.rstrip()} <!-- maxmem {attrs} -->"]
    lines += [f"  {line}" if line.strip() else "" for line in more]
    return lines


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
        attrs.append(f"importance={_field(memory, 'importance'):g}")
    if _field(memory, "status") and _field(memory, "status") != "active":
        attrs.append(f"status={_field(memory, 'status')}")
    return " ".join(attrs)


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


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("**", "")


# --- parsing --------------------------------------------------------------------------


@dataclass(frozen=True)
class Bullet:
    """One memory read from a file: its fields, the `rev` an export gave it, its line."""

    memory: dict[str, Any]
    rev: str | None
    line: int


def parse_markdown(
    text: str, *, path: str | PurePath = MEMORY_FILE, tz: tzinfo = UTC
) -> list[dict[str, Any]]:
    """Memories (dicts for Brain.remember_many) from one MEMORY.md or daily file.

    A daily file's memories are dated by its name (and an "HH:MM" bullet prefix, read
    in `tz`); MEMORY.md's memories are undated (the importer decides) and core.
    """
    return [b.memory for b in parse_bullets(text, path=path, tz=tz)]


def exported_at(text: str) -> str | None:
    """When maxmem export wrote this file (its first comment says), else None."""
    m = _EXPORTED_AT.search(text[:4000])
    return m[1] if m else None


def parse_bullets(text: str, *, path: str | PurePath = MEMORY_FILE, tz: tzinfo = UTC) -> list[Bullet]:
    """The memories of one file with what an export recorded of each (see parse_markdown)."""
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
            if current is None or (opening and not belongs):
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
        except (ValueError, InvalidInput) as exc:
            raise InvalidInput(f"{PurePath(path).as_posix()} line {item.line}: {exc}") from None
        if memory is not None:
            memory["metadata"] = {"markdown_file": PurePath(path).as_posix(),
                                  "line": item.line, **memory.get("metadata", {})}
            if item.section:
                memory["metadata"]["section"] = item.section
            out.append(Bullet(memory, memory.pop("rev", None), item.line))
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
        # This version's export shows tags as #hashtags and the pin as 📌; an earlier one
        # kept them in the comment (tags=…, pinned=1).
        exported = bool(attrs) and "tags" not in attrs and "pinned" not in attrs
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
        if m := _PIN_START.match(first):
            if m[1]:  # content that starts with the pin, escaped: one backslash less
                first = first[1:]
            else:
                memory["pinned"], first = True, first[m.end():]
        if m := _TASK_BOX.match(first):
            memory["kind"] = "task"
            memory["status"] = "resolved" if m[1] in "xX" else "active"
            first = m[2]
        tags: list[str] = []
        if exported:  # the hashtags ending the first line are the tags; escaped ones are text
            if m := _TAG_RUN.search(first):
                tags, first = [t[1:] for t in m[0].split()], first[: m.start()].rstrip()
            first = _unescape_hashes(first)
        elif attrs:  # an earlier export: the visible hashtags repeat the tags attribute
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
        if "rev" in attrs:
            memory["rev"] = attrs["rev"]  # taken out by parse_bullets
        if day:
            memory["created_at"] = iso(datetime.combine(day, at or time(0), tzinfo=tz))
        elif "at" in attrs:
            memory["created_at"] = iso(parse_time(attrs["at"]))
        return memory


# --- export and import over a Brain ---------------------------------------------------

EXPORT_MARK = "written by maxmem export"
MANIFEST = ".maxmem-export.json"
# What the last import that changed a memory read from its bullet (rev) in which export.
SYNC_KEY = "markdown_sync"
MEMORIES_BY_UID_SQL = "SELECT * FROM memories WHERE uid IN ({marks})"
DELETED_SQL = "SELECT DISTINCT uid FROM changes WHERE op = 'delete' AND uid IN ({marks})"
ALL_MEMORIES_SQL = "SELECT * FROM memories WHERE id > ? AND category IN ({}) ORDER BY id LIMIT 500"
IMPORTED_SQL = "SELECT 1 FROM markdown_imports WHERE path = ? AND sha256 = ?"
RECORD_IMPORT_SQL = (
    "INSERT INTO markdown_imports (path, sha256, imported_at, added, existing) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (path, sha256) DO UPDATE SET imported_at = excluded.imported_at, added = excluded.added, "
    "existing = excluded.existing"
)
UID_EXISTS_SQL = "SELECT uid FROM memories WHERE uid IN ({marks})"
# One pass over the imported memories per import run (not per file or per item).
IMPORT_KEYS_SQL = (
    "SELECT json_extract(metadata, '$.import_key') FROM memories "
    "WHERE source = 'import' AND json_extract(metadata, '$.import_key') IS NOT NULL"
)

@dataclass
class ExportReport:
    directory: str
    files: list[dict[str, Any]]

    @property
    def memories(self) -> int:
        return sum(f["memories"] for f in self.files)

    def describe(self) -> str:
        return f"exported {self.memories} memories to {len(self.files)} file(s) in {self.directory}"

    def to_dict(self) -> dict[str, Any]:
        return {"directory": self.directory, "memories": self.memories, "files": self.files}


def _iter_memories(brain: Brain, categories: Sequence[str]) -> Iterator[Any]:
    sql = ALL_MEMORIES_SQL.format(",".join("?" * len(categories)))
    last = 0
    while rows := brain.db.rows(sql, (last, *categories)):
        for row in rows:
            yield Memory.from_row(row)
        last = rows[-1]["id"]


def export_markdown(
    brain: Brain,
    directory: str | Path,
    *,
    tz: tzinfo = UTC,
    include_conversations: bool = False,
    force: bool = False,
) -> ExportReport:
    """Write MEMORY.md and memory/YYYY-MM-DD.md under `directory`.

    A file that exists and was not written by maxmem (an OpenClaw workspace's own
    MEMORY.md) is never overwritten unless `force`; files are replaced atomically.
    """
    root = Path(directory).expanduser()
    if root.exists() and not root.is_dir():
        raise InvalidInput(f"{root} is a file: give a directory to export into")
    categories = ["core", "project", "daily"] + (["conversation"] if include_conversations else [])
    now = brain.clock.now()
    files = render_workspace(_iter_memories(brain, categories), tz=tz, generated_at=now)
    targets = [(root / f.path, f) for f in files]
    if not force:
        for target, _ in targets:
            if target.exists() and EXPORT_MARK not in target.read_text("utf-8", "replace")[:4000]:
                raise InvalidInput(
                    f"{target} exists and was not written by maxmem: export elsewhere or pass --force"
                )
    written = []
    manifest: dict[str, Any] = {"exported_at": iso(now), "categories": categories, "memories": {}}
    for target, rendered in targets:
        text = rendered.text
        if rendered.path != MEMORY_FILE:
            text = text.replace("\n\n", f"\n\n<!-- {EXPORT_MARK} at {iso(now)} -->\n\n", 1)
        write_private(target, functools.partial(_write_text, text=text))  # memories are private
        written.append({"path": rendered.path, "memories": rendered.count})
        for uid, rev in _EXPORTED_BULLET.findall(text):
            manifest["memories"][uid] = {"file": rendered.path, "rev": rev}
    # What this export wrote, for `import --delete-missing` (a dotfile: editors leave it be).
    write_private(root / MANIFEST, functools.partial(
        _write_text, text=json.dumps(manifest, ensure_ascii=False, indent=0) + "\n"))
    return ExportReport(str(root), written)


def _write_text(handle: IO[str], text: str) -> int:
    return handle.write(text)


def backup_markdown(brain: Brain, root: str | Path, keep: int, *, tz: tzinfo = UTC,
                    include_conversations: bool = False) -> ExportReport:
    """A dated export (root/YYYY-MM-DD/) for a nightly job; only the newest `keep` stay."""
    if keep < 1:
        raise InvalidInput("--keep must be at least 1")
    base = Path(root).expanduser()
    day = brain.clock.now().astimezone(tz).date().isoformat()
    report = export_markdown(brain, base / day, tz=tz, include_conversations=include_conversations,
                             force=True)
    dated = sorted(p for p in base.iterdir() if p.is_dir() and re.fullmatch(r"\d{4}-\d{2}-\d{2}", p.name))
    for old in dated[:-keep]:
        shutil.rmtree(old)
    return report


@dataclass
class ImportReport:
    files: list[dict[str, Any]]
    # Bullets left as brain.db has them: changed in both places since the export, or a
    # uid found twice; each with its uid, id, file, line and reason.
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    forgotten: list[int] = field(default_factory=list)  # ids, with delete_missing

    def total(self, key: str) -> int:
        return sum(f.get(key, 0) for f in self.files)

    def describe(self) -> str:
        unchanged = sum(1 for f in self.files if f["skipped"])
        text = (f"imported {len(self.files)} file(s): {self.total('added')} memories added, "
                f"{self.total('updated')} updated, {self.total('existing')} already present, "
                f"{unchanged} file(s) unchanged since their last import")
        if self.forgotten:
            text += f", {len(self.forgotten)} forgotten (gone from the folder)"
        if self.conflicts:
            text += f"; {len(self.conflicts)} conflict(s) not applied"
        return text

    def lines(self) -> list[str]:
        return [self.describe(), *(f"conflict: {c['file']} line {c['line']}: #{c['id']} ({c['uid']}) {c['reason']}"
                                   for c in self.conflicts)]

    def to_dict(self) -> dict[str, Any]:
        return {"files": self.files, "conflicts": self.conflicts, "forgotten": self.forgotten}


def markdown_files(pattern: str | Path) -> list[Path]:
    """The files a GLOB (or a workspace directory, or one file) names, in a stable order."""
    text = os.path.expanduser(str(pattern))
    path = Path(text)
    if path.is_dir():
        found = [path / MEMORY_FILE] if (path / MEMORY_FILE).is_file() else []
        found += sorted((path / DAILY_DIR).glob("*.md")) if (path / DAILY_DIR).is_dir() else []
    elif path.is_file():
        found = [path]
    else:
        found = sorted(Path(p) for p in glob.glob(text, recursive=True) if Path(p).is_file())
    found = [p for p in found if p.suffix.lower() == ".md"]
    if not found:
        raise InvalidInput(f"no Markdown files match {str(pattern)!r}")
    return found


def import_markdown(brain: Brain, pattern: str | Path, *, tz: tzinfo = UTC,
                    delete_missing: bool = False) -> ImportReport:
    """Bring MEMORY.md / memory/YYYY-MM-DD.md files in, each file in one transaction.

    A bullet whose uid brain.db has and that an export wrote (it has a `rev`) is a
    round trip: edited in the file only, the memory is updated; edited in both places
    since the export, it is a conflict (reported, brain.db kept). Other bullets are new
    memories, stored unless already present (same uid, or the same text from the same
    file); a uid forgotten in brain.db since its export is not brought back. A file
    without exported bullets that was imported with the same content is skipped.
    Every file imported is recorded in `markdown_imports`. `delete_missing` (PATTERN a
    folder an export wrote): forget the memories it exported whose bullets are gone.
    """
    files = markdown_files(pattern)
    manifest = _manifest(Path(os.path.expanduser(str(pattern)))) if delete_missing else None
    report = ImportReport([])
    known_keys: set[str] | None = None  # read once, on the first file that is not skipped
    seen: dict[str, tuple[str, int]] = {}  # uid -> (file, line) of the bullet that has it
    for path in files:
        try:
            raw = path.read_bytes()
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"cannot read {path}: {exc}") from None
        sha = hashlib.sha256(raw).hexdigest()
        where = str(path.resolve())
        entry: dict[str, Any] = {"path": str(path), "added": 0, "updated": 0, "existing": 0, "skipped": False}
        report.files.append(entry)
        relative = _workspace_relative(path)
        bullets = parse_bullets(text, path=relative, tz=tz)
        bullets = _first_of_each_uid(bullets, relative, seen, report)
        round_trip = [b for b in bullets if b.rev and b.memory.get("uid")]
        if not round_trip and brain.db.one(IMPORTED_SQL, (where, sha)):
            entry["skipped"] = True
            continue
        stored = {m.uid: m for m in map(Memory.from_row, brain.db.rows_in(
            MEMORIES_BY_UID_SQL, [b.memory["uid"] for b in round_trip]))}
        conflicts = len(report.conflicts)
        changes = _edits(brain, [b for b in round_trip if b.memory["uid"] in stored], stored,
                         exported_at(text) or "", relative, report)
        entry["existing"] += (sum(1 for b in round_trip if b.memory["uid"] in stored) - len(changes)
                              - (len(report.conflicts) - conflicts))
        fresh = [b for b in bullets if b.memory.get("uid") not in stored]
        fresh = _not_forgotten(brain, fresh, relative, report)
        items = [b.memory for b in fresh]
        fallback_time = None
        if file_date(path) is None:  # MEMORY.md: undated bullets take the file's date
            fallback_time = iso(datetime.fromtimestamp(path.stat().st_mtime, UTC))
        for item in items:
            item["metadata"]["import_key"] = _import_key(relative, item)
            item["source"] = "import"
            if "created_at" not in item and fallback_time:
                item["created_at"] = fallback_time
        if known_keys is None:
            known_keys = {row[0] for row in brain.db.execute(IMPORT_KEYS_SQL)}
        # Embed before the write transaction opens: a slow API must not hold the lock.
        brain.prefetch_vectors([*_not_yet_stored(brain, items, known_keys),
                                *({"content": f.get("content", m.content), "title": f.get("title", m.title)}
                                  for m, f in changes)])
        with brain.db.atomic():
            for memory, fields in changes:
                brain.update(memory.id, **fields)
            entry["updated"] = len(changes)
            new = _not_yet_stored(brain, items, known_keys)
            entry["existing"] += len(items) - len(new)
            added = brain.remember_many(new, embed=False) if new else []
            # remember_many returns the memory already stored for a text it has seen
            entry["added"] = sum(
                1 for item, memory in zip(new, added)
                if memory.metadata.get("import_key") == item["metadata"]["import_key"]
            )
            entry["existing"] += len(new) - entry["added"]
            known_keys.update(item["metadata"]["import_key"] for item in new)
            brain.db.execute(RECORD_IMPORT_SQL, (where, sha, iso(brain.clock.now()),
                                                 entry["added"], entry["existing"]))
    if manifest is not None:
        report.forgotten = _forget_missing(brain, manifest, seen, report)
    return report


def _first_of_each_uid(bullets: list[Bullet], relative: str, seen: dict[str, tuple[str, int]],
                       report: ImportReport) -> list[Bullet]:
    """The bullets whose uid no earlier bullet had; a copy is reported and left out."""
    out = []
    for bullet in bullets:
        uid = bullet.memory.get("uid")
        if uid and uid in seen:
            first = seen[uid]
            report.conflicts.append({"uid": uid, "id": None, "file": relative, "line": bullet.line,
                                     "reason": f"repeats the uid of {first[0]} line {first[1]}; left out"})
            continue
        if uid:
            seen[uid] = (relative, bullet.line)
        out.append(bullet)
    return out


def _base(memory: Memory, rev: str | None, export: str) -> str | None:
    """What the bullet showed when brain.db and the file last agreed: the export's rev,
    or, when an import from this same export changed the memory since, what it read."""
    sync = memory.metadata.get(SYNC_KEY)
    if isinstance(sync, dict) and sync.get("export") == export and isinstance(sync.get("rev"), str):
        return str(sync["rev"])
    return rev


def _edits(brain: Brain, bullets: list[Bullet], stored: Mapping[str, Memory], export: str,
           relative: str, report: ImportReport) -> list[tuple[Memory, dict[str, Any]]]:
    """The updates the edited bullets ask for; conflicts go to the report."""
    changes = []
    for bullet in bullets:
        memory = stored[bullet.memory["uid"]]
        shown = editable(bullet.memory)
        shown_rev, base = state_rev(shown), _base(memory, bullet.rev, export)
        if shown_rev == base:
            continue  # not edited in the file
        now = markdown_state(memory)
        if shown_rev == state_rev(now):
            continue  # already what the file says
        if state_rev(now) != base:
            report.conflicts.append({
                "uid": memory.uid, "id": memory.id, "file": relative, "line": bullet.line,
                "reason": "was changed in brain.db and in the file since the export; brain.db's kept "
                          f"(see  maxmem history {memory.id} , then edit one side)"})
            continue
        fields = {k: shown[k] for k in EDITABLE if shown[k] != now[k]}
        fields["metadata"] = {**memory.metadata, SYNC_KEY: {"rev": shown_rev, "export": export}}
        changes.append((memory, fields))
    return changes


def _not_forgotten(brain: Brain, bullets: list[Bullet], relative: str, report: ImportReport) -> list[Bullet]:
    """Exported bullets whose memory was forgotten (or expired) in brain.db since stay
    gone; edited in the file since, they are a conflict."""
    exported = [b.memory["uid"] for b in bullets if b.rev and b.memory.get("uid")]
    gone = {row[0] for row in brain.db.each_in(DELETED_SQL, exported)} if exported else set()
    out = []
    for bullet in bullets:
        uid = bullet.memory.get("uid")
        if bullet.rev and uid in gone:
            if state_rev(editable(bullet.memory)) != bullet.rev:
                report.conflicts.append({"uid": uid, "id": None, "file": relative, "line": bullet.line,
                                         "reason": "was forgotten in brain.db and edited in the file since "
                                                   "the export; not brought back (remove the uid to add it anew)"})
            continue
        out.append(bullet)
    return out


def _manifest(root: Path) -> dict[str, Any]:
    path = root / MANIFEST
    if not root.is_dir() or not path.is_file():
        raise InvalidInput(f"--delete-missing needs the folder a maxmem export wrote (with its {MANIFEST}); "
                           f"{root} has none")
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("memories"), dict):
        raise InvalidInput(f"{path} is not a maxmem export manifest")
    return data


def _forget_missing(brain: Brain, manifest: Mapping[str, Any], seen: Mapping[str, tuple[str, int]],
                    report: ImportReport) -> list[int]:
    """Forget the memories the export wrote whose bullets are gone, unless brain.db
    changed them since (a conflict)."""
    gone = {uid: info for uid, info in manifest["memories"].items() if uid not in seen}
    stored = [Memory.from_row(r) for r in brain.db.rows_in(MEMORIES_BY_UID_SQL, list(gone))]
    export = str(manifest.get("exported_at") or "")
    doomed = []
    for memory in stored:
        info = gone[memory.uid] if isinstance(gone[memory.uid], dict) else {}
        if markdown_rev(memory) == _base(memory, info.get("rev"), export):
            doomed.append(memory)
        else:
            report.conflicts.append({
                "uid": memory.uid, "id": memory.id, "file": str(info.get("file") or "?"), "line": 0,
                "reason": "is gone from the folder but was changed in brain.db since the export; kept"})
    if doomed:
        brain.forget_many(doomed)
    return [m.id for m in doomed]


def _workspace_relative(path: Path) -> str:
    if file_date(path) is not None and path.parent.name == DAILY_DIR:
        return f"{DAILY_DIR}/{path.name}"
    return path.name


def _import_key(relative: str, item: Mapping[str, Any]) -> str:
    basis = "\x1f".join([relative, item.get("title") or "", item["content"]])
    return hashlib.sha256(basis.encode("utf-8")).hexdigest()[:32]


def _not_yet_stored(brain: Brain, items: list[dict[str, Any]],
                    known_keys: set[str]) -> list[dict[str, Any]]:
    have_uids = {row[0] for row in brain.db.each_in(UID_EXISTS_SQL, [i["uid"] for i in items if i.get("uid")])}
    out, seen = [], set()
    for item in items:
        key = item["metadata"]["import_key"]
        if item.get("uid") in have_uids or key in known_keys or key in seen:
            continue
        seen.add(key)
        out.append(item)
    return out
