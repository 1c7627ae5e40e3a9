"""Markdown notes cut into blocks: one per top-level bullet, paragraph, code fence, table
or quote, each with the heading path above it and the lines it came from.

The structure is CommonMark's, read by markdown-it-py (a list item's continuation lines,
setext headings, fences holding `#` lines, indented code), and each block's text is
taken from the file's own lines, so what is stored is what was written. Nested bullets
stay inside their top-level bullet; a fence or a table is never split; a short
paragraph ending with ":" goes with the fence or table after it, and before a list it
becomes part of the items' heading path. HTML comments, rules and headings alone are
not blocks.

A `---` block of `key: value` lines is metadata, not text: at the top of a file it is
front matter (Claude Code's memory files carry `name`, `description`, `type`), further
down it heads the blocks after it (Codex's MEMORY.md writes one above each group of
notes).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token

_KEY_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")
_LIST_ENTRY = re.compile(r"^\s+-\s+(.*)$")
_MARKER = re.compile(r"^(\s*)(?:[-*+]|\d{1,9}[.)])(?:\s+|$)")
_COMMENT = re.compile(r"^\s*<!--.*?-->\s*$", re.S)
# A lead-in this short that ends with ":" introduces what follows rather than saying something.
LEAD_IN_CHARS = 200
_PARSER = MarkdownIt("commonmark").enable("table")


@dataclass(frozen=True)
class Block:
    """One memory's worth of a file: its text as written, its first line (1-based), the
    headings above it (outermost first), what it is (item, paragraph, code, table,
    quote) and the values of the metadata block heading it."""

    text: str
    line: int
    headings: tuple[str, ...]
    shape: str
    header: Mapping[str, str] = field(default_factory=dict)  # the metadata block above it, if any


@dataclass
class Document:
    """A file read as blocks, with its front matter (key -> value; a list's entries
    joined by ", ")."""

    blocks: list[Block]
    front_matter: dict[str, str] = field(default_factory=dict)


def read_blocks(text: str) -> Document:
    """The blocks of one Markdown file (see the module's docstring)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    headers = _metadata_blocks(lines)
    front: dict[str, str] = {}
    plain = list(lines)
    for start, end, values in headers:
        # The same number of lines, no text; the comment ends a list above it (blank lines would not).
        plain[start:end + 1] = ["<!---->"] + [""] * (end - start)
        if start == 0:
            front = values
    blocks = _blocks(_PARSER.parse("\n".join(plain)), plain,
                     {start: values for start, _, values in headers if start > 0})
    return Document(blocks, front)


def _metadata_blocks(lines: list[str]) -> list[tuple[int, int, dict[str, str]]]:
    """(first line, closing line, values) of each `---` … `---` block of key: value lines
    (0-based). Further down the file such a block starts after a blank line (or a rule),
    so a `---` under a paragraph stays what CommonMark makes of it."""
    found = []
    i = 0
    while i < len(lines):
        opens = lines[i].strip() == "---" and (i == 0 or not lines[i - 1].strip())
        if opens and i + 1 < len(lines) and _KEY_LINE.match(lines[i + 1]):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() in ("---", "...")), None)
            if end is not None and all(_KEY_LINE.match(x) or _LIST_ENTRY.match(x) or not x.strip()
                                       for x in lines[i + 1:end]):
                found.append((i, end, _values(lines[i + 1:end])))
                i = end + 1
                continue
        i += 1
    return found


def _values(lines: list[str]) -> dict[str, str]:
    values: dict[str, list[str]] = {}
    key = None
    for line in lines:
        if m := _KEY_LINE.match(line):
            key = m[1]
            values[key] = [m[2].strip().strip("\"'")] if m[2].strip() else []
        elif key is not None and (m := _LIST_ENTRY.match(line)):
            values[key].append(m[1].strip())
    return {k: ", ".join(v) for k, v in values.items()}


def _blocks(tokens: list[Token], lines: list[str], headers: dict[int, dict[str, str]]) -> list[Block]:
    out: list[Block] = []
    path: list[tuple[int, str]] = []  # (level, heading); a metadata block's title is level 7
    header: dict[str, str] = {}
    lead: tuple[str, int] | None = None  # a lead-in paragraph waiting for what it introduces
    pending = sorted(headers.items())

    def emit(text: str, line: int, shape: str, context: tuple[str, ...] | None = None) -> None:
        out.append(Block(text, line, tuple(h for _, h in path) if context is None else context, shape, header))

    def flush() -> None:
        nonlocal lead
        if lead:
            emit(lead[0], lead[1], "paragraph")
        lead = None

    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.level != 0 or token.map is None or token.nesting == -1:
            i += 1
            continue
        first, end = token.map
        while pending and pending[0][0] < first:
            flush()
            header = pending.pop(0)[1]
            title = header.get("description") or header.get("name")
            path = [p for p in path if p[0] < 7] + ([(7, title)] if title else [])
        close = _closing(tokens, i)
        if token.type == "heading_open":
            flush()
            level = int(token.tag[1])
            path = [p for p in path if p[0] < level] + [(level, tokens[i + 1].content.strip())]
            header = header if any(p[0] == 7 for p in path) else {}
        elif token.type in ("bullet_list_open", "ordered_list_open"):
            context = tuple(h for _, h in path) + ((lead[0],) if lead else ())
            lead = None
            for item_open, _ in _items(tokens, i, close):
                a, b = tokens[item_open].map or (first, end)
                if text := _item_text(lines[a:b]):
                    emit(text, a + 1, "item", context)
        elif token.type == "paragraph_open":
            flush()
            text = _text(lines[first:end])
            if text.endswith(":") and len(text) <= LEAD_IN_CHARS:
                lead = (text, first + 1)
            elif text:
                emit(text, first + 1, "paragraph")
        elif token.type in ("fence", "code_block", "table_open", "blockquote_open", "html_block"):
            text = _text(lines[first:end])
            if token.type == "html_block" and _COMMENT.match(text):
                text = ""
            shape = {"fence": "code", "code_block": "code", "table_open": "table",
                     "blockquote_open": "quote"}.get(token.type, "paragraph")
            if text and lead:
                emit(f"{lead[0]}\n{text}", lead[1], shape)
                lead = None
            elif text:
                emit(text, first + 1, shape)
            flush()
        i = close + 1
    flush()
    return out


def _closing(tokens: list[Token], i: int) -> int:
    """The index of the token that closes the one at i (itself when it closes nothing)."""
    if tokens[i].nesting != 1:
        return i
    depth = 0
    for j in range(i, len(tokens)):
        depth += tokens[j].nesting
        if depth == 0:
            return j
    return len(tokens) - 1


def _items(tokens: list[Token], start: int, close: int) -> list[tuple[int, int]]:
    """(open, close) of each item of the list opened at `start`."""
    out = []
    j = start + 1
    level = tokens[start].level + 1
    while j < close:
        if tokens[j].type == "list_item_open" and tokens[j].level == level:
            end = _closing(tokens, j)
            out.append((j, end))
            j = end
        j += 1
    return out


def _item_text(lines: list[str]) -> str:
    """A list item's text without its marker, its continuation lines dedented."""
    if not lines:
        return ""
    m = _MARKER.match(lines[0])
    width = m.end() if m else 0
    body = [lines[0][width:]]
    for line in lines[1:]:
        indent = len(line) - len(line.lstrip(" "))
        body.append(line[min(indent, width):])
    return _text(body)


def _text(lines: list[str]) -> str:
    return "\n".join(line.rstrip() for line in lines).strip("\n").strip()
