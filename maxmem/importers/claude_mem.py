"""claude-mem's database (~/.claude-mem/claude-mem.db): its observations and session
summaries, read without writing to it.

  observations        one memory each -> project, tagged with its project, kind its type
                      (decision, bugfix, feature, discovery, …): the title, the narrative
                      (`text` in older databases) and the facts as bullets; the subtitle,
                      concepts and files in its provenance
  session_summaries   one memory each -> daily of the day it was written, kind summary:
                      request, investigated, learned, completed, next steps, notes; the
                      files read and edited in its provenance

The columns are claude-mem's (thedotmack/claude-mem, src/services/sqlite/SessionStore.ts;
checked against a database made by claude-mem 13.25.3's own code): its migrations add
them over time, so each one is read only when the table has it, and a database without
the few every version has is refused as unknown rather than guessed at. A project merged
into another (`merged_into_project`) is tagged with the one it was merged into.
claude-mem's own observer sessions (project "observer-sessions", its data folder's
subfolder) are left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import tzinfo
from pathlib import Path
from typing import Any

import apsw

from ..clock import to_iso
from ..errors import InvalidInput
from ..memory import KIND
from .common import IMPORTANCE, Item, Reading, SourceFile, is_dir, is_file, project_tag
from .places import Places

NAME = "claude-mem"
OBSERVER_PROJECT = "observer-sessions"
# What every claude-mem schema has had (the session column was sdk_session_id before its 17th migration).
OBSERVATION_NEEDS = {"id", "project", "type"}
SUMMARY_NEEDS = {"id", "project"}
OBSERVATION_TEXT = ("narrative", "text", "title")
SUMMARY_FIELDS = (("request", "Request"), ("investigated", "Investigated"), ("learned", "Learned"),
                  ("completed", "Completed"), ("next_steps", "Next steps"), ("notes", "Notes"))
SUMMARY_IMPORTANCE = 0.4


def read(places: Places, tz: tzinfo, root: Path | None = None) -> Reading:
    """Every observation and session summary of the database (`root`: another one)."""
    path = root if root is not None else places.claude_mem_db
    if is_dir(path):
        path = path / "claude-mem.db"
    if not is_file(path):
        raise InvalidInput(f"no claude-mem database at {places.shown(path)}: give it, as in  maxmem import "
                           "--from claude-mem PATH  (or set CLAUDE_MEM_DATA_DIR)")
    shown = places.shown(path)
    try:
        connection = apsw.Connection(f"{path.resolve().as_uri()}?mode=ro",
                                     flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    except apsw.Error as exc:
        raise InvalidInput(f"cannot open {shown}: {exc}") from None
    try:
        columns = {table: _columns(connection, table) for table in ("observations", "session_summaries")}
        _check(columns, shown)
        items = _observations(connection, columns["observations"], path)
        if columns["session_summaries"]:
            items += _summaries(connection, columns["session_summaries"], path)
    except apsw.NotADBError:
        raise InvalidInput(f"{shown} is not a SQLite database: give claude-mem's claude-mem.db") from None
    except apsw.Error as exc:
        raise InvalidInput(f"cannot read {shown}: {exc}") from None
    finally:
        connection.close()
    return Reading(NAME, path, [SourceFile(path, items)])


def _columns(connection: apsw.Connection, table: str) -> set[str]:
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


def _check(columns: Mapping[str, set[str]], shown: str) -> None:
    observations = columns["observations"]
    missing = OBSERVATION_NEEDS - observations
    if not observations or missing or not observations & set(OBSERVATION_TEXT) \
            or not observations & {"created_at", "created_at_epoch"}:
        what = "no observations table" if not observations else \
            f"its observations table lacks {', '.join(sorted(missing)) or 'a text and a time column'}"
        raise InvalidInput(f"{shown} is not a claude-mem database this maxmem knows ({what})")
    summaries = columns["session_summaries"]
    if summaries and (SUMMARY_NEEDS - summaries or not summaries & {"created_at", "created_at_epoch"}):
        raise InvalidInput(f"{shown} is not a claude-mem database this maxmem knows (its session_summaries "
                           "table lacks the id, project or time columns)")




OBSERVATION_COLUMNS = ("id", "project", "merged_into_project", "type", "title", "subtitle", "narrative", "text",
                       "facts", "concepts", "files_read", "files_modified", "memory_session_id", "sdk_session_id",
                       "prompt_number", "created_at", "created_at_epoch")
SUMMARY_COLUMNS = ("id", "project", "merged_into_project", "request", "investigated", "learned", "completed",
                   "next_steps", "notes", "files_read", "files_edited", "memory_session_id", "sdk_session_id",
                   "prompt_number", "created_at", "created_at_epoch")


def _rows(connection: apsw.Connection, columns: set[str], wanted: tuple[str, ...], table: str) -> list[dict[str, Any]]:
    names = [c for c in wanted if c in columns]  # from the fixed lists above, never from input
    return [dict(zip(names, row)) for row in connection.execute(f"SELECT {', '.join(names)} FROM {table} ORDER BY id")]


def _observations(connection: apsw.Connection, columns: set[str], path: Path) -> list[Item]:
    out = []
    for row in _rows(connection, columns, OBSERVATION_COLUMNS, "observations"):
        facts = [str(f).strip() for f in _json_list(row.get("facts")) if str(f).strip()]
        body = _text(row.get("narrative")) or _text(row.get("text"))
        text = "\n".join(filter(None, [body, *(f"- {f}" for f in facts)])) or _text(row.get("subtitle")) \
            or _text(row.get("title"))
        kind = str(row.get("type") or "").strip().lower()
        out.append(_item(
            path, row, "observations", text, title=_text(row.get("title")) or None,
            category="project", kind=kind if KIND.match(kind) else "note", importance=IMPORTANCE,
            details={"subtitle": _text(row.get("subtitle")), "concepts": _json_list(row.get("concepts")),
                     "files_read": _json_list(row.get("files_read")),
                     "files_modified": _json_list(row.get("files_modified"))}))
    return out


def _summaries(connection: apsw.Connection, columns: set[str], path: Path) -> list[Item]:
    out = []
    for row in _rows(connection, columns, SUMMARY_COLUMNS, "session_summaries"):
        parts = [f"{label}: {_text(row.get(name))}" for name, label in SUMMARY_FIELDS if _text(row.get(name))]
        request = _text(row.get("request"))
        out.append(_item(path, row, "session_summaries", "\n".join(parts),
                         title=f"Session: {request[:120]}" if request else None, category="daily",
                         kind="summary", importance=SUMMARY_IMPORTANCE,
                         details={"files_read": _json_list(row.get("files_read")),
                                  "files_edited": _json_list(row.get("files_edited"))}))
    return out


def _item(path: Path, row: Mapping[str, Any], table: str, text: str, *, title: str | None, category: str,
          kind: str, importance: float, details: Mapping[str, Any]) -> Item:
    project = _text(row.get("merged_into_project")) or _text(row.get("project"))
    session = row.get("memory_session_id") or row.get("sdk_session_id")
    skip = None
    if not text.strip():
        skip = "empty"
    elif project == OBSERVER_PROJECT:
        skip = "one of claude-mem's own observer sessions"
    created = _time(row)
    if created is None and skip is None:
        skip = "no readable time"
    return Item(
        key=f"{table}/{row['id']}", text=text, line=None, title=title[:300] if title else None,
        category=category, kind=kind, tags=(project_tag(project),) if project else (),
        created_at=created, section=None, importance=importance,
        details={"table": table, "row": row["id"], "project": project, "session": session,
                 **{k: v for k, v in details.items() if v}},
        skip=skip, stable=True)


def _time(row: Mapping[str, Any]) -> str | None:
    for value in (row.get("created_at_epoch"), row.get("created_at")):
        if isinstance(value, (int, float)) and not isinstance(value, bool) or isinstance(value, str) and value:
            try:
                return to_iso(value)
            except InvalidInput:
                continue
    return None


def _json_list(value: Any) -> list[Any]:
    if not isinstance(value, str) or not value.strip():
        return []
    try:
        parsed = json.loads(value)
    except ValueError:
        return [value]
    return parsed if isinstance(parsed, list) else [parsed]


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""
