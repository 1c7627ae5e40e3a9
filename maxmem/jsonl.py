"""JSON Lines files: what `maxmem export` writes and `maxmem import` reads (plain or gzipped)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from .errors import InvalidInput


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Records of a JSONL file (gzipped when it ends in .gz); a bad line names its number."""
    opener = gzip.open if str(path).endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8-sig") as handle:  # utf-8-sig: a BOM is no JSON
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InvalidInput(f"{path}:{number}: not valid JSON ({exc.msg})") from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from None


def write_jsonl(records: Iterable[Mapping[str, Any]], handle: IO[str]) -> int:
    """One JSON object a line; returns how many were written."""
    count = 0
    for record in records:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
    return count
