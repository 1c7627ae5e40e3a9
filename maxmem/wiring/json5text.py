"""Edits of a JSON5 file (OpenClaw's openclaw.json) that keep the rest as the user wrote it.

openclaw.json is JSON5: comments, unquoted keys, single quotes and trailing commas.
PyPI's maintained `json5` reads it but writes plain JSON (the comments lost), and
`json-five`, which round-trips comments, has had no release since 2024 and installs a
module of the same name. So this module parses the file itself, noting where each
value sits, and an edit replaces, inserts or deletes only the text of the value it
changes: comments, quoting, trailing commas and the order of keys stay as they were.

    value = load(text)                                  # the data, as Python values
    text = set_path(text, ("plugins", "slots", "memory"), "maxmem")
    text = remove_path(text, ("plugins", "entries", "maxmem"))
    text = append_item(text, ("plugins", "load", "paths"), "/abs/plugin")

Each edit parses the text again (the file is small); bad JSON5 raises ValueError with
the line and column.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

_SPACE = " \t\n\r\v\f\ufeff\u00a0\u2028\u2029"
_NUMBER = re.compile(r"[+-]?(?:Infinity|NaN|0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_IDENTIFIER = re.compile(r"[^\W\d][\w$]*|\$[\w$]*")
_QUOTED_KEY = re.compile(r'^(\s*)"([A-Za-z_$][\w$]*)": ', re.MULTILINE)
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "0": "\0"}
_LINE_BREAKS = "\n\r\u2028\u2029"


@dataclass
class Node:
    start: int
    end: int  # one past the value's last character
    value: Any = None  # a scalar's value; objects and arrays keep theirs in `entries`
    kind: str = "scalar"  # "object", "array" or "scalar"
    entries: list[Entry] = field(default_factory=list)

    def member(self, key: str) -> Entry | None:
        for entry in reversed(self.entries):  # JSON5: the last of duplicate keys wins
            if entry.key == key:
                return entry
        return None


@dataclass
class Entry:
    start: int  # the key's first character (an array item's own start)
    node: Node
    key: str | None = None
    quoted: bool = True
    comma: int | None = None  # where the comma after it is, if any


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.at = 0

    def fail(self, what: str) -> ValueError:
        line = self.text.count("\n", 0, self.at) + 1
        column = self.at - (self.text.rfind("\n", 0, self.at) + 1) + 1
        return ValueError(f"{what} at line {line}, column {column}")

    def skip(self) -> None:
        text = self.text
        while self.at < len(text):
            if text[self.at] in _SPACE:
                self.at += 1
            elif text.startswith("//", self.at):
                ends = [i for i in (text.find(c, self.at) for c in _LINE_BREAKS) if i >= 0]
                self.at = min(ends) if ends else len(text)
            elif text.startswith("/*", self.at):
                end = text.find("*/", self.at + 2)
                if end < 0:
                    raise self.fail("a comment that never ends")
                self.at = end + 2
            else:
                return

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def value(self) -> Node:
        self.skip()
        start = self.at
        char = self.peek()
        if char == "{":
            return self.container(start, "object", "}")
        if char == "[":
            return self.container(start, "array", "]")
        if char in "\"'":
            text = self.string()
            return Node(start, self.at, text)
        for word, literal in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(word, start) and not _continues(self.text, start + len(word)):
                self.at = start + len(word)
                return Node(start, self.at, literal)
        found = _NUMBER.match(self.text, start)
        if found and not _continues(self.text, found.end()):
            self.at = found.end()
            return Node(start, self.at, _number(found.group()))
        raise self.fail("a value was expected" if char else "the text ended where a value was expected")

    def container(self, start: int, kind: str, close: str) -> Node:
        node = Node(start, start, kind=kind)
        self.at += 1
        while True:
            self.skip()
            if self.peek() == close:
                self.at += 1
                node.end = self.at
                return node
            if not self.peek():
                raise self.fail(f"the text ended inside {'an object' if kind == 'object' else 'an array'}")
            entry_start = self.at
            key, quoted = (self.key() if kind == "object" else (None, True))
            entry = Entry(entry_start, self.value(), key, quoted)
            node.entries.append(entry)
            self.skip()
            if self.peek() == ",":
                entry.comma = self.at
                self.at += 1
            elif self.peek() != close:
                raise self.fail(f"a ',' or '{close}' was expected")

    def key(self) -> tuple[str, bool]:
        if self.peek() in "\"'":
            key, quoted = self.string(), True
        else:
            found = _IDENTIFIER.match(self.text, self.at)
            if not found:
                raise self.fail("a key was expected")
            key, quoted, self.at = found.group(), False, found.end()
        self.skip()
        if self.peek() != ":":
            raise self.fail("a ':' was expected after the key")
        self.at += 1
        return key, quoted

    def string(self) -> str:
        quote = self.text[self.at]
        self.at += 1
        out: list[str] = []
        text = self.text
        while True:
            if self.at >= len(text):
                raise self.fail("a string that never ends")
            char = text[self.at]
            if char == quote:
                self.at += 1
                return "".join(out)
            if char in "\n\r":
                raise self.fail("a line break inside a string")
            if char != "\\":
                out.append(char)
                self.at += 1
                continue
            escaped = text[self.at + 1:self.at + 2]
            self.at += 2
            if escaped in _ESCAPES:
                out.append(_ESCAPES[escaped])
            elif escaped in ("x", "u"):
                size = 2 if escaped == "x" else 4
                digits = text[self.at:self.at + size]
                if len(digits) != size or not all(c in "0123456789abcdefABCDEF" for c in digits):
                    raise self.fail(f"a bad \\{escaped} escape")
                out.append(chr(int(digits, 16)))
                self.at += size
            elif escaped == "\r" and text[self.at:self.at + 1] == "\n":
                self.at += 1  # a line continuation
            elif escaped in _LINE_BREAKS:
                pass  # a line continuation
            else:
                out.append(escaped)


def _continues(text: str, at: int) -> bool:
    return at < len(text) and (text[at].isalnum() or text[at] in "_$")


def _number(word: str) -> int | float:
    sign = -1 if word.startswith("-") else 1
    body = word.lstrip("+-")
    if body == "Infinity":
        return sign * math.inf
    if body == "NaN":
        return math.nan
    if body[:2] in ("0x", "0X"):
        return sign * int(body, 16)
    return sign * (float(body) if any(c in body for c in ".eE") else int(body))


def parse(text: str) -> Node:
    """The tree of a JSON5 text; ValueError (with line and column) for anything else."""
    parser = _Parser(text)
    node = parser.value()
    parser.skip()
    if parser.at != len(text):
        raise parser.fail("more text after the value")
    return node


def to_python(node: Node) -> Any:
    if node.kind == "object":
        return {e.key: to_python(e.node) for e in node.entries}
    if node.kind == "array":
        return [to_python(e.node) for e in node.entries]
    return node.value


def load(text: str) -> Any:
    """A JSON5 text's data ({} for an empty text)."""
    return to_python(parse(text)) if text.strip() else {}


# -- edits --------------------------------------------------------------------------------

def _line_start(text: str, at: int) -> int:
    return text.rfind("\n", 0, at) + 1


def _indent_of(text: str, at: int) -> str | None:
    """The whitespace before `at` on its line, when nothing else is there."""
    start = _line_start(text, at)
    before = text[start:at]
    return before if not before.strip() else None


def _unit(text: str) -> str:
    """The file's indentation step (two spaces when it shows none)."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(line) > len(stripped):
            return line[:len(line) - len(stripped)]
    return "  "


def _dump(value: Any, indent: str, unit: str, bare: bool = False, inline: bool = False) -> str:
    """`value` as JSON text: on one line (`inline`, for a container written on one line),
    else indented by `unit` below `indent`, keys unquoted when the file writes them so."""
    if inline:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    text = json.dumps(value, indent=unit if unit.strip(" ") else len(unit), ensure_ascii=False)
    if bare:  # a line that starts with a quoted key holds a key: JSON strings hold no line break
        text = _QUOTED_KEY.sub(r"\1\2: ", text)
    return text.replace("\n", "\n" + indent)


def _key_text(key: str, bare: bool) -> str:
    return key if bare and _IDENTIFIER.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _walk(root: Node, path: Sequence[str]) -> tuple[Node, int]:
    """The deepest object on `path` and how many keys of it exist; ValueError when a value
    on the way is not an object."""
    node = root
    for depth, key in enumerate(path):
        entry = node.member(key) if node.kind == "object" else None
        if node.kind != "object" or entry is None:
            if node.kind != "object":
                raise ValueError(f"{'.'.join(path[:depth]) or 'the file'} is not an object")
            return node, depth
        node = entry.node
    if node.kind != "object":
        raise ValueError(f"{'.'.join(path) or 'the file'} is not an object")
    return node, len(path)


def set_path(text: str, path: Sequence[str], value: Any) -> str:
    """The text with the value at `path` (keys from the top) set, creating the objects
    on the way; everything else as it was."""
    if not text.strip():
        text = "{}\n"
    root = parse(text)
    if root.kind != "object":
        raise ValueError("the file does not hold an object")
    unit = _unit(text)
    parent, depth = _walk(root, path[:-1])
    if depth == len(path) - 1:
        entry = parent.member(path[-1])
        if entry is not None:
            if to_python(entry.node) == value and type(to_python(entry.node)) is type(value):
                return text
            indent = _indent_of(text, entry.start)
            dumped = _dump(value, indent or "", unit, _bare(root), inline=indent is None)
            return text[:entry.node.start] + dumped + text[entry.node.end:]
    for key in reversed(path[depth + 1:]):
        value = {key: value}
    return _insert_member(text, parent, path[depth], value, unit, _bare(root))


def _bare(root: Node) -> bool:
    return bool(root.entries) and not root.entries[0].quoted


def _insert_member(text: str, obj: Node, key: str, value: Any, unit: str, bare: bool) -> str:
    name = _key_text(key, bare)
    if obj.entries:
        last = obj.entries[-1]
        indent = _indent_of(text, last.start)
        if indent is None:  # members on one line: the new one joins that line
            member = f"{name}: {_dump(value, '', unit, bare, inline=True)}"
            if last.comma is not None:
                return text[:last.comma + 1] + " " + member + "," + text[last.comma + 1:]
            return text[:last.node.end] + ", " + member + text[last.node.end:]
        member = f"{name}: {_dump(value, indent, unit, bare)}"
        if last.comma is not None:  # the file keeps trailing commas: so does the new member
            return text[:last.comma + 1] + "\n" + indent + member + "," + text[last.comma + 1:]
        return text[:last.node.end] + ",\n" + indent + member + text[last.node.end:]
    outer = _indent_of(text, obj.start)
    if outer is None:
        outer = " " * _leading(text, obj.start)
    inner = outer + unit
    member = f"{name}: {_dump(value, inner, unit, bare)}"
    inside = text[obj.start + 1:obj.end - 1]
    if not inside.strip():
        return text[:obj.start + 1] + "\n" + inner + member + "\n" + outer + text[obj.end - 1:]
    return text[:obj.start + 1] + "\n" + inner + member + "," + text[obj.start + 1:]  # keep its comments


def _leading(text: str, at: int) -> int:
    """How many whitespace characters start the line `at` is on."""
    start = _line_start(text, at)
    line = text[start:at]
    return len(line) - len(line.lstrip(" \t"))


def remove_path(text: str, path: Sequence[str]) -> str:
    """The text without the member at `path` (unchanged when there is none)."""
    if not text.strip():
        return text
    root = parse(text)
    parent, depth = _walk(root, path[:-1])
    entry = parent.member(path[-1]) if depth == len(path) - 1 else None
    if entry is None:
        return text
    return _delete_entry(text, parent, entry)


def _delete_entry(text: str, container: Node, entry: Entry) -> str:
    index = container.entries.index(entry)
    indent = _indent_of(text, entry.start)
    start = _line_start(text, entry.start) if indent is not None else entry.start
    if entry.comma is not None:
        end = entry.comma + 1
    elif index > 0 and container.entries[index - 1].comma is not None:
        # The last entry without a comma of its own: the previous one's comma goes too,
        # so that a plain JSON file stays plain JSON.
        previous = container.entries[index - 1]
        return text[:previous.comma] + text[entry.node.end:] if previous.comma is not None else text
    else:
        end = entry.node.end
    rest = text[end:]
    after = len(rest) - len(rest.lstrip(" \t"))
    if indent is not None and rest[after:after + 1] == "\n":
        end += after + 1  # the entry's whole line
    elif indent is None:
        end += after
    return text[:start] + text[end:]


def _array(root: Node, path: Sequence[str]) -> Node | None:
    """The value at `path` (None when a key on the way is missing)."""
    parent, depth = _walk(root, path[:-1])
    entry = parent.member(path[-1]) if depth == len(path) - 1 else None
    return entry.node if entry is not None else None


def append_item(text: str, path: Sequence[str], item: Any) -> str:
    """The text with `item` added at the end of the array at `path` (created when there is
    none); unchanged when the array already holds it."""
    node = _array(parse(text), path) if text.strip() else None
    if node is None:
        return set_path(text, path, [item])
    if node.kind != "array":
        raise ValueError(f"{'.'.join(path)} is not an array")
    if any(to_python(e.node) == item for e in node.entries):
        return text
    unit = _unit(text)
    if node.entries:
        last = node.entries[-1]
        indent = _indent_of(text, last.start)
        dumped = _dump(item, indent or "", unit, inline=indent is None)
        if indent is None:
            if last.comma is not None:
                return text[:last.comma + 1] + " " + dumped + "," + text[last.comma + 1:]
            return text[:last.node.end] + ", " + dumped + text[last.node.end:]
        if last.comma is not None:
            return text[:last.comma + 1] + "\n" + indent + dumped + "," + text[last.comma + 1:]
        return text[:last.node.end] + ",\n" + indent + dumped + text[last.node.end:]
    indent = _indent_of(text, node.start)
    return text[:node.start] + _dump([item], indent or "", unit, inline=indent is None) + text[node.end:]


def remove_item(text: str, path: Sequence[str], item: Any) -> str:
    """The text without `item` in the array at `path` (unchanged when it is not there)."""
    if not text.strip():
        return text
    node = _array(parse(text), path)
    if node is None or node.kind != "array":
        return text
    for entry in node.entries:
        if to_python(entry.node) == item:
            return _delete_entry(text, node, entry)
    return text
