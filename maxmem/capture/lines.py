"""Read the complete JSON lines of a growing file, from a byte offset.

Agents append one JSON object plus "\\n" per record, so a concurrent reader can see a
half-written last line. Only newline-terminated lines are consumed; the unterminated
tail is left for the next run even if it happens to parse. A terminated line that
is not a JSON object is corrupt: it is counted, logged and skipped, and reading goes on.
How far the reader looked past its last complete line without finding a newline
(`scanned`) is kept with the cursor, so that the next run looks on from there: a
transcript of one endless line is read once over many runs, never again from its start.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from .model import Record

log = logging.getLogger("maxmem")

BLOCK = 1 << 20
MAX_LINE_BYTES = 64 << 20  # a longer line is no transcript record: skipped, never held whole


@dataclass
class LineStats:
    lines: int = 0  # complete lines seen (blank ones included)
    malformed: int = 0  # complete lines that are not a JSON object
    invalid_utf8: int = 0  # lines with bytes that are not UTF-8 (decoded with U+FFFD)
    nul_bytes: int = 0  # lines that contained NUL bytes (removed before parsing)
    stopped: bool = False  # the deadline came inside the first line: nothing read


class LineReader:
    """Iterate the complete JSON-object lines of `stream` from `offset` up to `limit`.

    After iteration, `end` is the offset just past the last complete line: the
    place the next run starts. Bytes after it (a partial line) are not consumed.
    `scanned` is how far the stream was read: the bytes from `end` to it hold no
    newline. Given back as `scanned` to the next reader starting at `end`, those bytes
    are not searched again (the first line is read back from `offset` once its newline
    is found, if it is short enough to be a record).
    """

    def __init__(
        self, stream: BinaryIO, offset: int = 0, limit: int | None = None, name: str = "",
        deadline: float | None = None, scanned: int | None = None,
    ) -> None:
        self.stream = stream
        self.deadline = deadline  # time.monotonic(): still in the first line then, stop (the next run looks on)
        self.start = offset
        self.limit = limit
        self.name = name
        self.end = offset
        self.scanned = offset if scanned is None else max(scanned, offset)
        self.stats = LineStats()

    def __iter__(self) -> Iterator[Record]:
        for offset, raw in self.raw_lines():
            value = self._decode(offset, raw)
            if value is not None:
                yield Record(offset, self.end, value)

    def raw_lines(self) -> Iterator[tuple[int, bytes]]:
        """Yield (offset, bytes without the newline) for each complete line. A line longer
        than MAX_LINE_BYTES is skipped (counted as malformed) without being held: a broken
        transcript of one endless line costs one pass over it, in little memory."""
        position = self.start  # where the line being read starts
        read_to = self.scanned  # where the next block starts: before it, no newline past start
        self.stream.seek(read_to)
        pending: list[bytes] = []  # the line so far, before the current block
        held = read_to - self.start  # bytes of the line so far (those before `scanned` not in pending)
        over_long = held > MAX_LINE_BYTES
        unheld = held  # the line's first bytes, read in an earlier run, read back when it ends
        remaining = None if self.limit is None else max(0, self.limit - read_to)
        while remaining is None or remaining > 0:
            size = BLOCK if remaining is None else min(BLOCK, remaining)
            block = self.stream.read(size)
            if not block:
                break
            if remaining is not None:
                remaining -= len(block)
            begin = 0
            while True:
                newline = block.find(b"\n", begin)
                if newline < 0:
                    break
                self.end = read_to + newline + 1
                self.stats.lines += 1
                if over_long:
                    self.stats.malformed += 1
                    log.warning("capture: skipping a line of more than %d bytes at byte %d of %s",
                                MAX_LINE_BYTES, position, self.name or "<stream>")
                else:
                    head = self._read_back(position, unheld) if unheld else b""
                    yield position, b"".join([head, *pending, block[begin:newline]])
                position, pending, held, over_long, unheld = self.end, [], 0, False, 0
                begin = newline + 1
            if not over_long:
                pending.append(block[begin:])
                held += len(block) - begin
                if held > MAX_LINE_BYTES:
                    pending, held, over_long = [], 0, True
            read_to += len(block)
            self.scanned = read_to
            if self.deadline is not None and self.end == self.start and time.monotonic() >= self.deadline:
                self.stats.stopped = True  # one endless first line: the time is up, nothing consumed
                break

    def _read_back(self, offset: int, size: int) -> bytes:
        """The first `size` bytes of the line at `offset`, searched by an earlier run; the
        stream is left where it was."""
        here = self.stream.tell()
        self.stream.seek(offset)
        head = self.stream.read(size)
        self.stream.seek(here)
        return head

    def _decode(self, offset: int, raw: bytes) -> dict | None:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if b"\x00" in raw:
            self.stats.nul_bytes += 1
            raw = raw.replace(b"\x00", b"")
        if not raw.strip():
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            self.stats.invalid_utf8 += 1
            text = raw.decode("utf-8", errors="replace")
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            self.stats.malformed += 1
            log.warning("capture: skipping a line that is not a JSON object at byte %d of %s",
                        offset, self.name or "<stream>")
            return None
        return value


def head_hash(stream: BinaryIO, size: int = 4096) -> str:
    """Hash of the first line (at most `size` bytes): changes when a file is rewritten."""
    stream.seek(0)
    head = stream.read(size)
    newline = head.find(b"\n")
    if newline >= 0:
        head = head[: newline + 1]
    return hashlib.sha256(head).hexdigest()[:16]
