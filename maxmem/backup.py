"""Backups of brain.db that stay consistent while other processes write, and restore.

Copying brain.db with `cp` while it is open in WAL mode can tear it: the newest
commits live in brain.db-wal until a checkpoint moves them, and a checkpoint may
rewrite pages of brain.db while `cp` is half way through. `backup()` uses SQLite's
online backup API instead: it copies every page as of one read snapshot (writers
carry on into the WAL meanwhile), checks the copy with `PRAGMA integrity_check`,
makes it a self-contained file (journal_mode=DELETE, no -wal beside it), and only
then renames it into place (0600, in a 0700 folder) and drops the oldest rotated
backups beyond `keep`. A copy that fails its check never replaces a good one.

`restore()` checks a backup (integrity, schema version, embedder identity against
the configuration) in a staging copy, keeps the current brain.db aside as a backup,
and copies the staging copy into the live database through the same API, under
SQLite's locks, so other processes see either the old or the restored memories.

The backup of an encrypted brain.db is encrypted with the same key (the copy is keyed
before the first page goes in). A restored backup takes the live brain.db's state: a
plain backup restored into an encrypted brain is encrypted in its staging copy first
(the backup API copies pages only between databases of one kind), and the other way.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import apsw

from .brain import Brain
from .clock import Clock
from .config import Config
from .errors import DatabaseError, EncryptionKeyError, InvalidInput, MaxmemError
from .files import secure_create, why_not_made
from .jobs.runs import record_run
from .keys import HOW_TO_GIVE, Key, is_encrypted
from .store.db import Database, apply_key

log = logging.getLogger("maxmem")

# brain-20261130T120000.123Z.db, before-restore-….db for the copy restore keeps aside, and
# before-encrypt-….db / before-decrypt-….db for the copy `maxmem encrypt` / `decrypt` keeps.
NAME = re.compile(r"^(?:brain|before-restore|before-encrypt|before-decrypt)-\d{8}T\d{6}\.\d{3}Z(?:-\d+)?\.db$")
ROTATED = re.compile(r"^brain-\d{8}T\d{6}\.\d{3}Z(?:-\d+)?\.db$")


@dataclass
class BackupResult:
    path: str
    memories: int
    size_bytes: int
    removed: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RestoreResult:
    restored_from: str
    path: str
    memories: int
    kept_aside: str | None
    embedder: str | None
    method: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def backup_dir(config: Config, db_path: Path) -> Path:
    """`[backup] dir` from the config, else a `backups` folder beside brain.db."""
    return config.backup.dir or db_path.parent / "backups"


def list_backups(directory: Path) -> list[Path]:
    """The rotated backups in `directory`, oldest first."""
    if not directory.is_dir():
        return []
    found = [p for p in directory.iterdir() if ROTATED.match(p.name) and p.is_file()]
    return sorted(found, key=lambda p: (p.stat().st_mtime_ns, p.name))


def managed_backups(directory: Path) -> list[Path]:
    """Every backup maxmem made in `directory` (rotated ones and those restore kept aside)."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if NAME.match(p.name) and p.is_file())


def backup_name(directory: Path, prefix: str, clock: Clock) -> Path:
    """A name in `directory` no file has yet: `<prefix>-<UTC time to the ms>.db`, with
    `-1`, `-2`, … added when two copies are made within one millisecond."""
    now = clock.now()
    stamp = now.strftime("%Y%m%dT%H%M%S.") + f"{now.microsecond // 1000:03d}Z"
    target = directory / f"{prefix}-{stamp}.db"
    number = 1
    while target.exists():
        target = directory / f"{prefix}-{stamp}-{number}.db"
        number += 1
    return target


def _private_dir(directory: Path, ours: bool) -> None:
    """Create the folder 0700; tighten it when it is maxmem's own backups folder."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if ours and stat.S_IMODE(directory.stat().st_mode) & 0o077:
            os.chmod(directory, 0o700)
    except OSError as exc:
        raise DatabaseError(f"cannot create {directory}: {why_not_made(directory / '-', exc)}") from None


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def _copy_pages(dest: apsw.Connection, source: apsw.Connection, what: str) -> None:
    """All pages of `source` into `dest` in one step: one consistent read snapshot."""
    for attempt in range(20):
        try:
            with dest.backup("main", source, "main") as job:
                job.step(-1)
            return
        except (apsw.BusyError, apsw.LockedError):
            # A writer in WAL mode never blocks this reader; a checkpoint or a
            # rollback-journal writer can, briefly.
            import time

            time.sleep(min(1.0, 0.05 * 2**attempt))
        except (apsw.CorruptError, apsw.NotADBError) as exc:
            raise DatabaseError(f"cannot copy {what}: {exc}: run  maxmem doctor") from None
        except apsw.FullError:
            raise DatabaseError(f"cannot copy {what}: the disk the copy goes to is full: free space "
                                "(or give another folder) and try again") from None
        except apsw.IOError:  # the copy's writes failed: SQLite's own message says "not an error"
            raise DatabaseError(f"cannot copy {what}: writing the copy failed (the disk full, or the file "
                                "larger than it allows?): free space and try again") from None
        except apsw.Error as exc:
            raise DatabaseError(f"cannot copy {what}: {exc.__class__.__name__}: {exc}") from None
    raise DatabaseError(f"{what} stayed locked: try the backup again")


def _check_copy(conn: apsw.Connection, what: str) -> int:
    """integrity_check of a copy; returns its number of memories."""
    try:
        problems = [row[0] for row in conn.execute("PRAGMA integrity_check(5)")]
    except (apsw.CorruptError, apsw.NotADBError, apsw.IOError) as exc:
        raise DatabaseError(f"{what} fails the integrity check ({exc}): not used") from None
    if problems != ["ok"]:
        first = " ".join(str(problems[0]).replace("*** in database main ***", "").split())
        raise DatabaseError(f"{what} fails the integrity check ({first}): not used")
    has_memories = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memories'"
    ).fetchall()
    if not has_memories:
        raise InvalidInput(f"{what} is an SQLite file but not a brain.db (no memories table)")
    count = conn.execute("SELECT count(*) FROM memories").fetchall()[0][0]
    return int(count) if isinstance(count, int) else 0


def connect(path: Path, key: Key | None, flags: int | None = None) -> apsw.Connection:
    """A plain apsw connection to `path`, keyed with `key` (None: a plain file)."""
    conn = apsw.Connection(str(path), flags=flags) if flags is not None else apsw.Connection(str(path))
    if key is not None:
        apply_key(conn, key)
    return conn


def _fresh_temporary(target: Path) -> Path:
    """A new empty 0600 file beside `target`, its name unguessable and made with O_EXCL:
    in a folder others may write to, no one can put a link in its place beforehand."""
    try:
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.tmp-", dir=target.parent)
    except OSError as exc:
        raise DatabaseError(f"cannot write {target}: {exc.strerror}") from None
    os.close(fd)
    return Path(name)


def _write_copy(source: apsw.Connection, target: Path, what: str, key: Key | None = None) -> int:
    """Copy `source` to `target` (0600), checked and self-contained; returns memories.
    `key`: the source's key, which the copy is encrypted with too (None: both plain)."""
    tmp = _fresh_temporary(target)
    try:
        dest = connect(tmp, key)
        try:
            _copy_pages(dest, source, what)
            dest.execute("PRAGMA journal_mode=DELETE")
            memories = _check_copy(dest, f"the copy of {what}")
        finally:
            dest.close()
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, target)
        _fsync_dir(target.parent)
        return memories
    except OSError as exc:  # the disk filled up or the folder vanished
        _remove(tmp)
        raise DatabaseError(f"cannot write {target}: {exc.strerror}") from None
    except BaseException:
        _remove(tmp)
        raise


def backup(
    db: Database,
    dest: Path | str | None = None,
    config: Config | None = None,
    keep: int | None = None,
    clock: Clock | None = None,
) -> BackupResult:
    """Write a consistent, checked copy of the open database `db`.

    dest None or a folder: a new `brain-<UTC time>.db` there (default `[backup] dir`,
    else `backups/` beside brain.db), keeping the newest `keep` (default `[backup] keep`,
    7). dest a file name: exactly that file, which must not exist yet; no rotation.
    """
    config = config or Config()
    clock = clock or Clock()
    keep = keep if keep is not None else config.backup.keep
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise InvalidInput(f"keep must be a whole number ≥ 1, not {keep!r}")
    rotate = True
    if dest is None:
        directory = backup_dir(config, db.path)
        _private_dir(directory, ours=True)
        target = backup_name(directory, "brain", clock)
    else:
        wants_folder = str(dest).endswith(("/", os.sep))  # before Path() drops the slash
        dest = Path(dest).expanduser()
        if dest.is_dir() or wants_folder:
            _private_dir(dest, ours=False)
            target = backup_name(dest, "brain", clock)
        else:
            rotate = False
            target = dest
            if target.exists() or Path(f"{target}-wal").exists():
                raise InvalidInput(f"{target} already exists: give a new file name or a folder")
            _private_dir(target.parent, ours=False)
    if target.resolve() == db.path.resolve():
        raise InvalidInput("the backup cannot be brain.db itself")
    try:
        memories = _write_copy(db.conn, target, str(db.path), db.key)
    except MaxmemError as exc:
        record_run(db, "backup", False, str(exc), clock)
        raise
    removed: list[str] = []
    if rotate:
        for old in list_backups(target.parent)[:-keep]:
            if old != target:
                old.unlink()
                removed.append(str(old))
    size = target.stat().st_size
    record_run(db, "backup", True, f"{target} ({memories} memories, {size / 1e6:.1f} MB)", clock)
    log.debug("backup: %s (%d memories)", target, memories)  # the caller prints or logs it
    return BackupResult(str(target), memories, size, removed)


def create_backup(
    db_path: Path | str,
    dest: Path | str | None = None,
    config: Config | None = None,
    keep: int | None = None,
    clock: Clock | None = None,
) -> BackupResult:
    """`maxmem backup`: open brain.db at `db_path` (which must exist) and back it up."""
    config = config or Config()
    path = Path(db_path).expanduser()
    if not path.exists():
        raise DatabaseError(f"{path} does not exist: nothing to back up (check --db)")
    db = Database(path, busy_timeout_ms=config.busy_timeout_ms, key=config.key)
    try:
        return backup(db, dest, config=config, keep=keep, clock=clock)
    finally:
        db.close()


# -- restore ---------------------------------------------------------------------

def _open_backup(source: Path, key: Key | None) -> apsw.Connection:
    """The backup, open for reading (keyed when it is encrypted)."""
    source_key = key if is_encrypted(source) else None
    if source_key is None and is_encrypted(source):
        raise EncryptionKeyError(f"{source} is encrypted and no key was given: {HOW_TO_GIVE}")
    try:
        conn = connect(source, source_key, apsw.SQLITE_OPEN_READONLY)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
        return conn
    except apsw.Error as exc:
        if source_key is not None and isinstance(exc, apsw.NotADBError):
            raise EncryptionKeyError(f"{source} does not open with the key from {source_key.source} (a wrong key)"
                                     ) from None
        raise InvalidInput(
            f"{source} is not a readable brain.db backup ({exc.__class__.__name__}: {exc})"
        ) from None


def _live_is_healthy(path: Path, config: Config) -> Database | None:
    """The live database, open, when it passes quick_check; None when it cannot be used."""
    try:
        db = Database(path, busy_timeout_ms=config.busy_timeout_ms, key=config.key)
    except MaxmemError as exc:
        log.warning("restore: %s cannot be opened (%s); it is moved aside", path, exc)
        return None
    try:
        if db.scalar("PRAGMA quick_check") == "ok":
            return db
        log.warning("restore: %s fails quick_check; it is moved aside", path)
    except MaxmemError as exc:
        log.warning("restore: %s is damaged (%s); it is moved aside", path, exc)
    db.close()
    return None


def restore(
    source: Path | str,
    db_path: Path | str,
    config: Config | None = None,
    embedder: Any = None,
    force: bool = False,
    clock: Clock | None = None,
) -> RestoreResult:
    """Replace brain.db at `db_path` with the backup `source`, after checking it.

    Checks, in a staging copy beside brain.db: integrity, that it is a brain.db whose
    schema this maxmem knows, and that its vectors come from the configured embedder
    (`force` skips only the embedder check; run `maxmem reindex` afterwards). The
    current brain.db is kept aside first, as `before-restore-<time>.db` in the backups
    folder (or, when it is too damaged to copy, renamed there as it is).
    """

    config = config or Config()
    clock = clock or Clock()
    source = Path(source).expanduser()
    live = Path(db_path).expanduser()
    if not source.is_file():
        raise InvalidInput(f"{source} is not a file: give a backup made by  maxmem backup")
    if live.exists() and source.resolve() == live.resolve():
        raise InvalidInput("the backup to restore cannot be brain.db itself")
    _private_dir(live.parent, ours=False)
    staging = live.with_name(f".{live.name}.restore-{os.getpid()}")
    _remove(staging)
    try:
        source_key = config.key if is_encrypted(source) else None
        reader = _open_backup(source, config.key)
        try:
            secure_create(staging)
            conn = connect(staging, source_key)
            try:
                _copy_pages(conn, reader, str(source))
                _check_copy(conn, str(source))
                rekey(conn, source_key, _wanted_key(live, source_key, config.key))
            finally:
                conn.close()
        finally:
            reader.close()
        # Opening as a Brain migrates the staging copy and checks the embedder.
        try:
            brain = Brain.open(staging, embedder=embedder, config=config, clock=clock,
                               check_embedder=not force)
        except DatabaseError as exc:
            if "holds vectors from" in str(exc):
                in_use = re.search(r"the embedder in use is (\S+): ", str(exc))
                raise DatabaseError(
                    f"{source} holds vectors from {_recorded(staging, config.key)}, but the configured embedder is "
                    f"{in_use.group(1) if in_use else 'another'}: restore with that --embedder, "
                    "or pass --force and run  maxmem reindex"
                ) from None
            raise
        with brain:
            memories = brain.stats()["memories"]
            used = brain.stats()["embedder"] if brain.embedder else None
        aside, method = _replace(staging, live, config, clock)
    finally:
        _remove(staging)
    db = Database(live, busy_timeout_ms=config.busy_timeout_ms, key=config.key)
    try:
        record_run(db, "restore", True, f"from {source}", clock)
    finally:
        db.close()
    return RestoreResult(str(source), str(live), memories, aside, used, method)


def _wanted_key(live: Path, source_key: Key | None, key: Key | None) -> Key | None:
    """The key the restored brain.db is to have: the live one's state (encrypted with the
    configured key, or plain); where there is no live brain.db, or no key for it, the
    backup's own."""
    if live.exists() and live.stat().st_size > 0:
        if not is_encrypted(live):
            return None
        if key is not None:
            return key
    return source_key


def rekey(conn: apsw.Connection, key: Key | None, wanted: Key | None) -> None:
    """Re-encrypt the database of `conn` (keyed with `key`, None: plain) with `wanted`
    (None: decrypt it), page by page in one transaction. SQLite3 Multiple Ciphers cannot
    rekey in WAL mode: the file is left in rollback-journal mode (self-contained)."""
    if key == wanted or (key is not None and wanted is not None and key.secret == wanted.secret):
        return
    conn.execute("PRAGMA journal_mode=DELETE")
    if wanted is not None:
        conn.pragma("cipher", wanted.cipher)
    conn.pragma("rekey", wanted.pragma() if wanted is not None else "")


def _recorded(path: Path, key: Key | None) -> str:
    db = Database(path, key=key)
    try:
        return db.get_meta("embedder") or "no embedder"
    finally:
        db.close()


def _replace(staging: Path, live: Path, config: Config, clock: Clock) -> tuple[str | None, str]:
    """Put the staging copy in place of `live`; returns (where the old one went, how)."""
    directory = backup_dir(config, live)
    if not live.exists() or live.stat().st_size == 0:
        _remove(live)
        os.replace(staging, live)
        _fsync_dir(live.parent)
        return None, "moved"
    current = _live_is_healthy(live, config)
    _private_dir(directory, ours=True)
    aside = backup_name(directory, "before-restore", clock)
    if current is not None:
        try:
            _write_copy(current.conn, aside, str(live), current.key)
            conn = connect(staging, current.key)
            try:
                # Into the live file under SQLite's locks: other processes wait, then
                # read the restored pages; their -wal stays consistent with the file.
                _copy_pages(current.conn, conn, str(staging))
            finally:
                conn.close()
            return str(aside), "backup-api"
        finally:
            current.close()
    # Too damaged to copy: move the file (and its -wal, -shm) aside as they are.
    for suffix in ("", "-wal", "-shm"):
        part = Path(f"{live}{suffix}")
        if part.exists():
            shutil.move(str(part), f"{aside}{suffix}")
            os.chmod(f"{aside}{suffix}", 0o600)
    os.replace(staging, live)
    _fsync_dir(live.parent)
    return str(aside), "moved"
