"""OpenClaw's memory: the Markdown files of its workspace (~/.openclaw/workspace).

  MEMORY.md               curated long-term memory     -> core; "## Decisions", "## Projects"
                                                          and the like name the kind or category
  USER.md                 who the user is              -> core (fact)
  memory/YYYY-MM-DD.md    the daily log                -> daily, dated that day
  memory/<other>.md       notes kept beside the log    -> as MEMORY.md

`memory/YYYY-MM-DD-<slug>.md` files are conversation excerpts OpenClaw's session-memory
hook saves: `maxmem capture` reads the transcripts they come from, so they are left
out. A file written by `maxmem export --format markdown` holds maxmem's own memories
and is left out too (maxmem's default brain.db lives in this workspace).
"""

from __future__ import annotations

from datetime import tzinfo
from pathlib import Path

from ..errors import InvalidInput
from ..markdown.parse import file_date
from .common import Reading, Scope, SourceFile, is_dir, is_file, markdown_file
from .places import Places

NAME = "openclaw"
LONG_TERM = ("MEMORY.md", "memory.md")
USER = "USER.md"
DAILY = "memory"
# A line of the USER.md OpenClaw writes into a new workspace (2026.9), gone once it is filled in.
TEMPLATE = "Replace the example below with a real directive"


def read(places: Places, tz: tzinfo, root: Path | None = None) -> Reading:
    """The workspace's memory files (`root`: another workspace)."""
    space = root if root is not None else places.openclaw_workspace
    if not is_dir(space):
        raise InvalidInput(f"no OpenClaw workspace at {places.shown(space)}: give it, as in  maxmem import "
                           "--from openclaw PATH  (or set OPENCLAW_WORKSPACE_DIR)")
    reading = Reading(NAME, space, [])
    long_term = next((space / n for n in LONG_TERM if is_file(space / n)), None)
    if long_term is not None:
        reading.files.append(markdown_file(long_term, Scope("core", headed_kinds=True), tz))
    if is_file(space / USER):
        user = markdown_file(space / USER, Scope("core", "fact"), tz)
        if any(TEMPLATE in item.text for item in user.items):
            user = SourceFile(space / USER, skipped="OpenClaw's USER.md template, not filled in yet")
        reading.files.append(user)
    daily = space / DAILY
    for path in sorted(daily.glob("*.md")) if is_dir(daily) else []:
        day = file_date(path)
        if day is None:
            reading.files.append(markdown_file(path, Scope("core", headed_kinds=True), tz))
        elif path.stem != day.isoformat():
            reading.files.append(SourceFile(path, skipped="a session excerpt of OpenClaw's session-memory hook: "
                                                          "maxmem capture reads the transcript itself"))
        else:
            reading.files.append(markdown_file(path, Scope("daily", day=day), tz))
    return reading
