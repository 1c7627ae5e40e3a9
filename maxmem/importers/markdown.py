"""Any folder of Markdown notes (an Obsidian vault, a notes repository, a wiki export).

Every .md and .markdown file under the folder, hidden folders (.git, .obsidian) and
node_modules left out. A file named by a date (`2026-03-05.md`, `2026-03-05-standup.md`)
holds daily notes of that day; an always/never/prefer line elsewhere is a preference
kept in core; every other block is a project memory tagged with the folder's name.
"""

from __future__ import annotations

from datetime import tzinfo
from pathlib import Path

from ..errors import InvalidInput
from ..markdown.parse import file_date
from .common import Reading, Scope, is_dir, is_file, markdown_file, project_tag
from .places import Places

NAME = "markdown"
SUFFIXES = (".md", ".markdown")
LEFT_OUT = ("node_modules",)


def read(places: Places, tz: tzinfo, root: Path | None = None) -> Reading:
    """The notes under `root` (required: there is no default folder of notes)."""
    if root is None:
        raise InvalidInput("--from markdown needs the folder of notes: maxmem import --from markdown DIR")
    if not root.exists():
        raise InvalidInput(f"{places.shown(root)}: no such folder")
    if not is_dir(root):
        raise InvalidInput(f"{places.shown(root)} is not a folder: give the folder of notes that holds it")
    tags = (project_tag(root.resolve()),)
    reading = Reading(NAME, root, [])
    for path in notes(root):
        day = file_date(path.with_suffix(".md"))
        scope = Scope("daily", day=day, tags=tags) if day else Scope("project", tags=tags, rules="core")
        reading.files.append(markdown_file(path, scope, tz))
    if not reading.files:
        reading.notes.append(f"no Markdown file under {places.shown(root)}")
    return reading


def notes(root: Path) -> list[Path]:
    """The Markdown files under `root`, in a stable order, hidden folders left out."""
    found = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).parts
        if any(part.startswith(".") or part in LEFT_OUT for part in relative[:-1]):
            continue
        if path.suffix.lower() in SUFFIXES and is_file(path) and not relative[-1].startswith("."):
            found.append(path)
    return found
