"""What every importer shares: the items a source yields, how a block of notes becomes
one, which category it goes to, and the day a dated note belongs to.

An `Item` is one future memory with its identity in its source (`key`: the file, the
heading path and its place among the blocks under those headings; or a database row),
the hash of its text as read (`sha`), and where it was read (file and line). Importers
only read; `store.py` decides what is new, edited or gone.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from pathlib import Path
from typing import Any

from ..agents import AGENTS
from ..clock import iso
from ..errors import InvalidInput
from ..files import kind_at, open_regular, read_at_most
from ..markdown.parse import HEADING_KINDS
from ..markdown.render import EXPORT_MARK
from .blocks import Block, read_blocks

# The agents whose own memory `import --from` reads (their records say which), then other tools'.
SOURCES = (*(a.name for a in AGENTS if a.imports), "claude-mem", "markdown")

# "always", "never", "prefer" and their kin: a standing rule or preference.
RULE = re.compile(
    r"\b(?:always|never|prefer(?:s|red)?|must(?:\s+not)?|do\s+not|don't|avoid|instead\s+of)\b", re.I)
RULE_IMPORTANCE = 0.7
IMPORTANCE = 0.5
# A bullet maxmem's own Markdown export wrote: its memory is in brain.db already.
_EXPORTED = re.compile(r"<!--\s*maxmem\s+uid=")
# CLAUDE.md's `@path/to/file` lines pull other files into the context: directives, not notes.
_IMPORT_LINE = re.compile(r"^@[~\w./-]+$")
_LINK = re.compile(r"\]\(([^)\s]+\.md)(?:#[^)]*)?\)")
TITLE_SEPARATOR = " › "
MAX_TITLE = 300
MAX_NOTES_BYTES = 64 << 20  # a file of notes larger than this is no memory file: refused, not read on


@dataclass(frozen=True)
class Scope:
    """How the blocks of one file become memories: their category and kind, the tags
    they carry, the day of a dated file, the category of an always/never/prefer line
    (None: the file's own), a title stem (a memory file's name), whether heading words
    name kinds ("## Decisions"), and what more the provenance records."""

    category: str
    kind: str = "note"
    tags: tuple[str, ...] = ()
    day: date | None = None
    rules: str | None = None
    title: str | None = None
    headed_kinds: bool = False
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Item:
    """One future memory as its source has it; `skip` says why it will not be one."""

    key: str
    text: str
    line: int | None
    title: str | None
    category: str
    kind: str
    tags: tuple[str, ...] = ()
    created_at: str | None = None
    section: str | None = None
    importance: float = IMPORTANCE
    details: Mapping[str, Any] = field(default_factory=dict)
    skip: str | None = None
    stable: bool = False  # the key is the source's own identity (a database row), not a place

    @property
    def sha(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass
class SourceFile:
    """A file (or database) read: its items, or why it could not be read (`error`, a
    failure to report) or was left out on purpose (`skipped`)."""

    path: Path
    items: list[Item] = field(default_factory=list)
    error: str | None = None
    skipped: str | None = None


@dataclass
class Reading:
    """What one importer read: every file it looked at, and notes for the user."""

    source: str
    root: Path
    files: list[SourceFile]
    notes: list[str] = field(default_factory=list)


def read_text(path: Path) -> tuple[str | None, str | None]:
    """A file's text, or (None, why not) in one line: unreadable, not a regular file (a
    FIFO is never waited on), larger than MAX_NOTES_BYTES, not UTF-8."""
    try:
        with open_regular(path) as handle:
            raw = read_at_most(handle, MAX_NOTES_BYTES)
    except OSError as exc:
        return None, f"cannot read it: {exc.strerror or exc}"
    except InvalidInput:  # said without the path, which the report shows already
        return None, f"it is {kind_at(path)}, not a regular file"
    if raw is None:
        return None, f"it holds more than {MAX_NOTES_BYTES >> 20} MiB: not a file of notes"
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        return None, (f"not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}): convert it "
                      "first, e.g. with iconv -t UTF-8")


def markdown_file(path: Path, scope: Scope, tz: tzinfo) -> SourceFile:
    """A Markdown file read as items (an unreadable one as its error)."""
    text, error = read_text(path)
    if text is None:
        return SourceFile(path, error=error)
    if EXPORT_MARK in text[:4000]:
        return SourceFile(path, skipped="written by maxmem export: its memories are in brain.db already")
    document = read_blocks(text)
    front = document.front_matter
    scope = scope_of_front_matter(scope, front)
    return SourceFile(path, markdown_items(path, document.blocks, scope, tz))


def scope_of_front_matter(scope: Scope, front: Mapping[str, str]) -> Scope:
    """A memory file's front matter names its memories (`name`); Claude Code's also
    says what they are (`type`: user, feedback, project, reference)."""
    title = front.get("name") or front.get("title") or scope.title
    kind_of = {"user": ("core", "fact"), "feedback": ("core", "preference"),
               "project": ("project", "note"), "reference": ("project", "fact")}
    category, kind = kind_of.get(front.get("type", "").strip().lower(), (scope.category, scope.kind))
    return Scope(category, kind, scope.tags, scope.day, scope.rules, title, scope.headed_kinds,
                 {**scope.details, **({"type": front["type"]} if front.get("type") else {})})


def markdown_items(path: Path, blocks: Iterable[Block], scope_of: Scope | Callable[[Block], Scope], tz: tzinfo,
                   skip: Mapping[int, str] | None = None) -> list[Item]:
    """Items of a file's blocks, each read in its scope (one for the file, or a block's
    own); `skip`: line -> why that block is left out."""
    seen: dict[tuple[str, ...], int] = {}
    out = []
    for block in blocks:
        scope = scope_of(block) if callable(scope_of) else scope_of
        place = seen.get(block.headings, 0)
        seen[block.headings] = place + 1
        headings = [h.rstrip(":").strip() for h in block.headings]
        if headings and headings[0].lower() in (path.name.lower(), path.stem.lower()):
            headings = headings[1:]  # "# CLAUDE.md", "# MEMORY": the file's own name, no context
        title = TITLE_SEPARATOR.join(filter(None, [scope.title, *headings])) or None
        category, kind, importance = classify(block.text, scope, headings)
        reason = (skip or {}).get(block.line) or _skipped(block.text)
        out.append(Item(
            key=item_key(str(path), *block.headings, str(place)),
            text=block.text, line=block.line,
            title=title[:MAX_TITLE] if title else None,
            category=category, kind=kind, tags=scope.tags,
            created_at=day_instant(scope.day, tz) if scope.day else None,
            section=TITLE_SEPARATOR.join(headings) or None,
            importance=importance, details=scope.details, skip=reason))
    return out


def _skipped(text: str) -> str | None:
    if _EXPORTED.search(text):
        return "written by maxmem export: in brain.db already"
    if all(_IMPORT_LINE.match(line.strip()) for line in text.splitlines() if line.strip()):
        return "an @import line (a file pulled into the agent's context, not a note)"
    return None


def classify(text: str, scope: Scope, headings: Iterable[str] = ()) -> tuple[str, str, float]:
    """(category, kind, importance) of one block: an always/never/prefer line is a
    preference (in scope.rules' category when the scope names one); heading words may
    name the kind or the project category ("## Decisions", "## Projects")."""
    category, kind = scope.category, scope.kind
    if scope.headed_kinds:
        for heading in headings:
            for pattern, name, value in HEADING_KINDS:
                if re.fullmatch(pattern, heading.strip(), re.I):
                    category, kind = (value, kind) if name == "category" else (category, value)
    if scope.day is None and RULE.search(text):
        return scope.rules or category, "preference", RULE_IMPORTANCE
    return category, kind, IMPORTANCE


def linked_files(text: str) -> list[str]:
    """The .md files a Markdown text links to (an index line's targets)."""
    return _LINK.findall(text)


def item_key(*parts: str) -> str:
    """An item's identity: a hash of where it is (file, headings, place), never its text."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def day_instant(day: date, tz: tzinfo) -> str:
    """The time a note of `day` is stored at: the middle of the hours that are `day` both
    in the user's zone and in UTC, so every view (the brief in local time, lists and
    --since in stored UTC, retention in its own zone nearby) puts it on that day, even
    14 hours east of UTC."""
    local_start = datetime.combine(day, time(0), tzinfo=tz).astimezone(UTC)
    local_end = datetime.combine(day + timedelta(days=1), time(0), tzinfo=tz).astimezone(UTC)
    utc_start = datetime.combine(day, time(0), tzinfo=UTC)
    start = max(local_start, utc_start)
    end = min(local_end, utc_start + timedelta(days=1))
    if end <= start:  # not possible for real zones (less than 24 h from UTC); be safe
        start, end = local_start, local_end
    return iso(start + (end - start) / 2)


def project_tag(folder: Path | str) -> str:
    """The tag naming a project: its folder's name."""
    name = Path(str(folder)).name or str(folder)
    return name[:64]


def repository_root(cwd: Path, home: Path) -> Path | None:
    """The nearest folder at or above `cwd` that holds .git, not above the home folder."""
    for directory in (cwd, *cwd.parents):
        if is_dir(directory / ".git") or is_file(directory / ".git"):  # a worktree's .git is a file
            return directory
        if directory == home:
            break
    return None


def folders_down(cwd: Path, top: Path) -> list[Path]:
    """The folders from `top` down to `cwd` (only cwd when it is not below top)."""
    if cwd != top and top not in cwd.parents:
        return [cwd]
    chain = [cwd]
    while chain[-1] != top:
        chain.append(chain[-1].parent)
    return chain[::-1]


def is_file(path: Path) -> bool:
    """Whether `path` is a file we may look at (a folder we may not enter is not an error here)."""
    try:
        return path.is_file()
    except OSError:
        return False


def is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False
