"""Reading Markdown memory files: MEMORY.md and memory/YYYY-MM-DD.md, exported or hand-written.

Each top-level bullet, and each paragraph outside a list, becomes a memory; nested
bullets stay in their parent; a heading names the section (and the kind, when it is
one: "## Decisions"); a daily file's name gives the date. A bullet maxmem exported
carries a trailing comment (uid, kind, importance, status, rev) that is read back too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, tzinfo
from pathlib import PurePath
from typing import Any

from ..clock import iso, parse_time
from ..errors import InvalidInput
from ..inert import ACTED_ON

MEMORY_FILE = "MEMORY.md"
DAILY_DIR = "memory"

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
ESCAPED_HASH = re.compile(r"\\+#")
PIN_START = re.compile(r"^(\\*)📌(?:\s|$)")
# Content starting with ** that is no title: exported with one backslash more (\**), read back without it.
BOLD_START = re.compile(r"^\\*\*\*")
_EXPORTED_AT = re.compile(r"<!--\s*written by maxmem export at (\S+?)[;\s]")
_FENCE = re.compile(r"^\s*(```|~~~)")
# An exported bullet never holds a character a terminal or an editor acts on (escape
# sequences and the other C0 and C1 controls but tab, DEL, bidi controls, U+2028/9):
# each is written as inert.py shows it (\x1b, \u202e), and the backslashes of a run that
# comes before such a character or before text that reads like its escape are doubled, so
# the escape reads back as the character and `\\x1b` as the four characters `\x1b`.
# The same escape spells the few characters that Markdown or the bullet's own format would
# read otherwise where they stand (SPELLED: a first or last space, a newline the list would
# fold, `[ ] ` at the start, a dash after the time, `<!--`, a fence left open, a title's
# `**`): `\x20`, `\x0a`, `\x5b`, `\u2014`, `\x3c`, `\x60`, `\x2a`.
_SHOWN_CODE = r"x[0-9a-f]{2}|u[0-9a-f]{4}"
_TO_SHOW = re.compile("(\\\\*)([" + "".join(re.escape(chr(c)) for c in ACTED_ON) + "])|(\\\\+)(" + _SHOWN_CODE + ")")
_SHOWN = re.compile("(\\\\+)(" + _SHOWN_CODE + ")")
_SPELLED = frozenset("[—–-<`~*:")


def show_controls(text: str) -> str:
    """`text` as an exported bullet holds it: no raw control, escaped as described above."""
    return _TO_SHOW.sub(_show_one, text)


def spelled(char: str) -> bool:
    """Whether an export may write `char` as its escape (\\x20) to keep it from being
    misread: whitespace, and the few characters that start a Markdown or maxmem mark."""
    return char.isspace() or char in _SPELLED


def show_text(text: str, at: Iterable[int] = ()) -> str:
    """show_controls(text), with the characters at the indices `at` (each `spelled`) written
    as their escape too, the backslashes before each doubled."""
    out, last = [], 0
    for index in sorted(set(at)):
        shown = show_controls(text[last:index])
        run = len(shown) - len(shown.rstrip("\\"))
        out.append(shown + "\\" * run + _escape_of(text[index]))
        last = index + 1
    out.append(show_controls(text[last:]))
    return "".join(out)


def _escape_of(char: str) -> str:
    code = ord(char)
    return ACTED_ON.get(code) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def _show_one(m: re.Match[str]) -> str:
    if m[2] is not None:  # a character acted on, after any backslashes
        return m[1] * 2 + ACTED_ON[ord(m[2])]
    return m[3] * 2 + m[4]  # text that reads like an escape


def read_controls(text: str) -> str:
    """The reverse of show_controls: a run of backslashes before `x1b` (or `u202e`) is
    halved, and an odd one ends in the escape of that character. (An odd run before the
    code of a character neither acted on nor spelled, `\\x41`, is no export's: it stays
    as it is.)"""
    return _SHOWN.sub(_read_one, text) if "\\" in text else text


def _read_one(m: re.Match[str]) -> str:
    run, code = m[1], m[2]
    if len(run) % 2 == 0:
        return run[: len(run) // 2] + code
    char = chr(int(code[1:], 16))
    return run[: len(run) // 2] + char if ord(char) in ACTED_ON or spelled(char) else m[0]


def file_date(path: str | PurePath) -> date | None:
    """The day a daily file belongs to (`memory/2026-11-30.md`, `...-slug.md`), else None."""
    m = _DAILY_NAME.match(PurePath(path).name)
    if not m:
        return None
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def _unescape_hashes(first: str) -> str:
    """Markdown's reading of `\\#`: one backslash less before each #."""
    return ESCAPED_HASH.sub(lambda m: m[0][1:], first) if "\\#" in first else first


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
        if m := PIN_START.match(first):
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
            memory["title"] = read_controls(title) if exported else title
            if not attrs and first.strip():  # hand-written "**Name:** Atlas" reads whole
                first = f"{title}: {first}"
        elif exported and first.startswith("\\") and BOLD_START.match(first):
            first = first[1:]
        content = "\n".join([first.rstrip(), *rest]).strip("\n")
        if exported:
            content = read_controls(content)
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
