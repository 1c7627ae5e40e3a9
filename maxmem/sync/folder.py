"""Folder sync between your own machines: `maxmem sync folder DIR`.

DIR is a folder a sync tool already shares (Syncthing, Dropbox, iCloud Drive, a
network share, a git checkout). Each machine writes only its own files there, in its
own subfolder `DIR/<machine id>/00000001.mxsync, 00000002.mxsync, …`, each sealed
with the user's key (sync/changefiles.py), and reads the others'. brain.db itself never
travels and no machine touches another's database.

One run (`sync`):
1. the folder is checked (a folder, writable), the key read (or made on first use),
   this machine's id settled (`identify`), the folder listed, and every file's header
   read: a file sealed with another key stops the run before anything is applied.
   When its subfolder shows that another machine writes under its id too (`twin`: a
   copy of the whole config folder), this machine takes a new id (`leave`) and its next
   file holds everything it carries (`resend`);
2. what was written here since the last run is stamped (ledger.absorb) and sent as
   new files: written to a temporary, fsynced, renamed into place, recorded in
   brain.db in the same transaction that moved the ledger's cursor;
3. each file not applied yet (another machine's, a conflict copy, or one of this
   machine's that its brain.db does not know of, after a restore) is decrypted and
   merged (ledger.merge) in one transaction, which also records the file as applied.
   A file still being delivered or from a newer maxmem is skipped and named; nothing
   of it is applied. A damaged one (it does not authenticate, or holds more than a
   change file may) is quarantined, and so is a record of a file that is not what the
   format holds (ledger.refusal): named once, kept in brain.db for `sync status` and
   `maxmem doctor` until the file leaves the folder or changes; the rest of the file
   is applied. A file with records stamped ahead of this machine's clock is pending:
   merged again at each run until they are not ahead. A conflict copy a sync tool made is merged like any
   file: records merge to the same brain whatever their order or number;
4. after a forget (here or arriving), this machine rewrites its own files without
   the forgotten memories' records, so the folder stops holding their text too;
5. when more than half of this machine's records are dead (superseded by a later
   record of the same memory, of memories expired or forgotten here, or older than
   another machine's later write), or on `--repack`, it repacks its files
   (`repack_files`): new files hold the memories it carries as they are now and its
   tombstones (ledger.carried), then its older files are deleted.

A kill at any point loses nothing and applies nothing twice: an unrecorded file is
merged again (a no-op), a temporary is removed by the next run, a rolled-back send is
sent again under the next number. A repack's new files are whole on disk before
any old file is deleted, and hold nothing a receiver of the old ones lacks: a
receiver that reads both sets, or the new ones alone (the old ones' deletion arriving
first), gets the same brain.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import tomlkit

from ..brain import Brain
from ..config import Config, config_dir
from ..embeddings import identity
from ..errors import EmbeddingError, InvalidInput, MaxmemError
from ..files import open_regular, read_regular, write_durable, write_kept, write_private
from ..jobs.runs import record_run
from ..settings import SyncFolderSettings
from ..store.conflicts import MACHINE_META, quarantined, set_quarantined
from ..store.db import Database
from ..store.hlc import wall_ms
from . import changefiles, ledger

log = logging.getLogger("maxmem")

JOB = "sync-folder"
KEY_FILE = "sync.key"
MACHINE_FILE = "sync.machine"
MACHINE_ID = re.compile(r"^[0-9a-f]{16}$")
CANONICAL = re.compile(r"^(\d{8,})" + re.escape(changefiles.SUFFIX) + "$")
TEMPORARY = re.compile(r"^\..+\.(\d+)\.tmp$")
FILE_RECORDS = 2000  # records per file: a first sync of a big brain writes several
# and text per file, and lists and objects ('[' and '{' of the text too): a quarter of
# what a reader accepts (changefiles.MAX_JSON_BYTES, MAX_CONTAINERS)
FILE_TEXT_BYTES = changefiles.MAX_JSON_BYTES // 4
FILE_CONTAINERS = changefiles.MAX_CONTAINERS // 4

RECORDED_SQL = "SELECT path, sha256, size, mtime_ns FROM sync_files"
RECORD_SQL = """
INSERT INTO sync_files (path, machine, number, sha256, size, mtime_ns, records, written, applied_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (path) DO UPDATE SET machine = excluded.machine, number = excluded.number,
    sha256 = excluded.sha256, size = excluded.size, mtime_ns = excluded.mtime_ns,
    records = excluded.records, written = excluded.written, applied_at = excluded.applied_at
"""
RESEALED_SQL = "UPDATE sync_files SET sha256 = ?, size = ?, mtime_ns = ? WHERE path = ?"
RECORDS_SQL = "UPDATE sync_files SET records = ? WHERE path = ?"
TOUCH_SQL = "UPDATE sync_files SET mtime_ns = ? WHERE path = ?"
LAST_NUMBER_SQL = "SELECT coalesce(max(number), 0) FROM sync_files WHERE machine = ?"
OWN_FILES_SQL = "SELECT path, sha256, size, mtime_ns, records FROM sync_files WHERE machine = ?"
OTHERS_FILES_SQL = "SELECT path FROM sync_files WHERE machine != ?"
DROP_FILE_SQL = "DELETE FROM sync_files WHERE path = ?"
REPACK_META = "sync_repack"  # what this machine's last repack did (JSON)
LEFT_META = "sync_left"  # the ids this machine left because another machine wrote as them (JSON)
PENDING_META = "sync_pending"  # files with records ahead of this machine's clock: {path: why} (JSON)
REWRITING_META = "sync_rewriting"  # an own file being rewritten in place: {"path", "sha256"} (JSON), else ""
OWN_WRITTEN_SQL = "SELECT path, number, sha256, size, mtime_ns FROM sync_files WHERE machine = ? AND written"
MACHINES_SQL = """
SELECT machine, count(*) AS files, max(number) AS last_file, sum(records) AS records,
       max(written) AS written, max(applied_at) AS last_at
FROM sync_files GROUP BY machine ORDER BY machine
"""


class FolderError(MaxmemError):
    """The sync folder is missing, not a folder, or not writable."""


# -- settings -------------------------------------------------------------------------

@dataclass(frozen=True)
class FolderSettings:
    """[sync.folder] and where this machine keeps its key and id (the config folder)."""

    folder: Path | None
    key_path: Path
    machine_path: Path
    vectors: bool = SyncFolderSettings.vectors
    interval_minutes: int = SyncFolderSettings.interval_minutes

    @classmethod
    def from_config(cls, config: Config, env: Mapping[str, str], folder: Path | None = None) -> FolderSettings:
        """[sync.folder] (`folder` instead of its dir when given), with the key and the
        machine id in the config folder `env` names."""
        home = config_dir(env)
        chosen = Path(folder).expanduser() if folder is not None else config.sync_folder.dir
        return cls(chosen, home / KEY_FILE, home / MACHINE_FILE, config.sync_folder.vectors,
                   config.sync_folder.interval_minutes)


def configured(config: Config) -> bool:
    return config.sync_folder.dir is not None


def record_folder(config_path: Path, folder: Path) -> bool:
    """Write `[sync.folder] dir` into the config file (keeping its comments); False when
    it already says so."""
    text = config_path.read_text(encoding="utf-8") if config_path.exists() else ""
    doc = tomlkit.parse(text)
    sync = doc.get("sync")
    if sync is None:
        sync = tomlkit.table(is_super_table=True)
        doc["sync"] = sync
    table = sync.get("folder")
    if table is None:
        table = tomlkit.table()
        sync["folder"] = table
    if table.get("dir") == str(folder):
        return False
    table["dir"] = str(folder)
    write_kept(config_path, tomlkit.dumps(doc))
    return True


# -- the machine and the key ----------------------------------------------------------

def identify(db: Database, machine_path: Path) -> tuple[str, list[str]]:
    """This machine's id, and what to tell the user about it.

    The id lives in the config folder (`sync.machine`) and is copied into brain.db's
    meta. The config folder's copy is this machine's: when brain.db names another
    machine, brain.db was copied here from that machine (or restored from its backup),
    and this machine goes on under its own id; its records merge with the copy's,
    nothing is duplicated. A config folder without an id gets a new one.
    """
    stored = db.get_meta(MACHINE_META)
    here = _read_machine(machine_path)
    notes: list[str] = []
    if stored and here is not None and here != stored and here in {left.machine for left in departures(db)}:
        _write_machine(machine_path, stored)  # `leave` was cut short before the config folder heard of it
        return stored, notes
    if here is None:
        here = _write_machine(machine_path, os.urandom(8).hex())
        if stored:
            notes.append(f"brain.db synced as machine {stored} before, and this config folder has no machine id: "
                         f"brain.db was copied here from another machine; this machine now syncs as {here}")
    elif stored and stored != here:
        notes.append(f"brain.db synced as machine {stored}, but this machine is {here} ({machine_path}): "
                     f"brain.db was copied here from another machine; it goes on syncing as {here}")
    if stored != here:
        with db.atomic():
            db.set_meta(MACHINE_META, here)
    return here, notes


def _write_machine(path: Path, machine: str) -> str:
    write_private(path, lambda handle: handle.write(machine + "\n"))
    return machine


@dataclass(frozen=True)
class Departure:
    """An id this machine left: another machine wrote as it (`twin` names the evidence)."""

    machine: str
    at: str
    evidence: str
    resent: bool = False  # this machine's files hold what it carries under its new id


def departures(db: Database) -> list[Departure]:
    text = db.get_meta(LEFT_META)
    return [Departure(**item) for item in json.loads(text)] if text else []


def twin(db: Database, machine: str, found: Sequence[Found]) -> str | None:
    """The file of the folder that shows another machine writes as `machine` too (its
    config folder is a copy of this one's), or None.

    The evidence is in this machine's subfolder: a file this brain wrote whose bytes
    changed since (a sync tool replaced it with the other machine's file of the same
    number), or another file of a number this brain wrote, with other bytes (a sync
    tool's conflict copy). A file of a number this brain never wrote is none: it is this
    machine's own, written before its brain.db was restored from a backup, and merged."""
    written = db.rows(OWN_WRITTEN_SQL, (machine,))
    by_path = {row["path"]: row for row in written}
    by_number = {row["number"]: row for row in written}
    for item in found:
        if item.header is None or item.header.machine != machine:
            continue
        row = by_path.get(item.rel)
        if row is not None and (item.size, item.mtime_ns) == (row["size"], row["mtime_ns"]):
            continue
        row = row or by_number.get(item.header.number)
        if row is not None and _digest(item.path) not in (None, row["sha256"]):
            return item.rel
    return None


def _digest(path: Path) -> str | None:
    """The file's SHA-256, read a MiB at a time; None when it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open_regular(path) as handle:  # a FIFO swapped in since the scan: never waited on
            while chunk := handle.read(1024 * 1024):
                digest.update(chunk)
    except (OSError, InvalidInput):
        return None
    return digest.hexdigest()


def leave(brain: Brain, machine_path: Path, machine: str, evidence: str) -> tuple[str, str]:
    """A new id for this machine, which leaves `machine` to the other machine that
    writes as it; and the line that tells the user. brain.db records the departure
    before the config folder gets the new id, so that a kill between the two is
    finished by `identify`; `resend` then sends everything this machine carries."""
    db = brain.db
    new = os.urandom(8).hex()
    with db.atomic():
        left = [*departures(db), Departure(machine, ledger.now_iso(brain), evidence)]
        db.set_meta(LEFT_META, json.dumps([asdict(item) for item in left]))
        db.set_meta(MACHINE_META, new)
    _write_machine(machine_path, new)
    line = (f"another machine writes as {machine} (a copy of this machine's config folder?): "
            f"this machine now syncs as {new}")
    log.warning("sync folder: %s (%s)", line, evidence)
    return new, line


def _read_machine(path: Path) -> str | None:
    try:
        text = read_regular(path, 4096, "a machine id").decode("utf-8", "replace").strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FolderError(f"cannot read {path}: {exc.strerror}") from None
    except InvalidInput as exc:
        raise FolderError(f"{exc} (delete it and sync again: a new id is made)") from None
    if not MACHINE_ID.match(text):
        raise FolderError(f"{path} does not hold a machine id: delete it and sync again (a new id is made)")
    return text


def key_for(settings: FolderSettings, key_file: Path | None, others: bool) -> tuple[bytes, bytes | None]:
    """(the key, the key it replaced when --key-file brought another one).

    Made on first use, unless the folder already holds other machines' files: then
    this machine must join with their key (--key-file), not start a second one."""
    path = settings.key_path
    if key_file is not None:
        given = changefiles.read_key(key_file)
        old = changefiles.read_key(path) if path.exists() else None
        if old != given and key_file.resolve() != path.resolve():
            changefiles.write_key(path, given)
        return given, old if old != given else None
    if path.exists():
        return changefiles.read_key(path), None
    if others:
        raise changefiles.SyncKeyError(
            f"{settings.folder} already holds other machines' files and this machine has no sync key: copy "
            f"sync.key from one of them, then run  maxmem sync folder {settings.folder} --key-file FILE")
    return changefiles.make_key(path), None


# -- the folder -----------------------------------------------------------------------

@dataclass(frozen=True)
class Found:
    """A file of the folder: where, its size and time, its header (or why it has none)."""

    path: Path
    rel: str
    size: int
    mtime_ns: int
    header: changefiles.Header | None
    problem: changefiles.ChangeFileError | None = None

    @property
    def copy(self) -> bool:
        """A sync tool's conflict copy (or any other name than the writer's own)."""
        return not CANONICAL.match(self.path.name)


def check_folder(folder: Path | None) -> Path:
    if folder is None:
        raise InvalidInput("no sync folder: give one (maxmem sync folder DIR) or set dir under [sync.folder]")
    if not folder.is_dir():
        raise FolderError(f"{folder} is not a folder: give the folder your sync tool shares (create it first)")
    return folder


def own_folder(folder: Path, machine: str) -> Path:
    """This machine's subfolder, made and checked writable (FolderError, one line)."""
    mine = folder / machine
    try:
        mine.mkdir(mode=0o700, exist_ok=True)
        probe = mine / f".probe.{os.getpid()}.tmp"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise FolderError(f"{folder} is not writable ({exc.strerror}): check its permissions, or that the "
                          "share is mounted read-write") from None
    return mine


def remove_temporaries(mine: Path) -> None:
    """Temporaries of writes that were killed (their process is gone)."""
    for path in mine.iterdir():
        found = TEMPORARY.match(path.name)
        if found and not _alive(int(found.group(1))):
            path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def scan(folder: Path) -> tuple[list[Found], list[str]]:
    """The sync files of the folder with their headers, and the names of what else is
    there (ignored). Dot-files (temporaries, a sync tool's own) are passed over."""
    found: list[Found] = []
    foreign: list[str] = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if not (entry.is_dir() and MACHINE_ID.match(entry.name)):
            foreign.append(entry.name)
            continue
        for path in sorted(entry.iterdir()):
            if path.name.startswith("."):
                continue
            rel = f"{entry.name}/{path.name}"
            if not path.is_file() or not path.name.endswith(changefiles.SUFFIX):
                foreign.append(rel)
                continue
            found.append(_examine(path, rel))
    return found, foreign


def _examine(path: Path, rel: str) -> Found:
    try:
        with open_regular(path) as handle:  # a FIFO swapped in since the scan: never waited on
            info = os.fstat(handle.fileno())
            head = handle.read(changefiles.HEADER.size)
    except OSError as exc:
        return Found(path, rel, 0, 0, None, changefiles.Damaged(f"cannot read it: {exc.strerror}"))
    except InvalidInput as exc:
        return Found(path, rel, 0, 0, None, changefiles.Damaged(str(exc)))
    try:
        return Found(path, rel, info.st_size, info.st_mtime_ns, changefiles.read_header(head))
    except changefiles.ChangeFileError as exc:
        return Found(path, rel, info.st_size, info.st_mtime_ns, None, exc)


# -- one run --------------------------------------------------------------------------

@dataclass
class Repack:
    """What one repack of this machine's files did."""

    at: str
    files_before: int
    bytes_before: int
    records_before: int
    files_after: int
    bytes_after: int
    records_after: int
    seconds: float
    clock: int  # this machine's clock then: its new files hold every write it had seen

    def summary(self) -> str:
        return (f"repacked this machine's {self.files_before} file(s), {self.bytes_before:,} bytes, into "
                f"{self.files_after}, {self.bytes_after:,} bytes")


@dataclass
class FolderReport:
    """What one `sync` did."""

    folder: str
    machine: str
    sent_files: int = 0
    sent_records: int = 0
    applied_files: int = 0
    machines: list[str] = field(default_factory=list)  # whose files were applied
    added: int = 0
    updated: int = 0
    forgotten: int = 0
    conflicts: int = 0
    vectors: int = 0
    copies: int = 0  # conflict copies merged
    repacked: int = 0  # own files rewritten without forgotten memories
    repack: Repack | None = None  # this machine's files repacked
    skipped: list[str] = field(default_factory=list)  # files not applied (yet), each with why
    quarantined: list[str] = field(default_factory=list)  # files or records refused for good, each with why
    pending: list[str] = field(default_factory=list)  # files with records ahead of this clock, each with why
    failures: list[str] = field(default_factory=list)  # the skipped that need attention
    foreign: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        line = (f"sync folder: sent {self.sent_files} file(s) ({self.sent_records} changes); applied "
                f"{self.applied_files} file(s) from {len(set(self.machines))} machine(s): {self.added} added, "
                f"{self.updated} updated, {self.forgotten} forgotten, {self.conflicts} conflict(s)")
        extra = [f"{self.copies} conflict copies merged" if self.copies else "",
                 f"{len(self.skipped)} file(s) skipped" if self.skipped else "",
                 f"{len(self.quarantined)} file(s) quarantined" if self.quarantined else "",
                 f"{len(self.pending)} file(s) pending" if self.pending else "",
                 self.repack.summary() if self.repack else ""]
        return line + "".join(f"; {e}" for e in extra if e) + f"; {self.seconds:.2f} s"

    def lines(self) -> list[str]:
        """What the user should read besides the summary, one line each."""
        out = [*self.notes, *self.skipped, *self.quarantined, *self.pending]
        if self.foreign:
            shown = ", ".join(self.foreign[:5]) + (" …" if len(self.foreign) > 5 else "")
            out.append(f"ignored {len(self.foreign)} file(s) in {self.folder} that are not maxmem's: {shown}")
        # A file's name (another machine's, or anyone's who can write the folder) may hold a
        # line break: shown as \x0a, it cannot start a line of its own that reads as maxmem's.
        return [line.replace("\n", "\\x0a") for line in out]


@dataclass
class Run:
    """What a run carries from step to step."""

    brain: Brain
    settings: FolderSettings
    folder: Path
    mine: Path
    machine: str
    key: bytes
    report: FolderReport
    embedder: str | None  # vectors travel to and from a brain of this embedder
    forgotten: set[str] = field(default_factory=set)
    left: tuple[str, ...] = ()  # the ids this machine wrote as before (`leave`)

    @property
    def ids(self) -> list[str]:
        """Every id this machine wrote as, the current one first: it carries what it wrote under each."""
        return [self.machine, *self.left]


def sync(brain: Brain, settings: FolderSettings, key_file: Path | None = None,
         repack: bool | None = None) -> FolderReport:
    """Send this machine's changes to the folder and merge the other machines' (see
    the module's docstring). Raises FolderError or SyncKeyError (one line, nothing
    applied); files that cannot be applied are skipped and listed in the report.

    `repack`: True repacks this machine's files now, False not in this run, None
    when more than half of its records are dead (`worthwhile`)."""
    started = time.monotonic()
    try:
        report = _run(brain, settings, key_file, repack)
    except MaxmemError as exc:  # doctor sees it, as it sees a failed tick
        record_run(brain.db, JOB, False, str(exc), brain.clock)
        raise
    except Exception as exc:  # a bug: doctor must not go on showing the last run as ok
        record_run(brain.db, JOB, False, f"{exc.__class__.__name__}: {exc}", brain.clock)
        raise
    report.seconds = time.monotonic() - started
    record_run(brain.db, JOB, not report.failures, "; ".join([report.summary(), *report.failures]), brain.clock)
    return report


def _run(brain: Brain, settings: FolderSettings, key_file: Path | None, repack: bool | None) -> FolderReport:
    folder = check_folder(settings.folder)
    machine, notes = identify(brain.db, settings.machine_path)
    mine = own_folder(folder, machine)
    found, foreign = scan(folder)
    finish_rewrite(brain.db, folder)
    evidence = twin(brain.db, machine, found)
    if evidence is not None:
        machine, line = leave(brain, settings.machine_path, machine, evidence)
        notes.append(line)
        mine = own_folder(folder, machine)
    remove_temporaries(mine)
    others = any(f.header is not None and f.header.machine != machine for f in found)
    key, old_key = key_for(settings, key_file, others)
    report = FolderReport(str(folder), machine, foreign=foreign, notes=notes)
    left = departures(brain.db)
    run = Run(brain, settings, folder, mine, machine, key, report, _embedder(brain, settings),
              left=tuple(item.machine for item in left if item.machine != machine))
    if old_key is not None:
        found = _reseal(run, found, old_key)
    _check_keys(run, found)
    if any(not item.resent for item in left):
        resend(run)
    else:
        send(run)
    _merge_all(run, found)
    _drop_vanished(run, found)
    due = repack or (repack is None and worthwhile(run))
    if due and run.embedder is None and settings.vectors and brain.embedder is not None:
        due = False  # the new files would lose the vectors that travel
        report.notes.append("repack put off: the embedder cannot tell its vectors' dimension now")
    if due:
        report.repack = repack_files(run)
    elif run.forgotten:
        _drop_forgotten(run)
    if run.forgotten:
        brain.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the forgotten text leaves the WAL too
    return report


def _embedder(brain: Brain, settings: FolderSettings) -> str | None:
    if not settings.vectors or brain.embedder is None:
        return None
    try:
        return identity(brain.embedder)
    except EmbeddingError:  # a remote model that cannot tell its dimension now: no vectors this run
        return None


def _check_keys(run: Run, found: Sequence[Found]) -> None:
    """Stop before applying anything when files are sealed with another key."""
    mine = changefiles.key_id(run.key)
    strangers = sorted({f.header.machine for f in found if f.header is not None and f.header.key_id != mine})
    if strangers:
        raise changefiles.SyncKeyError(
            f"files of machine(s) {', '.join(strangers)} in {run.folder} are sealed with another key: nothing "
            f"applied; copy sync.key from a machine that syncs there, then run  maxmem sync folder "
            f"{run.folder} --key-file FILE")


def send(run: Run) -> None:
    """Stamp this machine's new writes and send them (one transaction)."""
    with run.brain.db.atomic():
        _send_within(run)


def _send_within(run: Run) -> None:
    """Inside the caller's transaction: absorb, then write the files it gives."""
    db = run.brain.db
    mended, line = ledger.mend(db, run.machine, wall_ms(ledger.now_iso(run.brain)))
    if line is not None:
        run.report.notes.append(line)
    out = mended.then(ledger.absorb(db, run.machine))
    if not out:
        return
    run.forgotten |= set(out.tombstones)
    records = [ledger.record_of(data, entry) for data, entry in out.upserts.values()]
    vectors = _own_vectors(run, [data["id"] for data, _ in out.upserts.values()])
    records += [ledger.tombstone_of(uid, tomb) for uid, tomb in out.tombstones.items()]
    ids = [data["id"] for data, _ in out.upserts.values()]
    for start, end in chunks(records):
        chunk = records[start:end]
        chunk_vectors = [vectors.get(ids[start + i]) if start + i < len(ids) else None for i in range(len(chunk))]
        number = _next_number(db, run.mine, run.machine)
        payload = _payload(chunk, chunk_vectors, run.embedder)
        _write_own(run, number, payload, len(chunk))
        run.report.sent_files += 1
        run.report.sent_records += len(chunk)


def resend(run: Run) -> None:
    """After `leave`: everything this machine carries (ledger.carried, under every id it
    wrote as), sent under its new id, as a repack would write it. What it wrote as the
    old id reaches the folder again, also what a file the other machine replaced held;
    receivers that have it already merge it to no change. One transaction: killed, the
    next run sends it again."""
    db = run.brain.db
    with db.atomic():
        _send_within(run)
        records, sizes = _write_carried(run)
        run.report.sent_files += len(sizes)
        run.report.sent_records += records
        done = [Departure(**{**asdict(item), "resent": True}) for item in departures(db)]
        db.set_meta(LEFT_META, json.dumps([asdict(item) for item in done]))


def _own_vectors(run: Run, ids: Sequence[int]) -> dict[int, np.ndarray]:
    """The own vector of each memory sent, when vectors travel and brain.db has them."""
    if run.embedder is None or run.brain.db.get_meta("embedder") != run.embedder:
        return {}
    return run.brain.vectors.own(ids)


def _payload(records: list[dict[str, Any]], vectors: Sequence[np.ndarray | None],
             embedder: str | None) -> changefiles.Payload:
    rows: list[np.ndarray] = []
    for record, vector in zip(records, vectors):
        if vector is not None:
            record["v"] = len(rows)
            rows.append(vector)
    matrix = np.vstack(rows).astype(np.float16) if rows else None
    return changefiles.Payload(records, embedder if rows else None, matrix)


def chunks(records: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """Where to cut `records` into files: at most FILE_RECORDS records, about
    FILE_TEXT_BYTES of text and FILE_CONTAINERS lists and objects each (one record
    more than that alone is a file of its own)."""
    out: list[tuple[int, int]] = []
    start, size, containers = 0, 0, 0
    for index, record in enumerate(records):
        values = record.get("f") or {}
        text = f"{values.get('title') or ''}{values.get('content') or ''}{values.get('tags') or ''}" \
               f"{values.get('metadata') or ''}"
        weight, nested = len(text) + 512, text.count("[") + text.count("{") + 32
        if index > start and (index - start >= FILE_RECORDS or size + weight > FILE_TEXT_BYTES
                              or containers + nested > FILE_CONTAINERS):
            out.append((start, index))
            start, size, containers = index, 0, 0
        size += weight
        containers += nested
    if start < len(records):
        out.append((start, len(records)))
    return out


def _next_number(db: Database, mine: Path, machine: str) -> int:
    """After every number this brain recorded and every file of this machine's folder."""
    listed = [int(m.group(1)) for p in mine.iterdir() if (m := CANONICAL.match(p.name))]
    return max([int(db.scalar(LAST_NUMBER_SQL, (machine,))), *listed]) + 1


def _write_own(run: Run, number: int, payload: changefiles.Payload, count: int) -> int:
    """Write and record file `number`; its size."""
    name = f"{number:08d}{changefiles.SUFFIX}"
    data = changefiles.seal(run.key, run.machine, number, payload)
    info = write_durable(run.mine / name, data)
    _record(run, f"{run.machine}/{name}", run.machine, number, data, info, count, written=True)
    return info.st_size


def _record(run: Run, rel: str, machine: str, number: int, data: bytes, info: os.stat_result,
            count: int, written: bool) -> None:
    run.brain.db.execute(RECORD_SQL, (rel, machine, number, hashlib.sha256(data).hexdigest(), info.st_size,
                                      info.st_mtime_ns, count, int(written), ledger.now_iso(run.brain)))


def _merge_all(run: Run, found: Sequence[Found]) -> None:
    db = run.brain.db
    recorded = {row[0]: tuple(row[1:]) for row in db.execute(RECORDED_SQL)}
    held = quarantined(db)
    waiting = pending(db)
    report = run.report
    for item in sorted(found, key=lambda f: (f.header.machine if f.header else "", f.rel)):
        if isinstance(item.problem, changefiles.Foreign):  # named like a sync file, but is not one
            report.foreign.append(item.rel)
            continue
        if item.problem is not None:
            _skip(run, item, item.problem)
            continue
        known = recorded.get(item.rel)
        if known is not None and known[1:] == (item.size, item.mtime_ns) and item.rel not in waiting:
            continue
        whole = held.get(item.rel)
        if whole is not None and not whole["records"] and (whole["size"], whole["mtime_ns"]) == (item.size,
                                                                                               item.mtime_ns):
            continue  # quarantined as it is: sync status and doctor name it
        try:
            data = _read(item)
            header, payload = changefiles.unseal(run.key, data)
        except changefiles.Damaged as exc:
            _quarantine(run, item, str(exc), 0)
            continue
        except changefiles.ChangeFileError as exc:
            _skip(run, item, exc)
            continue
        except OSError as exc:
            _skip(run, item, changefiles.Damaged(f"cannot read it: {exc.strerror}"))
            continue
        digest = hashlib.sha256(data).hexdigest()
        with db.atomic():
            current = db.one("SELECT sha256 FROM sync_files WHERE path = ?", (item.rel,))
            if current is not None and current["sha256"] == digest and item.rel not in waiting:
                db.execute(TOUCH_SQL, (item.mtime_ns, item.rel))
                continue
            _send_within(run)  # what was written here meanwhile is stamped before anything merges
            merged = ledger.merge(run.brain, _incoming(run, payload), ledger.now_iso(run.brain))
            _record(run, item.rel, header.machine, header.number, data, os.stat(item.path), len(payload.records),
                    written=False)
            _note_refusals(run, item, merged)
        if item.rel in waiting and not (merged.added or merged.updated or merged.forgotten):
            continue  # a pending file merged again, its records still ahead: nothing applied
        report.applied_files += 1
        report.machines.append(header.machine)
        report.copies += item.copy
        report.added += merged.added
        report.updated += merged.updated
        report.forgotten += len(merged.forgotten)
        report.conflicts += merged.conflicts
        report.vectors += merged.vectors
        run.forgotten |= set(merged.forgotten)


def _read(item: Found) -> bytes:
    """The file's bytes, unless it is larger than a change file may be (Damaged)."""
    limit = changefiles.HEADER.size + changefiles.MAX_FILE_BYTES
    if item.size > limit:
        raise changefiles.Damaged(f"{item.size:,} bytes, more than a change file holds: refused unread")
    try:  # what is there now: it may have been replaced since the scan
        return read_regular(item.path, limit, "a change file")
    except InvalidInput as exc:
        raise changefiles.Damaged(str(exc)) from None


def pending(db: Database) -> dict[str, str]:
    """The files merged with records ahead of this machine's clock, each with why: merged
    again at each run until they are not."""
    text = db.get_meta(PENDING_META)
    return json.loads(text) if text else {}


def _quarantine(run: Run, item: Found, reason: str, records: int) -> None:
    """Keep `item` (whole, or `records` of its records) out, with why, for sync status and
    doctor; named in the report once."""
    db = run.brain.db
    with db.atomic():
        held = quarantined(db)
        held[item.rel] = {"reason": reason, "records": records, "at": ledger.now_iso(run.brain),
                          "size": item.size, "mtime_ns": item.mtime_ns}
        set_quarantined(db, held)
    what = f"{records} record(s) left out, the rest applied" if records else "nothing of it applied"
    run.report.quarantined.append(f"{item.rel}: quarantined ({what}): {reason}")
    log.info("sync folder: %s: quarantined (%s): %s", item.rel, what, reason)


def _note_refusals(run: Run, item: Found, merged: ledger.Merged) -> None:
    """Inside the merge's transaction: the records refused for good (quarantined) and
    for now (pending), or the file's earlier note cleared."""
    db = run.brain.db
    waiting = pending(db)
    if merged.pending:
        more = f" (and {len(merged.pending) - 1} more)" if len(merged.pending) > 1 else ""
        waiting[item.rel] = merged.pending[0] + more
        run.report.pending.append(f"{item.rel}: {len(merged.pending)} record(s) pending: {waiting[item.rel]}")
    else:
        waiting.pop(item.rel, None)
    db.set_meta(PENDING_META, json.dumps(waiting, sort_keys=True))
    held = quarantined(db)
    if merged.rejected:
        more = f" (and {len(merged.rejected) - 1} more)" if len(merged.rejected) > 1 else ""
        before = held.get(item.rel)
        if before is None or (before["size"], before["mtime_ns"]) != (item.size, item.mtime_ns):
            _quarantine(run, item, merged.rejected[0] + more, len(merged.rejected))  # named once
    elif held.pop(item.rel, None) is not None:
        set_quarantined(db, held)


def _skip(run: Run, item: Found, problem: MaxmemError) -> None:
    run.report.skipped.append(f"{item.rel}: {problem}: skipped")
    if not isinstance(problem, changefiles.Incomplete):  # still arriving: the next run applies it
        run.report.failures.append(f"{item.rel}: {problem}")


def _incoming(run: Run, payload: changefiles.Payload) -> list[ledger.Incoming]:
    usable = run.embedder is not None and payload.embedder == run.embedder and payload.vectors is not None
    out = []
    for record in payload.records:
        index = record.get("v")
        vector = None
        if usable and isinstance(index, int) and payload.vectors is not None and 0 <= index < len(payload.vectors):
            vector = payload.vectors[index]
        out.append(ledger.Incoming(record, vector))
    return out


def _reseal(run: Run, found: list[Found], old_key: bytes) -> list[Found]:
    """This machine's files sealed with the key --key-file replaced: sealed again with the new one."""
    old_id = changefiles.key_id(old_key)
    for item in found:
        if item.header is None or item.header.machine != run.machine or item.header.key_id != old_id:
            continue
        try:
            header, payload = changefiles.unseal(old_key, _read(item))
        except (changefiles.ChangeFileError, OSError):
            continue
        rewrite_own(run.brain.db, run.folder, item.rel, changefiles.seal(run.key, run.machine, header.number, payload))
        run.report.notes.append(f"{item.rel}: sealed again with the new key")
    return scan(run.folder)[0]


def rewrite_own(db: Database, folder: Path, rel: str, data: bytes, records: int | None = None) -> None:
    """Replace one of this machine's files with new bytes of its own (sealed again, or
    without forgotten records), and record them. The new digest is noted in brain.db
    before the file is replaced, so that a run killed between the two finds the file
    its own (`finish_rewrite`) instead of another machine's writing as it (`twin`)."""
    digest = hashlib.sha256(data).hexdigest()
    with db.atomic():
        db.set_meta(REWRITING_META, json.dumps({"path": rel, "sha256": digest}))
    info = write_durable(folder / rel, data)
    with db.atomic():
        db.execute(RESEALED_SQL, (digest, info.st_size, info.st_mtime_ns, rel))
        if records is not None:
            db.execute(RECORDS_SQL, (records, rel))
        db.set_meta(REWRITING_META, "")


def finish_rewrite(db: Database, folder: Path) -> None:
    """Record a rewrite of an own file that a killed run left unrecorded (`rewrite_own`):
    when the file holds the bytes noted, they are this machine's."""
    noted = db.get_meta(REWRITING_META)
    if not noted:
        return
    rewrite = json.loads(noted)
    path = folder / rewrite["path"]
    if _digest(path) == rewrite["sha256"]:
        info = path.stat()
        with db.atomic():
            db.execute(RESEALED_SQL, (rewrite["sha256"], info.st_size, info.st_mtime_ns, rewrite["path"]))
            db.set_meta(REWRITING_META, "")
    else:
        with db.atomic():
            db.set_meta(REWRITING_META, "")


def _drop_forgotten(run: Run) -> None:
    """This machine's files rewritten without the records of memories forgotten in this
    run: the folder no longer holds their text either."""
    db = run.brain.db
    for item in scan(run.folder)[0]:
        if item.header is None or item.header.machine != run.machine:
            continue
        try:
            data = _read(item)
            header, payload = changefiles.unseal(run.key, data)
        except (changefiles.ChangeFileError, OSError):
            continue
        keep = [r for r in payload.records if "x" in r or r.get("u") not in run.forgotten]
        if len(keep) == len(payload.records):
            continue
        rows = len(payload.vectors) if payload.vectors is not None else 0
        vectors = [payload.vectors[r["v"]] if payload.vectors is not None and isinstance(r.get("v"), int)
                   and 0 <= r["v"] < rows else None for r in keep]
        for record in keep:
            record.pop("v", None)
        smaller = _payload(keep, vectors, payload.embedder)
        rewrite_own(db, run.folder, item.rel, changefiles.seal(run.key, run.machine, header.number, smaller), len(keep))
        run.report.repacked += 1


def _drop_vanished(run: Run, found: Sequence[Found]) -> None:
    """Other machines' files that left the folder (their repack deleted them) leave
    sync_files too, so that `sync status` counts what is there. One that comes back
    is merged again: a no-op."""
    present = {item.rel for item in found}
    db = run.brain.db
    gone = [(path,) for path, in db.execute(OTHERS_FILES_SQL, (run.machine,)) if path not in present]
    held, waiting = quarantined(db), pending(db)
    with db.atomic():
        if gone:
            db.executemany(DROP_FILE_SQL, gone)
        if set(held) - present:
            set_quarantined(db, {rel: why for rel, why in held.items() if rel in present})
        if set(waiting) - present:
            db.set_meta(PENDING_META, json.dumps({rel: why for rel, why in waiting.items() if rel in present}))


def worthwhile(run: Run) -> bool:
    """More than half of this machine's records in the folder are dead: superseded by
    a later record of the same memory, of memories expired or forgotten here, or
    older than a later write of another machine (the folder still holds the text that
    write replaced)."""
    db = run.brain.db
    total = sum(row["records"] for row in db.rows(OWN_FILES_SQL, (run.machine,)))
    if not total:
        return False
    last = last_repack(db)
    live, stale = ledger.carried_count(db, run.ids, last.clock if last else 0)
    return 2 * (max(0, total - live) + stale) > total


def repack_files(run: Run) -> Repack | None:
    """Replace this machine's files with new ones that hold what it carries now
    (ledger.carried: the memories it wrote that are still here, as they are, and its
    tombstones), then delete the old ones. None when it has no files to replace.

    One transaction, so that a second run waits: the new files are written whole
    (fsynced, renamed, the folder fsynced) and recorded, then the old ones are deleted.
    Killed before the commit, the new files are unrecorded (the next run merges them,
    a no-op) and some old ones may be gone (everything they held is in the new ones);
    the next repack finishes the work. At least one file is written, so that the
    numbers go on from the highest."""
    started = time.monotonic()
    db = run.brain.db
    with db.atomic():
        _send_within(run)  # the ledger's stamps cover every write here before rows are read
        old, vanished = _own_files(run)
        if not old and not vanished:
            return None
        records, sizes = _write_carried(run)
        db.executemany(DROP_FILE_SQL, [(row["path"],) for row in [*old, *vanished]])
        for row in old:
            (run.folder / row["path"]).unlink(missing_ok=True)
        done = Repack(ledger.now_iso(run.brain), len(old), sum(row["size"] for row in old),
                          sum(row["records"] for row in old), len(sizes), sum(sizes), records,
                          round(time.monotonic() - started, 3), int(db.get_meta(ledger.CLOCK_KEY) or 0))
        db.set_meta(REPACK_META, json.dumps(asdict(done)))
    return done


def _write_carried(run: Run) -> tuple[int, list[int]]:
    """Write what this machine carries as new files of its own (at least one, so that
    the numbers go on); the number of records and each file's size."""
    db = run.brain.db
    records = ledger.carried_records(db, ledger.carried(db, run.ids))
    vectors = _own_vectors(run, [memory_id for _, memory_id in records if memory_id is not None])
    sizes = []
    for start, end in chunks([r for r, _ in records]) or [(0, 0)]:
        chunk = records[start:end]
        payload = _payload([r for r, _ in chunk], [vectors.get(i) if i is not None else None for _, i in chunk],
                           run.embedder)
        sizes.append(_write_own(run, _next_number(db, run.mine, run.machine), payload, len(chunk)))
    return len(records), sizes


def _own_files(run: Run) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """This machine's recorded files: those in its subfolder as they were when this
    brain wrote or applied them (a repack replaces them), and those gone from the
    folder. A file that changed since, or cannot be looked at, is left alone."""
    old, vanished = [], []
    for row in run.brain.db.rows(OWN_FILES_SQL, (run.machine,)):
        path = run.folder / row["path"]
        try:
            info = path.stat()
        except FileNotFoundError:
            vanished.append(row)
            continue
        except OSError:
            continue
        if path.parent == run.mine and (info.st_size, info.st_mtime_ns) == (row["size"], row["mtime_ns"]):
            old.append(row)
    return old, vanished


def last_repack(db: Database) -> Repack | None:
    text = db.get_meta(REPACK_META)
    return Repack(**json.loads(text)) if text else None


# -- status and doctor ----------------------------------------------------------------

@dataclass(frozen=True)
class MachineStatus:
    """One machine as this brain.db knows it from the folder: its last file."""

    machine: str
    this_machine: bool
    files: int
    last_file: int
    records: int
    last_at: str | None  # when this brain last wrote (its own) or applied (another's) one
    repack: Repack | None = None  # this machine's last repack
    left: tuple[Departure, ...] = ()  # the ids this machine left, another machine writing as them
    quarantined: tuple[str, ...] = ()  # files of the folder or records refused for good, each with why
    pending: tuple[str, ...] = ()  # files with records ahead of this machine's clock, each with why

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "folder", **asdict(self)}


def status(brain: Brain) -> list[MachineStatus]:
    db = brain.db
    if not db.table_exists("sync_files"):
        return []
    me = db.get_meta(MACHINE_META)
    last = last_repack(db)
    left = tuple(departures(db))
    held = tuple(quarantine_lines(quarantined(db)))
    waiting = tuple(f"{rel}: {why}" for rel, why in sorted(pending(db).items()))
    mine = (last, left, held, waiting)
    rows = [MachineStatus(row["machine"], row["machine"] == me, row["files"], row["last_file"],
                          row["records"] or 0, row["last_at"], *(mine if row["machine"] == me else ()))
            for row in db.rows(MACHINES_SQL)]
    if me and not any(row.this_machine for row in rows):
        rows.insert(0, MachineStatus(me, True, 0, 0, 0, None, *mine))  # synced, nothing of its own written yet
    return rows


def quarantine_lines(held: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per quarantined file: which, what of it, since when, why."""
    out = []
    for rel, why in sorted(held.items()):
        what = f"{why['records']} record(s) left out" if why["records"] else "the whole file"
        out.append(f"{rel}: {what} since {str(why['at'])[:19]}: {why['reason']}")
    return out


def machines_text(rows: Iterable[MachineStatus]) -> list[str]:
    out = []
    for row in rows:
        who = "this machine" if row.this_machine else "machine"
        verb = "written" if row.this_machine else "applied"
        out += [f"folder: quarantined {line}" for line in row.quarantined]
        out += [f"folder: pending {line}" for line in row.pending]
        if not row.files:
            out.append(f"folder: {who} {row.machine}: no file written yet (nothing of its own to send)")
            continue
        out.append(f"folder: {who} {row.machine}: last file #{row.last_file} ({row.files} file(s), "
                   f"{row.records} change(s)), last {verb} {row.last_at}")
        if row.repack is not None:
            done = row.repack
            out.append(f"folder: last repack {done.at}: {done.files_before} file(s), {done.bytes_before:,} bytes "
                       f"({done.records_before} records) into {done.files_after}, {done.bytes_after:,} bytes "
                       f"({done.records_after}), in {done.seconds:.2f} s")
        for item in row.left:
            out.append(f"folder: this machine synced as {item.machine} until {item.at}, when another machine "
                       f"wrote as it too ({item.evidence}: a copy of this machine's config folder?)")
    return out
