"""The one place that talks to apsw: opening brain.db, pragmas, sqlite-vec, transactions.

apsw does not start transactions on its own (unlike the sqlite3 module), so every
write goes through `Database.atomic()`: BEGIN IMMEDIATE at the outermost level (a
deferred transaction that reads before it writes fails with SQLITE_BUSY at once under
a concurrent writer, busy timeout or not), SAVEPOINTs inside.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import apsw

from ..errors import DatabaseError, EncryptionKeyError, InvalidInput
from ..files import check_regular, secure_create, why_not_made
from ..keys import HOW_TO_GIVE, Key, is_encrypted

log = logging.getLogger("maxmem")

T = TypeVar("T")

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
# Values bound in one `IN (…)` list: far below SQLite's limit of 32,766 variables, and a
# statement this size prepares in microseconds.
CHUNK = 400
DAMAGED_VECTORS = re.compile(r"blob failed|vector blob|malformed", re.IGNORECASE)


def check_identifier(name: str, what: str = "name") -> str:
    """Identifiers that come from input (metadata keys, table names) must match a strict pattern."""
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        raise InvalidInput(
            f"{what} {name!r} is not allowed: use letters, digits and _ (not starting with a digit)"
        )
    return name


def _corrupt_message(path: Path, exc: BaseException) -> str:
    return (
        f"{path} is not a usable brain.db ({exc.__class__.__name__}: {exc}): "
        "run  maxmem doctor  and restore a backup with  maxmem restore FILE"
    )


DAMAGE = (apsw.CorruptError, apsw.NotADBError, apsw.IOError)


def guarded(method: Callable[..., T]) -> Callable[..., T]:
    """For the public methods of an object with a `.db`: damage met while reading rows
    (past the first, where `Database.execute` cannot see it) becomes the one-line
    DatabaseError too. One try per call, not per row."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> T:
        try:
            return method(self, *args, **kwargs)
        except DAMAGE as exc:
            raise DatabaseError(_corrupt_message(self.db.path, exc)) from None

    return wrapper


def access(path: Path) -> tuple[str, str | None]:
    """How brain.db at `path` can be opened, and why not for writing:

    - ("rw", None): it and its folder are writable (or it does not exist yet);
    - ("ro", why): SQLite URI mode=ro. The file is read-only but its folder is not, or
      a -wal file exists beside it (whose committed pages must be read, through its -shm);
    - ("immutable", why): file and folder read-only and no -wal: no process can write it
      (a read-only mount, a locked share), so SQLite may skip locking (URI immutable=1).
    """
    if str(path) == ":memory:" or not path.exists():
        return "rw", None
    file_ok = os.access(path, os.W_OK)
    folder_ok = os.access(path.parent, os.W_OK)
    if file_ok and folder_ok:
        return "rw", None
    why = ("the file and its folder are read-only" if not (file_ok or folder_ok)
           else "the file is read-only" if not file_ok else "its folder is read-only")
    if folder_ok or Path(f"{path}-wal").exists():
        return "ro", why
    return "immutable", why


def _uri(path: Path, mode: str) -> str:
    from urllib.parse import quote

    query = "immutable=1" if mode == "immutable" else "mode=ro"
    return f"file:{quote(str(path.resolve()))}?{query}"


def apply_key(conn: apsw.Connection, key: Key) -> None:
    """Key a new connection: the cipher first (a file does not record it), then the key."""
    conn.pragma("cipher", key.cipher)
    conn.pragma("key", key.pragma())


def in_memory_image(image: bytes) -> bytes:
    """A database image (Connection.serialize) as an in-memory database accepts it: a WAL
    file's header says WAL (bytes 18-19 = 2), which a deserialized database cannot use."""
    return image[:18] + b"\x01\x01" + image[20:]


class Database:
    """An apsw connection to brain.db with maxmem's pragmas and sqlite-vec loaded.

    readonly=True opens it for reading only (URI mode=ro, or immutable=1 where `access`
    says no writer can exist). A brain.db that cannot be written (a read-only file,
    folder or mount) is opened that way even when readonly=False: reading works, and
    the first write raises DatabaseError "<path> is read-only (why)". `read_only` says
    why it was opened read-only (None: it was not).

    key: the key of an encrypted brain.db (keys.py), applied when the file is encrypted,
    and used to encrypt a new one. A plain brain.db opens as it is whatever the key;
    an encrypted one without its key raises EncryptionKeyError. `key` stays the key
    in use (None: the file is plain).
    """

    def __init__(self, path: str | Path, busy_timeout_ms: int = 15000, readonly: bool = False,
                 key: Key | None = None):
        self.path = Path(path) if str(path) != ":memory:" else Path(":memory:")
        self._depth = 0
        self._savepoints = itertools.count()
        self._lock = threading.RLock()
        self.busy_timeout_ms = busy_timeout_ms
        memory = str(path) == ":memory:"
        self.in_memory = memory  # no other connection can see it (a copy keeps its file's path)
        if not memory:  # a FIFO would hold SQLite's open (and ours of its header) forever
            check_regular(self.path, "brain.db (--db, MAXMEM_DB or db_path)")
        mode, why = ("rw", None) if memory else access(self.path)
        if readonly and mode == "rw":
            mode, why = "ro", "opened for reading"
        self.read_only: str | None = why if mode != "rw" else None
        if not memory and mode == "rw":
            try:
                secure_create(self.path)
            except OSError as exc:
                raise DatabaseError(f"cannot create {self.path}: {why_not_made(self.path, exc)}") from None
        if not memory and mode != "rw" and not self.path.exists():
            raise DatabaseError(f"{self.path} does not exist: run  maxmem init  or check --db")
        if mode == "rw":
            name, flags = str(path), apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        else:
            name, flags = _uri(self.path, mode), apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
        encrypted = not memory and (is_encrypted(self.path) or (key is not None and self.path.stat().st_size == 0))
        self.key = key if encrypted else None
        try:
            self.conn = apsw.Connection(name, flags=flags)
            self.conn.set_busy_timeout(busy_timeout_ms)
            if encrypted:
                self._apply_key(key)
            self._load_vec()
            if self.read_only:  # a -wal without its -shm in a read-only folder fails here, raw
                self.conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
            self._pragmas(memory, mode != "rw")
        except apsw.BusyError:
            raise DatabaseError(
                f"{self.path} stayed locked for {busy_timeout_ms / 1000:.0f} s by another process: "
                "try again, or find the stuck process (fuser)"
            ) from None
        except apsw.CantOpenError as exc:
            if self.read_only:
                raise DatabaseError(
                    f"{self.path} is read-only ({self.read_only}) and cannot be read either: "
                    f"{self.path.name}-wal beside it holds changes that SQLite reads only through "
                    f"{self.path.name}-shm or a writable folder; copy the folder somewhere writable"
                ) from None
            raise DatabaseError(_corrupt_message(self.path, exc)) from None
        except (apsw.NotADBError, apsw.CorruptError, apsw.IOError) as exc:
            raise DatabaseError(_corrupt_message(self.path, exc)) from None

    def read_only_error(self) -> DatabaseError:
        """What a write to a read-only brain.db raises: the path and why, never "restore"."""
        return DatabaseError(
            f"{self.path} is read-only ({self.read_only or 'check its permissions'}): "
            "it can be read and searched, not changed"
        )

    def _apply_key(self, key: Key | None) -> None:
        """Key this connection; a missing or wrong key is one line saying how to give it."""
        if key is None:
            self.conn.close()
            raise EncryptionKeyError(f"{self.path} is encrypted and no key was given: {HOW_TO_GIVE}")
        if not hasattr(apsw, "mc_version"):
            self.conn.close()
            raise EncryptionKeyError(f"{self.path} is encrypted and this apsw cannot decrypt it: "
                                     "run  pip install --force-reinstall apsw-sqlite3mc")
        apply_key(self.conn, key)
        try:
            self.conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except apsw.NotADBError:
            self.conn.close()
            raise EncryptionKeyError(f"{self.path} does not open with the key from {key.source} "
                                     f"(a wrong key): {HOW_TO_GIVE}") from None
        # Sorts and indexes too big for the cache would otherwise spill to temporary
        # files, which SQLite3 Multiple Ciphers does not encrypt.
        self.conn.execute("PRAGMA temp_store=MEMORY")

    def _load_vec(self) -> None:
        import sqlite_vec

        self.conn.enable_load_extension(True)
        self.conn.load_extension(sqlite_vec.loadable_path())
        self.conn.enable_load_extension(False)

    def _pragmas(self, memory: bool, readonly: bool) -> None:
        # Reading the schema first turns "not a database" into an error here, not later.
        self.scalar("SELECT count(*) FROM sqlite_master")
        if not memory and not readonly:
            if self.scalar("PRAGMA journal_mode") != "wal":
                self.execute("PRAGMA journal_mode=WAL")
        self.execute("PRAGMA synchronous=FULL")
        # Deleted and overwritten bytes are zeroed, not left in free space: a forgotten
        # secret must not stay readable in the file (rows.Rows.delete).
        self.execute("PRAGMA secure_delete=ON")
        self.execute("PRAGMA foreign_keys=ON")
        self.execute("PRAGMA mmap_size=268435456")
        self.execute("PRAGMA cache_size=-32000")

    # -- statements ---------------------------------------------------------
    def translate(self, exc: apsw.Error) -> DatabaseError | None:
        """The DatabaseError a user should see for an apsw error, or None for a bug."""
        if isinstance(exc, apsw.BusyError):
            return DatabaseError(f"{self.path} is locked by another process for too long: try again")
        if isinstance(exc, apsw.ReadOnlyError) or (
            self.read_only and isinstance(exc, (apsw.CantOpenError, apsw.IOError))
        ):
            return self.read_only_error()
        if isinstance(exc, (apsw.CorruptError, apsw.NotADBError, apsw.IOError)) or (
            # sqlite-vec reports a damaged vector page as a plain SQL error
            isinstance(exc, apsw.SQLError) and DAMAGED_VECTORS.search(str(exc))
        ):
            return DatabaseError(_corrupt_message(self.path, exc))
        if isinstance(exc, apsw.FullError):
            return DatabaseError(f"the disk holding {self.path} is full: free space and retry")
        return None

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> apsw.Cursor:
        try:
            return self.conn.execute(sql, params)
        except apsw.Error as exc:
            raise self.translate(exc) or exc from None
        except OverflowError:  # a number past SQLite's 64 bits, from a caller's input
            raise InvalidInput("a number given is too large (SQLite holds integers up to 2**63 - 1)") from None
        except UnicodeEncodeError:  # an argument with bytes that are not UTF-8 (a lone surrogate)
            raise InvalidInput("a text given is not UTF-8 (it holds an undecodable byte): give UTF-8 text") from None

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        try:
            self.conn.executemany(sql, rows)
        except apsw.Error as exc:
            raise self.translate(exc) or exc from None
        except OverflowError:
            raise InvalidInput("a number given is too large (SQLite holds integers up to 2**63 - 1)") from None
        except UnicodeEncodeError:
            raise InvalidInput("a text given is not UTF-8 (it holds an undecodable byte): give UTF-8 text") from None

    def rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        cursor = self.execute(sql, params)
        try:
            names = [d[0] for d in cursor.get_description()]
        except apsw.ExecutionCompleteError:
            return []
        try:
            return [dict(zip(names, row)) for row in cursor]
        except apsw.Error as exc:  # a damaged page met after the first row
            raise self.translate(exc) or exc from None
        except UnicodeDecodeError as exc:  # flipped bytes in a text value
            raise DatabaseError(_corrupt_message(self.path, exc)) from None

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> dict[str, Any] | None:
        found = self.rows(sql, params)
        return found[0] if found else None

    def scalar(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        try:
            for row in self.execute(sql, params):
                return row[0]
        except apsw.Error as exc:
            raise self.translate(exc) or exc from None
        except UnicodeDecodeError as exc:  # flipped bytes in a text value
            raise DatabaseError(_corrupt_message(self.path, exc)) from None
        return None

    # -- many values: IN (…) lists in chunks --------------------------------
    def each_in(self, sql: str, values: Iterable[Any], params: Sequence[Any] = ()) -> Iterator[Any]:
        """The rows of `sql` run once per chunk of `values`: `sql` writes the list as
        `{marks}` and binds `params` before it. Values are taken once each, in order."""
        unique = list(dict.fromkeys(values))
        for start in range(0, len(unique), CHUNK):
            chunk = unique[start : start + CHUNK]
            yield from self.execute(sql.replace("{marks}", ",".join("?" * len(chunk))), [*params, *chunk])

    def rows_in(self, sql: str, values: Iterable[Any], params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """`each_in` with each row as a dict of column name to value."""
        unique = list(dict.fromkeys(values))
        out: list[dict[str, Any]] = []
        for start in range(0, len(unique), CHUNK):
            chunk = unique[start : start + CHUNK]
            out += self.rows(sql.replace("{marks}", ",".join("?" * len(chunk))), [*params, *chunk])
        return out

    def execute_in(self, sql: str, values: Iterable[Any], params: Sequence[Any] = ()) -> None:
        """`each_in` for a statement that returns nothing (UPDATE, DELETE)."""
        for _ in self.each_in(sql, values, params):
            pass

    def table_exists(self, name: str) -> bool:
        return bool(
            self.scalar("SELECT 1 FROM sqlite_master WHERE name = ? AND type IN ('table','view')", (name,))
        )

    # -- transactions -------------------------------------------------------
    @contextlib.contextmanager
    def atomic(self) -> Iterator[Database]:
        """One write transaction (BEGIN IMMEDIATE); nested calls become savepoints."""
        with self._lock:
            if self._depth == 0:
                if self.read_only:
                    raise self.read_only_error()
                self.execute("BEGIN IMMEDIATE")
                self._depth += 1
                try:
                    yield self
                except BaseException:
                    self._depth -= 1
                    self.conn.execute("ROLLBACK")
                    raise
                else:
                    self._depth -= 1
                    try:
                        self.execute("COMMIT")
                    except BaseException:
                        if not self.conn.in_transaction:
                            raise
                        self.conn.execute("ROLLBACK")
                        raise
            else:
                name = f"sp{next(self._savepoints)}"
                self.execute(f"SAVEPOINT {name}")
                self._depth += 1
                try:
                    yield self
                except BaseException:
                    self.conn.execute(f"ROLLBACK TO {name}")
                    self.conn.execute(f"RELEASE {name}")
                    raise
                else:
                    self.execute(f"RELEASE {name}")
                finally:
                    self._depth -= 1

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def busy(self) -> bool:
        """Whether a transaction is open on this connection (ours or one begun by hand)."""
        return self._depth > 0 or self.conn.in_transaction

    # -- meta ---------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        if not self.table_exists("meta"):
            return default
        value = self.scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return default if value is None else value

    def set_meta(self, key: str, value: str) -> None:
        self.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def reader(self) -> Database | None:
        """A second connection to the same brain.db, for reading only (None for ":memory:",
        which another connection cannot see). It sees what is committed: while this one
        has a transaction open (`busy`), its reads belong here."""
        if self.in_memory:
            return None
        return Database(self.path, self.busy_timeout_ms, readonly=True, key=self.key)

    def copy_in_memory(self, prepare: Callable[[Database], object]) -> Database:
        """A copy of this read-only brain.db in RAM (SQLite's backup API), `prepare`d (the
        schema upgraded) and then read-only like the file: how a brain.db written by an
        older maxmem is read where it cannot be upgraded in place. The file is never
        written; this connection is closed; the copy keeps the file's path for messages."""
        copy = Database(":memory:", self.busy_timeout_ms)
        try:
            if self.key is None:
                with copy.conn.backup("main", self.conn, "main") as backup:
                    backup.step()  # every page at once
            else:  # the backup API cannot copy encrypted pages into plain ones: the decrypted bytes
                copy.conn.deserialize("main", in_memory_image(self.conn.serialize("main")))
            prepare(copy)
        except BaseException:
            copy.close()
            raise
        copy.path = self.path
        copy.read_only = f"{self.read_only}; an older schema, read through an upgraded copy in memory"
        self.close()
        return copy

    def close(self) -> None:
        try:
            self.conn.close()
        except apsw.Error as exc:  # closing must never hide the real error
            log.debug("closing %s: %s", self.path, exc)
