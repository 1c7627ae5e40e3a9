"""Ordered, named schema migrations for brain.db. Append-only: never edit a shipped one.

Each migration runs in one transaction together with its row in `schema_migrations`;
`PRAGMA user_version` holds the count, so a newer brain.db opened by an older maxmem
is refused instead of being written in a shape it does not know.
"""

from __future__ import annotations

from collections.abc import Callable

from ..clock import Clock, iso
from ..errors import DatabaseError
from .db import Database

Step = str | Callable[[Database], None]

CORE = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE memories (
    id               INTEGER PRIMARY KEY,
    uid              TEXT NOT NULL UNIQUE,
    category         TEXT NOT NULL CHECK (category IN ('core', 'daily', 'conversation', 'project')),
    kind             TEXT NOT NULL DEFAULT 'note',
    title            TEXT,
    content          TEXT NOT NULL,
    tags             TEXT NOT NULL DEFAULT '[]',
    importance       REAL NOT NULL DEFAULT 0.5 CHECK (importance >= 0 AND importance <= 1),
    status           TEXT NOT NULL DEFAULT 'active'
                     CHECK (status IN ('active', 'ongoing', 'resolved', 'superseded')),
    started_at       TEXT,
    resolved_at      TEXT,
    source           TEXT NOT NULL DEFAULT 'manual',
    agent            TEXT,
    session_id       TEXT,
    metadata         TEXT NOT NULL DEFAULT '{}',
    content_hash     TEXT NOT NULL,
    pinned           INTEGER NOT NULL DEFAULT 0,
    superseded_by    TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    last_recalled_at TEXT,
    recall_count     INTEGER NOT NULL DEFAULT 0,
    embedded_at      TEXT
);
CREATE INDEX memories_category_created ON memories (category, created_at);
CREATE INDEX memories_created ON memories (created_at);
CREATE INDEX memories_hash ON memories (content_hash, category);
CREATE INDEX memories_session ON memories (session_id);
CREATE INDEX memories_pending ON memories (id) WHERE embedded_at IS NULL;

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    title, content, tags,
    content = 'memories', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, title, content, tags)
    VALUES (new.id, new.title, new.content, new.tags);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, title, content, tags)
    VALUES ('delete', old.id, old.title, old.content, old.tags);
END;
CREATE TRIGGER memories_au AFTER UPDATE OF title, content, tags ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, title, content, tags)
    VALUES ('delete', old.id, old.title, old.content, old.tags);
    INSERT INTO memories_fts (rowid, title, content, tags)
    VALUES (new.id, new.title, new.content, new.tags);
END;

-- A text is embedded once per model, ever.
-- (A rowid table: vectors are kilobytes, too large for a WITHOUT ROWID b-tree.)
CREATE TABLE embeddings_cache (
    model        TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    vector       BLOB NOT NULL,
    PRIMARY KEY (model, content_hash)
);

-- Sign bits and int8 codes of each memory's centred vector: the in-RAM candidate
-- stages of vector search (search.py). Derived from memories_vec.
CREATE TABLE vector_codes (
    id    INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    bits  BLOB NOT NULL,
    codes BLOB NOT NULL
);

-- Append-only log of every write: feeds `history` and the Postgres exporter.
CREATE TABLE changes (
    seq  INTEGER PRIMARY KEY AUTOINCREMENT,
    uid  TEXT NOT NULL,
    op   TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
    at   TEXT NOT NULL,
    data TEXT
);
CREATE INDEX changes_uid ON changes (uid, seq);
"""

# One row per Markdown file version brought in by `maxmem import --format markdown`:
# the record of what was imported, and what makes importing a file again a no-op.
MARKDOWN_IMPORTS = """
CREATE TABLE markdown_imports (
    path        TEXT NOT NULL,
    sha256      TEXT NOT NULL,
    imported_at TEXT NOT NULL,
    added       INTEGER NOT NULL,
    existing    INTEGER NOT NULL,
    PRIMARY KEY (path, sha256)
);
"""

CAPTURE = """
-- Raw captured transcripts (maxmem.capture): the full context behind conversation memories.
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,            -- the agent's own session id
    format      TEXT NOT NULL,               -- openclaw, claude-code, codex, jsonl, chatgpt, markdown
    agent       TEXT,
    title       TEXT,
    cwd         TEXT,
    model       TEXT,
    parent_id   TEXT,                        -- the session a sub-agent or fork came from
    source_file TEXT,                        -- the transcript last read for it
    started_at  TEXT,
    updated_at  TEXT,                        -- time of its latest turn
    turn_count  INTEGER NOT NULL DEFAULT 0,
    metadata    TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX sessions_updated ON sessions (updated_at);

CREATE TABLE turns (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,            -- order within the session, from 1
    key         TEXT NOT NULL,               -- idempotency key: the entry id, else offset or hash
    fingerprint TEXT NOT NULL,               -- hash of role, time and text: catches copies
    role        TEXT NOT NULL,               -- user, assistant, tool, summary
    kind        TEXT NOT NULL DEFAULT 'message',
    text        TEXT NOT NULL,               -- redacted; tool results truncated
    speaker     TEXT,
    model       TEXT,
    usage       TEXT,                        -- JSON token usage as the agent wrote it
    entry_ids   TEXT NOT NULL DEFAULT '[]',  -- JSON ids of the transcript records
    created_at  TEXT NOT NULL,               -- when the turn happened (UTC)
    source_file TEXT,
    UNIQUE (session_id, key),
    UNIQUE (session_id, seq)
);
CREATE UNIQUE INDEX turns_fingerprint ON turns (fingerprint);
CREATE INDEX turns_created ON turns (created_at);

CREATE TABLE tool_calls (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    call_id     TEXT NOT NULL,
    turn_id     INTEGER REFERENCES turns (id) ON DELETE SET NULL,  -- the turn that made the call
    name        TEXT,
    arguments   TEXT,                        -- redacted, truncated
    result      TEXT,                        -- redacted, truncated
    status      TEXT,                        -- pending, ok, error
    duration_ms INTEGER,
    started_at  TEXT,
    finished_at TEXT,
    UNIQUE (session_id, call_id)
);
CREATE INDEX tool_calls_name ON tool_calls (name);

-- One cursor per transcript file: what makes capture incremental and idempotent.
CREATE TABLE capture_files (
    path        TEXT PRIMARY KEY,
    format      TEXT NOT NULL,
    device      INTEGER,
    inode       INTEGER,
    size        INTEGER NOT NULL DEFAULT 0,  -- bytes examined by the last read
    mtime_ns    INTEGER,
    head_hash   TEXT,                        -- hash of the first line: changes on rewrite
    byte_offset INTEGER NOT NULL DEFAULT 0,  -- everything before it is stored
    settled     INTEGER NOT NULL DEFAULT 0,  -- the last read saw the file idle
    state       TEXT NOT NULL DEFAULT '{}',  -- the reader's JSON state at byte_offset
    turns       INTEGER NOT NULL DEFAULT 0,  -- turns stored from this file
    skipped     INTEGER NOT NULL DEFAULT 0,  -- malformed lines skipped so far
    last_error  TEXT,
    first_seen_at TEXT NOT NULL,
    read_at     TEXT
);
CREATE INDEX capture_files_inode ON capture_files (device, inode);
"""

# Folder sync between one's own machines (maxmem/sync/folder.py). sync_memories is
# what sync knows of each memory: the stamp of every field's last write and a hash
# of its value (the text itself stays in memories), or the tombstone of a forgotten
# one; sync_files the files of the folder this brain wrote or applied; sync_conflicts
# the concurrent edits of one field, the value kept and the one dropped named by stamp.
FOLDER_SYNC = """
CREATE TABLE sync_memories (
    uid       TEXT PRIMARY KEY,
    stamps    TEXT NOT NULL DEFAULT '{}',  -- JSON field -> [stamp, stamp it replaced]; "*" for the rest
    hashes    BLOB,                        -- 8 bytes per synced field; NULL once forgotten
    forgotten TEXT                         -- the tombstone's stamp
) WITHOUT ROWID;

CREATE TABLE sync_files (
    path       TEXT PRIMARY KEY,           -- relative to the folder
    machine    TEXT NOT NULL,              -- the writer, from the file's authenticated header
    number     INTEGER NOT NULL,
    sha256     TEXT NOT NULL,
    size       INTEGER NOT NULL,
    mtime_ns   INTEGER,
    records    INTEGER NOT NULL,
    written    INTEGER NOT NULL DEFAULT 0, -- 1: this brain wrote it
    applied_at TEXT NOT NULL
);
CREATE INDEX sync_files_machine ON sync_files (machine, number);

CREATE TABLE sync_conflicts (
    uid   TEXT NOT NULL,
    field TEXT NOT NULL,
    kept  TEXT NOT NULL,                   -- the winning write's stamp
    lost  TEXT NOT NULL,                   -- the dropped write's stamp
    at    TEXT NOT NULL,
    PRIMARY KEY (uid, field, lost)
);
CREATE INDEX sync_conflicts_at ON sync_conflicts (at);
"""

# One cursor per PostgreSQL database this brain pushes to (maxmem/sync/pgpush.py).
SYNC_TARGETS = """
CREATE TABLE sync_targets (
    target        TEXT PRIMARY KEY,           -- the DSN without its password: user@host:port/db
    cursor        INTEGER NOT NULL DEFAULT 0, -- changes.seq exported and committed there
    last_run_at   TEXT,
    last_ok_at    TEXT,
    last_error    TEXT,                       -- one line, password masked
    last_upserted INTEGER,
    last_deleted  INTEGER,
    last_seconds  REAL
);
"""

# Session context (maxmem/search/neighbours.py): memories.context holds the text of a
# conversation memory's neighbours in its session. The keyword index reads memories
# through a view that adds each memory's date written out ("8 May 2023"), so the
# `context` column of memories_fts = date + neighbours' text. Deletes read the old
# values from the same view (BEFORE triggers), so the index always removes exactly
# what it was given.
SESSION_CONTEXT = """
ALTER TABLE memories ADD COLUMN context TEXT;

DROP TRIGGER memories_ai;
DROP TRIGGER memories_ad;
DROP TRIGGER memories_au;
DROP TABLE memories_fts;

CREATE VIEW memories_fts_source AS
SELECT id, title, content, tags,
    CASE WHEN created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*' THEN
        CAST(CAST(substr(created_at, 9, 2) AS INTEGER) AS TEXT) || ' ' ||
        CASE substr(created_at, 6, 2)
        WHEN '01' THEN 'January'
        WHEN '02' THEN 'February'
        WHEN '03' THEN 'March'
        WHEN '04' THEN 'April'
        WHEN '05' THEN 'May'
        WHEN '06' THEN 'June'
        WHEN '07' THEN 'July'
        WHEN '08' THEN 'August'
        WHEN '09' THEN 'September'
        WHEN '10' THEN 'October'
        WHEN '11' THEN 'November'
        WHEN '12' THEN 'December'
        ELSE '' END || ' ' || substr(created_at, 1, 4)
    ELSE '' END || coalesce(' ' || context, '') AS context
FROM memories;

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    title, content, tags, context,
    content = 'memories_fts_source', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, title, content, tags, context)
    SELECT id, title, content, tags, context FROM memories_fts_source WHERE id = new.id;
END;
CREATE TRIGGER memories_bd BEFORE DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, title, content, tags, context)
    SELECT 'delete', id, title, content, tags, context FROM memories_fts_source WHERE id = old.id;
END;
CREATE TRIGGER memories_bu BEFORE UPDATE OF title, content, tags, context, created_at ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, title, content, tags, context)
    SELECT 'delete', id, title, content, tags, context FROM memories_fts_source WHERE id = old.id;
END;
CREATE TRIGGER memories_au AFTER UPDATE OF title, content, tags, context, created_at ON memories BEGIN
    INSERT INTO memories_fts (rowid, title, content, tags, context)
    SELECT id, title, content, tags, context FROM memories_fts_source WHERE id = new.id;
END;
"""


def _session_context(db: Database) -> None:
    drop, create = SESSION_CONTEXT.split("CREATE VIEW", 1)
    for statement in _statements(drop):
        db.execute(statement)
    _backfill_neighbour_text(db)  # with no keyword index to keep in step yet
    for statement in _statements("CREATE VIEW" + create):
        db.execute(statement)
    db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")


# 0005's data step, frozen as it shipped: the text of the two memories before and the two
# after each session memory, 400 characters a side cut at a space. neighbours.py computes
# the same for later writes and may change; a migration must not change with it.
NEIGHBOUR_CHARS = 400


def _backfill_neighbour_text(db: Database) -> None:
    sessions = [row[0] for row in db.execute(
        "SELECT DISTINCT session_id FROM memories WHERE category = 'conversation' AND session_id IS NOT NULL")]
    for session_id in sessions:
        rows = db.execute("SELECT id, content FROM memories WHERE session_id = ? AND category = 'conversation' "
                          "ORDER BY created_at, id", (session_id,)).fetchall()
        texts = [" ".join(str(content).split()) for _, content in rows]
        for pos, (memory_id, _) in enumerate(rows):
            sides = (_side(texts[max(0, pos - 2):pos][::-1], from_end=True),
                     _side(texts[pos + 1:pos + 3], from_end=False))
            db.execute("UPDATE memories SET context = ? WHERE id = ?", (" ".join(p for p in sides if p), memory_id))


def _side(texts: list[str], from_end: bool) -> str:
    """Up to NEIGHBOUR_CHARS of `texts` (nearest first), cut on the side away from the memory."""
    kept: list[str] = []
    left = NEIGHBOUR_CHARS
    for text in texts:
        if left <= 0:
            break
        if len(text) > left:
            text = text[-left:] if from_end else text[:left]
            space = text.find(" ") if from_end else text.rfind(" ")
            text = (text[space + 1:] if from_end else text[:space]) if space > 0 else text
        kept.append(text)
        left -= len(text) + 1
    return " ".join(kept[::-1] if from_end else kept)


# Keyword search in scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer,
# Myanmar) and in Hangul, whose words carry particles: unicode61 makes a whole run of
# such characters one token, so a word inside it is never found. memories_spaced holds
# only those characters of a memory, one token each (a '0' stands where other text was),
# so that a query's pairs of characters are found as two-token phrases
# (maxmem/search/spaced.py). Only memories holding such characters get a row; the
# triggers test that with one GLOB, so an English brain pays nothing else. Contentless
# with contentless_delete: a delete needs only the rowid, and secure-delete leaves no
# trace of a forgotten memory. Frozen as shipped: spaced.py keeps its own copy of the
# ranges (a test checks that the two agree).
SPACED_RANGES = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1100, 0x11FF), (0x1780, 0x17FF), (0x3040, 0x30FF),
                 (0x3130, 0x318F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF),
                 (0xFF66, 0xFF9F), (0x20000, 0x2FFFD))
SPACED_CHARS = 10_000
SPACED_CLASS = "[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in SPACED_RANGES) + "]"


def _spaced_sql(text: str) -> str:
    """SQL for the script characters of `text`, one a token, a '0' where other text was.

    Walked byte by byte over the UTF-8 (a blob: substr there costs the same at any
    offset, where substr of text counts characters from the start): every character of
    SPACED_RANGES is 3 or 4 bytes long, so it starts at a byte E0-F4; continuation bytes
    (80-BF) give nothing, and any other character gives a '0' when the one before it
    (its last 3 or 4 bytes) was a script character. Each byte's read still copies the
    blob, so only the first SPACED_CHARS characters are indexed (about 40 ms a write of
    that many CJK characters)."""
    def char(start: str, size: int) -> str:
        return f"CAST(substr(s.b, {start}, {size}) AS TEXT)"
    lead = "hex(substr(s.b, j.key + 1, 1))"
    script = f"'{SPACED_CLASS}'"
    return (f"(SELECT group_concat(CASE WHEN {lead} GLOB '[89AB]?' THEN NULL "
            f"WHEN {lead} GLOB 'E?' AND {char('j.key + 1', 3)} GLOB {script} THEN {char('j.key + 1', 3)} "
            f"WHEN {lead} GLOB 'F?' AND {char('j.key + 1', 4)} GLOB {script} THEN {char('j.key + 1', 4)} "
            f"WHEN {char('j.key - 2', 3)} GLOB {script} OR {char('j.key - 3', 4)} GLOB {script} THEN '0' END, ' ' "
            f"ORDER BY j.key) FROM (SELECT CAST(substr({text}, 1, {SPACED_CHARS}) AS BLOB) AS b) AS s, "
            "json_each('[' || substr(replace(hex(zeroblob(length(s.b))), '00', ',0'), 2) || ']') AS j)")


def _spaced_step(row: str) -> tuple[str, str, str]:
    """The GLOB test and the two column expressions of memories_spaced for `row` (new, old, m)."""
    own = f"coalesce({row}.title, '') || ' ' || {row}.content || ' ' || {row}.tags"
    held = f"({own} || ' ' || coalesce({row}.context, '')) GLOB '*{SPACED_CLASS}*'"
    return held, _spaced_sql(own), _spaced_sql(f"coalesce({row}.context, '')")


def _spaced_index(db: Database) -> None:
    new_held, new_own, new_context = _spaced_step("new")
    old_held = _spaced_step("old")[0]
    m_held, m_own, m_context = _spaced_step("m")
    db.execute("CREATE VIRTUAL TABLE memories_spaced USING fts5 (own, context, content = '', "
               "contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0 categories ''L* N* Co M*''')")
    db.execute("INSERT INTO memories_spaced (memories_spaced, rank) VALUES ('secure-delete', 1)")
    db.execute(f"CREATE TRIGGER memories_spaced_ai AFTER INSERT ON memories WHEN {new_held} BEGIN "
               f"INSERT INTO memories_spaced (rowid, own, context) VALUES (new.id, {new_own}, {new_context}); END")
    db.execute(f"CREATE TRIGGER memories_spaced_ad AFTER DELETE ON memories WHEN {old_held} BEGIN "
               "DELETE FROM memories_spaced WHERE rowid = old.id; END")
    db.execute(f"CREATE TRIGGER memories_spaced_au AFTER UPDATE OF title, content, tags, context ON memories "
               f"WHEN {old_held} OR {new_held} BEGIN "
               "DELETE FROM memories_spaced WHERE rowid = old.id; "
               f"INSERT INTO memories_spaced (rowid, own, context) SELECT new.id, {new_own}, {new_context} "
               f"WHERE {new_held}; END")
    db.execute(f"INSERT INTO memories_spaced (rowid, own, context) SELECT m.id, {m_own}, {m_context} "
               f"FROM memories AS m WHERE {m_held}")


MIGRATIONS: list[tuple[str, Step]] = [
    ("0001_core", CORE),
    ("0002_markdown_imports", MARKDOWN_IMPORTS),
    ("0003_capture", CAPTURE),
    ("0004_sync_targets", SYNC_TARGETS),
    ("0005_session_context", _session_context),
    # Deleting from the keyword index removes the entries' tokens from the index itself,
    # not only marks them deleted (FTS5, SQLite 3.42+): forgetting leaves no trace there.
    ("0006_fts_secure_delete", "INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1)"),
    # The highest memory id ever given, so a forgotten memory's id is never given again
    # (rows.Rows.next_id): from the stored ids and the ids the change log still names.
    ("0007_last_id", """
INSERT OR IGNORE INTO meta (key, value)
SELECT 'last_id', max(coalesce((SELECT max(id) FROM memories), 0),
                      coalesce((SELECT max(CAST(json_extract(data, '$.id') AS INTEGER)) FROM changes
                                WHERE data IS NOT NULL), 0))
"""),
    ("0008_folder_sync", FOLDER_SYNC),
    # What `maxmem import --from AGENT` read (maxmem.importers): one row per item (a bullet, a
    # paragraph, a database row) with its identity in its source (a hash of file, headings and
    # place, or table/row), where it was last read, a hash of its text and the memory it became.
    # Hashes and places only, never text: a forget leaves no copy here.
    ("0009_agent_imports", """
CREATE TABLE agent_imports (
    source      TEXT NOT NULL,
    item        TEXT NOT NULL,
    path        TEXT NOT NULL,
    line        INTEGER,
    sha256      TEXT NOT NULL,
    uid         TEXT NOT NULL,
    imported_at TEXT NOT NULL,
    gone_at     TEXT,
    PRIMARY KEY (source, item)
);
CREATE INDEX agent_imports_path ON agent_imports (source, path);
"""),
    # The embeddings cache is keyed by the hash of the text embedded (title and content),
    # not of the content alone as memories.content_hash is: its column says so.
    ("0010_cache_text_hash", "ALTER TABLE embeddings_cache RENAME COLUMN content_hash TO text_hash"),
    # Claude Code's hooks record their captures under the harness's one spelling,
    # hook:claude-code (maxmem.hooks); the runs recorded as hook:claude carry on there.
    ("0011_hook_runs_claude_code", """
INSERT OR IGNORE INTO meta (key, value)
SELECT replace(key, ':hook:claude', ':hook:claude-code'), value FROM meta
WHERE key IN ('last_run:hook:claude', 'last_ok:hook:claude', 'last_fail:hook:claude');
DELETE FROM meta WHERE key IN ('last_run:hook:claude', 'last_ok:hook:claude', 'last_fail:hook:claude');
"""),
    ("0012_spaced_index", _spaced_index),
    # Searches followed by a `get` (store/fetched.py): the recent searches, kept minutes,
    # and each (query, memory fetched after it) pair, a question `maxmem tune` asks.
    ("0013_fetched", """
CREATE TABLE recent_searches (
    id    INTEGER PRIMARY KEY,
    at    TEXT NOT NULL,
    query TEXT NOT NULL,
    ids   TEXT NOT NULL
);
CREATE INDEX recent_searches_at ON recent_searches (at);
CREATE TABLE fetched (
    id        INTEGER PRIMARY KEY,
    at        TEXT NOT NULL,
    query     TEXT NOT NULL,
    memory_id INTEGER NOT NULL,
    UNIQUE (query, memory_id)
);
CREATE INDEX fetched_at ON fetched (at);
"""),
]

BOOKKEEPING = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    name       TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
)
"""


def schema_version(db: Database) -> int:
    return int(db.scalar("PRAGMA user_version") or 0)


def migrate(db: Database, clock: Clock | None = None) -> list[str]:
    """Apply every migration not yet applied; return the names applied now."""
    clock = clock or Clock()
    current = schema_version(db)
    if current > len(MIGRATIONS):
        raise DatabaseError(
            f"{db.path} has schema version {current}, newer than this maxmem knows "
            f"({len(MIGRATIONS)}): upgrade maxmem (pip install -U maxmem)"
        )
    if current == len(MIGRATIONS):
        return []
    applied_now: list[str] = []
    with db.atomic():
        db.execute(BOOKKEEPING)
        done = {row["name"] for row in db.rows("SELECT name FROM schema_migrations")}
    for index, (name, step) in enumerate(MIGRATIONS, start=1):
        if name in done:
            continue
        with db.atomic():
            # Another process may have applied it while we waited for the lock.
            if db.scalar("SELECT 1 FROM schema_migrations WHERE name = ?", (name,)):
                continue
            if callable(step):
                step(db)
            else:
                for statement in _statements(step):
                    db.execute(statement)
            db.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                (name, iso(clock.now())),
            )
            db.execute(f"PRAGMA user_version = {index:d}")
        applied_now.append(name)
    return applied_now


def _statements(script: str) -> list[str]:
    """Split a DDL script on statement ends that apsw.complete accepts (triggers hold ';')."""
    import apsw

    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--") and not buffer.strip():
            continue
        buffer += line
        if apsw.complete(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
