"""Push brain.db to PostgreSQL (+ pgvector), so that several agents share one memory.

Each agent keeps its own brain.db and pushes it to one database: `push()` reads
brain.db's `changes` log past this target's cursor, upserts the current state of
every touched memory (deletes those gone) in batches, and moves the cursor only
after PostgreSQL committed the batch. The authoritative cursor is the `last_seq` of
this brain's row in `maxmem.instances`, written in the same PostgreSQL transaction as
the data, so a crash between the two commits replays nothing; the copy in brain.db's
`sync_targets` serves `status()` without a connection.

Rows are keyed by (instance_id, uid): the instance id is generated once per brain
and kept in its meta table, so two agents never overwrite each other's rows.

The schema is pgschema.py's; the DSN and the connection pgconnect.py's.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..clock import iso
from ..errors import MaxmemError
from ..jobs.runs import job_name, record_run
from ..store.db import Database
from .pgconnect import (
    SyncError,
    agent_label,
    batch_size_from,
    connect,
    describe_error,
    index_memory_from,
    psycopg_module,
    register_pgvector,
    target_name,
)
from .pgschema import TERMS_VERSION, ensure_embedding, ensure_schema, ensure_vector_index, read_schema
from .pgstatus import backlog, local_cursor
from .terms import Tokenizer

if TYPE_CHECKING:  # pragma: no cover
    from ..brain import Brain

log = logging.getLogger("maxmem")

ANALYZE_AFTER = 1000  # rows changed in one run

# The memories columns sent for each row, in COPY order, with their staging types.
STAGE_COLUMNS: list[tuple[str, str]] = [
    ("instance_id", "text"), ("uid", "text"), ("agent", "text"), ("local_id", "int8"),
    ("category", "text"), ("kind", "text"), ("title", "text"), ("content", "text"),
    ("tags", "text"), ("importance", "float8"), ("status", "text"), ("started_at", "text"),
    ("resolved_at", "text"), ("source", "text"), ("session_id", "text"), ("metadata", "text"),
    ("content_hash", "text"), ("pinned", "bool"), ("superseded_by", "text"),
    ("created_at", "text"), ("updated_at", "text"), ("last_recalled_at", "text"),
    ("recall_count", "int4"), ("embedded_at", "text"), ("fts_terms", "text"),
    ("fts_length", "int4"), ("fts_freq", "text"), ("spaced_terms", "text"), ("spaced_length", "int4"),
    ("spaced_freq", "text"), ("embedder", "text"),
]
CASTS = {
    "tags": "jsonb", "metadata": "jsonb", "fts_freq": "jsonb", "spaced_freq": "jsonb", "started_at": "timestamptz",
    "resolved_at": "timestamptz",
    "created_at": "timestamptz", "updated_at": "timestamptz", "last_recalled_at": "timestamptz",
    "embedded_at": "timestamptz",
}

DELETE_SQL = "DELETE FROM maxmem.memories WHERE instance_id = %s AND uid = ANY(%s)"
INSTANCE_SQL = """
INSERT INTO maxmem.instances (instance_id, agent, embedder, host, last_seq, terms_version)
VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (instance_id) DO UPDATE SET
    agent = EXCLUDED.agent, embedder = EXCLUDED.embedder, host = EXCLUDED.host,
    last_seq = EXCLUDED.last_seq, terms_version = EXCLUDED.terms_version, last_export_at = now()
"""

# brain.db side -------------------------------------------------------------------

CHANGES_SQL = "SELECT seq, uid FROM changes WHERE seq > ? ORDER BY seq LIMIT ?"
SAVE_OK_SQL = """
INSERT INTO sync_targets (target, cursor, last_run_at, last_ok_at, last_error, last_upserted, last_deleted,
                          last_seconds)
VALUES (?, ?, ?, ?, NULL, ?, ?, ?)
ON CONFLICT (target) DO UPDATE SET
    cursor = excluded.cursor, last_run_at = excluded.last_run_at, last_ok_at = excluded.last_ok_at,
    last_error = NULL, last_upserted = excluded.last_upserted, last_deleted = excluded.last_deleted,
    last_seconds = excluded.last_seconds
"""
SAVE_CURSOR_SQL = """
INSERT INTO sync_targets (target, cursor) VALUES (?, ?)
ON CONFLICT (target) DO UPDATE SET cursor = excluded.cursor
"""
SAVE_ERROR_SQL = """
INSERT INTO sync_targets (target, cursor, last_run_at, last_error) VALUES (?, 0, ?, ?)
ON CONFLICT (target) DO UPDATE SET last_run_at = excluded.last_run_at, last_error = excluded.last_error
"""


def instance_id(db: Database) -> str:
    """This brain's stable id in shared databases: generated once, kept in meta."""
    found = db.get_meta("instance_id")
    if found:
        return found
    with db.atomic():
        found = db.get_meta("instance_id")
        if not found:
            found = str(uuid.uuid4())
            db.set_meta("instance_id", found)
    return found


@dataclass
class Batch:
    """One batch of the change log, resolved to the current state of each memory."""

    end_seq: int
    rows: list[dict[str, Any]]  # memories still present
    vectors: dict[int, np.ndarray]  # memory id -> vector
    deleted: list[str]  # uids no longer in brain.db
    fts: dict[int, list[str | None]]  # memory id -> its keyword-index columns


def read_batch(db: Database, after: int, size: int, tokenizer: Tokenizer) -> Batch | None:
    changes = db.rows(CHANGES_SQL, (after, size))
    if not changes:
        return None
    uids = list(dict.fromkeys(c["uid"] for c in changes))
    fts: dict[int, list[str | None]] = {}
    columns = ", ".join(tokenizer.columns)
    rows = db.rows_in("SELECT * FROM memories WHERE uid IN ({marks})", uids)
    for row in db.each_in(f"SELECT id, {columns} FROM {tokenizer.source} WHERE id IN ({{marks}})",
                          [r["id"] for r in rows]):
        fts[row[0]] = list(row[1:])
    present = {r["uid"] for r in rows}
    vectors: dict[int, np.ndarray] = {}
    if db.table_exists("memories_vec"):
        for row in rows:
            if row["embedded_at"] is None:
                continue
            blob = db.scalar("SELECT embedding FROM memories_vec WHERE rowid = ?", (row["id"],))
            if blob is not None:
                vectors[row["id"]] = np.frombuffer(blob, dtype=np.float32)
    return Batch(changes[-1]["seq"], rows, vectors, [u for u in uids if u not in present], fts)


def _save_cursor(db: Database, target: str, cursor: int) -> None:
    with db.atomic():
        db.execute(SAVE_CURSOR_SQL, (target, cursor))



# -- push -----------------------------------------------------------------------

@dataclass
class SyncReport:
    """What one `push` did."""

    target: str
    instance_id: str
    agent: str
    upserted: int = 0
    deleted: int = 0
    batches: int = 0
    cursor: int = 0
    backlog: int = 0
    seconds: float = 0.0
    vector_type: str | None = None
    index_built: bool = False
    index_seconds: float = 0.0
    notices: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """One line for the CLI, cron logs and the daemon."""
        line = (f"sync: {self.target}: {self.upserted} upserted, {self.deleted} deleted in "
                f"{self.batches} batch(es), {self.seconds:.2f} s; cursor #{self.cursor}, backlog {self.backlog}")
        return line + (f" (HNSW index built in {self.index_seconds:.1f} s)" if self.index_built else "")


class Pusher:
    """Pushes one brain to one PostgreSQL database over one connection."""

    def __init__(self, brain: Brain, conn: Any, report: SyncReport) -> None:
        self.brain = brain
        self.db = brain.db
        self.conn = conn
        self.report = report
        self.tokenizer = Tokenizer(brain.db)
        self.embedder = brain.db.get_meta("embedder")  # identity of the stored vectors
        dim = brain.db.get_meta("embedder_dim")
        self.dim = int(dim) if dim else None
        self.schema = read_schema(conn)
        self.host = socket.gethostname()
        self._staged = False

    # The columns this database has: the embedding column appears with the first vectors.
    def _columns(self) -> list[tuple[str, str]]:
        columns = list(STAGE_COLUMNS)
        if self.schema.vector_type == "vector":
            columns.append(("embedding", "vector"))
        elif self.schema.vector_type == "real[]":
            columns.append(("embedding", "float4[]"))
        return columns

    def prepare(self) -> None:
        if self.dim and self.schema.vector_type != "vector":
            self.schema, notices = ensure_embedding(self.conn, self.dim)
            self.report.notices += notices
        if self.schema.vector_type == "vector":
            register_pgvector(self.conn)
        if self.dim and self.schema.dim and self.dim != self.schema.dim:
            self.report.notices.append(
                f"vectors not pushed: this database holds {self.schema.dim}-d vectors, this brain "
                f"has {self.dim}-d ({self.embedder}); its memories are found by keyword only"
            )
        self.report.vector_type = self.schema.vector_type

    def _stage_table(self) -> None:
        """A temporary table the COPY fills; emptied at each commit."""
        columns = []
        for name, kind in self._columns():
            pg_type = {"vector": f"vector({self.schema.dim})", "float4[]": "real[]"}.get(kind, kind)
            columns.append(f"{name} {pg_type}")
        self.conn.execute("DROP TABLE IF EXISTS pg_temp.maxmem_stage")
        self.conn.execute(
            f"CREATE TEMP TABLE maxmem_stage ({', '.join(columns)}) ON COMMIT DELETE ROWS"
        )
        self._staged = True

    def remote_cursor(self, instance: str) -> tuple[int | None, int]:
        """This brain's cursor in the database (None: never pushed) and the form of the
        keyword tokens its rows carry (TERMS_VERSION)."""
        row = self.conn.execute(
            "SELECT last_seq, terms_version FROM maxmem.instances WHERE instance_id = %s", (instance,)
        ).fetchone()
        return (int(row[0]), int(row[1])) if row else (None, TERMS_VERSION)

    def send(self, batch: Batch) -> None:
        """Upsert and delete one batch and move the remote cursor, in one transaction."""
        if not self._staged:
            self._stage_table()
        report = self.report
        columns = self._columns()
        names = [n for n, _ in columns]
        with self.conn.transaction():
            if batch.rows:
                with self.conn.cursor() as cur:
                    with cur.copy(
                        f"COPY maxmem_stage ({', '.join(names)}) FROM STDIN WITH (FORMAT BINARY)"
                    ) as copy:
                        copy.set_types([kind for _, kind in columns])
                        for row in batch.rows:
                            copy.write_row(self._values(row, batch.vectors.get(row["id"]), batch.fts))
                selects = [f"{n}::{CASTS[n]}" if n in CASTS else n for n in names]
                data = [n for n in names if n not in ("instance_id", "uid")]
                updates = ", ".join(f"{n} = EXCLUDED.{n}" for n in data)
                # A row that is already there as it is (a replay) is not written again.
                changed = (f"ROW({', '.join(f'm.{n}' for n in data)}) IS DISTINCT FROM "
                           f"ROW({', '.join(f'EXCLUDED.{n}' for n in data)})")
                self.conn.execute(
                    f"INSERT INTO maxmem.memories AS m ({', '.join(names)}) "
                    f"SELECT {', '.join(selects)} FROM maxmem_stage "
                    f"ON CONFLICT (instance_id, uid) DO UPDATE SET {updates}, exported_at = now() "
                    f"WHERE {changed}"
                )
            if batch.deleted:
                self.conn.execute(DELETE_SQL, (report.instance_id, batch.deleted))
            self.conn.execute(
                INSTANCE_SQL,
                (report.instance_id, report.agent, self.embedder, self.host, batch.end_seq, TERMS_VERSION),
            )
        report.upserted += len(batch.rows)
        report.deleted += len(batch.deleted)
        report.batches += 1

    def _values(self, row: Mapping[str, Any], vector: np.ndarray | None,
                fts: Mapping[int, list[str | None]]) -> list[Any]:
        document = self.tokenizer.document(fts.get(row["id"], []))
        spaced = self.tokenizer.spaced(row["title"], row["content"], row["tags"], row["context"])
        computed: dict[str, Any] = {
            "instance_id": self.report.instance_id,
            "agent": row["agent"] or self.report.agent,
            "local_id": row["id"],
            "pinned": bool(row["pinned"]),
            "fts_terms": document.terms, "fts_length": document.length, "fts_freq": document.counts,
            "spaced_terms": spaced.terms, "spaced_length": spaced.length, "spaced_freq": spaced.counts,
            "embedder": self.embedder if row["embedded_at"] else None,
            "importance": float(row["importance"]),
        }
        values: list[Any] = [computed[name] if name in computed else row[name] for name, _ in STAGE_COLUMNS]
        if self.schema.vector_type is not None:
            if vector is None or self.schema.dim != len(vector):
                values.append(None)
            elif self.schema.vector_type == "vector":
                values.append(vector)
            else:
                values.append(vector.tolist())
        return values

    def prune(self) -> int:
        """Delete this instance's rows whose memory is no longer in brain.db (after a restore)."""
        uids = [r[0] for r in self.db.execute("SELECT uid FROM memories")]
        with self.conn.transaction():
            cur = self.conn.execute(
                "DELETE FROM maxmem.memories WHERE instance_id = %s AND NOT (uid = ANY(%s))",
                (self.report.instance_id, uids),
            )
        return cur.rowcount or 0


class _SecondaryErrors(logging.Filter):
    """psycopg's "error ignored terminating <Copy>: the connection is lost": logged (to
    stderr, where no handler is set) when a COPY cannot be ended on a connection that
    just died; the error push() raises already says so, in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("error ignored terminating")


@contextlib.contextmanager
def _one_error_line() -> Iterator[None]:
    psycopg_log = logging.getLogger("psycopg")
    quiet = _SecondaryErrors()
    psycopg_log.addFilter(quiet)
    try:
        yield
    finally:
        psycopg_log.removeFilter(quiet)


def push(
    brain: Brain,
    dsn: str,
    agent: str | None = None,
    batch_size: int | None = None,
) -> SyncReport:
    """Push brain.db's changes since the last run to the PostgreSQL database at `dsn`.

    Raises SyncError (one line, password masked) when PostgreSQL is down, refuses the
    login, or the connection drops; batches committed before that stay pushed and
    the next run continues after them.
    """
    psycopg = psycopg_module()
    started = time.monotonic()
    target = target_name(dsn)
    size = batch_size_from(brain.config, batch_size)
    index_memory = index_memory_from(brain.config)
    report = SyncReport(target, instance_id(brain.db), agent_label(brain.config, agent))
    local_max = int(brain.db.scalar("SELECT coalesce(max(seq), 0) FROM changes"))
    try:
        conn = connect(dsn)
    except SyncError as exc:
        _record_error(brain, target, str(exc))
        raise
    with _one_error_line():  # a lost connection is one error line, not also psycopg's warning
        try:
            ensure_schema(conn)
            pusher = Pusher(brain, conn, report)
            pusher.prepare()
            remote, terms_version = pusher.remote_cursor(report.instance_id)
            cursor = remote or 0
            restored = remote is not None and remote > local_max
            if restored:
                report.notices.append(
                    f"PostgreSQL has changes up to #{remote} from this brain but brain.db ends at #{local_max} "
                    "(restored from a backup?): pushing everything again"
                )
                cursor = 0
            elif cursor and terms_version < TERMS_VERSION:
                report.notices.append(
                    "this brain's memories in PostgreSQL were pushed by an older maxmem: pushing them all "
                    "again so that keyword search there ranks Chinese, Japanese, Korean and Thai as locally"
                )
                cursor = 0
            while True:
                batch = read_batch(brain.db, cursor, size, pusher.tokenizer)
                if batch is None:
                    break
                pusher.send(batch)
                cursor = batch.end_seq
                _save_cursor(brain.db, target, cursor)  # only after PostgreSQL committed
                log.info("sync: %s up to change #%d", target, cursor)
            if restored:
                pruned = pusher.prune()
                report.deleted += pruned
            if report.upserted + report.deleted >= ANALYZE_AFTER:
                # Fresh statistics let the planner pick the HNSW and GIN indexes at once, and a
                # vacuumed table lets search count rows and tokens from an index alone.
                conn.execute("VACUUM (ANALYZE) maxmem.memories")  # only a warning for non-owners
            index_started = time.monotonic()
            report.index_built = ensure_vector_index(conn, report.notices, index_memory)
            report.index_seconds = time.monotonic() - index_started if report.index_built else 0.0
        except SyncError as exc:  # (already one line, password masked)
            _record_error(brain, target, str(exc))
            raise
        except psycopg.Error as exc:
            what = describe_error(exc, dsn)
            if getattr(conn, "broken", False):  # the server crashed, stopped or the network dropped
                what = f"the server went away mid-run ({what})"
            message = (
                f"PostgreSQL sync to {target} failed: {what}; nothing is lost: "
                f"the next run continues after change #{local_cursor(brain.db, target)}"
            )
            _record_error(brain, target, message)
            raise SyncError(message) from None
        finally:
            conn.close()
    report.cursor = cursor
    report.backlog = backlog(brain.db, cursor)
    report.seconds = time.monotonic() - started
    with brain.db.atomic():
        brain.db.execute(
            SAVE_OK_SQL,
            (target, cursor, iso(brain.clock.now()), iso(brain.clock.now()), report.upserted,
             report.deleted, round(report.seconds, 3)),
        )
    record_run(brain.db, job_name("sync", target), True, report.summary(), brain.clock)  # for doctor
    for notice in report.notices:
        log.warning("sync: %s", notice)
    return report


def _record_error(brain: Brain, target: str, message: str) -> None:
    try:
        with brain.db.atomic():
            brain.db.execute(SAVE_ERROR_SQL, (target, iso(brain.clock.now()), message))
    except MaxmemError as exc:  # the original error matters more
        log.debug("could not record the sync error: %s", exc)
    record_run(brain.db, job_name("sync", target), False, message, brain.clock)  # for doctor
