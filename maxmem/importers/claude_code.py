"""Claude Code's memory: the instructions you wrote and the notes it keeps.

  <claude dir>/CLAUDE.md                      yours, for every project      -> core
  <project>/CLAUDE.md, .claude/CLAUDE.md,     a project's instructions      -> project,
  CLAUDE.local.md, .claude/rules/**/*.md                                       tagged with its name
  <claude dir>/projects/<folder>/memory/      auto memory: MEMORY.md (an index) and one
                                              topic file per fact, each with front matter
                                              (name, description, type)

The projects are the folders of `<claude dir>/projects`, one per working directory. A
folder's name is the directory with every character but letters and digits turned into
"-", which cannot be read back (`/a-b` and `/a/b` give the same name), so the directory
is taken from the `cwd` its transcripts record. Without a transcript (Claude Code
deletes them after 30 days; the memory folder stays), a directory on this machine
whose name gives the folder's is used. Claude Code reads CLAUDE.md files from the
working directory up: so does this, up to the repository's root (the folder holding
`.git`), never above the home folder.

A MEMORY.md line that only links to a topic file in the same folder is an index
entry: the topic file is imported itself. A topic file's `type` decides its category:
user -> core (fact), feedback -> core (preference), project and reference -> project.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from datetime import tzinfo
from pathlib import Path

from ..agents import CLAUDE_CODE
from ..errors import InvalidInput
from ..files import open_regular, read_regular
from .blocks import read_blocks
from .common import (
    MAX_NOTES_BYTES,
    Reading,
    Scope,
    SourceFile,
    folders_down,
    is_dir,
    is_file,
    linked_files,
    markdown_file,
    markdown_items,
    project_tag,
    read_text,
    repository_root,
    scope_of_front_matter,
)
from .places import Places

NAME = "claude-code"
PROJECT_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
RULES = ".claude/rules"
# Enough of a transcript to meet its first lines that carry `cwd`.
CWD_PROBE_BYTES = 256 * 1024
LONG_NAME = 200  # longer folder names are cut there and get a hash appended
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
SEARCH_LIMIT = 5000  # folders listed while looking for a project's directory on disk


def read(places: Places, tz: tzinfo, root: Path | None = None) -> Reading:
    """Every memory file of Claude Code on this machine (or under `root`, a claude dir)."""
    found = places.present(CLAUDE_CODE, (root,) if root is not None else places.claude_dirs)
    reading = Reading(NAME, found[0], [])
    seen: set[Path] = set()

    def add(path: Path, scope: Scope) -> None:
        key = path.resolve()
        if key not in seen and is_file(path):
            seen.add(key)
            reading.files.append(markdown_file(path, scope, tz))

    for base in found:
        add(base / "CLAUDE.md", Scope("core"))
        for folder in _project_folders(base / "projects"):
            cwd = project_cwd(folder)
            top = repository_root(cwd, places.home) if cwd else None
            name = project_tag(top or cwd) if cwd else folder.name.strip("-")[-64:]
            scope = Scope("project", tags=(name,), details={"project": str(top or cwd or folder.name)})
            if cwd is None:
                reading.notes.append(f"{places.shown(folder)}: no transcript names its directory and none on "
                                     "this machine matches it: only its memory folder was read")
            else:
                for directory in folders_down(cwd, top or cwd):
                    for relative in PROJECT_FILES:
                        add(directory / relative, scope)
                rules = (top or cwd) / RULES
                for path in sorted(rules.rglob("*.md")) if is_dir(rules) else []:
                    add(path, scope)
            memory = folder / "memory"
            if is_dir(memory):
                for path in sorted(memory.glob("*.md")):
                    if path.resolve() not in seen:
                        seen.add(path.resolve())
                        reading.files.append(_memory_file(path, scope, tz))
    return reading


def _project_folders(projects: Path) -> list[Path]:
    try:
        return sorted(p for p in projects.iterdir() if is_dir(p)) if is_dir(projects) else []
    except OSError:
        return []


def _memory_file(path: Path, scope: Scope, tz: tzinfo) -> SourceFile:
    """An auto-memory file; in MEMORY.md, lines that only point at a topic file of the
    folder are left to that file."""
    if path.name != "MEMORY.md":
        return markdown_file(path, scope, tz)
    text, error = read_text(path)
    if text is None:
        return SourceFile(path, error=error)
    document = read_blocks(text)
    skip = {}
    for block in document.blocks:
        targets = [t for t in linked_files(block.text) if is_file(path.parent / t)]
        if targets:
            skip[block.line] = f"an index line: {', '.join(targets)} is imported itself"
    return SourceFile(path, markdown_items(path, document.blocks, scope_of_front_matter(scope, document.front_matter),
                                           tz, skip))


def encoded(directory: str) -> str:
    """The name Claude Code gives a working directory's folder under projects/."""
    return _NOT_ALNUM.sub("-", directory)


def names_folder(directory: str, folder: str) -> bool:
    name = encoded(directory)
    return name == folder or (len(name) > LONG_NAME and folder.startswith(name[:LONG_NAME] + "-"))


def project_cwd(folder: Path) -> Path | None:
    """The working directory a projects/ folder stands for: the `cwd` its transcripts
    record that gives the folder's name, else sessions-index.json's projectPath, else a
    directory on this machine that gives it."""
    counts: Counter[str] = Counter()
    for transcript in sorted(folder.glob("*.jsonl")) + sorted(folder.glob("*/subagents/*.jsonl")):
        counts.update(_cwds(transcript))
        named = [c for c in counts if names_folder(c, folder.name)]
        if named:
            return Path(max(named, key=lambda c: counts[c]))
    for path in _index_paths(folder / "sessions-index.json"):
        if names_folder(path, folder.name):
            return Path(path)
    return on_disk(folder.name)


def _cwds(transcript: Path) -> list[str]:
    try:
        with open_regular(transcript) as handle:  # a FIFO is never waited on
            head = handle.read(CWD_PROBE_BYTES)
    except (OSError, InvalidInput):
        return []
    found = []
    for line in head.split(b"\n")[:-1]:  # the last piece may be cut
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("cwd"), str) and record["cwd"]:
            found.append(record["cwd"])
    return found


def _index_paths(index: Path) -> list[str]:
    try:
        data = json.loads(read_regular(index, MAX_NOTES_BYTES))  # a FIFO is never waited on
    except (OSError, ValueError, InvalidInput):
        return []
    entries = data.get("entries") if isinstance(data, dict) else None
    return [e["projectPath"] for e in entries or [] if isinstance(e, dict) and isinstance(e.get("projectPath"), str)]


def on_disk(folder: str) -> Path | None:
    """The existing directory whose folder name is `folder`, found by walking down from
    / through the folders whose names give the next part of it (bounded)."""
    if not folder.startswith("-") or len(folder) > LONG_NAME:
        return None
    stack: list[tuple[Path, str]] = [(Path("/"), folder[1:])]
    listed = 0
    while stack and listed < SEARCH_LIMIT:
        base, rest = stack.pop()
        listed += 1
        try:
            entries = [e for e in os.scandir(base) if e.is_dir()]
        except OSError:
            continue
        for entry in entries:
            name = encoded(entry.name)
            if rest == name:
                return Path(entry.path)
            if rest.startswith(name + "-"):
                stack.append((Path(entry.path), rest[len(name) + 1:]))
    return None
