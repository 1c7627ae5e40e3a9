"""The capture job end to end: fixtures into brain.db, incrementally and idempotently."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from test_capture_readers import CHATGPT_EXPORT, CLAUDE, CODEX, FIXTURES, MARKDOWN, OPENCLAW
from test_redact import SECRETS

from maxmem import Brain, Clock
from maxmem.capture import CaptureSettings, run_capture
from maxmem.capture.model import ReadContext
from maxmem.capture.readers import detect_format, read
from maxmem.store.db import Database


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A copy of the fixture homes (~/.openclaw, ~/.claude, ~/.codex) we may change."""
    target = tmp_path / "home"
    shutil.copytree(FIXTURES, target)
    for path in target.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def settings_for(home: Path, **kw) -> CaptureSettings:
    kw.setdefault("settle_seconds", 0)
    return CaptureSettings(openclaw_dirs=(home / "openclaw",), claude_dirs=(home / "claude-code",),
                           codex_dirs=(home / "codex",), **kw)


@pytest.fixture
def cbrain(tmp_path: Path, hash_embedder) -> Brain:
    # A real clock: whether a transcript is idle compares now with its mtime.
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=Clock()) as brain:
        yield brain


def turns(brain: Brain, session_id: str | None = None) -> list[dict]:
    where, params = ("WHERE session_id = ?", (session_id,)) if session_id else ("", ())
    return brain.db.rows(f"SELECT * FROM turns {where} ORDER BY session_id, seq", params)


def conversation_memories(brain: Brain):
    return brain.list(category="conversation", limit=10000, order="oldest")


def expected_keys(path: Path) -> list[str]:
    """Turn keys of a whole fixture, read in one go (the reference for growth tests)."""
    fmt = detect_format(path)
    parsed = read(path, fmt, 0, {}, ReadContext(str(path), "2030-01-01T00:00:00.000Z")).parsed
    return [t.key for t in parsed.turns]


# --- every format -------------------------------------------------------------------------

def test_fixture_roots_are_captured_once(cbrain, home, hash_embedder):
    report = run_capture(cbrain, settings=settings_for(home))
    assert report.errors == 0 and report.files == 3
    assert report.new_turns == len(expected_keys(OPENCLAW)) + len(expected_keys(CLAUDE)) + len(expected_keys(CODEX))
    stored = turns(cbrain)
    assert len(stored) == report.new_turns
    sessions = {s["id"]: s for s in cbrain.db.rows("SELECT * FROM sessions")}
    assert set(sessions) == {"5e0c7a2d-91b4-4f3e-8c62-1d7f3a9b0e54", "7b3e9f12-4c6a-4d8e-a1b5-2f0c9e7d3a61",
                             "01a22161-fe80-73c1-ae5f-4b2d9c07e816"}
    assert sessions["7b3e9f12-4c6a-4d8e-a1b5-2f0c9e7d3a61"]["title"] == "iso-week-fix"
    memories = conversation_memories(cbrain)
    assert len(memories) == report.memories > 0
    for memory in memories:
        assert memory.source == "capture" and memory.kind == "exchange"
        assert memory.session_id == memory.metadata["session_id"]
        first, last = memory.metadata["turn_range"]
        times = [t["created_at"] for t in turns(cbrain, memory.session_id) if first <= t["seq"] <= last]
        assert memory.created_at == min(times)  # the time of its turns, not of the capture
        assert memory.metadata["source_file"].endswith(".jsonl") and memory.metadata["entry_ids"]
    # Stored first, embedded later: capture never called the model.
    assert hash_embedder.calls == [] and report.embedding_pending == cbrain.pending_count() >= len(memories)
    assert "wait for vectors (maxmem embed gives them)" in report.summary()
    assert cbrain.embed_pending().pending == 0
    calls_before = len(hash_embedder.calls)
    assert calls_before > 0

    again = run_capture(cbrain, settings=settings_for(home))
    assert again.new_turns == 0 and again.memories == 0 and again.read == 0
    assert len(hash_embedder.calls) == calls_before  # zero embedding calls on a no-op run
    assert len(turns(cbrain)) == len(stored)


def test_tool_calls_are_stored_with_status_duration_and_truncated_results(cbrain, home):
    run_capture(cbrain, settings=settings_for(home, tool_result_chars=120))
    calls = {c["call_id"]: c for c in cbrain.db.rows("SELECT * FROM tool_calls")}
    failed = calls["call_Hd4Rt9Zm2Wk7Nc1Xq6Lb3Vs8"]
    assert failed["name"] == "shell_command" and failed["status"] == "error" and failed["duration_ms"] == 17400
    assert json.loads(failed["arguments"])["command"] == "cargo test -q forecast"
    read_call = calls["toolu_01HxQv7pZ3mKc9WfTn2LbR4s"]
    assert read_call["status"] == "ok" and read_call["duration_ms"] == 200  # from the two timestamps
    assert all(c["result"] is None or len(c["result"]) <= 160 for c in calls.values())
    # Tool results are searchable through the conversation memories.
    hits = cbrain.search("ENOENT no such file notes 2026-11-26", mode="keyword", category="conversation")
    assert hits and "ENOENT" in hits[0].memory.content


def test_generic_formats_by_path(cbrain, tmp_path):
    folder = tmp_path / "exports"
    folder.mkdir()
    (folder / "conversations.json").write_text(json.dumps(CHATGPT_EXPORT), encoding="utf-8")
    (folder / "chat.jsonl").write_text(
        '{"role": "user", "content": "Which port is postgres on?"}\n'
        '{"role": "assistant", "content": "5432, see docker ps."}\n', encoding="utf-8")
    notes = tmp_path / "2026-01-16-vendor.md"
    notes.write_text(MARKDOWN, encoding="utf-8")
    report = run_capture(cbrain, paths=[folder])
    assert report.errors == 0 and report.files == 2
    twin = tmp_path / "other" / "chat.jsonl"  # same name, another folder: another session
    twin.parent.mkdir()
    twin.write_text('{"role": "user", "content": "Which port is redis on?"}\n', encoding="utf-8")
    assert run_capture(cbrain, paths=[twin]).new_turns == 1
    report_md = run_capture(cbrain, paths=[notes], format="markdown")
    assert report_md.new_turns == 3
    texts = {t["text"] for t in turns(cbrain)}
    assert {"Lisbon is lovely in May.", "hello claude", "5432, see docker ps.", "thanks!",
            "Which port is redis on?"} <= texts
    assert "(regenerated, not shown)" not in texts
    # A re-exported ChatGPT file (rewritten whole) adds only what is new.
    export = json.loads((folder / "conversations.json").read_text())
    export[1]["chat_messages"].append({"uuid": "m3", "sender": "human", "text": "one more",
                                       "created_at": "2026-01-02T03:05:00.000Z"})
    (folder / "conversations.json").write_text(json.dumps(export), encoding="utf-8")
    again = run_capture(cbrain, paths=[folder])
    assert again.new_turns == 1
    assert len(turns(cbrain)) == len(texts) + 1


# --- growth, partial lines, rewrites, rotation ----------------------------------------------

@pytest.mark.parametrize("fixture", [OPENCLAW, CLAUDE, CODEX], ids=["openclaw", "claude-code", "codex"])
def test_transcript_grown_line_by_line(cbrain, tmp_path, fixture):
    data = fixture.read_bytes()
    complete = data[: data.rindex(b"\n") + 1]
    lines = complete.splitlines(keepends=True)
    live = tmp_path / "agents" / "main" / "sessions" / fixture.name
    live.parent.mkdir(parents=True)
    fmt = detect_format(fixture)
    growing = CaptureSettings(settle_seconds=1e9)  # never idle while it grows
    with live.open("wb") as out:
        for line in lines:
            half = len(line) // 2
            out.write(line[:half])
            out.flush()
            run_capture(cbrain, paths=[live], format=fmt, settings=growing)
            out.write(line[half:])
            out.flush()
            run_capture(cbrain, paths=[live], format=fmt, settings=growing)
    run_capture(cbrain, paths=[live], format=fmt, settings=CaptureSettings(settle_seconds=0))
    keys = [t["key"] for t in turns(cbrain)]
    assert sorted(keys) == sorted(expected_keys(fixture))  # nothing missed, nothing twice
    seqs = [t["seq"] for t in turns(cbrain)]
    assert seqs == list(range(1, len(seqs) + 1))
    memories = conversation_memories(cbrain)
    assert len({m.content for m in memories}) == len(memories)
    covered = {seq for m in memories for seq in range(m.metadata["turn_range"][0], m.metadata["turn_range"][1] + 1)}
    assert covered == set(seqs)  # every turn is in some memory


def test_partial_last_line_completed_later(cbrain, tmp_path):
    path = tmp_path / "s.jsonl"
    first = json.dumps({"type": "session", "version": 3, "id": "pl", "timestamp": "2026-11-28T09:00:00.000Z"})
    msg = json.dumps({"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-11-28T09:00:01.000Z",
                      "message": {"role": "user", "content": "half-written question about ports"}})
    path.write_text(first + "\n" + msg[:30], encoding="utf-8")
    report = run_capture(cbrain, paths=[path], format="openclaw")
    assert report.new_turns == 0
    assert cbrain.db.scalar("SELECT byte_offset FROM capture_files") == len(first) + 1
    with path.open("a", encoding="utf-8") as out:
        out.write(msg[30:] + "\n")
    report = run_capture(cbrain, paths=[path], format="openclaw")
    assert report.new_turns == 1
    assert [t["text"] for t in turns(cbrain)] == ["half-written question about ports"]
    assert run_capture(cbrain, paths=[path], format="openclaw").new_turns == 0


def _openclaw_lines(session: str, texts: list[str], start: int = 0) -> str:
    out = []
    if start == 0:
        out.append(json.dumps({"type": "session", "version": 3, "id": session,
                               "timestamp": "2026-11-28T09:00:00.000Z", "cwd": "/w"}))
    for i, text in enumerate(texts, start=start):
        role = "user" if i % 2 == 0 else "assistant"
        content = text if role == "user" else [{"type": "text", "text": text}]
        out.append(json.dumps({"type": "message", "id": f"{session[:4]}{i:04d}", "parentId": None,
                               "timestamp": f"2026-11-28T09:{i // 60:02d}:{i % 60:02d}.000Z",
                               "message": {"role": role, "content": content}}))
    return "".join(line + "\n" for line in out)


def test_rewritten_file_is_read_again_without_duplicates(cbrain, tmp_path):
    path = tmp_path / "rw.jsonl"
    path.write_text(_openclaw_lines("rw-session", ["one", "two", "three"]), encoding="utf-8")
    assert run_capture(cbrain, paths=[path], format="openclaw").new_turns == 3
    # A migration rewrites the file through a new inode with a changed header, plus one new entry.
    rewritten = _openclaw_lines("rw-session", ["one", "two", "three", "four"]).replace(
        '"version": 3', '"version": 3, "migrated": true', 1)
    tmp = tmp_path / "rw.tmp"
    tmp.write_text(rewritten, encoding="utf-8")
    os.replace(tmp, path)
    report = run_capture(cbrain, paths=[path], format="openclaw")
    assert report.new_turns == 1 and report.details[0].note.startswith("rewritten")
    assert [t["text"] for t in turns(cbrain)] == ["one", "two", "three", "four"]
    # Truncated (shorter than the cursor): read again from the start, nothing duplicated.
    path.write_text(_openclaw_lines("rw-session", ["one"]), encoding="utf-8")
    report = run_capture(cbrain, paths=[path], format="openclaw")
    assert report.new_turns == 0 and report.details[0].note.startswith("rewritten")
    assert len(turns(cbrain)) == 4


def test_forgetting_a_captured_memory_blanks_its_turns_and_they_do_not_come_back(cbrain, tmp_path):
    path = tmp_path / "leak.jsonl"
    lines = ["set up the alarm", "the alarm code is xqzzyvax4417, noted", "thanks"]
    path.write_text(_openclaw_lines("leak-session", lines), encoding="utf-8")
    assert run_capture(cbrain, paths=[path], format="openclaw").new_turns == 3
    hit = cbrain.search("xqzzyvax4417", mode="keyword")[0].memory
    assert hit.source == "capture" and hit.metadata["turn_range"] == [1, 3]
    cbrain.forget(hit.id)
    assert [t["text"] for t in turns(cbrain)] == ["", "", ""]
    assert all(b"xqzzyvax" not in f.read_bytes() for f in tmp_path.glob("brain.db*"))
    # The same file read again after a rewrite: its turns are known, nothing is taken in twice.
    tmp = tmp_path / "leak.tmp"
    tmp.write_text(_openclaw_lines("leak-session", lines).replace('"version": 3', '"version": 3, "m": 1', 1),
                   encoding="utf-8")
    os.replace(tmp, path)
    run_capture(cbrain, paths=[path], format="openclaw")
    assert cbrain.search("xqzzyvax4417", mode="keyword") == []


def test_a_locked_brain_counts_nothing_as_added_and_the_next_run_takes_it(tmp_path, hash_embedder):
    import apsw

    from maxmem import Config

    path = tmp_path / "chat.jsonl"
    path.write_text(_openclaw_lines("lock-session", ["one", "two", "three"]), encoding="utf-8")
    config = Config(db_path=tmp_path / "l.db").with_(busy_timeout_ms=200)
    with Brain.open(tmp_path / "l.db", embedder=hash_embedder, config=config, clock=Clock()) as brain:
        other = apsw.Connection(str(tmp_path / "l.db"))
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        report = run_capture(brain, paths=[path], format="openclaw")
        assert report.errors == 1 and report.new_turns == 0 and report.memories == 0
        other.execute("ROLLBACK")
        other.close()
        assert run_capture(brain, paths=[path], format="openclaw").new_turns == 3


def test_v1_file_migrated_with_new_random_ids_is_not_duplicated(cbrain, tmp_path):
    path = tmp_path / "v1.jsonl"
    v1 = [{"type": "session", "id": "v1s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"},
          {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z",
           "message": {"role": "user", "content": "remember the blue door"}}]
    path.write_text("".join(json.dumps(x) + "\n" for x in v1), encoding="utf-8")
    assert run_capture(cbrain, paths=[path], format="openclaw").new_turns == 1
    v3 = [dict(v1[0], version=3), dict(v1[1], id="a1b2c3d4", parentId=None)]
    path.write_text("".join(json.dumps(x) + "\n" for x in v3), encoding="utf-8")
    assert run_capture(cbrain, paths=[path], format="openclaw").new_turns == 0
    assert len(turns(cbrain)) == 1


def test_rotated_file_tail_is_captured_under_its_new_name(cbrain, tmp_path):
    sessions = tmp_path / "openclaw" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    live = sessions / "aaaa1111.jsonl"
    live.write_text(_openclaw_lines("aaaa1111", ["first", "second"]), encoding="utf-8")
    settings = CaptureSettings(openclaw_dirs=(tmp_path / "openclaw",), settle_seconds=0)
    assert run_capture(cbrain, settings=settings).new_turns == 2
    # More lines arrive, then /new resets the session: the file is renamed, a new one starts.
    with live.open("a", encoding="utf-8") as out:
        out.write(_openclaw_lines("aaaa1111", ["third", "fourth"], start=2))
    archived = sessions / "aaaa1111.jsonl.reset.2026-11-28T10-00-00.000Z"
    live.rename(archived)
    (sessions / "bbbb2222.jsonl").write_text(_openclaw_lines("bbbb2222", ["fresh start"]), encoding="utf-8")
    (sessions / "cccc3333.jsonl.deleted.2026-11-01T00-00-00.000Z").write_text(
        _openclaw_lines("cccc3333", ["never followed: not a live transcript"]), encoding="utf-8")
    report = run_capture(cbrain, settings=settings)
    assert report.new_turns == 3
    assert [t["text"] for t in turns(cbrain, "aaaa1111")] == ["first", "second", "third", "fourth"]
    assert [t["text"] for t in turns(cbrain, "bbbb2222")] == ["fresh start"]
    assert not turns(cbrain, "cccc3333")
    paths = {r["path"] for r in cbrain.db.rows("SELECT path FROM capture_files")}
    assert str(archived) in paths and str(live) not in paths
    assert run_capture(cbrain, settings=settings).new_turns == 0


def test_codex_rollout_moved_to_archived_sessions(cbrain, home):
    settings = settings_for(home)
    first = run_capture(cbrain, settings=settings).new_turns
    rollout = next((home / "codex" / "sessions").rglob("rollout-*.jsonl"))
    archive = home / "codex" / "archived_sessions"
    archive.mkdir()
    rollout.rename(archive / rollout.name)
    report = run_capture(cbrain, settings=settings)
    assert report.new_turns == 0 and len(turns(cbrain)) == first
    assert any((d.note or "").startswith("renamed from") for d in report.details)


def test_held_back_claude_response_is_flushed_once_the_file_is_idle(cbrain, tmp_path):
    path = tmp_path / "sess-9.jsonl"
    base = {"parentUuid": None, "isSidechain": False, "cwd": "/p", "sessionId": "sess-9",
            "timestamp": "2026-11-28T10:00:00.000Z"}
    user = dict(base, type="user", uuid="u1", message={"role": "user", "content": "hello?"})
    partial = dict(base, type="assistant", uuid="a1", message={
        "id": "msg_1", "role": "assistant", "model": "m", "stop_reason": None,
        "content": [{"type": "text", "text": "thinking out loud"}]})
    path.write_text(json.dumps(user) + "\n" + json.dumps(partial) + "\n", encoding="utf-8")
    busy = CaptureSettings(settle_seconds=1e9)
    assert run_capture(cbrain, paths=[path], settings=busy).new_turns == 1
    assert run_capture(cbrain, paths=[path], settings=busy).new_turns == 0
    idle = CaptureSettings(settle_seconds=0)
    assert run_capture(cbrain, paths=[path], settings=idle).new_turns == 1
    assert [t["text"] for t in turns(cbrain)] == ["hello?", "thinking out loud"]
    assert run_capture(cbrain, paths=[path], settings=idle).details[0].status == "unchanged"


# --- bad input ---------------------------------------------------------------------------

def test_unknown_records_invalid_utf8_and_nul_bytes(cbrain, tmp_path):
    path = tmp_path / "messy.jsonl"
    good = _openclaw_lines("messy", ["alpha", "beta", "gamma"]).encode().splitlines(keepends=True)
    data = (good[0] + b'{"type": "hologram", "id": "zz", "timestamp": "2026-11-28T09:00:00.000Z"}\n'
            + good[1] + b"this is not json\n"
            + good[2].replace(b"beta", b"b\xffta") + b"\x00" * 64 + good[3]
            + b'{"type": "message", "id": "tail"')
    path.write_bytes(data)
    report = run_capture(cbrain, paths=[path], format="openclaw")
    assert report.errors == 0
    assert report.unknown_records == 1
    assert report.skipped_lines == 1  # the non-JSON line; the others are recovered
    assert [t["text"] for t in turns(cbrain)] == ["alpha", "b\ufffdta", "gamma"]
    stored = cbrain.db.one("SELECT skipped, byte_offset FROM capture_files")
    assert stored["skipped"] == 1 and stored["byte_offset"] == data.rindex(b"\n") + 1


def test_a_bad_file_is_reported_and_the_rest_still_captured(cbrain, tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "conversations.json").write_text("{broken", encoding="utf-8")
    (folder / "ok.jsonl").write_text('{"role": "user", "content": "still here"}\n', encoding="utf-8")
    report = run_capture(cbrain, paths=[folder])
    assert report.errors == 1 and report.new_turns == 1
    bad = next(d for d in report.details if d.status == "error")
    assert "not a JSON chat export" in bad.note
    assert cbrain.db.scalar("SELECT count(*) FROM capture_files WHERE path LIKE '%conversations.json'") == 0


def test_dry_run_writes_nothing(cbrain, home, hash_embedder):
    report = run_capture(cbrain, settings=settings_for(home), dry_run=True)
    assert report.new_turns > 0 and report.memories > 0
    assert {d.status for d in report.details} == {"would-read"}
    assert cbrain.db.scalar("SELECT count(*) FROM turns") == 0
    assert cbrain.db.scalar("SELECT count(*) FROM capture_files") == 0
    assert not conversation_memories(cbrain) and not hash_embedder.calls


# --- secrets -----------------------------------------------------------------------------

def test_secrets_stay_out_of_brain_db_and_out_of_the_embedding_request(tmp_path, openai_config,
                                                                      embedding_server):
    secret_text = "\n".join(text for _, text, _ in SECRETS)
    entries = [
        {"type": "session", "version": 3, "id": "secret-session", "timestamp": "2026-11-28T09:00:00.000Z",
         "cwd": "/w"},
        {"type": "session_info", "id": "s0", "parentId": None, "timestamp": "2026-11-28T09:00:00.500Z",
         "name": "deploy with sk-proj-Abc123def456ghi789jkl012mno345"},
        {"type": "message", "id": "s1", "parentId": None, "timestamp": "2026-11-28T09:00:01.000Z",
         "message": {"role": "user", "content": "please deploy, here are my credentials:\n" + secret_text}},
        {"type": "message", "id": "s2", "parentId": "s1", "timestamp": "2026-11-28T09:00:02.000Z",
         "message": {"role": "assistant", "content": [
             {"type": "text", "text": "Using them: " + secret_text},
             {"type": "toolCall", "id": "call-1", "name": "bash",
              "arguments": {"command": "deploy " + " ".join(s[1] for s in SECRETS[:14])}}]}},
        {"type": "message", "id": "s3", "parentId": "s2", "timestamp": "2026-11-28T09:00:03.000Z",
         "message": {"role": "toolResult", "toolCallId": "call-1", "toolName": "bash",
                     "content": [{"type": "text", "text": "env:\n" + secret_text}], "isError": False}},
    ]
    path = tmp_path / "secret.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    embedding_server.requests.clear()
    db_path = tmp_path / "secret-brain.db"
    config = openai_config.with_(embed_timeout=120.0)  # e5 on a busy shared CPU can be slow
    with Brain.open(db_path, config=config, clock=Clock()) as brain:
        report = run_capture(brain, paths=[path], format="openclaw")
        assert report.errors == 0 and report.new_turns == 3 and report.memories >= 1
        assert report.redactions >= 3 * len(SECRETS)
        # Stored first: no text went to the model (a fresh brain only asks the dimension).
        assert report.embedding_pending >= report.memories
        assert [r["input"] for r in embedding_server.requests] == [["dimension probe"]]
        assert brain.embed_pending().pending == 0 and embedding_server.requests  # embedded later
    sent = json.dumps(embedding_server.requests, ensure_ascii=False)
    db = Database(db_path)  # every row of every table, FTS shadow tables included
    tables = [r["name"] for r in db.rows("SELECT name FROM sqlite_master WHERE type = 'table'")]
    dump = "\n".join(str(row) for table in tables for row in db.rows(f'SELECT * FROM "{table}"'))
    db.close()
    assert "secret-session" in dump
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("secret-brain.db*"))
    for label, _, secret in SECRETS:
        assert secret not in sent, f"{label} reached the embedding API"
        assert secret not in dump, f"{label} is stored in brain.db"
        assert secret.encode() not in raw, f"{label} is in the brain.db file"
    assert "[REDACTED:openai]" in dump and "[REDACTED:openai]" in sent


def test_parallel_tool_results_with_the_same_output_and_time_are_both_kept(cbrain, tmp_path):
    path = tmp_path / "par.jsonl"
    base = {"parentUuid": "a1", "isSidechain": False, "cwd": "/p", "sessionId": "par",
            "timestamp": "2026-11-28T10:00:01.000Z"}
    lines = [dict(base, type="assistant", uuid="a1", parentUuid=None, message={
        "id": "msg_p", "role": "assistant", "model": "m", "stop_reason": "tool_use", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "git status"}},
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "git status"}}]})]
    for uuid, call in (("r1", "t1"), ("r2", "t2")):
        lines.append(dict(base, type="user", uuid=uuid, message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call, "content": "nothing to commit"}]}))
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert run_capture(cbrain, paths=[path], format="claude-code").new_turns == 3
    results = cbrain.db.rows("SELECT call_id, result, status FROM tool_calls ORDER BY call_id")
    assert [(r["call_id"], r["result"], r["status"]) for r in results] == [
        ("t1", "nothing to commit", "ok"), ("t2", "nothing to commit", "ok")]


# --- compressed Codex rollouts (*.jsonl.zst) ------------------------------------------------

def _compress(path: Path) -> Path:
    import zstandard

    target = path.with_name(path.name + ".zst")
    target.write_bytes(zstandard.ZstdCompressor().compress(path.read_bytes()))
    return target


def test_a_compressed_codex_rollout_is_read_and_its_plain_twin_wins(cbrain, home, tmp_path):
    rollout = next((home / "codex" / "sessions").rglob("rollout-*.jsonl"))
    want = expected_keys(rollout)
    packed = _compress(rollout)
    settings = CaptureSettings(openclaw_dirs=(), claude_dirs=(), codex_dirs=(home / "codex",), settle_seconds=0)
    run_capture(cbrain, settings=settings)  # both exist: only the plain file is read
    paths = {r["path"] for r in cbrain.db.rows("SELECT path FROM capture_files")}
    assert paths == {str(rollout)}
    rollout.unlink()  # Codex replaced it by the compressed copy: nothing new, nothing twice
    report = run_capture(cbrain, settings=settings)
    assert report.new_turns == 0 and [t["key"] for t in turns(cbrain)] == want
    assert str(packed) in {r["path"] for r in cbrain.db.rows("SELECT path FROM capture_files")}
    assert run_capture(cbrain, settings=settings).details[0].status == "unchanged"
    # a brain that never saw the plain file captures the same turns from the compressed one
    with Brain.open(tmp_path / "fresh.db", embedder=cbrain.embedder, clock=Clock()) as fresh:
        assert run_capture(fresh, settings=settings).new_turns == len(want)
        assert [t["key"] for t in turns(fresh)] == want
        assert detect_format(packed) == "codex"


def test_a_broken_compressed_rollout_is_one_error_and_the_run_goes_on(cbrain, home):
    rollout = next((home / "codex" / "sessions").rglob("rollout-*.jsonl"))
    broken = rollout.with_name("rollout-2026-11-28T11-00-00-0000.jsonl.zst")
    broken.write_bytes(b"\x28\xb5\x2f\xfd not really zstd")
    report = run_capture(cbrain, settings=settings_for(home))
    errors = [d for d in report.details if d.status == "error"]
    assert [d.path for d in errors] == [str(broken)] and "zstd" in errors[0].note
    assert report.new_turns > 0  # every other transcript was captured


def test_a_transcript_with_no_newline_is_looked_at_once_over_runs_not_from_its_start_each_run(cbrain, tmp_path):
    """Each run out of time reads one block of the endless first line (the first window
    always starts); the cursor keeps how far it looked, so the runs together read the
    file once and reach the record after it. Read again from 0 each run, they never would."""
    from maxmem.capture.lines import BLOCK

    path = tmp_path / "endless.jsonl"
    blocks = 6
    path.write_bytes(b"x" * (blocks * BLOCK) + b'\n{"role": "user", "content": "the record after the long line"}\n')
    settings = CaptureSettings(openclaw_dirs=(), claude_dirs=(), codex_dirs=(), settle_seconds=0)
    reports = []
    for _ in range(blocks + 2):
        reports.append(run_capture(cbrain, paths=[path], format="jsonl", settings=settings,
                                   deadline=time.monotonic() - 1))  # out of time from the start
        if reports[-1].new_turns:
            break
    assert [t["text"] for t in turns(cbrain)] == ["the record after the long line"]
    assert reports[0].stopped and "next run looks on" in reports[0].details[0].note
    assert len(reports) <= blocks + 1, [r.summary() for r in reports]
    cursor = cbrain.db.one("SELECT byte_offset, state, skipped FROM capture_files")
    assert cursor["byte_offset"] == path.stat().st_size and "scanned_to" not in cursor["state"]
    assert cursor["skipped"] == 1  # the long line, counted once
