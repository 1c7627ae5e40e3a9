"""The shared database's schema: its own PostgreSQL schema, `maxmem`, versioned like
brain.db's (named migrations recorded in `maxmem.schema_migrations`).

The embedding column is added when the first brain with vectors pushes: `vector(dim)`
with an HNSW index when pgvector is available, else `real[]` with a notice (search then
scans exactly). A later run converts real[] to vector once an admin installs pgvector.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .pgconnect import DEFAULT_INDEX_MEMORY, SyncError, psycopg_module

# pg_advisory_xact_lock key for schema changes ("maxmem" in ASCII).
SCHEMA_LOCK = 0x6D61786D656D

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

# brain.db's second keyword index, memories_spaced (scripts written without spaces:
# search/spaced.py), as its own columns, so that search adds its own bm25 as local search
# does (sync/terms.py): spaced_length is NULL for a memory without a row there. Rows
# pushed before hold those tokens mixed into fts_terms and none here: each brain pushes
# its memories again on its next run (instances.terms_version, TERMS_VERSION).
SPACED = """
ALTER TABLE maxmem.memories
    ADD COLUMN spaced_terms  text NOT NULL DEFAULT '',
    ADD COLUMN spaced_length integer,
    ADD COLUMN spaced_freq   jsonb NOT NULL DEFAULT '{}',  -- token or pair -> [own, context] counts
    ADD COLUMN spaced_tsv    tsvector GENERATED ALWAYS AS (spaced_terms::tsvector) STORED;
CREATE INDEX memories_spaced_tsv ON maxmem.memories USING gin (spaced_tsv);
-- memories_spaced's row count and token total, by an index-only scan.
CREATE INDEX memories_spaced_length ON maxmem.memories (spaced_length) WHERE spaced_length IS NOT NULL;
ALTER TABLE maxmem.instances ADD COLUMN terms_version integer NOT NULL DEFAULT 1;
"""

PG_MIGRATIONS: list[tuple[str, str]] = [
    ("0001_core", CORE),
    ("0002_spaced_terms", SPACED),
]


# The form of the keyword tokens a brain's rows carry (maxmem.instances.terms_version):
# 1, memories_spaced's characters mixed into fts_terms; 2, apart in the spaced_* columns
# (sync/terms.py). A brain whose rows carry an older form pushes every memory again
# (pgpush.push): the rows that change are rewritten, the others left as they are. The
# version moves with the first batch's cursor, so a run cut short goes on from there.
TERMS_VERSION = 2
# The agents whose rows carry an older form (search says so: a word inside their text in
# those scripts is found once they push again).
STALE_AGENTS_SQL = "SELECT DISTINCT agent FROM maxmem.instances WHERE terms_version < %s ORDER BY agent"


@dataclass
class Schema:
    """What the shared database can store, read from maxmem.meta."""

    vector_type: str | None  # "vector", "real[]", or None before any vector was stored
    dim: int | None
    has_index: bool = False


def ensure_schema(conn: Any) -> list[str]:
    """Apply PostgreSQL migrations not yet applied, under an advisory lock; names applied.

    An up-to-date schema is only read: a role without CREATE on the database can
    push into a schema an admin (or an earlier run) created.
    """
    done: set[str] = set()
    if conn.execute("SELECT to_regclass('maxmem.schema_migrations')").fetchone()[0] is not None:
        done = {row[0] for row in conn.execute("SELECT name FROM maxmem.schema_migrations")}
        if done == {name for name, _ in PG_MIGRATIONS}:
            return []
    applied: list[str] = []
    try:
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
    except psycopg_module().errors.InsufficientPrivilege:
        pending = [name for name, _ in PG_MIGRATIONS if name not in done]
        if not done:
            raise
        raise SyncError(
            f"the maxmem schema in PostgreSQL needs upgrading ({', '.join(pending)}), which only the owner of "
            "its tables may do: run  maxmem sync postgres  once as that role; nothing was pushed"
        ) from None
    return applied


def pending_migrations(conn: Any) -> list[str]:
    """The PostgreSQL migrations this maxmem knows that the database has not had yet."""
    done = {row[0] for row in conn.execute("SELECT name FROM maxmem.schema_migrations")}
    return [name for name, _ in PG_MIGRATIONS if name not in done]


def stale_agents(conn: Any) -> list[str]:
    """The agents whose memories there were pushed in an older form (TERMS_VERSION)."""
    return [row[0] for row in conn.execute(STALE_AGENTS_SQL, (TERMS_VERSION,))]


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
        schema = read_schema(conn)  # another brain pushing may have done it meanwhile
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
