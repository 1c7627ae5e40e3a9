"""Encrypting brain.db at rest, and back: `maxmem init --encrypt`, `encrypt`, `decrypt`.

An existing brain.db changes state through a copy, never in place:

1. a backup of it as it is (`before-encrypt-<time>.db` or `before-decrypt-…` in the
   backups folder), checked like every backup;
2. brain.db is taken for this process alone: its journal leaves WAL mode (SQLite allows
   that only when no other connection is open, so an agent's MCP server or a job still
   holding it is reported, not overtaken) and an exclusive lock keeps others out;
3. its bytes are copied beside it (under that lock, out of WAL mode, they are the whole
   database) and the copy is re-keyed (SQLite3 Multiple Ciphers' `PRAGMA rekey`, which
   cannot run in WAL mode: on the copy, never on brain.db);
4. the copy is checked: integrity, every table's row count equal to brain.db's, the
   keyword index's own integrity check, the vectors readable;
5. it is renamed over brain.db, and the file it replaced is made unreadable to any
   process that opened it meanwhile (its header zeroed), so a late writer fails loudly
   instead of writing to a file nobody reads.

Killed before 5, brain.db is untouched (the copy left beside it is removed by the next
run); after it, brain.db is the checked copy. The key is saved (key file or keyring)
before anything starts, so an encrypted brain.db never exists without its key stored.
The retention archives follow: sealed when the brain is encrypted, opened when not.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import apsw

from . import archive
from .backup import backup, backup_dir, backup_name, connect, managed_backups, rekey
from .brain import Brain
from .clock import Clock
from .config import Config
from .errors import DatabaseError, InvalidInput
from .files import secure_create
from .keys import Key, is_encrypted, key_file_path, new_secret, store_in_keyring, write_key_file
from .retention.archives import archives
from .retention.policy import load_policy
from .store.db import Database

log = logging.getLogger("maxmem")

COPY_PREFIX = "encrypt"  # .brain.db.encrypt-<pid>: the copy being made
ALONE_SECONDS = 10.0  # how long to wait for other connections to close (a recall server stopping)


@dataclass
class Conversion:
    """What `encrypt` or `decrypt` did."""

    path: str
    encrypted: bool
    memories: int
    backup: str
    key_source: str | None
    archives: list[str] = field(default_factory=list)  # archives sealed (or opened) to match
    plain_backups: list[str] = field(default_factory=list)  # backups still holding memories in clear

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def provide_key(config: Config, in_keyring: bool = False) -> Key:
    """The key to encrypt with: the one the configuration already gives, else a new
    random key saved first, to the key file (brain.key beside config.toml, or
    `key_file`) or, `in_keyring`, to the OS keyring."""
    if config.key is not None:
        return config.key
    secret = new_secret()
    if in_keyring:
        return store_in_keyring(secret)
    folder = (config.config_path or Path("config.toml")).parent
    return write_key_file(key_file_path(config.key_file, folder), secret)


def encrypt(path: Path, config: Config, in_keyring: bool = False, clock: Clock | None = None) -> Conversion:
    """Encrypt the plain brain.db at `path`, keeping a plain backup first, with the
    configured key or a new one saved first (provide_key)."""
    path = Path(path).expanduser()
    if path.is_file() and is_encrypted(path):
        raise InvalidInput(f"{path} is encrypted already")
    if not path.is_file() or path.stat().st_size == 0:
        raise InvalidInput(f"no brain.db at {path}: run  maxmem init --encrypt  for a new encrypted one")
    return _convert(path, None, provide_key(config, in_keyring), config, clock or Clock())


def create(path: Path, config: Config, in_keyring: bool = False) -> Config:
    """The configuration a new encrypted brain.db at `path` is created with (its key
    provided first); an existing plain one is refused (`maxmem encrypt` is for it)."""
    path = Path(path).expanduser()
    if path.is_file() and path.stat().st_size > 0 and not is_encrypted(path):
        raise InvalidInput(f"{path} exists and is not encrypted: run  maxmem encrypt  to encrypt it in place")
    if path.is_file() and is_encrypted(path):
        return config
    return config.with_(key=provide_key(config, in_keyring))


def decrypt(path: Path, config: Config, clock: Clock | None = None) -> Conversion:
    """Decrypt the encrypted brain.db at `path` (with the configured key), keeping an
    encrypted backup first. The key stays where it is: that backup and older ones
    need it."""
    if config.key is None:
        return _convert(path, None, None, config, clock or Clock())  # fails with how to give the key
    return _convert(path, config.key, None, config, clock or Clock())


def _convert(path: Path, key: Key | None, wanted: Key | None, config: Config, clock: Clock) -> Conversion:
    path = Path(path).expanduser()
    if not path.is_file() or path.stat().st_size == 0:
        raise InvalidInput(f"no brain.db at {path}: run  maxmem init --encrypt  for a new encrypted one")
    db = Database(path, busy_timeout_ms=config.busy_timeout_ms, key=key if key is not None else config.key)
    try:
        if wanted is not None and db.key is not None:
            raise InvalidInput(f"{path} is encrypted already")
        if wanted is None and db.key is None:
            raise InvalidInput(f"{path} is not encrypted")
        if db.read_only:
            raise db.read_only_error()
        _remove_copies(path)
        kept = backup(db, _backup_name(config, path, clock, "decrypt" if wanted is None else "encrypt"),
                      config=config, clock=clock)
        copy = path.with_name(f".{path.name}.{COPY_PREFIX}-{os.getpid()}")
        _take_alone(db)
        try:
            memories = _make_copy(db, copy, wanted)
            _swap(copy, path)
        finally:
            if db.conn.in_transaction:
                db.conn.execute("ROLLBACK")
    except BaseException:
        _remove_copies(path)
        raise
    finally:
        db.close()
    record = Conversion(str(path), wanted is not None, memories, kept.path, wanted.source if wanted else None)
    record.archives = _match_archives(path, config, wanted or db.key)
    record.plain_backups = [str(p) for p in _plain_backups(config, path)] if wanted is not None else []
    log.info("%s: %s (%d memories; backup %s)", "encrypt" if wanted else "decrypt", path, memories, kept.path)
    return record


def _backup_name(config: Config, path: Path, clock: Clock, what: str) -> Path:
    return backup_name(backup_dir(config, path), f"before-{what}", clock)


def _remove_copies(path: Path) -> None:
    """Copies left by a run killed before its rename: they hold nothing brain.db lacks."""
    for leftover in path.parent.glob(f".{path.name}.{COPY_PREFIX}-*"):
        leftover.unlink(missing_ok=True)


def _take_alone(db: Database) -> None:
    """Leave WAL mode (only possible with no other connection open) and hold an
    exclusive lock; DatabaseError naming what to stop when others keep it open."""
    deadline = time.monotonic() + min(ALONE_SECONDS, db.busy_timeout_ms / 1000)
    while True:
        try:
            mode = db.conn.execute("PRAGMA journal_mode=DELETE").fetchall()[0][0]
        except apsw.BusyError:
            mode = "wal"
        if mode == "delete":
            break
        if time.monotonic() > deadline:
            raise DatabaseError(
                f"{db.path} is open in another process (an agent's MCP server, maxmem daemon, a job): "
                "stop it and run again; nothing was changed"
            )
        time.sleep(0.2)
    db.conn.execute("BEGIN EXCLUSIVE")


def _make_copy(db: Database, copy: Path, wanted: Key | None) -> int:
    """Copy brain.db to `copy` in its new state and check it; returns its memories."""
    secure_create(copy)
    # Out of WAL mode and under the exclusive lock, the file's bytes are the database (the
    # backup API would refuse a source holding a write lock).
    with open(db.path, "rb") as source, open(copy, "wb") as target:
        shutil.copyfileobj(source, target, 1 << 20)
    conn = connect(copy, db.key)
    try:
        rekey(conn, db.key, wanted)
        conn.execute("PRAGMA journal_mode=DELETE")
    finally:
        conn.close()
    return _check_same(db, Database(copy, busy_timeout_ms=db.busy_timeout_ms, key=wanted))


def _check_same(db: Database, copy: Database) -> int:
    """The copy holds what brain.db holds: DatabaseError if not. Returns its memories."""
    try:
        if copy.scalar("PRAGMA integrity_check") != "ok":
            raise DatabaseError(f"the new copy of {db.path} fails its integrity check: nothing was changed")
        tables = [r["name"] for r in db.rows("SELECT name FROM sqlite_master WHERE type = 'table' "
                                             "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name")]
        for name in tables:
            query = f'SELECT count(*) FROM "{name}"'
            if db.scalar(query) != copy.scalar(query):
                raise DatabaseError(f"the new copy of {db.path} differs in {name}: nothing was changed")
        if copy.table_exists("memories_fts"):
            copy.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")
        if copy.table_exists("memories_vec"):
            copy.scalar("SELECT count(*) FROM memories_vec")
        return int(copy.scalar("SELECT count(*) FROM memories") or 0)
    finally:
        copy.close()


def _swap(copy: Path, path: Path) -> None:
    """Rename the copy over brain.db; zero the header of the file it replaces."""
    with open(copy, "rb+") as handle:
        os.fsync(handle.fileno())
    old = os.open(path, os.O_RDWR)
    try:
        os.replace(copy, path)
        archive.sync_folder(path.parent)
        os.pwrite(old, bytes(100), 0)  # a process that opened it meanwhile reads "not a database"
        os.fsync(old)
    finally:
        os.close(old)


def _match_archives(path: Path, config: Config, key: Key | None) -> list[str]:
    """Seal the retention archives of a brain now encrypted (with its key), or open them
    for one now plain; the archives changed."""
    if key is None:
        return []
    changed = []
    with Brain.open(path, embedder="none", config=config.with_(key=key), check_embedder=False) as brain:
        sealing = brain.db.key
        for file, _ in archives(brain, load_policy(config.retention)):
            reading = archive.read(file, key=key)
            if reading.complete and reading.sealed != (sealing is not None):
                archive.write(file, reading.records, replace=True, key=sealing)
                changed.append(str(file))
    return changed


def _plain_backups(config: Config, path: Path) -> list[Path]:
    return [p for p in managed_backups(backup_dir(config, path)) if not is_encrypted(p)]

