"""Pick the reader for a file and run it over the new part of the file."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import InvalidInput
from ..files import open_regular
from . import chatgpt, claude_code, codex, jsonl, markdown, openclaw
from .lines import LineReader, LineStats
from .model import FORMATS, CaptureFormatError, Parsed, ReadContext, Record

LineParser = Callable[[list[Record], dict[str, Any], ReadContext], Parsed]
DocumentParser = Callable[[bytes, ReadContext], Parsed]

LINE_FORMATS: dict[str, LineParser] = {
    "openclaw": openclaw.parse,
    "claude-code": claude_code.parse,
    "codex": codex.parse,
    "jsonl": jsonl.parse,
}
DOCUMENT_FORMATS: dict[str, DocumentParser] = {
    "chatgpt": chatgpt.parse_document,
    "markdown": markdown.parse_document,
}
assert set(LINE_FORMATS) | set(DOCUMENT_FORMATS) == set(FORMATS)

# Every transcript is opened with files.open_regular: without waiting (a FIFO or a device
# put in a file's place after it was listed is refused in one line, never read).
TRANSCRIPT = "a transcript"


@dataclass
class ReadResult:
    parsed: Parsed
    end: int  # the offset the cursor may advance to
    stats: LineStats = field(default_factory=LineStats)
    scanned: int = 0  # read up to here: no newline between `end` and it (the next read looks on from it)


def is_document_format(fmt: str) -> bool:
    return fmt in DOCUMENT_FORMATS


def is_compressed(path: str | Path) -> bool:
    """A zstd-compressed transcript (Codex's `*.jsonl.zst`): written once, read whole."""
    return str(path).endswith(".zst")


def decompressed(path: str | Path, limit: int | None = None) -> bytes:
    """The text of a zstd-compressed file (at most `limit` bytes of it)."""
    import zstandard

    try:
        with open_regular(path, TRANSCRIPT) as raw, zstandard.ZstdDecompressor().stream_reader(raw) as stream:
            return stream.read() if limit is None else stream.read(limit)
    except zstandard.ZstdError as exc:
        raise CaptureFormatError(f"not a readable zstd file ({exc})") from None


# A file's name says which formats it can be (a folder given to --path is read for
# the files these names allow); its first lines say which one it is (detect_format).
DOCUMENT_SUFFIXES = {"chatgpt": (".json",), "markdown": (".md", ".markdown", ".txt")}
LINE_SUFFIXES = (".jsonl", ".jsonl.zst")
_CONVERSATIONS = re.compile(r"^conversations.*\.json$", re.IGNORECASE)


def named_as(name: str, fmt: str | None = None) -> bool:
    """Whether a file called `name`, in a folder given to --path, is read as `fmt` (None:
    as any format a folder of transcripts holds: JSONL, and ChatGPT's conversations*.json)."""
    lower = name.lower()
    if fmt in DOCUMENT_SUFFIXES:
        return lower.endswith(DOCUMENT_SUFFIXES[fmt])
    if fmt is not None:
        return lower.endswith(LINE_SUFFIXES)
    return lower.endswith(LINE_SUFFIXES) or bool(_CONVERSATIONS.match(name))


def detect_format(path: str | Path) -> str | None:
    """Guess a file's format from its name and first line; None if it is not a transcript."""
    path = Path(path)
    name = path.name.lower()
    for fmt, suffixes in DOCUMENT_SUFFIXES.items():
        if name.endswith(suffixes):
            return fmt
    if ".jsonl" not in name:
        return None
    try:
        if is_compressed(path):
            head = decompressed(path, 65536)
        else:
            with open_regular(path, TRANSCRIPT) as stream:
                head = stream.read(65536)
    except (OSError, CaptureFormatError, InvalidInput):  # (swapped for a FIFO since it was listed)
        return None
    for raw in head.split(b"\n")[:20]:
        try:
            value = json.loads(raw.replace(b"\x00", b"").decode("utf-8", errors="replace"))
        except ValueError:
            continue
        if isinstance(value, dict):
            found = format_of_line(value)
            if found is not None:
                return found
    return "jsonl"


def format_of_line(value: dict[str, Any]) -> str | None:
    """The format one parsed transcript line shows itself to be (None: it does not say)."""
    kind = value.get("type")
    if kind == "session" and "version" in value or kind in ("model_change", "message") and "parentId" in value:
        return "openclaw"
    if kind in ("session_meta", "response_item", "event_msg", "turn_context"):
        return "codex"
    if "sessionId" in value or "leafUuid" in value or kind == "file-history-snapshot":
        return "claude-code"
    if any(k in value for k in ("role", "author", "speaker", "message")):
        return "jsonl"
    return None


def read(path: str | Path, fmt: str, offset: int, state: dict[str, Any], ctx: ReadContext,
         limit: int | None = None, scanned: int | None = None) -> ReadResult:
    """Read `path` from `offset` (line formats) or whole (document formats). `scanned`: an
    earlier read found no newline from `offset` up to there (LineReader)."""
    if fmt in DOCUMENT_FORMATS:
        with open_regular(path, TRANSCRIPT) as whole:
            data = whole.read() if limit is None else whole.read(limit)
        parsed = DOCUMENT_FORMATS[fmt](data, ctx)
        return ReadResult(parsed, len(data), scanned=len(data))
    if fmt not in LINE_FORMATS:
        raise CaptureFormatError(f"unknown transcript format {fmt!r}: use one of {', '.join(FORMATS)}")
    if is_compressed(path):  # offsets are into the text; `limit` (the file's size) does not apply
        stream: BinaryIO = io.BytesIO(decompressed(path))
        limit, scanned = None, None
    else:
        stream = open_regular(path, TRANSCRIPT)
    with stream:
        reader = LineReader(stream, offset, limit, name=str(path), deadline=ctx.deadline, scanned=scanned)
        records = list(reader)
    parsed = LINE_FORMATS[fmt](records, state, ctx)
    if parsed.consumed is None:
        return ReadResult(parsed, reader.end, reader.stats, reader.scanned)
    return ReadResult(parsed, parsed.consumed, reader.stats, parsed.consumed)  # lines held back: read again
