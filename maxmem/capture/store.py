"""The capture tables: cursors, sessions, turns, tool calls. SQL lives here, nowhere else.

Writes are made inside the caller's transaction (the job wraps one file window in
`db.atomic()`, so the data and the cursor that covers it commit together).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..store.db import Database
from .chunker import ChunkTurn
from .model import Session, ToolCall, Turn

BATCH = 400  # bound parameters per IN (...) query

GET_CURSOR = "SELECT * FROM capture_files WHERE path = ?"
CURSOR_BY_INODE = "SELECT * FROM capture_files WHERE device = ? AND inode = ? AND path <> ?"
SAVE_CURSOR = """
INSERT INTO capture_files (path, format, device, inode, size, mtime_ns, head_hash, byte_offset,
                           settled, state, turns, skipped, last_error, first_seen_at, read_at)
VALUES (:path, :format, :device, :inode, :size, :mtime_ns, :head_hash, :byte_offset,
        :settled, :state, :turns, :skipped, NULL, :now, :now)
ON CONFLICT (path) DO UPDATE SET
    format = excluded.format, device = excluded.device, inode = excluded.inode,
    size = excluded.size, mtime_ns = excluded.mtime_ns, head_hash = excluded.head_hash,
    byte_offset = excluded.byte_offset, settled = excluded.settled, state = excluded.state,
    turns = capture_files.turns + excluded.turns, skipped = capture_files.skipped + excluded.skipped,
    last_error = NULL, read_at = excluded.read_at
"""
RENAME_CURSOR = "UPDATE capture_files SET path = ? WHERE path = ?"
SET_ERROR = "UPDATE capture_files SET last_error = ? WHERE path = ?"

UPSERT_SESSION = """
INSERT INTO sessions (id, format, agent, title, cwd, model, parent_id, source_file, started_at,
                      updated_at, turn_count, metadata)
VALUES (:id, :format, :agent, :title, :cwd, :model, :parent_id, :source_file, :started_at,
        :updated_at, :turn_count, :metadata)
ON CONFLICT (id) DO UPDATE SET
    agent = coalesce(sessions.agent, excluded.agent),
    title = coalesce(excluded.title, sessions.title),
    cwd = coalesce(sessions.cwd, excluded.cwd),
    model = coalesce(excluded.model, sessions.model),
    parent_id = coalesce(sessions.parent_id, excluded.parent_id),
    source_file = excluded.source_file,
    started_at = CASE WHEN sessions.started_at IS NULL OR excluded.started_at < sessions.started_at
                      THEN coalesce(excluded.started_at, sessions.started_at) ELSE sessions.started_at END,
    updated_at = max(coalesce(sessions.updated_at, ''), coalesce(excluded.updated_at, '')),
    turn_count = sessions.turn_count + excluded.turn_count,
    metadata = json_patch(sessions.metadata, excluded.metadata)
"""
MAX_SEQ = "SELECT coalesce(max(seq), 0) FROM turns WHERE session_id = ?"
INSERT_TURN = """
INSERT OR IGNORE INTO turns (session_id, seq, key, fingerprint, role, kind, text, speaker, model,
                             usage, entry_ids, created_at, source_file)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
RETURNING id
"""
UPSERT_CALL = """
INSERT INTO tool_calls (session_id, call_id, turn_id, name, arguments, result, status, duration_ms,
                        started_at, finished_at)
VALUES (:session_id, :call_id, :turn_id, :name, :arguments, :result, :status, :duration_ms,
        :started_at, :finished_at)
ON CONFLICT (session_id, call_id) DO UPDATE SET
    turn_id = coalesce(tool_calls.turn_id, excluded.turn_id),
    name = coalesce(tool_calls.name, excluded.name),
    arguments = coalesce(tool_calls.arguments, excluded.arguments),
    result = coalesce(excluded.result, tool_calls.result),
    status = CASE WHEN excluded.status IS NULL OR excluded.status = 'pending'
                  THEN coalesce(tool_calls.status, excluded.status) ELSE excluded.status END,
    duration_ms = coalesce(excluded.duration_ms, tool_calls.duration_ms),
    started_at = coalesce(tool_calls.started_at, excluded.started_at),
    finished_at = coalesce(excluded.finished_at, tool_calls.finished_at)
"""
# A duration the transcript did not give: from the call's and the result's times.
FILL_DURATION = """
UPDATE tool_calls
SET duration_ms = CAST(round((julianday(finished_at) - julianday(started_at)) * 86400000) AS INTEGER)
WHERE session_id = ? AND call_id = ? AND duration_ms IS NULL
  AND started_at IS NOT NULL AND finished_at IS NOT NULL AND finished_at >= started_at
"""
# The columns of the capture tables that hold a transcript's text (scrub redacts them again).
RAW_TEXT = {"turns": ("text",), "tool_calls": ("arguments", "result"), "sessions": ("title", "cwd", "metadata")}
RAW_PAGE = "SELECT rowid AS row_key, {columns} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT 500"
RAW_REWRITE = "UPDATE {table} SET {assignments} WHERE rowid = ?"
LAST_TURNS = """
SELECT id, seq, role, text, created_at, entry_ids, speaker FROM turns
WHERE session_id = ? ORDER BY seq DESC LIMIT ?
"""


@dataclass
class Cursor:
    path: str
    format: str
    device: int | None
    inode: int | None
    size: int
    mtime_ns: int | None
    head_hash: str | None
    byte_offset: int
    settled: bool
    state: dict[str, Any]

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Cursor:
        try:
            state = json.loads(row["state"] or "{}")
        except ValueError:
            state = {}
        return cls(row["path"], row["format"], row["device"], row["inode"], row["size"], row["mtime_ns"],
                   row["head_hash"], row["byte_offset"], bool(row["settled"]),
                   state if isinstance(state, dict) else {})


def get_cursor(db: Database, path: str) -> Cursor | None:
    row = db.one(GET_CURSOR, (path,))
    return Cursor.from_row(row) if row else None


def cursors_by_inode(db: Database, device: int, inode: int, path: str) -> list[Cursor]:
    return [Cursor.from_row(row) for row in db.rows(CURSOR_BY_INODE, (device, inode, path))]


def save_cursor(db: Database, cursor: Cursor, *, turns: int, skipped: int, now: str) -> None:
    db.execute(SAVE_CURSOR, {
        "path": cursor.path, "format": cursor.format, "device": cursor.device, "inode": cursor.inode,
        "size": cursor.size, "mtime_ns": cursor.mtime_ns, "head_hash": cursor.head_hash,
        "byte_offset": cursor.byte_offset, "settled": int(cursor.settled),
        "state": json.dumps(cursor.state, ensure_ascii=False, sort_keys=True),
        "turns": turns, "skipped": skipped, "now": now,
    })


def rename_cursor(db: Database, old: str, new: str) -> None:
    db.execute(RENAME_CURSOR, (new, old))


def set_error(db: Database, path: str, message: str) -> None:
    with db.atomic():
        db.execute(SET_ERROR, (message[:500], path))


def _chunks(values: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(values), BATCH):
        yield values[start:start + BATCH]


def existing_keys(db: Database, session_id: str, keys: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for part in _chunks(list(dict.fromkeys(keys))):
        found.update(row[0] for row in db.execute(
            f"SELECT key FROM turns WHERE session_id = ? AND key IN ({','.join('?' * len(part))})",
            [session_id, *part]))
    return found


def existing_fingerprints(db: Database, fingerprints: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for part in _chunks(list(dict.fromkeys(fingerprints))):
        found.update(row[0] for row in db.execute(
            f"SELECT fingerprint FROM turns WHERE fingerprint IN ({','.join('?' * len(part))})", part))
    return found


def known_calls(db: Database, session_id: str, call_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Stored tool calls by id: a result read now may answer a call read in an earlier run."""
    found: dict[str, dict[str, Any]] = {}
    for part in _chunks(list(dict.fromkeys(call_ids))):
        for row in db.rows(
            "SELECT call_id, name, arguments, status FROM tool_calls "
            f"WHERE session_id = ? AND call_id IN ({','.join('?' * len(part))})", [session_id, *part]):
            found[row["call_id"]] = row
    return found


def forget_turns(db: Database, session_id: str, first_seq: int, last_seq: int) -> None:
    """Blank the stored turns a forgotten memory was made of, and their tool calls'
    arguments and results (Brain.forget). Keys and fingerprints stay, so capture does
    not take the same transcript lines in again."""
    where = "session_id = ? AND seq BETWEEN ? AND ?"
    params = (session_id, int(first_seq), int(last_seq))
    db.execute(f"UPDATE tool_calls SET arguments = NULL, result = NULL WHERE turn_id IN "
               f"(SELECT id FROM turns WHERE {where})", params)
    db.execute(f"UPDATE turns SET text = '' WHERE {where}", params)


def max_seq(db: Database, session_id: str) -> int:
    return int(db.scalar(MAX_SEQ, (session_id,)) or 0)


def last_turns(db: Database, session_id: str, count: int) -> list[ChunkTurn]:
    """The session's latest stored turns, oldest first, as chunker input (overlap)."""
    rows = db.rows(LAST_TURNS, (session_id, count))
    out = []
    for row in reversed(rows):
        turn = ChunkTurn(seq=row["seq"], role=row["role"], text=row["text"], timestamp=row["created_at"],
                         entry_ids=json.loads(row["entry_ids"] or "[]"), speaker=row["speaker"])
        calls = db.rows("SELECT name, arguments, status FROM tool_calls WHERE turn_id = ? ORDER BY id",
                        (row["id"],))
        if row["role"] == "tool" and calls:
            turn.tool_name, turn.tool_arguments, turn.tool_status = (
                calls[0]["name"], calls[0]["arguments"], calls[0]["status"])
        elif calls:
            turn.calls = [(c["name"], c["arguments"]) for c in calls]
        out.append(turn)
    return out


def upsert_session(db: Database, session: Session, *, source_file: str, updated_at: str | None,
                   new_turns: int) -> None:
    db.execute(UPSERT_SESSION, {
        "id": session.id, "format": session.format, "agent": session.agent, "title": session.title,
        "cwd": session.cwd, "model": session.model, "parent_id": session.parent_id,
        "source_file": source_file, "started_at": session.started_at, "updated_at": updated_at,
        "turn_count": new_turns, "metadata": json.dumps(session.metadata, ensure_ascii=False, default=str),
    })


def insert_turn(db: Database, turn: Turn, seq: int, source_file: str) -> int | None:
    """Insert a turn; None if its key or fingerprint is already stored."""
    for row in db.execute(INSERT_TURN, (
        turn.session_id, seq, turn.key, turn.fingerprint, turn.role, turn.kind, turn.text, turn.speaker,
        turn.model, json.dumps(turn.usage) if turn.usage else None,
        json.dumps(turn.entry_ids, ensure_ascii=False), turn.timestamp, source_file,
    )):
        return int(row[0])
    return None


def upsert_call(db: Database, session_id: str, call: ToolCall, turn_id: int | None) -> None:
    db.execute(UPSERT_CALL, {
        "session_id": session_id, "call_id": call.call_id, "turn_id": turn_id, "name": call.name,
        "arguments": call.arguments, "result": call.result, "status": call.status,
        "duration_ms": call.duration_ms, "started_at": call.started_at, "finished_at": call.finished_at,
    })
    db.execute(FILL_DURATION, (session_id, call.call_id))


def raw_texts(db: Database, table: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(rowid, {column: text}) of every row of a capture table, its RAW_TEXT columns."""
    columns = RAW_TEXT[table]
    last = 0
    while rows := db.rows(RAW_PAGE.format(columns=", ".join(columns), table=table), (last,)):
        for row in rows:
            yield row["row_key"], {c: row[c] for c in columns}
        last = rows[-1]["row_key"]


def rewrite_raw(db: Database, table: str, rowid: int, values: Mapping[str, Any]) -> None:
    """Replace some RAW_TEXT columns of one row (inside the caller's transaction)."""
    names = [name for name in values if name in RAW_TEXT[table]]
    assignments = ", ".join(f"{name} = ?" for name in names)
    db.execute(RAW_REWRITE.format(table=table, assignments=assignments), [*(values[n] for n in names), rowid])
