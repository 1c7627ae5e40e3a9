"""Codex's memory: your AGENTS.md files and the memories Codex writes itself.

  $CODEX_HOME/AGENTS.override.md, AGENTS.md   yours, for every project   -> core
  <project>/AGENTS.override.md or AGENTS.md   a project's instructions   -> project, tagged with its
                                              (from its repository's root down to the directory
                                              Codex ran in, one file a folder as Codex reads them)
  $CODEX_HOME/memories/memory_summary.md      Codex's summary of you: "User Profile" -> core
                                              (fact), "General Tips" -> core (lesson); its
                                              "What's in Memory" index is left out
  $CODEX_HOME/memories/MEMORY.md              Codex's handbook: a `---` block heads each group of
                                              notes and names the rollouts' cwd -> project,
                                              tagged with those directories' names (core without)

The projects are the directories Codex sessions ran in (`cwd` of each rollout's first
line). Newer Codex builds keep a memory folder per directory and one for the user
(`memories/<bucket>/memory/`): those are read too. raw_memories.md and
rollout_summaries/ are Codex's own working files, made from the sessions that
`maxmem capture` reads itself.
"""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import tzinfo
from pathlib import Path

from ..agents import CODEX
from ..errors import InvalidInput
from ..files import open_regular
from .blocks import Block, read_blocks
from .common import (
    TITLE_SEPARATOR,
    Item,
    Reading,
    Scope,
    SourceFile,
    folders_down,
    is_file,
    markdown_file,
    markdown_items,
    project_tag,
    read_text,
    repository_root,
)
from .places import Places

NAME = "codex"
GLOBAL_FILES = ("AGENTS.override.md", "AGENTS.md")
HEAD_BYTES = 16 * 1024
_SESSION_META = re.compile(r'"type"\s*:\s*"session_meta"')
_CWD_FIELD = re.compile(r'"cwd"\s*:\s*"((?:[^"\\]|\\.)*)"')
_CWD = re.compile(r"cwd=([^,)]+)")
SUMMARY_KINDS = {"user profile": "fact", "general tips": "lesson"}
SUMMARY_INDEX = "what's in memory"


def read(places: Places, tz: tzinfo, root: Path | None = None) -> Reading:
    """Every memory file of Codex on this machine (or under `root`, a CODEX_HOME)."""
    found = places.present(CODEX, (root,) if root is not None else places.codex_dirs)
    reading = Reading(NAME, found[0], [])
    seen: set[Path] = set()

    def add(file: SourceFile) -> None:
        seen.add(file.path.resolve())
        reading.files.append(file)

    for base in found:
        for name in GLOBAL_FILES:
            if is_file(base / name):
                add(markdown_file(base / name, Scope("core"), tz))
        for memories in [base / "memories", *sorted((base / "memories").glob("*/memory"))]:
            if is_file(memories / "memory_summary.md"):
                add(_summary(memories / "memory_summary.md", tz))
            if is_file(memories / "MEMORY.md"):
                add(_handbook(memories / "MEMORY.md", tz))
        for cwd in session_directories(base):
            top = repository_root(cwd, places.home) or cwd
            scope = Scope("project", tags=(project_tag(top),), details={"project": str(top)})
            for directory in folders_down(cwd, top):
                path = _agents_file(directory)
                if path is not None and path.resolve() not in seen:
                    add(markdown_file(path, scope, tz))
    return reading


def _agents_file(directory: Path) -> Path | None:
    """The one file Codex reads in a folder: AGENTS.override.md when not empty, else AGENTS.md."""
    for name in GLOBAL_FILES:
        path = directory / name
        try:
            if is_file(path) and path.stat().st_size > 0:
                return path
        except OSError:
            continue
    return None


def _summary(path: Path, tz: tzinfo) -> SourceFile:
    file = markdown_file(path, Scope("core"), tz)
    items: list[Item] = []
    for item in file.items:
        section = (item.section or "").split(TITLE_SEPARATOR)[0].strip().lower()
        if section == SUMMARY_INDEX:
            item = dataclasses.replace(item, skip="Codex's index of its memory folder")
        elif section in SUMMARY_KINDS and item.kind == "note":
            item = dataclasses.replace(item, kind=SUMMARY_KINDS[section])
        items.append(item)
    file.items = items
    return file


def _handbook(path: Path, tz: tzinfo) -> SourceFile:
    """MEMORY.md: the notes of a group go to the projects its header names."""
    text, error = read_text(path)
    if text is None:
        return SourceFile(path, error=error)
    document = read_blocks(text)
    first = document.front_matter  # the first group's header opens the file

    def group_scope(block: Block) -> Scope:
        header = block.header or first
        title = None if block.header else header.get("description")  # a later header is a heading already
        found = _CWD.findall(header.get("rollout_summary_files", ""))
        directories = list(dict.fromkeys(c.strip() for c in found))
        if not directories:
            return Scope("core", "lesson", title=title)
        tags = tuple(dict.fromkeys(project_tag(d) for d in directories))[:5]
        return Scope("project", "lesson", tags, title=title, details={"project": directories[0]})

    return SourceFile(path, markdown_items(path, document.blocks, group_scope, tz))


def session_directories(base: Path) -> list[Path]:
    """The directories Codex sessions ran in: the `cwd` of each rollout's first line
    (session_meta). Only the line's head is read: `cwd` comes before the base
    instructions, which can make the line tens of kilobytes."""
    found: dict[str, None] = {}
    rollouts = sorted(base.glob("sessions/*/*/*/rollout-*.jsonl"))
    for rollout in rollouts + sorted(base.glob("archived_sessions/rollout-*.jsonl")):
        try:
            with open_regular(rollout) as handle:  # a FIFO is never waited on
                head = handle.read(HEAD_BYTES).split(b"\n", 1)[0].decode("utf-8", "replace")
        except (OSError, InvalidInput):
            continue
        if not _SESSION_META.search(head) or not (m := _CWD_FIELD.search(head)):
            continue
        try:
            cwd = json.loads(f'"{m[1]}"')
        except ValueError:
            continue
        if cwd.startswith("/"):
            found[cwd] = None
    return [Path(c) for c in found]
