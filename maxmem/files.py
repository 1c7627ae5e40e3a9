"""Private files: brain.db, exports, logs and configs hold memories, so they are made
0600 in 0700 folders, and written whole or not at all."""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import IO, BinaryIO, TypeVar

from .errors import InvalidInput

T = TypeVar("T")
S = TypeVar("S", bound=IO)


def secure_create(path: Path) -> None:
    """Create the folder 0700 and an empty file 0600 before SQLite touches it.

    SQLite gives the -wal and -shm files the mode of the database file.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not path.exists():
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
    elif path.is_file() and path.stat().st_size == 0:  # an empty file about to become brain.db
        os.chmod(path, 0o600)


def write_private(path: Path, write: Callable[[IO[str]], T]) -> T:
    """Write a text file whole or not at all, readable by its owner only (it holds
    memories): `write(handle)` fills a 0600 temporary beside it (folders made 0700),
    which then replaces `path`. A failed write leaves the old file as it was.
    Anything at `path` but a regular file (a folder, a device) is refused, never touched.
    """
    if path.exists() and not path.is_file():
        raise InvalidInput(f"{path} is not a regular file: give the path of a file to write")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)

    def fill(fd: int) -> T:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            result = write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        return result

    return _replace(path, fill)


def kind_of(mode: int) -> str:
    """What a file of this st_mode is, in words: "a FIFO (named pipe)", "a folder", …"""
    kinds = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def kind_at(path: Path | str) -> str:
    """What is at `path`, in words, as kind_of says it."""
    try:
        return kind_of(os.stat(path).st_mode)
    except OSError:
        return "gone or unreadable"


def not_regular(path: Path | str, mode: int, what: str = "a file") -> InvalidInput:
    """The one-line refusal of a path that names anything but a regular file (`what`: the
    file wanted, as the message names it)."""
    return InvalidInput(f"{path} is {kind_of(mode)}, not a regular file: give the path of {what}")


def why_not_made(path: Path, exc: OSError) -> str:
    """Why `path` (or its folders) could not be made, in words: "X is a character device,
    not a folder" when a path on the way is a file or a device, else the OS's reason."""
    for above in (path.parent, *path.parent.parents):
        if above.exists() and not above.is_dir():
            return f"{above} is {'a file' if above.is_file() else kind_at(above)}, not a folder"
        if above.exists():
            break
    return str(exc.strerror or exc)


def check_regular(path: Path | str, what: str = "a file") -> None:
    """Refuse (InvalidInput) a path that exists and is not a regular file, for a path
    another library opens by name (SQLite): a FIFO's open would wait for a writer that
    may never come. A path that does not exist passes (it is created)."""
    try:
        info = os.stat(path)
    except OSError:
        return
    if not stat.S_ISREG(info.st_mode):
        raise not_regular(path, info.st_mode, what)


def open_regular(path: Path | str, what: str = "a file") -> BinaryIO:
    """Open a file the user named, for reading; anything but a regular file is refused in
    one line (InvalidInput), never read: a FIFO is opened without waiting for its writer
    (O_NONBLOCK) and refused, as are devices (/dev/zero never ends) and sockets. OSError
    when it cannot be opened."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    return _regular_stream(fd, path, what, lambda: os.fdopen(fd, "rb"))


def read_regular(path: Path | str, limit: int, what: str = "a file") -> bytes:
    """The bytes of a regular file the user named (open_regular), at most `limit` of them:
    InvalidInput, in one line, for a larger one, read no further than limit + 1."""
    with open_regular(path, what) as handle:
        data = read_at_most(handle, limit)
    if data is None:
        shown = f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit} bytes"
        raise InvalidInput(f"{path} holds more than {shown}: give the path of {what}")
    return data


def open_append(path: Path, what: str = "a file") -> io.TextIOWrapper:
    """A log file the user named, opened to append text (created 0600 in a 0700 folder):
    anything but a regular file is refused in one line, as open_regular does (a FIFO
    without a reader is refused at once rather than waited on)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO nobody reads
            raise not_regular(path, stat.S_IFIFO, what) from None
        raise
    return _regular_stream(fd, path, what, lambda: os.fdopen(fd, "a", encoding="utf-8"))


def _regular_stream(fd: int, path: Path | str, what: str, stream: Callable[[], S]) -> S:
    """`stream()` over `fd`, opened without waiting (O_NONBLOCK), once fstat says it is a
    regular file (then blocking again); anything else refused in one line, `fd` closed."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise not_regular(path, info.st_mode, what)
        os.set_blocking(fd, True)
        return stream()
    except BaseException:
        os.close(fd)
        raise


def read_at_most(stream: IO[bytes], limit: int) -> bytes | None:
    """`stream`'s bytes when it holds at most `limit` of them, else None, having read no
    more than limit + 1 (a device such as /dev/zero or an endless pipe is not read on)."""
    data = stream.read(limit + 1)
    return None if len(data) > limit else data


def write_kept(path: Path, text: str) -> Path:
    """Rewrite a file the user keeps and edits (config.toml) whole or not at all, as
    write_private does: through a symlink (a config kept with one's dotfiles stays
    linked, its target rewritten), and never one the user made read-only. The path
    written."""
    target = path.resolve() if path.is_symlink() else path
    if target.is_file() and not target.stat().st_mode & stat.S_IWUSR:
        raise InvalidInput(f"{path} is read-only: make it writable (chmod u+w) to change it")
    write_private(target, lambda handle: handle.write(text))
    return target


def write_durable(path: Path, data: bytes) -> os.stat_result:
    """Write `data` whole or not at all (0600), as write_private does, and fsync the folder
    too, so that the new name survives a crash: for files other machines read (folder sync)."""

    def fill(fd: int) -> None:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())

    _replace(path, fill)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return path.stat()


def _replace(path: Path, fill: Callable[[int], T]) -> T:
    """`fill(fd)` writes a 0600 temporary beside `path`, which then replaces it; a failure
    removes the temporary and leaves `path` as it was."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    try:
        result = fill(fd)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return result


def same_file(stream: object, path: Path | str) -> bool:
    """Whether `stream` (sys.stdout, sys.stderr) writes into the file at `path`: a
    scheduler's `>>LOG 2>&1` into the log maxmem also writes with --log-file."""
    try:
        mine = os.fstat(stream.fileno())  # type: ignore[attr-defined]
        theirs = os.stat(path)
    except (AttributeError, OSError, ValueError):
        return False
    return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)
