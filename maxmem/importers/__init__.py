"""`maxmem import --from AGENT`: the memory other agents keep, brought into brain.db.

    from maxmem.importers import import_agent
    report = import_agent(brain, "claude-code", env=os.environ, tz=zone)   # or dry_run=True
    print(report.summary())

One module per source reads its files into items (claude_code, openclaw, codex,
claude_mem, markdown; where each agent keeps them: places); blocks cuts Markdown into
one item per bullet or paragraph; common decides each item's category; store matches
the items with what earlier imports recorded and adds, updates or leaves them, so
that importing again adds nothing and an edited line updates its memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, tzinfo
from pathlib import Path

from ..brain import Brain
from ..config import Config
from ..errors import InvalidInput, MaxmemError
from . import claude_code, claude_mem, codex, markdown, openclaw
from .common import SOURCES, Reading
from .places import Places, expand
from .store import ImportReport, run

__all__ = ["SOURCES", "Found", "ImportReport", "Places", "Reading", "import_agent", "import_reading", "read", "survey"]

READERS: dict[str, Callable[[Places, tzinfo, Path | None], Reading]] = {
    "claude-code": claude_code.read,
    "openclaw": openclaw.read,
    "codex": codex.read,
    "claude-mem": claude_mem.read,
    "markdown": markdown.read,
}


def read(source: str, places: Places, tz: tzinfo = UTC, path: str | Path | None = None) -> Reading:
    """What `source` holds on this machine (`path`: its folder, or file, when not the
    default); an unknown source, or a missing folder, is an InvalidInput."""
    reader = READERS.get(source)
    if reader is None:
        raise InvalidInput(f"unknown source {source!r}: use one of {', '.join(SOURCES)}")
    root = Path(os.path.abspath(expand(str(path), places.home))) if path is not None else None
    return reader(places, tz, root)


def import_agent(brain: Brain, source: str, path: str | Path | None = None, *, env: Mapping[str, str],
                 tz: tzinfo = UTC, dry_run: bool = False) -> ImportReport:
    """Import what `source` (claude-code, openclaw, codex, claude-mem, markdown) holds
    into `brain`; `env` names the agents' folders (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, …),
    `tz` is the zone of the dates in dated notes. dry_run: plan only, write nothing."""
    places = Places.from_config(brain.config, env)
    return import_reading(brain, read(source, places, tz, path), places, dry_run=dry_run)


def import_reading(brain: Brain, reading: Reading, places: Places, *, dry_run: bool = False) -> ImportReport:
    """import_agent's second half: bring what `read` found into `brain` (the CLI reads
    first, so that a missing folder is reported before brain.db is opened)."""
    under = reading.root if reading.source == "markdown" else None
    return run(brain, reading, places.shown, dry_run=dry_run, under=under)


@dataclass(frozen=True)
class Found:
    """A source with something to import on this machine: where, how many files and items."""

    source: str
    root: str
    files: int
    items: int

    @property
    def command(self) -> str:
        return f"maxmem import --from {self.source}"


def survey(config: Config, env: Mapping[str, str], tz: tzinfo = UTC) -> list[Found]:
    """The agents on this machine whose memory could be imported (for `maxmem setup`);
    nothing is written, brain.db is not opened."""
    places = Places.from_config(config, env)
    found = []
    for source in SOURCES:
        if source == "markdown":
            continue  # no default folder of notes
        try:
            reading = read(source, places, tz)
        except MaxmemError:
            continue
        files = [f for f in reading.files if f.items]
        items = sum(1 for f in files for i in f.items if not i.skip)
        if items:
            found.append(Found(source, places.shown(reading.root), len(files), items))
    return found
