"""Memories in and out of brain.db: `maxmem import` (JSONL, the Markdown workspace, or an
agent's own memory files with --from) and `maxmem export` (JSONL or Markdown). Apart from
the everyday commands, so that those do not load the importers."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from .. import archive
from ..brain import Brain
from ..errors import InvalidInput
from ..files import write_private
from ..importers import SOURCES, Places, import_reading, read
from ..jsonl import write_jsonl
from ..markdown.export import backup_markdown, export_markdown
from ..markdown.merge import import_markdown
from .common import State, emit, json_option, pass_state, say


@click.command("import")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path), metavar="[PATH]...")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "markdown"]), default="jsonl",
              show_default=True, help="markdown: PATH is a GLOB ('memory/*.md'), a file or a workspace.")
@click.option("--delete-missing", is_flag=True,
              help="markdown: forget the memories an export wrote to PATH whose bullets are gone.")
@click.option("--from", "agent", type=click.Choice(SOURCES),
              help="Import another agent's own memory (PATH: its folder, when not the default; "
                   "for markdown, the folder of notes).")
@click.option("--dry-run", is_flag=True, help="Show what would be added and updated; write nothing.")
@json_option
@pass_state
def import_(state: State, paths: tuple[Path, ...], fmt: str, delete_missing: bool, agent: str | None,
            dry_run: bool, as_json: bool) -> None:
    """Import memories from JSONL files (.jsonl or .jsonl.gz: exports, retention archives).

    A retention archive that an interrupted run left cut short gives back its complete
    lines, with a warning saying how much was lost.

    With --format markdown, a folder that `maxmem export --format markdown` wrote is a
    round trip: bullets edited there update their memories (content, category, tags,
    pin, …), new bullets are added, and a bullet changed in both places since the
    export is reported as a conflict and left alone (exit code 1).

    With --from AGENT, the memory an agent keeps itself: claude-code (CLAUDE.md files,
    its auto memory), openclaw (the workspace's MEMORY.md, USER.md, memory/YYYY-MM-DD.md),
    codex (AGENTS.md files, its memories folder), claude-mem (its database) or markdown
    DIR. One memory per bullet or paragraph, with the file and line it came from;
    importing again adds nothing, and an edited line updates its memory (docs/import.md).
    """
    if agent is not None:
        _import_from(state, agent, paths, fmt, delete_missing, dry_run, as_json)
        return
    if dry_run and fmt == "markdown":
        raise InvalidInput("--dry-run is for JSONL files and --from AGENT")
    if not paths:
        raise InvalidInput("give the JSONL file(s) to import, or --from AGENT")
    if delete_missing and fmt != "markdown":
        raise InvalidInput("--delete-missing is for --format markdown")
    if fmt == "markdown":
        if len(paths) != 1:
            raise InvalidInput("--format markdown takes one PATH: a GLOB, a file or a workspace")
        report = import_markdown(state.brain(), str(paths[0]), tz=state.local_timezone(), delete_missing=delete_missing)
        emit(report.to_dict(), as_json, lambda _: report.lines())
        if report.conflicts:
            sys.exit(1)
        return
    for path in paths:
        if not path.is_file():
            raise InvalidInput(f"{path}: " + ("a folder: give a JSONL file, or --format markdown for a workspace "
                                              "of notes" if path.is_dir() else "no such file" if not path.exists()
                                              else "not a regular file"))
    readings = [archive.read(path, key=state.config.key) for path in paths]  # all checked before anything is stored
    brain = _dry_brain(state) if dry_run else state.brain()
    results = []
    for reading in readings:
        if reading.note():
            say(f"maxmem: warning: {reading.note()}", err=True)
        counts = _counts_without_writing(brain, reading.records) if dry_run else brain.import_records(reading.records)
        results.append({"path": str(reading.path), **counts})
    single = {k: v for k, v in results[0].items() if k != "path"}  # one file: its counts, as before
    verb = "would import" if dry_run else "imported"
    emit(results if len(results) > 1 else single, as_json, lambda _: [
        *(f"{verb} {r['path']}: {r['added']} added, {r['updated']} updated, {r['unchanged']} unchanged"
          for r in results), *([] if dry_run else _vectors_later(brain))])


class _RolledBack(Exception):
    """Ends a dry run's transaction: what it wrote is undone."""


def _counts_without_writing(brain: Brain, records: list[dict[str, Any]]) -> dict[str, int]:
    """What importing `records` would add, update and leave: imported in a transaction
    that is then rolled back (a brain without an embedder: nothing is embedded)."""
    counts: dict[str, int] = {}
    try:
        with brain.db.atomic():
            counts = brain.import_records(records)
            raise _RolledBack
    except _RolledBack:
        return counts


def _dry_brain(state: State) -> Brain:
    """brain.db without an embedder for a dry run, or an empty one in memory if there is
    none yet (a dry run creates no brain.db)."""
    path = Path(state.config.db_path).expanduser()
    brain = Brain.open(path if path.exists() else ":memory:", embedder="none", config=state.config,
                       check_embedder=False)
    state.brains.append(brain)
    return brain


def _vectors_later(brain: Brain) -> list[str]:
    """A line saying that memories wait for their vectors, when some do."""
    waiting = brain.pending_count()
    if not waiting:
        return []
    if brain.embedder is None:
        return [f"{waiting} memories have no vector (no embedder configured): they are found by keyword"]
    return [f"{waiting} memories wait for a vector: the scheduled tick embeds them (or now:  maxmem embed ); "
            "until then they are found by keyword"]


def _import_from(state: State, agent: str, paths: tuple[Path, ...], fmt: str, delete_missing: bool,
                 dry_run: bool, as_json: bool) -> None:
    if fmt != "jsonl" or delete_missing:
        raise InvalidInput("--from reads the agent's own files: it takes no --format or --delete-missing")
    if len(paths) > 1:
        raise InvalidInput("--from takes at most one PATH: the agent's folder (for markdown, the folder of notes)")
    places = Places.from_config(state.config, os.environ)
    reading = read(agent, places, state.local_timezone(), paths[0] if paths else None)  # before brain.db is opened
    if dry_run and not Path(state.config.db_path).expanduser().exists():
        brain = Brain.open(":memory:", embedder="none", config=state.config)  # a dry run creates no brain.db
        state.brains.append(brain)
    else:
        brain = state.brain()
    report = import_reading(brain, reading, places, dry_run=dry_run)
    emit(report.to_dict(), as_json,
         lambda _: [*report.lines(show_steps=dry_run), *([] if dry_run else _vectors_later(brain))])
    for failed in report.failed:  # the others were imported: each is one line, and the exit code says it
        say(f"maxmem: error: {failed.shown}: {failed.error}", err=True)
    if report.failed:
        sys.exit(1)


@click.command()
@click.argument("dest", required=False, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "markdown"]), default="jsonl",
              show_default=True, help="markdown: MEMORY.md + memory/YYYY-MM-DD.md under DEST.")
@click.option("--keep", type=click.IntRange(min=1), help="markdown: write DEST/YYYY-MM-DD/, keep the newest N.")
@click.option("--include-conversations", is_flag=True, help="markdown: also raw exchanges.")
@click.option("--force", is_flag=True, help="markdown: overwrite files maxmem did not write.")
@pass_state
def export(state: State, dest: Path | None, fmt: str, keep: int | None,
           include_conversations: bool, force: bool) -> None:
    """Export every memory as JSONL (one memory per line, every field) to DEST or stdout.

    DEST is a file in a folder that exists, written whole or not at all and readable by
    you only (0600).
    """
    if dest is not None and not dest.parent.exists():  # a typo in the path is not a folder to make
        raise InvalidInput(f"{dest.parent}: no such folder: create it first (mkdir -p {dest.parent})")
    brain = state.brain(create=False)
    if fmt == "markdown":
        if dest is None:
            raise InvalidInput("give the directory to write MEMORY.md and memory/ into")
        if not dest.exists():
            say(f"maxmem: {dest} did not exist: created it", err=True)
        if keep is not None:
            report = backup_markdown(brain, dest, keep, tz=state.local_timezone(),
                                     include_conversations=include_conversations)
        else:
            report = export_markdown(brain, dest, tz=state.local_timezone(), force=force,
                                     include_conversations=include_conversations)
        say(report.describe(), err=True)
        return
    if dest is None:
        count = write_jsonl(brain.export_records(), sys.stdout)
    else:
        count = write_private(dest, lambda handle: write_jsonl(brain.export_records(), handle))
    say(f"exported {count} memories" + (f" to {dest}" if dest else ""), err=True)


COMMANDS = [import_, export]
