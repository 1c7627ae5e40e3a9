"""`maxmem export --format markdown`: a brain's memories written to a workspace folder.

The files are rendered by render.py and replaced atomically; a file that exists and was
not written by maxmem is never overwritten unless forced. The export lists what it
wrote in `.maxmem-export.json` (MANIFEST), which `import --delete-missing` reads.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, tzinfo
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..clock import iso
from ..errors import InvalidInput
from ..files import open_regular, write_private
from ..memory import Memory
from .parse import MEMORY_FILE
from .render import EXPORT_MARK, PARTIAL, render_workspace, written_tags

if TYPE_CHECKING:  # pragma: no cover
    from ..brain import Brain

MANIFEST = ".maxmem-export.json"
ALL_MEMORIES_SQL = "SELECT * FROM memories WHERE id > ? AND category IN ({}) ORDER BY id LIMIT 500"
_EXPORTED_BULLET = re.compile(r"^- .*<!-- maxmem uid=(\S+) [^\n]*?( partial=1)? rev=([0-9a-f]+) -->$", re.M)


@dataclass
class ExportReport:
    directory: str
    files: list[dict[str, Any]]
    # Memories whose tags the file holds otherwise (a tag is a word): the one thing an
    # export writes that another brain.db reads back changed, so the report says it.
    retagged: int = 0
    # Uids of memories whose bullet does not read back as their text (none known: a
    # safety net), marked partial=1 in the file and left out of the manifest.
    partial: list[str] = field(default_factory=list)

    @property
    def memories(self) -> int:
        return sum(f["memories"] for f in self.files)

    def describe(self) -> str:
        text = f"exported {self.memories} memories to {len(self.files)} file(s) in {self.directory}"
        if self.retagged:
            text += (f"; {self.retagged} of them have tags written as words (spaces as hyphens, a leading # "
                     "or control characters left out), which is how they read back")
        if self.partial:
            text += (f"; {len(self.partial)} of them cannot be written so that they read back whole "
                     f"(marked {PARTIAL}; export as JSONL to keep them exactly)")
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"directory": self.directory, "memories": self.memories, "files": self.files,
                "retagged": self.retagged, "partial": self.partial}


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
    now = brain.clock.now()
    memories = list(_iter_memories(brain, categories))
    retagged = sum(1 for m in memories if written_tags(m.tags) != m.tags)
    files = render_workspace(memories, tz=tz, generated_at=now)
    targets = [(root / f.path, f) for f in files]
    if not force:
        for target, _ in targets:
            if target.exists() and not _written_by_export(target):
                raise InvalidInput(
                    f"{target} exists and was not written by maxmem: export elsewhere or pass --force"
                )
    written, report_partial = [], []
    manifest: dict[str, Any] = {"exported_at": iso(now), "categories": categories, "memories": {}}
    for target, rendered in targets:
        text = rendered.text
        if rendered.path != MEMORY_FILE:
            text = text.replace("\n\n", f"\n\n<!-- {EXPORT_MARK} at {iso(now)} -->\n\n", 1)
        write_private(target, functools.partial(_write_text, text=text))  # memories are private
        written.append({"path": rendered.path, "memories": rendered.count})
        for uid, partial, rev in _EXPORTED_BULLET.findall(text):
            if partial:  # never forgotten by --delete-missing: its bullet may not be read
                report_partial.append(uid)
                continue
            manifest["memories"][uid] = {"file": rendered.path, "rev": rev}
    # What this export wrote, for `import --delete-missing` (a dotfile: editors leave it be).
    write_private(root / MANIFEST, functools.partial(
        _write_text, text=json.dumps(manifest, ensure_ascii=False, indent=0) + "\n"))
    return ExportReport(str(root), written, retagged, report_partial)


def _written_by_export(path: Path) -> bool:
    """Whether the file at `path` carries an export's mark in its head (a FIFO or a device
    there is refused in one line, never waited on or read)."""
    with open_regular(path, "a Markdown file") as handle:
        head = handle.read(16000)
    return EXPORT_MARK in head.decode("utf-8", "replace")[:4000]


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
