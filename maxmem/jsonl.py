"""JSON Lines files: what `maxmem export` writes and `maxmem import` reads (plain or gzipped)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from . import archive
from .inert import json_inert


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Records of a JSONL file, gzipped or not (archive.read: a bad line names its number;
    the complete lines of a truncated archive are recovered)."""
    return iter(archive.read(path).records)


def write_jsonl(records: Iterable[Mapping[str, Any]], handle: IO[str]) -> int:
    """One JSON object a line, nothing a terminal acts on left raw in it (inert.json_inert:
    an export printed to a terminal); returns how many were written."""
    count = 0
    for record in records:
        handle.write(json_inert(json.dumps(record, ensure_ascii=False)) + "\n")
        count += 1
    return count
