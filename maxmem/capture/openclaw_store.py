"""OpenClaw's SQLite transcript store (OpenClaw 2026.8.1 and later).

Since 2026.8.1 OpenClaw keeps live transcripts in one SQLite file per agent,
`<state>/agents/<agentId>/agent/openclaw-agent.sqlite`, instead of
`agents/<agentId>/sessions/*.jsonl` (that folder now receives only `.jsonl.reset.*`
and `.jsonl.deleted.*` archives). Each row of `transcript_events` is one line of the
pi session format the `openclaw` reader already parses, in `(session_id, seq)` order;
a large one is stored zstd-compressed (`event_json` NULL, `event_zstd` set, with its
size in `event_utf8_bytes`). `session_windows` names each session's key
(`agent:main:telegram:dm:…`) and the session it continues (`previous_session_id`,
after a reset, rollover, fork, rewind, switch, recovery or compaction).

The store is read, never written: a read-only connection (`mode=ro`), each batch of
rows its own short read (WAL readers never block the Gateway's writer, and no read
holds a snapshot for long), rows taken in keyset batches (`seq > ?`). A session's
cursor is its last seq, kept in capture's cursor table under `<db path>#<session id>`.
A store of a schema version this module does not know is skipped with one log line,
and `maxmem doctor` says so (`store_problems`).
"""

from __future__ import annotations

import io
import json
import logging
import urllib.parse
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from ..errors import InvalidInput, MaxmemError
from ..files import check_regular
from ..store.db import Database
from . import openclaw, store
from .model import Parsed, ReadContext, Record

log = logging.getLogger("maxmem")

STORE_NAME = "openclaw-agent.sqlite"
SCHEMA_VERSION = 23  # schema_meta.schema_version of the stores this module reads (OpenClaw 2026.9)
# The store's own CHECK bound on a compressed event (4 MiB, text and blob): a row that
# declares more is refused unread, and no row is decompressed past what it declares.
MAX_EVENT_BYTES = 4 << 20
BATCH_ROWS = 2000  # rows per keyset query: each is one short read transaction
BUSY_MS = 2000  # how long a read waits on a lock (a WAL reader waits only on recovery or EXCLUSIVE mode)
MAX_LINEAGE = 64  # how far back a session's predecessors are followed

NEEDED = {
    "schema_meta": {"meta_key", "schema_version"},
    "session_windows": {"session_id", "session_key", "previous_session_id", "reason"},
    "transcript_events": {"session_id", "seq", "event_json", "event_zstd", "event_utf8_bytes"},
}
TABLE_COLUMNS = "SELECT name FROM pragma_table_info(?)"
SCHEMA_META = "SELECT schema_version, agent_id, app_version FROM schema_meta WHERE meta_key = 'primary'"
WINDOWS = """
SELECT session_id, session_key, previous_session_id, reason, display_name, created_at
FROM session_windows ORDER BY created_at, session_id
"""
# A fork starts a new session key whose opening window names no predecessor: the
# session it was forked from is its key's `fork_source_session_id`.
WINDOWS_WITH_FORKS = """
SELECT w.session_id, w.session_key, coalesce(w.previous_session_id, n.fork_source_session_id),
       w.reason, w.display_name, w.created_at
FROM session_windows w LEFT JOIN session_nodes n ON n.session_key = w.session_key
ORDER BY w.created_at, w.session_id
"""
HEADS = "SELECT session_id, max(seq) FROM transcript_events GROUP BY session_id"
EVENTS = """
SELECT seq, event_json, event_zstd, event_utf8_bytes FROM transcript_events
WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?
"""


class StoreError(MaxmemError):
    """An OpenClaw store capture cannot read now (locked, damaged, or a schema it does not know)."""


@dataclass(frozen=True)
class StoreSession:
    """One session of a store: its id, key, and what it continues."""

    session_id: str
    session_key: str | None
    previous_session_id: str | None
    reason: str | None
    display_name: str | None
    head: int  # its last seq (-1: no rows)


@dataclass
class Window:
    """One batch of a session's rows, parsed: the turns and the seq the cursor may advance to."""

    parsed: Parsed
    end: int
    skipped: int = 0  # rows that are not a readable event (bad JSON, bad zstd, too large)


@dataclass
class Store:
    """An open, read-only OpenClaw store (use as a context manager)."""

    path: Path
    connection: apsw.Connection
    agent_id: str
    app_version: str | None = None
    sessions: dict[str, StoreSession] = field(default_factory=dict)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.connection.close()

    def key(self, session_id: str) -> str:
        return cursor_key(self.path, session_id)

    def lineage(self, session_id: str) -> list[str]:
        """The sessions `session_id` continues, nearest first (a copy's history is theirs)."""
        out: list[str] = []
        current = self.sessions.get(session_id)
        while current is not None and current.previous_session_id and len(out) < MAX_LINEAGE:
            previous = current.previous_session_id
            if previous in out or previous == session_id:
                break
            out.append(previous)
            current = self.sessions.get(previous)
        return out

    def ordered(self, only: str | None = None) -> list[StoreSession]:
        """Sessions with rows, each after the ones it continues (their copied history
        is stored under them first), or only the one named by id or key."""
        if only is not None:
            return [s for s in self.sessions.values() if only in (s.session_id, s.session_key) and s.head >= 0]
        placed: dict[str, StoreSession] = {}

        def place(session: StoreSession) -> None:
            for previous in reversed(self.lineage(session.session_id)):
                earlier = self.sessions.get(previous)
                if earlier is not None and earlier.head >= 0:
                    placed.setdefault(previous, earlier)
            placed.setdefault(session.session_id, session)

        for session in self.sessions.values():
            if session.head >= 0:
                place(session)
        return list(placed.values())

    def windows(self, session: StoreSession, after: int, state: dict[str, Any],
                tool_result_chars: int, default_time: str) -> Iterator[Window]:
        """The session's rows past seq `after` (-1: all), BATCH_ROWS at a time, parsed by
        the `openclaw` reader; `state` is the reader's state from the cursor."""
        state = {**state, "session_id": session.session_id}
        key = self.key(session.session_id)
        while True:
            rows = _read(self.connection, self.path, EVENTS, (session.session_id, after, BATCH_ROWS))
            if not rows:
                return
            records, skipped = decode_rows(rows, key)
            ctx = ReadContext(key, default_time, final=True, tool_result_chars=tool_result_chars)
            parsed = openclaw.parse(records, state, ctx)
            self._label(parsed, session)
            after = int(rows[-1][0])
            state = parsed.state
            yield Window(parsed, after, skipped)
            if len(rows) < BATCH_ROWS:
                return

    def _label(self, parsed: Parsed, session: StoreSession) -> None:
        """The agent, the session key (the label people know a session by) and its lineage."""
        for found in parsed.sessions.values():
            found.agent = f"openclaw:{self.agent_id}"
            found.parent_id = found.parent_id or session.previous_session_id
            found.title = found.title or session.display_name or session.session_key
            found.metadata.update({k: v for k, v in (("session_key", session.session_key),
                                                     ("reason", session.reason),
                                                     ("store", str(self.path))) if v})


def cursor_key(path: str | Path, session_id: str) -> str:
    """Where a store session's cursor is kept in capture_files (its `path`)."""
    return f"{path}#{session_id}"


def is_store(path: str | Path) -> bool:
    return Path(path).name == STORE_NAME


def find_stores(root: Path) -> list[Path]:
    """Every agent's store under an OpenClaw state folder (none is fine)."""
    agents = root / "agents"
    try:
        return sorted(p for p in agents.glob(f"*/agent/{STORE_NAME}") if p.is_file()) if agents.is_dir() else []
    except OSError as exc:
        log.warning("capture: cannot list %s: %s", agents, exc)
        return []


def describe(roots: Iterable[Path]) -> list[str]:
    """The stores under `roots`, as "openclaw: path" (what `capture --dry-run` looked in)."""
    return [f"openclaw: {path}" for root in roots for path in find_stores(root)]


def open_store(path: str | Path) -> Store:
    """Open a store read-only and check its schema; StoreError (one line) if it cannot be read."""
    path = Path(path)
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    try:  # SQLite opens it by name and would wait on a FIFO: anything but a file is refused first
        check_regular(path, "an OpenClaw transcript store")
    except InvalidInput as exc:
        raise StoreError(str(exc)) from None
    try:
        connection = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    except apsw.Error as exc:
        raise StoreError(f"OpenClaw transcript store {path} cannot be opened: {_why(exc)}") from None
    try:
        connection.setbusytimeout(BUSY_MS)
        agent_id, app_version = _check(connection, path)
        opened = Store(path, connection, agent_id or _agent_of(path), app_version)
        opened.sessions = _sessions(connection, path)
    except BaseException:
        connection.close()
        raise
    return opened


def _check(connection: apsw.Connection, path: Path) -> tuple[str | None, str | None]:
    """The store's agent and OpenClaw version, once its schema is one this module reads."""
    for table, columns in NEEDED.items():
        have = {row[0] for row in _read(connection, path, TABLE_COLUMNS, (table,))}
        if not have:
            raise StoreError(f"OpenClaw transcript store {path} has no {table} table; maxmem reads schema "
                             f"version {SCHEMA_VERSION}: its transcripts are not captured")
        missing = columns - have
        if missing:
            raise StoreError(f"OpenClaw transcript store {path} has a {table} table without "
                             f"{', '.join(sorted(missing))}; maxmem reads schema version {SCHEMA_VERSION}: "
                             "its transcripts are not captured")
    rows = _read(connection, path, SCHEMA_META, ())
    version = rows[0][0] if rows else None
    if version != SCHEMA_VERSION:
        app = f" (OpenClaw {rows[0][2]})" if rows and rows[0][2] else ""
        raise StoreError(f"OpenClaw transcript store {path} has schema version {version}{app}; maxmem reads "
                         f"{SCHEMA_VERSION}: its transcripts are not captured until maxmem supports it "
                         "(upgrade maxmem)")
    return rows[0][1], rows[0][2]


def _sessions(connection: apsw.Connection, path: Path) -> dict[str, StoreSession]:
    heads = {str(sid): int(seq) for sid, seq in _read(connection, path, HEADS, ())}
    nodes = {row[0] for row in _read(connection, path, TABLE_COLUMNS, ("session_nodes",))}
    windows = WINDOWS_WITH_FORKS if {"session_key", "fork_source_session_id"} <= nodes else WINDOWS
    out: dict[str, StoreSession] = {}
    for sid, key, previous, reason, name, _ in _read(connection, path, windows, ()):
        previous = previous if previous != sid else None
        out[str(sid)] = StoreSession(str(sid), key, previous, reason, name, heads.pop(str(sid), -1))
    for sid, head in heads.items():  # rows of a session with no window row: still read
        out[sid] = StoreSession(sid, None, None, None, None, head)
    return out


def _agent_of(path: Path) -> str:
    parts = path.parts
    return parts[-3] if len(parts) >= 4 and parts[-2] == "agent" and parts[-4] == "agents" else "main"


def _read(connection: apsw.Connection, path: Path, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """One query, as its own short read; apsw's errors as one StoreError line."""
    try:
        return [tuple(row) for row in connection.execute(sql, params)]
    except (apsw.BusyError, apsw.LockedError) as exc:
        raise StoreError(f"OpenClaw transcript store {path} is locked by another process ({exc}); "
                         "the next run reads it") from None
    except apsw.Error as exc:
        raise StoreError(f"OpenClaw transcript store {path} cannot be read: {_why(exc)}") from None


def _why(exc: apsw.Error) -> str:
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        return f"not a readable SQLite database ({exc})"
    return f"{exc.__class__.__name__}: {exc}"


def decode_rows(rows: Iterable[tuple[Any, ...]], name: str) -> tuple[list[Record], int]:
    """Rows as the records the `openclaw` reader takes (offset = seq), and how many
    were skipped: a row that is not a JSON object (or whose zstd is damaged, or that
    declares more than MAX_EVENT_BYTES) is logged, skipped and read past, as a
    corrupt line of a JSONL transcript is; a row never changes once written."""
    records: list[Record] = []
    skipped = 0
    for seq, text, blob, size in rows:
        try:
            value = json.loads(text if text is not None else unpack(blob, size))
        except (ValueError, StoreError) as exc:
            value = exc
        if not isinstance(value, dict):
            skipped += 1
            why = str(value) if isinstance(value, StoreError) else "not a JSON object"
            log.warning("capture: skipping event %s of %s: %s", seq, name, why)
            continue
        records.append(Record(int(seq), int(seq), value))
    return records, skipped


def unpack(blob: bytes | None, size: int | None) -> str:
    """A compressed event's text, never decompressing more than it declares (a
    frame's own content size is not trusted: the output is read in bounded steps)."""
    import zstandard

    if blob is None or size is None or not 0 < size <= MAX_EVENT_BYTES or len(blob) > MAX_EVENT_BYTES:
        raise StoreError(f"a compressed event declaring {size} bytes (at most {MAX_EVENT_BYTES} are read)")
    out = bytearray()
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(blob)) as reader:
            while len(out) <= size:
                piece = reader.read(min(1 << 16, size + 1 - len(out)))
                if not piece:
                    break
                out += piece
    except zstandard.ZstdError as exc:
        raise StoreError(f"damaged zstd data ({exc})") from None
    if len(out) != size:
        raise StoreError(f"zstd data of {'more' if len(out) > size else len(out)} bytes where {size} were declared")
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        return out.decode("utf-8", errors="replace")


def drop_copies(db: Database, parsed: Parsed, lineage: Sequence[str]) -> int:
    """Take out of `parsed` the turns a fork, compaction or rollover copied from the
    sessions it continues (same entry id, already stored under one of them); how many."""
    if not lineage or not parsed.turns:
        return 0
    keys = [t.key for t in parsed.turns]
    copied: set[str] = set()
    for previous in lineage:
        copied |= store.existing_keys(db, previous, keys)
    before = len(parsed.turns)
    parsed.turns = [t for t in parsed.turns if t.key not in copied]
    return before - len(parsed.turns)


def followed(db: Database, archive: str | Path) -> bool:
    """An OpenClaw `.jsonl.reset.*`/`.jsonl.deleted.*` archive of a session capture read
    from the agent's store: its last lines may not have been read there before the
    session was archived (the entries already stored are recognised by their ids)."""
    archive = Path(archive)
    if archive.parent.name != "sessions":
        return False
    session_id = openclaw.session_id_of(str(archive))
    db_path = archive.parent.parent / "agent" / STORE_NAME
    return store.get_cursor(db, cursor_key(db_path.absolute(), session_id)) is not None


def find_session(roots: Iterable[Path], names: Iterable[str | None]) -> list[tuple[Path, str]]:
    """(store, name) for each store under `roots` holding the session a hook names (by
    session key or id: a key names the sessions a reset or compaction started since,
    and all of them are read); [] when no store holds it."""
    wanted = [n for n in names if n]
    found: list[tuple[Path, str]] = []
    for root in roots:
        for path in find_stores(root):
            try:
                with open_store(path) as opened:
                    for name in wanted:
                        if any(name in (s.session_id, s.session_key) for s in opened.sessions.values()):
                            found.append((path, name))
                            break
            except StoreError as exc:
                log.info("capture: %s", exc)
    return found


def store_problems(roots: Iterable[Path]) -> list[tuple[str, str]]:
    """(level, message) for each OpenClaw store under `roots` capture cannot read
    (`maxmem doctor`): a schema version or table shape it does not know, a damaged or
    locked file. Stores it reads give nothing."""
    out: list[tuple[str, str]] = []
    for root in roots:
        for path in find_stores(root):
            try:
                open_store(path).connection.close()
            except StoreError as exc:
                out.append(("warn", str(exc)))
    return out

