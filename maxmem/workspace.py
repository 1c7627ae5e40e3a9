"""The Markdown workspace: memories as Markdown files, both ways, in OpenClaw's layout.

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
file's name gives the date. The export and import at the end run over a Brain.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
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


def render_daily(day: date, memories: Iterable[Any], *, tz: tzinfo = UTC) -> str:
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
    text: str, *, path: str | PurePath = MEMORY_FILE, tz: tzinfo = UTC
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
        elif "at" in attrs:
            memory["created_at"] = iso(parse_time(attrs["at"]))
        return memory


# --- export and import over a Brain ---------------------------------------------------

EXPORT_MARK = "written by maxmem export"
ALL_MEMORIES_SQL = "SELECT * FROM memories WHERE id > ? AND category IN ({}) ORDER BY id LIMIT 500"
IMPORTED_SQL = "SELECT 1 FROM markdown_imports WHERE path = ? AND sha256 = ?"
RECORD_IMPORT_SQL = (
    "INSERT INTO markdown_imports (path, sha256, imported_at, added, existing) VALUES (?, ?, ?, ?, ?)"
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
    files = render_workspace(_iter_memories(brain, categories), tz=tz,
                             generated_at=brain.clock.now())
    targets = [(root / f.path, f) for f in files]
    if not force:
        for target, _ in targets:
            if target.exists() and EXPORT_MARK not in target.read_text("utf-8", "replace")[:4000]:
                raise InvalidInput(
                    f"{target} exists and was not written by maxmem: export elsewhere or pass --force"
                )
    written = []
    for target, rendered in targets:
        text = rendered.text
        if rendered.path != MEMORY_FILE:
            text = text.replace("\n\n", f"\n\n<!-- {EXPORT_MARK} -->\n\n", 1)
        write_private(target, functools.partial(_write_text, text=text))  # memories are private
        written.append({"path": rendered.path, "memories": rendered.count})
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

    def describe(self) -> str:
        added = sum(f["added"] for f in self.files)
        existing = sum(f["existing"] for f in self.files)
        unchanged = sum(1 for f in self.files if f["skipped"])
        return (f"imported {len(self.files)} file(s): {added} memories added, {existing} already"
                f" present, {unchanged} file(s) unchanged since their last import")

    def to_dict(self) -> dict[str, Any]:
        return {"files": self.files}


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


def import_markdown(brain: Brain, pattern: str | Path, *, tz: tzinfo = UTC) -> ImportReport:
    """Bring MEMORY.md / memory/YYYY-MM-DD.md files in, each file in one transaction.

    A file already imported with the same content is skipped; within a changed file,
    memories already present (same uid, or the same text from the same file) are not
    stored again. Every file imported is recorded in `markdown_imports`.
    """
    files = markdown_files(pattern)
    report = ImportReport([])
    known_keys: set[str] | None = None  # read once, on the first file that is not skipped
    for path in files:
        try:
            raw = path.read_bytes()
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"cannot read {path}: {exc}") from None
        sha = hashlib.sha256(raw).hexdigest()
        where = str(path.resolve())
        entry: dict[str, Any] = {"path": str(path), "added": 0, "existing": 0, "skipped": False}
        report.files.append(entry)
        if brain.db.one(IMPORTED_SQL, (where, sha)):
            entry["skipped"] = True
            continue
        relative = _workspace_relative(path)
        items = parse_markdown(text, path=relative, tz=tz)
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
        brain.prefetch_vectors(_not_yet_stored(brain, items, known_keys))
        with brain.db.atomic():
            new = _not_yet_stored(brain, items, known_keys)
            entry["existing"] = len(items) - len(new)
            stored = brain.remember_many(new, embed=False) if new else []
            # remember_many returns the memory already stored for a text it has seen
            entry["added"] = sum(
                1 for item, memory in zip(new, stored)
                if memory.metadata.get("import_key") == item["metadata"]["import_key"]
            )
            entry["existing"] += len(new) - entry["added"]
            known_keys.update(item["metadata"]["import_key"] for item in new)
            brain.db.execute(RECORD_IMPORT_SQL, (where, sha, iso(brain.clock.now()),
                                                 entry["added"], entry["existing"]))
    return report


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
