"""Gzipped JSONL archives that are whole or absent, and a reader that recovers damaged ones.

`write` is how retention makes an archive it may then delete rows for: the records go
to a 0600 temporary beside the final name, which is flushed, fsynced, read back
(gzip stream complete, CRC right, every line JSON, the same records in the same
order) and only then renamed into place, with the folder fsynced after the rename.
A process killed at any point leaves either no file under the final name or a
complete one; the temporary it may leave (`temporary(path)`) holds nothing that is
not still in brain.db.

`read` reads any JSONL file, gzipped or not. Where an older maxmem left a truncated
archive (its retention run was killed mid-write), it returns the complete lines
before the damage and says how many, instead of refusing the file. A bad line in the
middle of an intact file is still an error naming its line.

The archives of an encrypted brain are sealed (sealed.py: AES-256-GCM under a key
derived from the brain's key): `write(..., key=)` seals the gzipped lines, and `read`
opens a sealed file with the key it is given, both as streams (memory bounded by a
piece, not by the file). A sealed file is authenticated whole, so a damaged one is refused
rather than partly recovered: `read` returns nothing before the tag at its end is checked.
"""

from __future__ import annotations

import contextlib
import json
import os
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import EncryptionKeyError, InvalidInput, MaxmemError
from .files import open_regular
from .keys import HOW_TO_GIVE, Key
from .sealed import Sealer, Unsealer, is_sealed

CHUNK = 1 << 20
MAX_LINE_BYTES = 64 << 20  # a record (a memory of at most 1 MB, JSON-escaped) is far shorter
GZIP_MAGIC = b"\x1f\x8b"
TEMPORARY_SUFFIX = ".tmp"
PURPOSE = "archive"  # what sealed archives are sealed for (sealed.py)


class ArchiveError(MaxmemError):
    """An archive could not be written whole (the rows it was for are kept)."""


@dataclass(frozen=True)
class Reading:
    """What `read` found in a file: the records and whether the file was whole."""

    path: Path
    records: list[dict[str, Any]] = field(repr=False)
    lines: int  # complete JSON lines read (kept in `records` unless keep=False)
    complete: bool  # the file ended where its format says it ends
    lost_bytes: int = 0  # uncompressed bytes after the last complete line
    problem: str | None = None  # why the file is not complete, one line
    sealed: bool = False  # the file was sealed with the brain's key

    def note(self) -> str | None:
        """The one line a caller shows when the file was not whole, else None."""
        if self.complete:
            return None
        lost = f"; the incomplete end ({self.lost_bytes} bytes) is lost" if self.lost_bytes else ""
        return f"{self.path} is {self.problem}: recovered the {self.lines} complete line(s) before it{lost}"


def temporary(path: Path) -> Path:
    """Where `write` builds `path` before the rename: a hidden file in the same folder."""
    return path.with_name(f".{path.name}{TEMPORARY_SUFFIX}")


def record_key(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """What identifies a row of an archive: its table and key (a memory: its uid)."""
    table = record.get("_table") or "memories"
    if table == "memories":
        return (table, record.get("uid"))
    if table == "tool_calls":
        return (table, record.get("session_id"), record.get("call_id"))
    return (table, record.get("id"))


def write(path: Path, records: Sequence[Mapping[str, Any]], replace: bool = False, key: Key | None = None) -> Path:
    """Write `records` to `path` whole, durable and verified, or raise ArchiveError.

    Never replaces an existing file unless `replace` (a repair). `key`: seal the file
    with it (an encrypted brain's archive). Returns `path`.
    """
    path = Path(path)
    if path.exists() and not replace:
        raise ArchiveError(f"{path} exists already: not overwriting an archive")
    building = temporary(path)
    lines = [json.dumps(r, ensure_ascii=False) + "\n" for r in records]
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        building.unlink(missing_ok=True)  # left by a killed run: it holds nothing not in brain.db
        fd = os.open(building, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        with os.fdopen(fd, "wb") as raw:
            compressor = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: a gzip header and trailer
            sealer = Sealer(key.secret, PURPOSE) if key is not None else None
            raw.write(sealer.header if sealer else b"")
            for start in range(0, len(lines), 256):
                piece = compressor.compress("".join(lines[start : start + 256]).encode("utf-8"))
                raw.write(sealer.update(piece) if sealer else piece)
            piece = compressor.flush()
            raw.write(sealer.update(piece) if sealer else piece)
            raw.write(sealer.finish() if sealer else b"")
            raw.flush()
            os.fsync(raw.fileno())
        reading = read(building, key=key)
        expected = [record_key(json.loads(line)) for line in lines]
        if not reading.complete or [record_key(r) for r in reading.records] != expected:
            raise ArchiveError(
                f"{building} did not read back whole ({reading.problem or 'other records'}): "
                "nothing was deleted; check the disk and run again"
            )
        if path.exists() and not replace:
            raise ArchiveError(f"{path} appeared while it was written: not overwriting an archive")
        os.replace(building, path)
        sync_folder(path.parent)
    except OSError as exc:
        with contextlib.suppress(OSError):
            building.unlink(missing_ok=True)
        raise ArchiveError(
            f"cannot write the archive {path}: {exc.strerror or exc}; nothing was deleted"
        ) from None
    except BaseException:
        building.unlink(missing_ok=True)
        raise
    return path


def sync_folder(folder: Path) -> None:
    """fsync a folder, so that a rename in it survives a power cut (POSIX; a no-op elsewhere)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems cannot sync a folder; the rename stands regardless
        pass
    finally:
        os.close(fd)


def _chunks(path: Path) -> Iterator[bytes]:
    with open_regular(path) as handle:
        while True:
            chunk = handle.read(CHUNK)
            if not chunk:
                return
            yield chunk


def _gunzip(chunks: Iterable[bytes]) -> Iterator[tuple[bytes, str | None]]:
    """Decompressed pieces of every gzip member in `chunks`; the last piece carries why the
    stream stopped early (None: it ended properly)."""
    inflater = zlib.decompressobj(31)
    member_started = False
    for chunk in chunks:
        data = chunk
        while data:
            try:  # at most CHUNK out at a time: a small file of zeros inflates a thousandfold
                piece = inflater.decompress(data, CHUNK)
            except zlib.error as exc:
                yield b"", f"damaged ({_zlib_reason(exc)})"
                return
            member_started = True
            if piece:
                yield piece, None
            if inflater.eof:
                data = inflater.unused_data
                inflater = zlib.decompressobj(31)
                member_started = False
                if data and not data.startswith(GZIP_MAGIC[: len(data)]):
                    if data.strip(b"\x00"):
                        yield b"", "damaged (bytes after the end of the gzip stream)"
                        return
                    data = b""  # zero padding after the last member, as tape and some tools leave
            else:
                data = inflater.unconsumed_tail  # what CHUNK left for the next piece
    if member_started:
        try:
            tail = inflater.flush()
        except zlib.error:
            tail = b""
        yield tail, "truncated (the gzip stream ends before its end marker)"


def _zlib_reason(exc: zlib.error) -> str:
    text = str(exc)
    return text.split(": ", 1)[-1] if ": " in text else text


def _plain(path: Path) -> Iterator[tuple[bytes, str | None]]:
    for chunk in _chunks(path):
        yield chunk, None


def _unsealer(path: Path, key: Key | None) -> Unsealer:
    """The sealed file at `path`, opened with `key` to be read as a stream (sealed.py)."""
    if key is None:
        raise EncryptionKeyError(f"{path} is an encrypted archive and no key was given: {HOW_TO_GIVE}")
    handle = open_regular(path, "an archive")
    try:
        return Unsealer(key.secret, handle, PURPOSE, str(path))
    except BaseException:
        handle.close()
        raise


def read(path: Path | str, keep: bool = True, key: Key | None = None) -> Reading:
    """The records of a JSONL file (gzipped when it starts like gzip, sealed and opened
    with `key` when it starts like a sealed file), recovering a damaged end.

    A gzip stream that stops early (truncated, or damaged data) gives its complete lines
    before that point: `complete` is False and `note()` says what was recovered. A line
    that is not JSON raises InvalidInput naming it, unless it is the cut-off last line of
    a damaged stream. keep=False counts without keeping the records (for a check).
    """
    path = Path(path)
    try:
        with open_regular(path, "an archive") as handle:  # a FIFO: refused, never waited on
            start = handle.read(16)
        sealed = _unsealer(path, key) if is_sealed(start) else None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
    if sealed is None:
        return _records(path, _gunzip(_chunks(path)) if start[:2] == GZIP_MAGIC else _plain(path), keep)
    with sealed.stream:  # decrypted as it is read; the tag is checked before anything is returned
        try:
            reading = _records(path, _gunzip(sealed.chunks()), keep, sealed=True)
        except InvalidInput:
            sealed.finish()  # a changed file or another key reads as garbage: that is what is said
            raise
        except OSError as exc:
            raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
        sealed.finish()
    return reading


def _records(path: Path, pieces: Iterator[tuple[bytes, str | None]], keep: bool, sealed: bool = False) -> Reading:
    """What `read` returns, from the decompressed `pieces` of the file at `path`."""
    records: list[dict[str, Any]] = []
    count = 0
    number = 0
    parts: list[bytes] = []  # the line being read, in pieces (never joined again and again)
    held = 0
    problem: str | None = None
    try:
        for piece, stopped in pieces:
            whole: list[bytes] = []
            if b"\n" in piece:
                first, *rest = piece.split(b"\n")
                whole = [b"".join([*parts, first]), *rest[:-1]]
                parts, held = [rest[-1]], len(rest[-1])
            else:
                parts.append(piece)
                held += len(piece)
            if held > MAX_LINE_BYTES:  # an endless line (/dev/zero's copy, a broken file): not read on
                raise InvalidInput(f"{path}:{number + len(whole) + 1}: a line of more than "
                                   f"{MAX_LINE_BYTES >> 20} MiB: not a maxmem export or archive")
            for line in whole:
                number += 1
                record = _parse(path, number, line)
                if record is not None:
                    count += 1
                    if keep:
                        records.append(record)
            if stopped:
                problem = stopped
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
    lost = 0
    pending = b"".join(parts)
    if pending.strip():
        if problem is None:  # an intact file whose last line has no newline: it must still parse
            record = _parse(path, number + 1, pending)
            if record is not None:
                count += 1
                if keep:
                    records.append(record)
        else:
            lost = len(pending)
    return Reading(path, records, count, problem is None, lost, problem, sealed)


def _parse(path: Path, number: int, line: bytes) -> dict[str, Any] | None:
    if number == 1 and line.startswith(b"\xef\xbb\xbf"):  # a BOM is no JSON
        line = line[3:]
    if not line.strip():
        return None
    try:
        value = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        raise InvalidInput(f"{path}:{number}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path}:{number}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise InvalidInput(f"{path}:{number}: JSON nested too deeply") from None
    if not isinstance(value, dict):
        raise InvalidInput(f"{path}:{number}: not a JSON object")
    return value


def check(path: Path, key: Key | None = None) -> Reading | str:
    """How an archive reads, records not kept (for `maxmem doctor`): a Reading, or the
    one-line reason it cannot be read at all (a bad line, an unreadable file, no key)."""
    try:
        return read(path, keep=False, key=key)
    except (InvalidInput, EncryptionKeyError) as exc:
        return str(exc)
