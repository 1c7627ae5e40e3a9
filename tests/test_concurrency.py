"""Several real processes on one brain.db at once: no lock errors, nothing lost.

The agent (remember + search), a bulk writer, capture, retention, a sync whose
PostgreSQL is down and a search-only reader run together for a few seconds
(tests/stress_worker.py). Afterwards every write a process saw acknowledged is in
brain.db (or, for what retention expired, in its archive), the change log agrees
with the rows, and searches kept answering throughout.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import HashEmbedder

from maxmem import Brain, Config
from maxmem.store.db import Database

WORKER = Path(__file__).with_name("stress_worker.py")
ROOT = WORKER.parent.parent


def start(role: str, db: Path, seconds: float, log: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WORKER), role, str(db), str(seconds), str(log), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )


def read_log(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def seed(db: Path, n: int = 200) -> None:
    with Brain.open(db, embedder=HashEmbedder()) as brain:
        brain.remember_many([{"content": f"seed memory {i} about kilo lima mike {i % 13}",
                              "category": "core"} for i in range(n)])


def archived_uids(folder: Path) -> set[str]:
    uids = set()
    for path in folder.glob("*.jsonl.gz"):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                uids.add(record.get("uid") or record.get("memory", {}).get("uid"))
    return uids


def change_log_agrees(db: Database) -> list[str]:
    """Problems where the last logged op of a uid disagrees with whether its row exists."""
    problems = []
    rows = db.rows(
        "SELECT c.uid, c.op, m.id IS NOT NULL AS present FROM changes c "
        "LEFT JOIN memories m ON m.uid = c.uid "
        "WHERE c.seq = (SELECT max(seq) FROM changes c2 WHERE c2.uid = c.uid)"
    )
    for row in rows:
        if (row["op"] == "upsert") != bool(row["present"]):
            problems.append(f"{row['uid']}: last op {row['op']} but present={row['present']}")
    unlogged = db.scalar("SELECT count(*) FROM memories m WHERE NOT EXISTS "
                         "(SELECT 1 FROM changes c WHERE c.uid = m.uid)")
    if unlogged:
        problems.append(f"{unlogged} memories have no change logged")
    return problems


@pytest.mark.slow
def test_mixed_load_of_six_processes_loses_nothing_and_never_reports_locked(tmp_path):
    db = tmp_path / "brain.db"
    seed(db)
    seconds = 6.0
    roles = ["agent", "writer", "capture", "retention", "sync", "searcher"]
    procs = {role: start(role, db, seconds, tmp_path / f"{role}.log", "--folder", str(tmp_path / role))
             for role in roles}
    outputs = {role: p.communicate(timeout=120) for role, p in procs.items()}
    for role, p in procs.items():
        assert p.returncode == 0, f"{role} crashed: {outputs[role][1][-2000:]}"
    events = {role: read_log(tmp_path / f"{role}.log") for role in roles}
    everything = [e for role in roles for e in events[role]]
    assert all(e["op"] != "crash" for e in everything)
    assert not [e for e in everything if "locked" in json.dumps(e).lower()]
    errors = [e for e in everything if e["op"] == "error" and e["role"] != "sync"]
    assert not errors, errors[:5]

    # Sync against a PostgreSQL that is down fails cleanly, every time, with one line
    # and without the password, and never moves its cursor.
    sync_errors = [e for e in events["sync"] if e["op"] == "error"]
    assert sync_errors and all(e["type"] == "SyncError" for e in sync_errors)
    assert all("\n" not in e["msg"] and "s3cret-pw" not in e["msg"] for e in sync_errors)
    assert not [e for e in events["sync"] if e["op"] == "sync-unexpected-success"]

    # Capture once more, in this process, to take the last lines written.
    from maxmem.capture import run_capture

    with Brain.open(db, embedder=HashEmbedder()) as brain:
        transcripts = list((tmp_path / "capture").glob("*.jsonl"))
        run_capture(brain, paths=transcripts, format="jsonl")
        lines = sum(1 for t in transcripts for _ in t.open())
        assert brain.db.scalar("SELECT count(*) FROM turns") == lines
        assert brain.db.scalar("SELECT count(*) FROM turns GROUP BY fingerprint ORDER BY 1 DESC LIMIT 1") == 1

        present = {r[0] for r in brain.db.execute("SELECT uid FROM memories")}
        acknowledged = {e["uid"] for role in ("agent", "writer") for e in events[role] if e["op"] == "remember"}
        assert acknowledged, "the writers wrote nothing"
        assert acknowledged <= present, f"{len(acknowledged - present)} acknowledged writes lost"
        expired = {e["uid"] for e in events["retention"] if e["op"] == "expire"}
        assert expired, "retention had nothing to expire"
        gone = expired - present
        assert gone, "retention deleted nothing"
        assert gone <= archived_uids(tmp_path / "retention"), "deleted without an archive"

        assert brain.db.scalar("PRAGMA integrity_check") == "ok"
        assert change_log_agrees(brain.db) == []
        assert brain.db.scalar("SELECT count(*) FROM (SELECT content_hash, category FROM memories "
                               "GROUP BY 1, 2 HAVING count(*) > 1)") == 0

    # Searches kept answering while the others wrote.
    searches = [e for e in events["searcher"] if e["op"] == "search"]
    assert len(searches) >= 10
    times = [e["t"] for e in searches]
    assert max(b - a for a, b in zip(times, times[1:])) < 5.0
    writes = [e for e in everything if e["op"] == "remember"]
    print(f"\n{len(writes)} writes, {len(searches)} searches in {seconds:.0f} s; worst write wait "
          f"{max(e['wait'] for e in writes):.2f} s, worst search {max(e['wait'] for e in searches):.2f} s")


def test_embedding_happens_outside_the_write_lock(tmp_path, embedding_server):
    """A slow embedding API must not hold brain.db's write lock.

    One process remembers through the loopback OpenAI-compatible server answering in
    1.5 s; meanwhile this process writes with a 300 ms busy timeout. If the embedding
    call were inside the write transaction, these writes would fail with SQLITE_BUSY.
    """
    db = tmp_path / "brain.db"
    config = Config(embedder="openai", openai_api_key=embedding_server.api_key,
                    openai_base_url=embedding_server.base_url, openai_model="e5-test")
    with Brain.open(db, config=config) as brain:
        brain.remember("first memory, so the vector table exists")
    embedding_server.failures.clear()
    embedding_server.delay = 1.5
    try:
        log = tmp_path / "slow.log"
        proc = subprocess.Popen(
            [sys.executable, "-c", SLOW_REMEMBER, str(db), embedding_server.base_url, str(log)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        )
        other = Database(db, busy_timeout_ms=300)
        writes, waits = 0, []
        deadline = time.time() + 60
        while proc.poll() is None and time.time() < deadline:
            started = time.perf_counter()
            with other.atomic():
                other.set_meta("probe", str(writes))
            waits.append(time.perf_counter() - started)
            writes += 1
            time.sleep(0.02)
        out, err = proc.communicate(timeout=30)
        other.close()
    finally:
        embedding_server.delay = 0.0
    assert proc.returncode == 0, err
    assert log.read_text().split() == ["stored", "stored", "stored"]
    assert writes > 20 and max(waits) < 0.3


SLOW_REMEMBER = """
import sys
from maxmem import Brain, Config
db, url, log = sys.argv[1:]
config = Config(embedder="openai", openai_api_key="sk-test-key", openai_base_url=url,
                openai_model="e5-test", embed_timeout=10)
with Brain.open(db, config=config) as brain, open(log, "w") as out:
    for i in range(3):
        m = brain.remember(f"slowly embedded memory {i}")
        out.write("stored\\n" if m.embedded_at else "pending\\n")
"""


class WatchfulEmbedder(HashEmbedder):
    """Records every embedding call made while brain.db has a write transaction open."""

    def __init__(self) -> None:
        super().__init__()
        self.db: Database | None = None
        self.inside: list[str] = []

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        if self.db is not None and self.db.conn.in_transaction:
            import traceback

            self.inside.append(" <- ".join(f"{f.name}" for f in reversed(traceback.extract_stack()[-8:-1])))
        return super().embed_documents(texts)


def test_no_job_embeds_inside_a_write_transaction(tmp_path):
    """Every path that stores memories embeds before its write transaction opens."""

    from maxmem.capture import CaptureSettings, run_capture
    from maxmem.compaction import save_context
    from maxmem.jsonl import read_jsonl
    from maxmem.markdown.merge import import_markdown
    from maxmem.work import ensure_observation

    embedder = WatchfulEmbedder()
    with Brain.open(tmp_path / "brain.db", embedder=embedder) as brain:
        embedder.db = brain.db
        m = brain.remember("the first memory")
        brain.remember_many([{"content": f"bulk {i}"} for i in range(5)])
        brain.update(m.id, content="the first memory, changed")
        exported = tmp_path / "export.jsonl"
        exported.write_text(json.dumps({"content": "imported from JSONL", "category": "project"}) + "\n")
        brain.import_records(read_jsonl(exported))
        (tmp_path / "MEMORY.md").write_text("# Memory\n\n## Decisions\n\n- We keep the brain in one file\n")
        import_markdown(brain, tmp_path / "MEMORY.md")
        save_context(brain, {"session_id": "s1", "exchanges": [
            {"user_message": "what port is staging on?", "assistant_response": "5433"}]})
        ensure_observation(brain, "apollo", location="~/src/apollo")
        transcript = tmp_path / "t.jsonl"
        transcript.write_text("".join(json.dumps({"id": f"x{i}", "role": "user" if i % 2 else "assistant",
                                                  "content": f"captured line {i} " * 30}) + "\n" for i in range(12)))
        run_capture(brain, paths=[transcript], format="jsonl", settings=CaptureSettings(settle_seconds=0))
        with Brain.open(tmp_path / "brain.db", embedder="none") as plain:
            plain.remember("stored without a vector")
        brain.embed_pending()
        brain.reindex()
        assert embedder.calls, "nothing was embedded"
    assert embedder.inside == []


def test_simultaneous_captures_report_what_each_stored(tmp_path):
    """Three captures of the same transcripts at once: each reports only the turns and
    memories it stored itself, so the reports add up to what brain.db holds."""
    from agent_layout import claude_transcript

    folder = tmp_path / "transcripts"
    for k in range(4):
        claude_transcript(folder / f"s{k}.jsonl", f"5f0c2a7e-1111-4222-8333-94445555{k:04d}", 300_000, seed=k)
    db = tmp_path / "brain.db"
    Brain.open(db, embedder="none").close()
    command = [sys.executable, "-m", "maxmem", "--db", str(db), "--embedder", "none",
               "capture", "--path", str(folder), "--json"]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
            for _ in range(3)]
    reports = []
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
        reports.append(json.loads(out))
    check = Database(db)
    turns = check.scalar("SELECT count(*) FROM turns")
    memories = check.scalar("SELECT count(*) FROM memories WHERE category = 'conversation'")
    check.close()
    assert turns > 1000 and sum(r["new_turns"] for r in reports) == turns
    assert sum(r["memories"] for r in reports) == memories
