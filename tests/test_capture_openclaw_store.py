"""Capture from OpenClaw's SQLite transcript store (OpenClaw 2026.8.1 and later).

The stores here are built with the tables' own DDL, as OpenClaw 2026.9.6 creates them
(schema version 23), in WAL mode; a second connection writes while capture reads.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import apsw
import pytest
import zstandard
from test_cli import run

from maxmem import Brain, Clock
from maxmem.capture import CaptureSettings, run_capture
from maxmem.capture.openclaw_store import MAX_EVENT_BYTES, cursor_key, store_problems
from maxmem.config import Config
from maxmem.hooks.events import run_hook

# The tables capture reads, as OpenClaw 2026.9.6 declares them (its agent schema, version 23;
# three long lines broken in two).
SCHEMA_META_DDL = """
CREATE TABLE IF NOT EXISTS schema_meta (
  meta_key TEXT NOT NULL PRIMARY KEY,
  role TEXT NOT NULL,
  schema_version INTEGER NOT NULL,
  agent_id TEXT,
  app_version TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
"""
SESSION_NODES_DDL = """
CREATE TABLE IF NOT EXISTS session_nodes (
  session_key TEXT NOT NULL PRIMARY KEY,
  current_session_id TEXT NOT NULL,
  entry_json TEXT NOT NULL,
  legacy_acp_migration_json TEXT,
  entry_valid INTEGER NOT NULL DEFAULT 0 CHECK (entry_valid IN (-1, 0, 1)),
  updated_at INTEGER NOT NULL,
  status TEXT CHECK (status IS NULL OR status IN ('running', 'done', 'failed', 'killed', 'timeout')),
  created_at INTEGER,
  created_via TEXT CHECK (created_via IS NULL OR created_via IN ('operator', 'spawn', 'channel', 'cron', 'talk',
    'run', 'plugin', 'internal')),
  created_actor_type TEXT CHECK (created_actor_type IS NULL OR created_actor_type IN ('human', 'agent', 'system')),
  created_actor_id TEXT,
  owner_actor_type TEXT,
  owner_actor_id TEXT,
  owner_assigned_by_type TEXT,
  owner_assigned_by_id TEXT,
  owner_assigned_at INTEGER,
  project_id TEXT,
  parent_session_key TEXT,
  spawned_by TEXT,
  fork_source_session_key TEXT,
  fork_source_session_id TEXT,
  fork_source_entry_id TEXT,
  label TEXT,
  display_name TEXT,
  category TEXT,
  icon TEXT,
  pinned_at INTEGER,
  archived_at INTEGER,
  last_read_at INTEGER,
  last_interaction_at INTEGER,
  last_activity_at INTEGER
) STRICT;
"""
SESSION_WINDOWS_DDL = """
CREATE TABLE IF NOT EXISTS session_windows (
  session_id TEXT NOT NULL PRIMARY KEY,
  session_key TEXT NOT NULL,
  previous_session_id TEXT,
  reason TEXT CHECK (reason IS NULL OR reason IN ('initial', 'reset', 'rollover', 'fork', 'rewind', 'switch',
    'recovery', 'compaction')),
  session_scope TEXT NOT NULL DEFAULT 'conversation'
    CHECK (session_scope IN ('conversation', 'shared-main', 'group', 'channel')),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  transcript_updated_at INTEGER DEFAULT NULL,
  transcript_observed_at INTEGER DEFAULT NULL,
  session_entry_provenance INTEGER NOT NULL DEFAULT 0 CHECK (session_entry_provenance IN (0, 1)),
  acp_owned INTEGER NOT NULL DEFAULT 0 CHECK (acp_owned IN (0, 1)),
  plugin_owner_id TEXT,
  hook_external_content_source TEXT
    CHECK (hook_external_content_source IS NULL OR hook_external_content_source IN ('gmail', 'webhook')),
  started_at INTEGER,
  ended_at INTEGER,
  status TEXT CHECK (status IS NULL OR status IN ('running', 'done', 'failed', 'killed', 'timeout')),
  chat_type TEXT CHECK (chat_type IS NULL OR chat_type IN ('direct', 'group', 'channel')),
  channel TEXT,
  account_id TEXT,
  primary_conversation_id TEXT,
  model_provider TEXT,
  model TEXT,
  agent_harness_id TEXT,
  parent_session_key TEXT,
  spawned_by TEXT,
  display_name TEXT,
  FOREIGN KEY (session_key) REFERENCES session_nodes(session_key) ON DELETE CASCADE,
  FOREIGN KEY (primary_conversation_id) REFERENCES conversations(conversation_id) ON DELETE SET NULL
) STRICT;
"""
TRANSCRIPT_EVENTS_DDL = """
CREATE TABLE IF NOT EXISTS transcript_events (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event_json TEXT,
  created_at INTEGER NOT NULL,
  event_zstd BLOB,
  event_utf8_bytes INTEGER CHECK (event_utf8_bytes IS NULL OR event_utf8_bytes >= 0),
  navigation_json TEXT,
  PRIMARY KEY (session_id, seq),
  FOREIGN KEY (session_id) REFERENCES "session_windows"(session_id) ON DELETE CASCADE,
  CHECK (
    (event_json IS NOT NULL AND event_zstd IS NULL)
    OR (
      event_json IS NULL AND event_zstd IS NOT NULL
      AND event_utf8_bytes IS NOT NULL
      AND event_utf8_bytes BETWEEN 1 AND 4194304
      AND length(event_zstd) BETWEEN 1 AND 4194304
      AND navigation_json IS NOT NULL
    )
  ),
  CHECK (
    navigation_json IS NULL OR CASE WHEN json_valid(navigation_json) THEN coalesce(
      octet_length(navigation_json) <= 16384
      AND json_type(navigation_json, '$.version') = 'integer'
      AND json_extract(navigation_json, '$.version') = 1
      AND json_type(navigation_json, '$.report') = 'object'
      AND json_extract(navigation_json, '$.report.kind') IN ('canonical', 'leaf', 'link', 'ignored')
      AND json_type(navigation_json, '$.navigation') = 'object'
      AND json_type(navigation_json, '$.reset') = 'object'
      AND json_type(navigation_json, '$.model') = 'object'
      AND json_type(navigation_json, '$.modelBytes') = 'integer'
      AND json_extract(navigation_json, '$.modelBytes') BETWEEN 0 AND 4194304
      AND json_type(navigation_json, '$.modelWithoutCheckpointBytes') = 'integer'
      AND json_extract(navigation_json, '$.modelWithoutCheckpointBytes') BETWEEN 0 AND 4194304
      AND json_type(navigation_json, '$.withoutCustomDataBytes') = 'integer'
      AND json_extract(navigation_json, '$.withoutCustomDataBytes') BETWEEN 0 AND 4194304,
      0) ELSE 0 END
  )
) STRICT;
"""
# What a compressed row's navigation_json holds (the CHECK above wants its shape).
NAVIGATION = json.dumps({"version": 1, "report": {"kind": "canonical"}, "navigation": {}, "reset": {},
                         "model": {}, "modelBytes": 0, "modelWithoutCheckpointBytes": 0,
                         "withoutCustomDataBytes": 0})
T0 = 1796600000000  # epoch ms


# --- building a store ------------------------------------------------------------------------

class Writer:
    """OpenClaw's side: a WAL-mode connection that writes the store."""

    def __init__(self, state: Path, agent: str = "main", version: int = 23) -> None:
        self.path = state / "agents" / agent / "agent" / "openclaw-agent.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = apsw.Connection(str(self.path))
        self.db.setbusytimeout(5000)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(SCHEMA_META_DDL + SESSION_NODES_DDL + SESSION_WINDOWS_DDL + TRANSCRIPT_EVENTS_DDL)
        self.db.execute("INSERT OR REPLACE INTO schema_meta VALUES ('primary', 'agent', ?, ?, '2026.9.6', ?, ?)",
                        (version, agent, T0, T0))
        self.seqs: dict[str, int] = {}

    def session(self, sid: str, key: str, previous: str | None = None, reason: str | None = "initial",
                header: bool = True, at: int = T0, forked_from: str | None = None) -> None:
        self.db.execute("INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at, "
                        "fork_source_session_id) VALUES (?, ?, '{}', ?, ?) ON CONFLICT (session_key) DO UPDATE "
                        "SET current_session_id = excluded.current_session_id", (key, sid, at, forked_from))
        self.db.execute("INSERT INTO session_windows (session_id, session_key, previous_session_id, reason, "
                        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)", (sid, key, previous, reason, at, at))
        if header:
            self.event(sid, {"type": "session", "version": 4, "id": sid,
                             "timestamp": "2026-12-07T00:00:00.000Z", "cwd": "/work"})

    def event(self, sid: str, value: dict[str, Any] | str, compress: bool = False) -> int:
        seq = self.seqs.get(sid, -1) + 1
        self.seqs[sid] = seq
        text = value if isinstance(value, str) else json.dumps(value)
        if compress:
            raw = text.encode()
            self.raw(sid, seq, None, zstandard.ZstdCompressor().compress(raw), len(raw))
        else:
            self.raw(sid, seq, text, None, None)
        return seq

    def raw(self, sid: str, seq: int, text: str | None, blob: bytes | None, size: int | None) -> None:
        self.seqs[sid] = max(self.seqs.get(sid, -1), seq)
        self.db.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, "
                        "event_utf8_bytes, navigation_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (sid, seq, text, T0 + seq, blob, size, NAVIGATION if blob is not None else None))

    def say(self, sid: str, entry: str, role: str, text: str, minute: int = 1, compress: bool = False,
            parent: str | None = None) -> int:
        message: dict[str, Any] = {"role": role, "timestamp": T0 + minute * 60000}
        if role == "assistant":
            message.update(content=[{"type": "text", "text": text}], provider="fake", model="fake-model",
                           stopReason="stop")
        else:
            message["content"] = text
        return self.event(sid, {"type": "message", "id": entry, "parentId": parent,
                                "timestamp": f"2026-12-07T00:{minute:02d}:00.000Z", "message": message},
                          compress=compress)

    def close(self) -> None:
        self.db.close()


@pytest.fixture
def state(tmp_path: Path) -> Path:
    folder = tmp_path / "openclaw-state"
    folder.mkdir()
    return folder


@pytest.fixture
def cbrain(tmp_path: Path, hash_embedder) -> Brain:
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=Clock()) as brain:
        yield brain


def settings(state: Path) -> CaptureSettings:
    return CaptureSettings(openclaw_dirs=(state,), claude_dirs=(), codex_dirs=(), settle_seconds=0)


def stored(brain: Brain, session_id: str | None = None) -> list[dict[str, Any]]:
    where, params = ("WHERE session_id = ?", (session_id,)) if session_id else ("", ())
    return brain.db.rows(f"SELECT * FROM turns {where} ORDER BY session_id, seq", params)


def conversation(writer: Writer, sid: str, prefix: str, count: int, first_minute: int = 1) -> None:
    for n in range(count):
        role = "user" if n % 2 == 0 else "assistant"
        writer.say(sid, f"{prefix}{n:04d}", role, f"{prefix} line {n}: we keep staging on port {8000 + n}",
                   minute=first_minute + n % 50)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- reading -----------------------------------------------------------------------------------

def test_store_is_captured_once_and_then_incrementally(cbrain, state, caplog):
    writer = Writer(state)
    writer.session("s-1", "agent:main:telegram:dm:42")
    writer.say("s-1", "a0000001", "user", "We decided to deploy on Hetzner, not AWS.")
    writer.say("s-1", "a0000002", "assistant", "Noted: Hetzner it is.", minute=2)
    writer.event("s-1", {"type": "frobnicate", "id": "a0000003"})  # an event type no one knows
    writer.close()
    before = digest(writer.path)

    report = run_capture(cbrain, settings=settings(state))
    assert report.errors == 0 and report.new_turns == 2 and report.unknown_records == 1
    assert [t["text"] for t in stored(cbrain, "s-1")] == ["We decided to deploy on Hetzner, not AWS.",
                                                          "Noted: Hetzner it is."]
    session = cbrain.db.one("SELECT * FROM sessions WHERE id = 's-1'")
    assert session["agent"] == "openclaw:main" and session["title"] == "agent:main:telegram:dm:42"
    assert session["cwd"] == "/work" and json.loads(session["metadata"])["version"] == 4  # seq 0, the header
    assert json.loads(session["metadata"])["session_key"] == "agent:main:telegram:dm:42"
    memory = cbrain.list(category="conversation", limit=10)[0]
    assert memory.metadata["source_file"] == cursor_key(writer.path, "s-1")
    assert digest(writer.path) == before  # read, never written

    again = run_capture(cbrain, settings=settings(state))
    assert again.new_turns == 0 and again.memories == 0 and again.unchanged == 1

    writer = Writer(state)
    writer.seqs = {"s-1": 3}
    writer.say("s-1", "a0000004", "user", "Also: backups go to Storage Box.", minute=3)
    writer.close()
    third = run_capture(cbrain, settings=settings(state))
    assert third.new_turns == 1 and len(stored(cbrain, "s-1")) == 3


def test_rows_come_in_keyset_batches(cbrain, state, monkeypatch):
    from maxmem.capture import openclaw_store

    monkeypatch.setattr(openclaw_store, "BATCH_ROWS", 7)
    writer = Writer(state)
    writer.session("long", "agent:main:main")
    conversation(writer, "long", "m", 40)
    writer.close()
    report = run_capture(cbrain, settings=settings(state))
    assert report.new_turns == 40
    assert [t["text"].split(":")[0] for t in stored(cbrain, "long")] == [f"m line {n}" for n in range(40)]
    cursor = cbrain.db.one("SELECT * FROM capture_files WHERE path = ?", (cursor_key(writer.path, "long"),))
    assert cursor["byte_offset"] == 40  # the last seq read


def test_compressed_rows_are_read_within_their_declared_size(cbrain, state, caplog):
    writer = Writer(state)
    writer.session("z", "agent:main:main")
    big = "Hetzner " + "x" * 100_000
    writer.say("z", "b0000001", "user", big, compress=True)
    # A damaged frame, a frame larger than it declares, an oversized declaration, bad JSON:
    writer.raw("z", 2, None, b"\x28\xb5\x2f\xfd garbage", 50)
    payload = json.dumps({"type": "message", "id": "b0000003", "message": {"role": "user", "content": "y" * 5000}})
    writer.raw("z", 3, None, zstandard.ZstdCompressor().compress(payload.encode()), 100)
    writer.raw("z", 4, None, zstandard.ZstdCompressor().compress(b"{}"), MAX_EVENT_BYTES)
    writer.raw("z", 5, '{"type": "message", "id": "trunc', None, None)
    writer.say("z", "b0000006", "assistant", "Still read after the bad rows.", minute=2)
    writer.close()

    report = run_capture(cbrain, settings=settings(state))
    texts = [t["text"] for t in stored(cbrain, "z")]
    assert texts[0].startswith("Hetzner xxx") and len(texts[0]) > 50_000
    assert texts[1:] == ["Still read after the bad rows."]
    assert report.skipped_lines == 4 and report.errors == 0
    assert sum("skipping event" in r.getMessage() for r in caplog.records) == 4


def test_a_real_frame_bomb_is_not_decompressed_past_its_declared_size(state):
    from maxmem.capture.openclaw_store import StoreError, unpack

    bomb = zstandard.ZstdCompressor().compress(b"\0" * (64 << 20))
    with pytest.raises(StoreError, match="where 1000 were declared"):
        unpack(bomb, 1000)


def test_lineage_stores_copied_history_once(cbrain, state):
    writer = Writer(state)
    writer.session("old", "agent:main:main", at=T0)
    writer.say("old", "c0000001", "user", "Our database is PostgreSQL 16.")
    writer.say("old", "c0000002", "assistant", "Understood, PostgreSQL 16.", minute=2)
    # A compaction's successor re-contains the kept tail under the same entry ids (and a
    # fork its history), the copies written later than the originals.
    writer.session("new", "agent:main:main", previous="old", reason="compaction", at=T0 + 10)
    writer.event("new", {"type": "compaction", "id": "c0000003", "summary": "Database: PostgreSQL 16.",
                         "firstKeptEntryId": "c0000002", "timestamp": "2026-12-07T00:05:00.000Z"})
    copy = {"type": "message", "id": "c0000002", "timestamp": "2026-12-07T00:05:01.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Understood, PostgreSQL 16."}]}}
    writer.event("new", copy)
    writer.say("new", "c0000004", "user", "And Redis for the queue.", minute=6)
    # A fork starts a key of its own: its window names no predecessor, its key's node
    # names the session it was forked from.
    writer.session("fork", "agent:main:explicit:try", reason="fork", at=T0 + 20, forked_from="new")
    writer.event("fork", {**copy, "timestamp": "2026-12-07T00:07:00.000Z"})
    writer.say("fork", "c0000005", "user", "What if we used SQLite?", minute=8)
    writer.close()

    report = run_capture(cbrain, settings=settings(state))
    assert report.errors == 0
    texts = [t["text"] for t in stored(cbrain)]
    assert texts.count("Understood, PostgreSQL 16.") == 1
    assert sorted(texts) == sorted(["Our database is PostgreSQL 16.", "Understood, PostgreSQL 16.",
                                    "Database: PostgreSQL 16.", "And Redis for the queue.", "What if we used SQLite?"])
    parents = {r["id"]: r["parent_id"] for r in cbrain.db.rows("SELECT id, parent_id FROM sessions")}
    assert parents == {"old": None, "new": "old", "fork": "new"}
    assert run_capture(cbrain, settings=settings(state)).new_turns == 0


def test_a_session_captured_from_its_jsonl_file_adds_nothing_from_the_store(cbrain, state):
    sessions = state / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    header = {"type": "session", "version": 3, "id": "moved", "timestamp": "2026-12-07T00:00:00.000Z"}
    said = {"type": "message", "id": "k0000001", "parentId": None, "timestamp": "2026-12-07T00:01:00.000Z",
            "message": {"role": "user", "content": "Deploys need two approvals."}}
    (sessions / "moved.jsonl").write_text(json.dumps(header) + "\n" + json.dumps(said) + "\n")
    assert run_capture(cbrain, settings=settings(state)).new_turns == 1
    # OpenClaw moves the transcript into its store (same session id, same entries).
    (sessions / "moved.jsonl").unlink()
    writer = Writer(state)
    writer.session("moved", "agent:main:main")
    writer.event("moved", said)
    writer.say("moved", "k0000002", "assistant", "Two approvals, noted.", minute=2)
    writer.close()
    assert run_capture(cbrain, settings=settings(state)).new_turns == 1
    assert [t["text"] for t in stored(cbrain, "moved")] == ["Deploys need two approvals.", "Two approvals, noted."]


def test_a_session_in_the_store_and_in_a_reset_archive_is_stored_once(cbrain, state):
    writer = Writer(state)
    writer.session("r-1", "agent:main:main")
    writer.say("r-1", "d0000001", "user", "The API key rotates monthly.")
    writer.close()
    assert run_capture(cbrain, settings=settings(state)).new_turns == 1
    # The session is reset: OpenClaw writes its transcript out as an archive, with a
    # line the store had after capture's last run.
    sessions = state / "agents" / "main" / "sessions"
    sessions.mkdir()
    lines = [{"type": "session", "version": 4, "id": "r-1", "timestamp": "2026-12-07T00:00:00.000Z"},
             {"type": "message", "id": "d0000001", "timestamp": "2026-12-07T00:01:00.000Z",
              "message": {"role": "user", "content": "The API key rotates monthly."}},
             {"type": "message", "id": "d0000002", "timestamp": "2026-12-07T00:02:00.000Z",
              "message": {"role": "assistant", "content": [{"type": "text", "text": "On the first Monday."}]}}]
    (sessions / "r-1.jsonl.reset.2026-12-07T01-00-00.000Z").write_text(
        "".join(json.dumps(line) + "\n" for line in lines))
    # An archive of a session capture never saw in the store stays unread (as before).
    (sessions / "other.jsonl.reset.2026-12-07T01-00-00.000Z").write_text(json.dumps(lines[0]) + "\n")
    report = run_capture(cbrain, settings=settings(state))
    assert report.new_turns == 1 and report.errors == 0
    assert [t["text"] for t in stored(cbrain, "r-1")] == ["The API key rotates monthly.", "On the first Monday."]
    assert run_capture(cbrain, settings=settings(state)).new_turns == 0


def test_capture_reads_while_the_gateway_writes(cbrain, state):
    writer = Writer(state)
    writer.session("live", "agent:main:main")
    writer.close()
    total = 300
    done = threading.Event()
    failures: list[BaseException] = []

    def gateway() -> None:
        w = Writer(state)
        w.seqs = {"live": 0}
        try:
            for n in range(total):
                with w.db:
                    w.say("live", f"e{n:07d}", "user" if n % 2 == 0 else "assistant", f"turn {n} about Hetzner",
                          minute=n % 50, compress=n % 7 == 0)
                if n % 20 == 0:
                    time.sleep(0.01)
        except BaseException as exc:  # noqa: BLE001 (the test reports it)
            failures.append(exc)
        finally:
            w.close()
            done.set()

    thread = threading.Thread(target=gateway)
    thread.start()
    runs = 0
    while not done.is_set() or runs == 0:
        report = run_capture(cbrain, settings=settings(state))
        assert report.errors == 0, report.details
        runs += 1
    thread.join()
    run_capture(cbrain, settings=settings(state))
    assert not failures
    texts = [t["text"] for t in stored(cbrain, "live")]
    assert texts == [f"turn {n} about Hetzner" for n in range(total)]  # all, in order, once


# --- stores capture cannot read ------------------------------------------------------------------

def test_unknown_schema_version_is_skipped_with_one_line_and_a_doctor_line(cbrain, state, caplog):
    writer = Writer(state, version=24)
    writer.session("v", "agent:main:main")
    writer.say("v", "f0000001", "user", "Hello there.")
    writer.close()
    report = run_capture(cbrain, settings=settings(state))
    assert report.errors == 0 and report.new_turns == 0
    assert report.details[0].status == "skipped"
    assert "has schema version 24 (OpenClaw 2026.9.6); maxmem reads 23" in report.details[0].note
    assert sum("schema version 24" in r.getMessage() for r in caplog.records) == 1
    assert store_problems([state]) == [("warn", report.details[0].note)]


def test_unknown_table_shape_is_a_doctor_line(state):
    writer = Writer(state)
    writer.db.execute("DROP TABLE transcript_events; CREATE TABLE transcript_events (session_id TEXT, seq INTEGER, "
                      "event_json TEXT, event_zstd BLOB) STRICT")
    writer.close()
    [(level, message)] = store_problems([state])
    assert level == "warn" and "transcript_events table without event_utf8_bytes" in message


def test_a_locked_store_is_skipped_and_read_next_run(cbrain, state):
    writer = Writer(state)
    writer.session("l", "agent:main:main")
    writer.say("l", "g0000001", "user", "Locked out for now.")
    writer.db.execute("PRAGMA locking_mode=EXCLUSIVE")
    writer.db.execute("BEGIN EXCLUSIVE")
    try:
        report = run_capture(cbrain, settings=settings(state))
        assert report.new_turns == 0 and report.details[0].status == "skipped"
        assert "is locked by another process" in report.details[0].note, report.details[0].note
    finally:
        writer.db.execute("COMMIT")
        writer.close()
    assert run_capture(cbrain, settings=settings(state)).new_turns == 1


def test_a_corrupt_store_is_one_line(cbrain, state):
    path = state / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database at all" * 100)
    report = run_capture(cbrain, settings=settings(state))
    assert report.details[0].status == "skipped" and "not a readable SQLite database" in report.details[0].note
    assert "\n" not in report.details[0].note
    [(level, _)] = store_problems([state])
    assert level == "warn"


def test_no_agents_or_no_openclaw_finds_nothing(cbrain, state, tmp_path):
    (state / "agents").mkdir()
    for root in (state, tmp_path / "absent"):
        report = run_capture(cbrain, settings=settings(root))
        assert report.files == 0 and report.errors == 0
        assert store_problems([root]) == []


# --- the command and the hook ---------------------------------------------------------------------

def test_dry_run_names_the_stores_and_path_reads_one(state, tmp_path, monkeypatch):
    writer = Writer(state)
    writer.session("p", "agent:main:main")
    writer.say("p", "h0000001", "user", "We release on Thursdays.")
    writer.close()
    db = str(tmp_path / "b.db")
    for name, value in {"OPENCLAW_STATE_DIR": state, "CLAUDE_CONFIG_DIR": tmp_path / "none",
                        "CODEX_HOME": tmp_path / "none", "HOME": tmp_path / "none"}.items():
        monkeypatch.setenv(name, str(value))
    r = run("--db", db, "--embedder", "none", "capture", "--dry-run")
    assert r.exit_code == 0, r.output
    assert f"openclaw: {writer.path}" in r.stdout and "would add 1 turns" in r.stdout
    r = run("--db", db, "--embedder", "none", "capture", "--path", str(writer.path), "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["new_turns"] == 1


def test_openclaw_hook_captures_the_session_it_names(state, tmp_path):
    writer = Writer(state)
    writer.session("one", "agent:main:explicit:probe-8")
    writer.say("one", "i0000001", "user", "This one is named by the hook.")
    writer.session("two", "agent:main:other")
    writer.say("two", "i0000002", "user", "This one waits for the tick.")
    writer.close()
    config = Config(db_path=tmp_path / "brain.db", config_path=tmp_path / "none.toml")
    env = {"OPENCLAW_STATE_DIR": str(state), "HOME": str(tmp_path / "none")}
    stdin = json.dumps({"session_id": "agent:main:explicit:probe-8",
                        "transcript_path": "agent:main:explicit:probe-8"})
    result = run_hook("stop", "openclaw", stdin, config, env)
    assert result.ok, result.line
    with Brain.open(tmp_path / "brain.db", embedder="none") as brain:
        assert [t["session_id"] for t in stored(brain)] == ["one"]
    # Nothing the hook can name: every OpenClaw transcript.
    result = run_hook("pre-compact", "openclaw", json.dumps({"session_id": "agent:main:gone"}), config, env)
    assert result.ok, result.line
    with Brain.open(tmp_path / "brain.db", embedder="none") as brain:
        assert sorted(t["session_id"] for t in stored(brain)) == ["one", "two"]


def test_doctor_names_a_store_of_an_unknown_schema(tmp_path):
    maxmem = Path(sys.executable).parent / "maxmem"
    if not maxmem.is_file():
        pytest.skip("the maxmem entry point is not installed")
    home = tmp_path / "home"
    Writer(home / ".openclaw", version=24).close()

    def doctor() -> list[str]:
        done = subprocess.run([str(maxmem), "--embedder", "none", "doctor"], env={"HOME": str(home)},
                              capture_output=True, text=True, timeout=120)
        return [line for line in done.stdout.splitlines() if "OpenClaw transcript store" in line]

    assert subprocess.run([str(maxmem), "--embedder", "none", "init"], env={"HOME": str(home)},
                          capture_output=True, timeout=120).returncode == 0
    (line,) = doctor()
    assert line.startswith("WARN capture: OpenClaw transcript store") and "schema version 24" in line
    assert "maxmem reads 23" in line
