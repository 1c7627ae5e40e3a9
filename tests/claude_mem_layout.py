"""A claude-mem database in claude-mem's own schema, for the import tests and bench.

The DDL and the shape of the rows are those of a database that claude-mem 13.25.3's own
code created and filled (its worker bundle's SessionStore: createSDKSession,
updateMemorySessionId, storeObservations, storeObservation, storeSummary).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

# The tables the import reads, and the ones they refer to, as `.schema` prints them from a
# database made by claude-mem 13.25.3 (schema version 52), lines wrapped: its later migrations
# append their columns to the CREATE TABLE text, so discovery_tokens follows created_at_epoch.
CLAUDE_MEM_DDL = """
CREATE TABLE schema_versions (
  id INTEGER PRIMARY KEY,
  version INTEGER UNIQUE NOT NULL,
  applied_at TEXT NOT NULL
);
CREATE TABLE sdk_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  content_session_id TEXT NOT NULL,
  memory_session_id TEXT UNIQUE,
  project TEXT NOT NULL,
  platform_source TEXT NOT NULL DEFAULT 'claude',
  user_prompt TEXT,
  started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL,
  completed_at TEXT,
  completed_at_epoch INTEGER,
  status TEXT CHECK(status IN ('active', 'completed', 'failed')) NOT NULL DEFAULT 'active'
, worker_port INTEGER, prompt_counter INTEGER DEFAULT 0, custom_title TEXT, observed_model TEXT, observed_billing TEXT);
CREATE TABLE IF NOT EXISTS "session_summaries" (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  request TEXT,
  investigated TEXT,
  learned TEXT,
  completed TEXT,
  next_steps TEXT,
  files_read TEXT,
  files_edited TEXT,
  notes TEXT,
  prompt_number INTEGER,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL, discovery_tokens INTEGER DEFAULT 0, merged_into_project TEXT,
  synced_at INTEGER, origin_device_id TEXT, origin_local_id TEXT, sync_rev TEXT NOT NULL DEFAULT '1',
  FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE TABLE IF NOT EXISTS "observations" (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  text TEXT,
  type TEXT NOT NULL,
  title TEXT,
  subtitle TEXT,
  facts TEXT,
  narrative TEXT,
  concepts TEXT,
  files_read TEXT,
  files_modified TEXT,
  prompt_number INTEGER,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL, discovery_tokens INTEGER DEFAULT 0, content_hash TEXT,
  generated_by_model TEXT, relevance_count INTEGER DEFAULT 0, merged_into_project TEXT, agent_type TEXT,
  agent_id TEXT, metadata TEXT, synced_at INTEGER, origin_device_id TEXT, origin_local_id TEXT,
  sync_rev TEXT NOT NULL DEFAULT '1',
  FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX ux_observations_session_hash ON observations(memory_session_id, content_hash);
"""
# The first schema (initializeSchema, version 4) as databases of that time have it: the
# session column still named sdk_session_id (renamed by version 17), observations with
# only `text` (title, narrative, facts came with version 8).
CLAUDE_MEM_OLD_DDL = """
CREATE TABLE observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sdk_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  text TEXT NOT NULL,
  type TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL
);
CREATE TABLE session_summaries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sdk_session_id TEXT UNIQUE NOT NULL,
  project TEXT NOT NULL,
  request TEXT,
  investigated TEXT,
  learned TEXT,
  completed TEXT,
  next_steps TEXT,
  files_read TEXT,
  files_edited TEXT,
  notes TEXT,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL
);
"""


def epoch_ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def iso_ms(epoch: int) -> str:
    """A time as claude-mem writes created_at (JavaScript's toISOString)."""
    return datetime.fromtimestamp(epoch // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch % 1000:03d}Z"


def compact(value: object) -> str:
    """JSON as JavaScript's JSON.stringify writes it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def content_hash(session: str, title: str, narrative: str | None) -> str:
    """claude-mem's observation hash, the key of its duplicate check."""
    return hashlib.sha256("\0".join([session, title, narrative or ""]).encode()).hexdigest()[:16]


SESSION_SQL = ("INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, user_prompt, started_at, "
               "started_at_epoch, status) VALUES (?, ?, ?, ?, ?, ?, 'active')")
OBSERVATION_SQL = (
    "INSERT INTO observations (memory_session_id, project, type, title, subtitle, facts, narrative, concepts, "
    "files_read, files_modified, prompt_number, discovery_tokens, agent_type, agent_id, content_hash, created_at, "
    "created_at_epoch, generated_by_model, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, "
    "?, ?, NULL)")
SUMMARY_SQL = (
    "INSERT INTO session_summaries (memory_session_id, project, request, investigated, learned, completed, "
    "next_steps, files_read, files_edited, notes, prompt_number, discovery_tokens, created_at, created_at_epoch) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
# claude-mem's merge of one project into another (its project remap).
MERGE_SQL = ("UPDATE observations SET merged_into_project = ? WHERE project = ? AND merged_into_project IS NULL",
             "UPDATE session_summaries SET merged_into_project = ? WHERE project = ? AND merged_into_project IS NULL")


def session(db: sqlite3.Connection, memory_session: str, project: str, at: str) -> None:
    db.execute(SESSION_SQL, (f"content-{memory_session}", memory_session, project, None, iso_ms(epoch_ms(at)),
                             epoch_ms(at)))


def observation(db: sqlite3.Connection, memory_session: str, project: str, kind: str, title: str,
                subtitle: str | None, narrative: str, facts: list[str], concepts: list[str], files_read: list[str],
                files_modified: list[str], epoch: int) -> None:
    """One observation as storeObservations writes it: the lists as JSON arrays, the time in
    ISO and in epoch milliseconds, the content hash, the tokens and the model."""
    db.execute(OBSERVATION_SQL, (memory_session, project, kind, title, subtitle, compact(facts), narrative,
                                 compact(concepts), compact(files_read), compact(files_modified), 1, 1200,
                                 content_hash(memory_session, title, narrative), iso_ms(epoch), epoch,
                                 "claude-sonnet-4-5"))


def claude_mem_db(path: Path, extra: int = 0) -> Path:
    """A claude-mem.db with claude-mem's current schema and what its worker writes: three
    observations and a session summary (one project merged into another, one observer
    session), then `extra` generated observations."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA foreign_keys = ON")
        db.executescript(CLAUDE_MEM_DDL)
        session(db, "m1", "shop", "2026-10-01T09:00:00Z")
        session(db, "m2", "shop-web", "2026-10-01T09:45:00Z")
        session(db, "m3", "observer-sessions", "2026-10-01T10:00:00Z")
        observation(db, "m1", "shop", "decision", "Store money as integer cents", "Floats lost cents on refunds",
                    "Floats lost a cent on refunds; amounts are integer cents everywhere now.",
                    ["Refund totals matched after the change", "Column type is BIGINT"], ["trade-off"],
                    ["src/money.py"], ["src/money.py", "src/refund.py"], epoch_ms("2026-10-01T09:30:00Z"))
        observation(db, "m2", "shop-web", "bugfix", "Fix rounding in refunds", None,
                    "Refunds rounded half-down; switched to banker's rounding.", [], ["problem-solution"], [],
                    ["src/refund.py"], epoch_ms("2026-10-01T10:00:00Z"))
        observation(db, "m3", "observer-sessions", "discovery", "Observer note", None, "An observer session.", [],
                    [], [], [], epoch_ms("2026-10-01T10:05:00Z"))
        at = epoch_ms("2026-11-29T10:30:00Z")
        db.execute(SUMMARY_SQL, ("m1", "shop", "Fix refund totals", "The refund path", "Floats drift",
                                 "Cents everywhere", "Migrate old rows", compact(["src/money.py"]),
                                 compact(["src/money.py", "src/refund.py"]), None, 1, 800, iso_ms(at), at))
        for sql in MERGE_SQL:
            db.execute(sql, ("storefront", "shop-web"))
        base = epoch_ms("2026-06-01T00:00:00Z")
        for s in range((extra + 19) // 20):
            session(db, f"s{s}", f"project{s % 7}", iso_ms(base + s * 20 * 60_000))
        for i in range(extra):
            observation(db, f"s{i // 20}", f"project{(i // 20) % 7}", KINDS[i % len(KINDS)],
                        f"Observation {i}: {WORDS[i % len(WORDS)]}", None,
                        f"In module {i % 97} we found that {' '.join(WORDS[(i + k) % len(WORDS)] for k in range(40))}.",
                        [f"fact {i}.{j} about {WORDS[(i + j) % len(WORDS)]}" for j in range(3)], [], [], [],
                        base + i * 60_000)
    return path


KINDS = ("decision", "bugfix", "feature", "refactor", "discovery", "change")
WORDS = ("cache", "index", "query", "latency", "deploy", "schema", "refund", "ledger", "invoice", "parser",
         "retry", "timeout", "queue", "worker", "session", "token", "migration", "backup", "config", "router")
