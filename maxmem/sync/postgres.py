"""Export brain.db to PostgreSQL (+ pgvector), so that several agents share one memory.

Each agent keeps its own brain.db and pushes it to one database: `export()` reads
brain.db's `changes` log past this target's cursor, upserts the current state of
every touched memory (deletes those gone) in batches, and moves the cursor only
after PostgreSQL committed the batch. The authoritative cursor is the `last_seq` of
this brain's row in `maxmem.instances`, written in the same PostgreSQL transaction as
the data, so a crash between the two commits replays nothing; the copy in brain.db's
`sync_targets` serves `status()` without a connection.

Rows are keyed by (instance_id, uid): the instance id is generated once per brain
and kept in its meta table, so two agents never overwrite each other's rows.

The schema lives in its own PostgreSQL schema, `maxmem`, versioned like brain.db's
(named migrations recorded in `maxmem.schema_migrations`). The embedding column is
added when the first brain with vectors exports: `vector(dim)` with an HNSW index
when pgvector is available, else `real[]` with a notice (search then scans exactly).
A later run converts real[] to vector once an admin installs pgvector.

psycopg (and pgvector's adapter) are imported lazily: `pip install 'maxmem[postgres]'`.
"""

from __future__ import annotations

import contextlib
import logging
import re
import socket
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np

from ..clock import iso
from ..config import Config
from ..errors import ConfigError, MaxmemError, MissingDependency
from ..jobs.runs import job_name, record_run
from ..store.db import Database
from .terms import Tokenizer

if TYPE_CHECKING:  # pragma: no cover
    import psycopg

    from ..brain import Brain

log = logging.getLogger("maxmem")

DEFAULT_BATCH_SIZE = 500
ANALYZE_AFTER = 1000  # rows changed in one run
DEFAULT_INDEX_MEMORY = "512MB"  # maintenance_work_mem while the HNSW index is built
_MEMORY = re.compile(r"^\d+\s*(kB|MB|GB)$")
# pg_advisory_xact_lock key for schema changes ("maxmem" in ASCII).
SCHEMA_LOCK = 0x6D61786D656D
# Connection defaults unless the DSN says otherwise: fail fast when the server is
# down, and notice a dead peer (network cut) within about a minute.
CONNECT_DEFAULTS = {
    "connect_timeout": "10",
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
    "tcp_user_timeout": "60000",
    "application_name": "maxmem-sync",
}

BOOKKEEPING = """
CREATE SCHEMA IF NOT EXISTS maxmem;
CREATE TABLE IF NOT EXISTS maxmem.schema_migrations (
    name       text PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
);
"""

CORE = """
CREATE TABLE maxmem.meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);

-- One row per exporting brain; last_seq is its cursor, committed with the data.
CREATE TABLE maxmem.instances (
    instance_id     text PRIMARY KEY,
    agent           text NOT NULL,
    embedder        text,
    host            text,
    first_export_at timestamptz NOT NULL DEFAULT now(),
    last_export_at  timestamptz NOT NULL DEFAULT now(),
    last_seq        bigint NOT NULL DEFAULT 0
);

CREATE TABLE maxmem.memories (
    instance_id      text NOT NULL,
    uid              text NOT NULL,
    agent            text NOT NULL,
    local_id         bigint NOT NULL,
    category         text NOT NULL,
    kind             text NOT NULL,
    title            text,
    content          text NOT NULL,
    tags             jsonb NOT NULL DEFAULT '[]',
    importance       double precision NOT NULL,
    status           text NOT NULL,
    started_at       timestamptz,
    resolved_at      timestamptz,
    source           text NOT NULL,
    session_id       text,
    metadata         jsonb NOT NULL DEFAULT '{}',
    content_hash     text NOT NULL,
    pinned           boolean NOT NULL DEFAULT false,
    superseded_by    text,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    last_recalled_at timestamptz,
    recall_count     integer NOT NULL DEFAULT 0,
    embedded_at      timestamptz,
    -- brain.db's FTS5 tokens as a tsvector literal (see maxmem/sync/terms.py)
    fts_terms        text NOT NULL DEFAULT '',
    fts_length       integer NOT NULL DEFAULT 0,
    fts_freq         jsonb NOT NULL DEFAULT '{}',   -- token -> [title, content, tags] counts
    tsv              tsvector GENERATED ALWAYS AS (fts_terms::tsvector) STORED,
    embedder         text,
    exported_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (instance_id, uid)
);
CREATE INDEX memories_tsv ON maxmem.memories USING gin (tsv);
CREATE INDEX memories_agent_created ON maxmem.memories (agent, created_at);
CREATE INDEX memories_created ON maxmem.memories (created_at);
CREATE INDEX memories_uid ON maxmem.memories (uid);
-- Row count and token total (bm25's N and average length) by an index-only scan.
CREATE INDEX memories_fts_length ON maxmem.memories (fts_length);

-- Cosine distance over real[] vectors, for servers without pgvector.
CREATE FUNCTION maxmem.cosine_distance(a real[], b real[])
RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT 1 - sum(x * y) / nullif(sqrt(sum(x * x)) * sqrt(sum(y * y)), 0)
    FROM unnest(a, b) AS t(x, y)
$$;
"""

PG_MIGRATIONS: list[tuple[str, str]] = [
    ("0001_core", CORE),
]

# The memories columns sent for each row, in COPY order, with their staging types.
STAGE_COLUMNS: list[tuple[str, str]] = [
    ("instance_id", "text"), ("uid", "text"), ("agent", "text"), ("local_id", "int8"),
    ("category", "text"), ("kind", "text"), ("title", "text"), ("content", "text"),
    ("tags", "text"), ("importance", "float8"), ("status", "text"), ("started_at", "text"),
    ("resolved_at", "text"), ("source", "text"), ("session_id", "text"), ("metadata", "text"),
    ("content_hash", "text"), ("pinned", "bool"), ("superseded_by", "text"),
    ("created_at", "text"), ("updated_at", "text"), ("last_recalled_at", "text"),
    ("recall_count", "int4"), ("embedded_at", "text"), ("fts_terms", "text"),
    ("fts_length", "int4"), ("fts_freq", "text"), ("embedder", "text"),
]
CASTS = {
    "tags": "jsonb", "metadata": "jsonb", "fts_freq": "jsonb", "started_at": "timestamptz",
    "resolved_at": "timestamptz",
    "created_at": "timestamptz", "updated_at": "timestamptz", "last_recalled_at": "timestamptz",
    "embedded_at": "timestamptz",
}

DELETE_SQL = "DELETE FROM maxmem.memories WHERE instance_id = %s AND uid = ANY(%s)"
INSTANCE_SQL = """
INSERT INTO maxmem.instances (instance_id, agent, embedder, host, last_seq)
VALUES (%s, %s, %s, %s, %s)
ON CONFLICT (instance_id) DO UPDATE SET
    agent = EXCLUDED.agent, embedder = EXCLUDED.embedder, host = EXCLUDED.host,
    last_seq = EXCLUDED.last_seq, last_export_at = now()
"""

# brain.db side -------------------------------------------------------------------

CHANGES_SQL = "SELECT seq, uid FROM changes WHERE seq > ? ORDER BY seq LIMIT ?"
STATE_SQL = "SELECT * FROM sync_targets WHERE target = ?"
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


class SyncError(MaxmemError):
    """PostgreSQL could not be reached or refused the export; nothing is lost locally."""


# -- DSN handling -------------------------------------------------------------

_URL_PASSWORD = re.compile(r"(postgres(?:ql)?://[^:/@\s]*:)([^@\s]*)(@)", re.IGNORECASE)
_KV_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)", re.IGNORECASE)
_KV_PAIR = re.compile(r"(\w+)\s*=\s*('(?:[^'\\]|\\.)*'|\S*)")


def mask_dsn(text: str) -> str:
    """`text` with every password in a libpq URL or key=value DSN replaced by ***."""
    return _KV_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***\3", text))


def _dsn_fields(dsn: str) -> dict[str, str]:
    if re.match(r"^postgres(ql)?://", dsn, re.IGNORECASE):
        parts = urlsplit(dsn)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        netloc = parts.netloc.rpartition("@")
        user = unquote(netloc[0].partition(":")[0]) if netloc[1] else ""
        fields = {"user": user, "host": unquote(netloc[2]), "dbname": unquote(parts.path.lstrip("/"))}
        return {**fields, **{k: v for k, v in query.items() if k in fields and v}}
    return {k: v.strip("'") for k, v in _KV_PAIR.findall(dsn)}


def target_name(dsn: str) -> str:
    """The password-free name of a DSN's database: user@host[:port]/dbname (the cursor's key)."""
    fields = _dsn_fields(dsn)
    host = fields.get("host", "")
    if fields.get("port") and ":" not in host:
        host = f"{host}:{fields['port']}"
    return f"{fields.get('user', '')}@{host}/{fields.get('dbname', '')}"


def resolve_dsn(dsn: str | None, env_dsn: str | None, config: Config) -> str:
    """--dsn, else MAXMEM_PG_DSN, else `dsn` under [sync.postgres] in the config file."""
    chosen = dsn or env_dsn or config.section("sync.postgres").get("dsn")
    if not chosen:
        where = config.config_path or "the config file"
        raise ConfigError(
            f"no PostgreSQL DSN: pass --dsn, set MAXMEM_PG_DSN, or set dsn under [sync.postgres] in {where}"
        )
    if not isinstance(chosen, str):
        raise ConfigError("[sync.postgres] dsn must be a libpq connection string")
    return chosen


def index_memory_from(config: Config) -> str:
    """[sync.postgres] index_memory: maintenance_work_mem for building the HNSW index."""
    value = str(config.section("sync.postgres").get("index_memory", DEFAULT_INDEX_MEMORY)).strip()
    if not _MEMORY.match(value):
        raise ConfigError(f"[sync.postgres] index_memory must look like 512MB or 2GB, not {value!r}")
    return value


def agent_label(config: Config, agent: str | None = None) -> str:
    """This brain's agent name in the shared database: --agent, [sync.postgres] agent,
    the configured agent, else the host name."""
    label = agent or config.section("sync.postgres").get("agent") or config.agent or socket.gethostname()
    return str(label)


def batch_size_from(config: Config, batch_size: int | None = None) -> int:
    value = batch_size or config.section("sync.postgres").get("batch_size") or DEFAULT_BATCH_SIZE
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"[sync.postgres] batch_size must be a whole number, not {value!r}") from None
    if not 1 <= number <= 100_000:
        raise ConfigError("[sync.postgres] batch_size must be from 1 to 100000")
    return number


# -- connections --------------------------------------------------------------

def psycopg_module() -> Any:
    try:
        import psycopg
    except ImportError:
        raise MissingDependency("psycopg (PostgreSQL sync)", "postgres") from None
    return psycopg


def register_pgvector(conn: Any) -> None:
    """Let psycopg send and read numpy vectors as pgvector's `vector`."""
    try:
        from pgvector.psycopg import register_vector
    except ImportError:
        raise MissingDependency("pgvector (PostgreSQL sync)", "postgres") from None
    register_vector(conn)


def describe_error(exc: BaseException, dsn: str) -> str:
    """The first line of a driver error, with the DSN's password masked."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
    password = _dsn_fields(dsn).get("password")
    if password:
        text = text.replace(password, "***")
    return mask_dsn(text)


def connect(dsn: str) -> psycopg.Connection[Any]:
    """An autocommit connection (transactions are explicit) or a one-line SyncError."""
    psycopg = psycopg_module()
    try:
        given = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        raise SyncError(f"the PostgreSQL DSN is not valid: {describe_error(exc, dsn)}") from None
    extra = {k: v for k, v in CONNECT_DEFAULTS.items() if k not in given}
    try:
        return psycopg.connect(dsn, autocommit=True, **extra)
    except psycopg.Error as exc:
        raise SyncError(f"cannot connect to PostgreSQL {target_name(dsn)}: {describe_error(exc, dsn)}") from None


# -- schema -------------------------------------------------------------------

@dataclass
class Schema:
    """What the shared database can store, read from maxmem.meta."""

    vector_type: str | None  # "vector", "real[]", or None before any vector was stored
    dim: int | None
    has_index: bool = False


def ensure_schema(conn: Any) -> list[str]:
    """Apply PostgreSQL migrations not yet applied, under an advisory lock; names applied.

    An up-to-date schema is only read: a role without CREATE on the database can
    export into a schema an admin (or an earlier run) created.
    """
    if conn.execute("SELECT to_regclass('maxmem.schema_migrations')").fetchone()[0] is not None:
        done = {row[0] for row in conn.execute("SELECT name FROM maxmem.schema_migrations")}
        if done == {name for name, _ in PG_MIGRATIONS}:
            return []
    applied = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        conn.execute(BOOKKEEPING)
        done = {row[0] for row in conn.execute("SELECT name FROM maxmem.schema_migrations")}
        known = {name for name, _ in PG_MIGRATIONS}
        if done - known:
            raise SyncError(
                f"the PostgreSQL schema has migrations this maxmem does not know "
                f"({', '.join(sorted(done - known))}): upgrade maxmem (pip install -U maxmem)"
            )
        for name, sql in PG_MIGRATIONS:
            if name not in done:
                conn.execute(sql)
                conn.execute("INSERT INTO maxmem.schema_migrations (name) VALUES (%s)", (name,))
                applied.append(name)
    return applied


def read_schema(conn: Any) -> Schema:
    meta = dict(conn.execute("SELECT key, value FROM maxmem.meta").fetchall())
    has_index = bool(conn.execute(
        "SELECT 1 FROM pg_indexes WHERE schemaname = 'maxmem' AND indexname = 'memories_embedding'"
    ).fetchone())
    dim = meta.get("embedding_dim")
    return Schema(meta.get("embedding_type"), int(dim) if dim else None, has_index)


def pgvector_state(conn: Any) -> tuple[bool, str | None]:
    """(usable, notice): pgvector installed or installable here; else why not."""
    psycopg = psycopg_module()
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return True, None
    if not conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone():
        return False, (
            "this PostgreSQL server has no pgvector extension: vectors are stored as real[] and "
            "searched by exact scan (slower); install pgvector and the next sync converts them"
        )
    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        return True, None
    except psycopg.errors.InsufficientPrivilege:
        return False, (
            "pgvector is installed on the server but this role may not create the extension: "
            "vectors are stored as real[] (exact, slower search) until an admin runs "
            "CREATE EXTENSION vector in this database"
        )


def ensure_embedding(conn: Any, dim: int) -> tuple[Schema, list[str]]:
    """Make sure memories has an embedding column; returns the schema and notices."""
    notices: list[str] = []
    schema = read_schema(conn)
    if schema.vector_type == "vector":
        return schema, notices
    usable, why = pgvector_state(conn)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        schema = read_schema(conn)  # another exporter may have done it meanwhile
        if schema.vector_type is None:
            column = f"vector({int(dim)})" if usable else "real[]"
            conn.execute(f"ALTER TABLE maxmem.memories ADD COLUMN embedding {column}")
            _set_meta(conn, "embedding_type", "vector" if usable else "real[]")
            _set_meta(conn, "embedding_dim", str(int(dim)))
        elif schema.vector_type == "real[]" and usable:
            # pgvector arrived since: convert in place (rows of another dimension have no vector).
            conn.execute(
                f"ALTER TABLE maxmem.memories ALTER COLUMN embedding TYPE vector({schema.dim}) "
                f"USING embedding::vector({schema.dim})"
            )
            _set_meta(conn, "embedding_type", "vector")
            notices.append("pgvector is now available: converted the real[] vectors to vector")
    schema = read_schema(conn)
    if schema.vector_type == "real[]" and why:
        notices.append(why)
    return schema, notices


def ensure_vector_index(conn: Any, notices: list[str], index_memory: str = DEFAULT_INDEX_MEMORY) -> bool:
    """Build the HNSW index if missing (after a bulk load it is far faster than growing it)."""
    schema = read_schema(conn)
    if schema.vector_type != "vector" or schema.has_index:
        return False
    psycopg = psycopg_module()
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            # HNSW builds about 5x faster when the graph fits in memory (100k × 384-d:
            # 285 s with the default 64MB, 56 s with 512MB); only for this transaction.
            conn.execute("SELECT set_config('maintenance_work_mem', %s, true)", (index_memory,))
            conn.execute(
                "CREATE INDEX IF NOT EXISTS memories_embedding ON maxmem.memories "
                "USING hnsw (embedding vector_cosine_ops)"
            )
    except psycopg.errors.InsufficientPrivilege:
        notices.append("the HNSW index is missing and only the table's owner may build it: "
                       "vector search scans exactly until the owner's next sync")
        return False
    return True


def _set_meta(conn: Any, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO maxmem.meta (key, value) VALUES (%s, %s) "
        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        (key, value),
    )


# -- brain.db side ----------------------------------------------------------------

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


def local_cursor(db: Database, target: str) -> int:
    row = db.one(STATE_SQL, (target,))
    return int(row["cursor"]) if row else 0


def _save_cursor(db: Database, target: str, cursor: int) -> None:
    with db.atomic():
        db.execute(SAVE_CURSOR_SQL, (target, cursor))


# -- export ---------------------------------------------------------------------

@dataclass
class SyncReport:
    """What one `export` did."""

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


class Exporter:
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
                f"vectors not exported: this database holds {self.schema.dim}-d vectors, this brain "
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

    def remote_cursor(self, instance: str) -> int | None:
        row = self.conn.execute(
            "SELECT last_seq FROM maxmem.instances WHERE instance_id = %s", (instance,)
        ).fetchone()
        return int(row[0]) if row else None

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
                (report.instance_id, report.agent, self.embedder, self.host, batch.end_seq),
            )
        report.upserted += len(batch.rows)
        report.deleted += len(batch.deleted)
        report.batches += 1

    def _values(self, row: Mapping[str, Any], vector: np.ndarray | None,
                fts: Mapping[int, list[str | None]]) -> list[Any]:
        document = self.tokenizer.document(fts.get(row["id"], []))
        values: list[Any] = []
        for name, _ in STAGE_COLUMNS:
            if name == "instance_id":
                values.append(self.report.instance_id)
            elif name == "agent":
                values.append(row["agent"] or self.report.agent)
            elif name == "local_id":
                values.append(row["id"])
            elif name == "pinned":
                values.append(bool(row["pinned"]))
            elif name == "fts_terms":
                values.append(document.terms)
            elif name == "fts_length":
                values.append(document.length)
            elif name == "fts_freq":
                values.append(document.counts)
            elif name == "embedder":
                values.append(self.embedder if row["embedded_at"] else None)
            elif name in ("importance",):
                values.append(float(row[name]))
            else:
                values.append(row[name])
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
    just died; the error export() raises already says so, in one line."""

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


def export(
    brain: Brain,
    dsn: str,
    agent: str | None = None,
    batch_size: int | None = None,
) -> SyncReport:
    """Push brain.db's changes since the last run to the PostgreSQL database at `dsn`.

    Raises SyncError (one line, password masked) when PostgreSQL is down, refuses the
    login, or the connection drops; batches committed before that stay exported and
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
            exporter = Exporter(brain, conn, report)
            exporter.prepare()
            remote = exporter.remote_cursor(report.instance_id)
            cursor = remote or 0
            restored = remote is not None and remote > local_max
            if restored:
                report.notices.append(
                    f"PostgreSQL has changes up to #{remote} from this brain but brain.db ends at #{local_max} "
                    "(restored from a backup?): exporting everything again"
                )
                cursor = 0
            while True:
                batch = read_batch(brain.db, cursor, size, exporter.tokenizer)
                if batch is None:
                    break
                exporter.send(batch)
                cursor = batch.end_seq
                _save_cursor(brain.db, target, cursor)  # only after PostgreSQL committed
                log.info("sync: %s up to change #%d", target, cursor)
            if restored:
                pruned = exporter.prune()
                report.deleted += pruned
            if report.upserted + report.deleted >= ANALYZE_AFTER:
                # Fresh statistics let the planner pick the HNSW and GIN indexes at once, and a
                # vacuumed table lets search count rows and tokens from an index alone.
                conn.execute("VACUUM (ANALYZE) maxmem.memories")  # only a warning for non-owners
            index_started = time.monotonic()
            report.index_built = ensure_vector_index(conn, report.notices, index_memory)
            report.index_seconds = time.monotonic() - index_started if report.index_built else 0.0
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
    report.backlog = _backlog(brain.db, cursor)
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


def _backlog(db: Database, cursor: int) -> int:
    return int(db.scalar("SELECT count(*) FROM changes WHERE seq > ?", (cursor,)))


def _record_error(brain: Brain, target: str, message: str) -> None:
    try:
        with brain.db.atomic():
            brain.db.execute(SAVE_ERROR_SQL, (target, iso(brain.clock.now()), message))
    except MaxmemError as exc:  # the original error matters more
        log.debug("could not record the sync error: %s", exc)
    record_run(brain.db, job_name("sync", target), False, message, brain.clock)  # for doctor


# -- status ---------------------------------------------------------------------

@dataclass
class TargetStatus:
    target: str
    cursor: int
    backlog: int
    last_run_at: str | None
    last_ok_at: str | None
    last_error: str | None
    last_upserted: int | None
    last_deleted: int | None
    last_seconds: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def status(brain: Brain, dsn: str | None = None) -> list[TargetStatus]:
    """Cursor, backlog and last run of each database this brain exports to (no connection).

    `dsn`, the configured target, is listed even before its first run.
    """
    db = brain.db
    rows = db.rows("SELECT * FROM sync_targets ORDER BY target")
    if dsn is not None and target_name(dsn) not in {r["target"] for r in rows}:
        rows.append({"target": target_name(dsn), "cursor": 0})  # configured, never synced
    out = []
    for row in rows:
        cursor = int(row.get("cursor") or 0)
        out.append(TargetStatus(
            row["target"], cursor, _backlog(db, cursor), row.get("last_run_at"), row.get("last_ok_at"),
            row.get("last_error"), row.get("last_upserted"), row.get("last_deleted"),
            row.get("last_seconds"),
        ))
    return out
