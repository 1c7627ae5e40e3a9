"""A claude-mem database in claude-mem's own schema, for the import tests and bench.

The DDL is claude-mem's (thedotmack/claude-mem @ e2d1df5, src/services/sqlite/SessionStore.ts),
and the rows are what its worker writes (storeObservations, storeSummary).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

# claude-mem's tables as its SessionStore.ts leaves them (thedotmack/claude-mem @ e2d1df5,
# src/services/sqlite/SessionStore.ts): sdk_sessions from initializeSchema(), observations and
# session_summaries as addOnUpdateCascadeToForeignKeys() rebuilds them (schema version 21), then
# the columns later migrations add with ALTER TABLE (content_hash 22, generated_by_model and
# relevance_count 26, merged_into_project, agent_type and agent_id 27, metadata 30, synced_at 39,
# origin_device_id, origin_local_id and sync_rev 41).
CLAUDE_MEM_DDL = """
CREATE TABLE schema_versions (id INTEGER PRIMARY KEY, version INTEGER UNIQUE NOT NULL, applied_at TEXT NOT NULL);
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
);
CREATE TABLE observations (
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
  discovery_tokens INTEGER DEFAULT 0,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE TABLE session_summaries (
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
  discovery_tokens INTEGER DEFAULT 0,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE
);
ALTER TABLE observations ADD COLUMN content_hash TEXT;
ALTER TABLE observations ADD COLUMN generated_by_model TEXT;
ALTER TABLE observations ADD COLUMN relevance_count INTEGER DEFAULT 0;
ALTER TABLE observations ADD COLUMN merged_into_project TEXT;
ALTER TABLE session_summaries ADD COLUMN merged_into_project TEXT;
ALTER TABLE observations ADD COLUMN agent_type TEXT;
ALTER TABLE observations ADD COLUMN agent_id TEXT;
ALTER TABLE observations ADD COLUMN metadata TEXT;
ALTER TABLE observations ADD COLUMN synced_at INTEGER;
ALTER TABLE session_summaries ADD COLUMN synced_at INTEGER;
ALTER TABLE observations ADD COLUMN origin_device_id TEXT;
ALTER TABLE observations ADD COLUMN origin_local_id TEXT;
ALTER TABLE observations ADD COLUMN sync_rev TEXT NOT NULL DEFAULT '1';
ALTER TABLE session_summaries ADD COLUMN origin_device_id TEXT;
ALTER TABLE session_summaries ADD COLUMN origin_local_id TEXT;
ALTER TABLE session_summaries ADD COLUMN sync_rev TEXT NOT NULL DEFAULT '1';
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


def claude_mem_db(path: Path, extra: int = 0) -> Path:
    """A claude-mem.db with claude-mem's current schema and what its worker writes
    (storeObservations: facts, concepts and files as JSON arrays; ISO and epoch-ms times):
    three observations and a session summary, then `extra` generated observations."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript(CLAUDE_MEM_DDL)
        db.execute("INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, started_at, "
                   "started_at_epoch) VALUES ('c1', 'm1', 'shop', '2026-10-01T09:00:00.000Z', ?)",
                   (epoch_ms("2026-10-01T09:00:00Z"),))
        rows = [
            ("m1", "shop", None, "decision", "Store money as integer cents",
             "Floats lost a cent on refunds; amounts are integer cents everywhere now.",
             ["Refund totals matched after the change", "Column type is BIGINT"], "2026-10-01T09:30:00Z"),
            ("m1", "shop", "storefront", "bugfix", "Fix rounding in refunds",
             "Refunds rounded half-down; switched to banker's rounding.", [], "2026-10-01T10:00:00Z"),
            ("m2", "observer-sessions", None, "discovery", "Observer note", "An observer session.", [],
             "2026-10-01T10:05:00Z"),
        ]
        for session, project, merged, kind, title, narrative, facts, at in rows:
            db.execute("INSERT INTO observations (memory_session_id, project, merged_into_project, type, title, "
                       "subtitle, facts, narrative, concepts, files_read, files_modified, prompt_number, "
                       "created_at, created_at_epoch) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, '[]', 1, ?, ?)",
                       (session, project, merged, kind, title, json.dumps(facts), narrative,
                        json.dumps(["trade-off"]), json.dumps(["src/money.py"]), at.replace("Z", ".000Z"),
                        epoch_ms(at)))
        db.execute("INSERT INTO session_summaries (memory_session_id, project, request, investigated, learned, "
                   "completed, next_steps, notes, prompt_number, created_at, created_at_epoch) VALUES "
                   "('m1', 'shop', 'Fix refund totals', 'The refund path', 'Floats drift', 'Cents everywhere', "
                   "'Migrate old rows', NULL, 1, '2026-11-29T10:30:00.000Z', ?)", (epoch_ms("2026-11-29T10:30:00Z"),))
        base = epoch_ms("2026-06-01T00:00:00Z")
        db.executemany(
            "INSERT INTO observations (memory_session_id, project, type, title, facts, narrative, concepts, "
            "files_read, files_modified, created_at, created_at_epoch) VALUES (?, ?, ?, ?, ?, ?, '[]', '[]', '[]', "
            "?, ?)",
            [(f"s{i // 20}", f"project{i % 7}", KINDS[i % len(KINDS)], f"Observation {i}: {WORDS[i % len(WORDS)]}",
              json.dumps([f"fact {i}.{j} about {WORDS[(i + j) % len(WORDS)]}" for j in range(3)]),
              f"In module {i % 97} we found that {' '.join(WORDS[(i + k) % len(WORDS)] for k in range(40))}.",
              datetime.fromtimestamp((base + i * 60_000) / 1000, UTC).isoformat(), base + i * 60_000)
             for i in range(extra)])
    return path


KINDS = ("decision", "bugfix", "feature", "refactor", "discovery", "change")
WORDS = ("cache", "index", "query", "latency", "deploy", "schema", "refund", "ledger", "invoice", "parser",
         "retry", "timeout", "queue", "worker", "session", "token", "migration", "backup", "config", "router")


