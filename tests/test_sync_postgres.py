"""The PostgreSQL push and cross-agent search, against a real PostgreSQL 16 + pgvector.

The server comes from tests/pg_fixture.py (pgserver's binaries); if it cannot start,
these tests are skipped with the reason (pytest -rs).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import run_cli

from maxmem import Brain, Config
from maxmem.embeddings import identity
from maxmem.memory import Filters
from maxmem.search import hybrid
from maxmem.search.hybrid import keyword_candidates
from maxmem.search.spaced import SPACED_CHARS
from maxmem.settings import SearchSettings
from maxmem.sync import pgsearch
from maxmem.sync.pgconnect import SyncError, mask_dsn, target_name
from maxmem.sync.pgpush import push
from maxmem.sync.pgschema import PG_MIGRATIONS
from maxmem.sync.pgstatus import status

psycopg = pytest.importorskip("psycopg")


def open_brain(path: Path, embedder: Any, agent: str | None = None, clock: Any = None) -> Brain:
    return Brain.open(path, embedder=embedder, config=Config(agent=agent), clock=clock)


def pg_rows(dsn: str, where: str = "true", params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    with psycopg.connect(dsn) as conn:
        if conn.execute("SELECT 1 FROM pg_type WHERE typname = 'vector'").fetchone():
            from pgvector.psycopg import register_vector

            register_vector(conn)
        cur = conn.execute(f"SELECT * FROM maxmem.memories WHERE {where} ORDER BY local_id", params)
        names = [d.name for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


def pg_scalar(dsn: str, sql: str, params: tuple[Any, ...] = ()) -> Any:
    with psycopg.connect(dsn) as conn:
        return conn.execute(sql, params).fetchone()[0]


def add_many(brain: Brain, n: int, start: int = 0, **fields: Any) -> list[Any]:
    return brain.remember_many([
        {"content": f"note {i}: the deploy of service {i % 7} failed on host h{i}", "tags": ["ops", f"n{i}"],
         "metadata": {"n": i}, "importance": (i % 10) / 10, **fields}
        for i in range(start, start + n)
    ])


# -- push -------------------------------------------------------------------------

def test_first_push_copies_every_field_and_the_vector(tmp_path, hash_embedder, clock, pg_dsn):
    with open_brain(tmp_path / "a.db", hash_embedder, agent="laptop", clock=clock) as brain:
        m = brain.remember("Chose PostgreSQL for the shared store", category="core", kind="decision",
                           title="Shared store", tags=["db", "sync"], importance=0.9,
                           metadata={"project": "maxmem", "n": 3}, session_id="s1", pinned=True,
                           started_at="2026-11-29T10:00:00Z")
        add_many(brain, 4)
        report = push(brain, pg_dsn)
        vector = np.frombuffer(brain.db.scalar("SELECT embedding FROM memories_vec WHERE rowid = ?", (m.id,)),
                               dtype=np.float32)
        instance = brain.db.get_meta("instance_id")
    assert (report.upserted, report.deleted, report.backlog) == (5, 0, 0)
    assert report.vector_type == "vector" and report.index_built and not report.notices
    row = pg_rows(pg_dsn, "uid = %s", (m.uid,))[0]
    assert row["instance_id"] == instance and row["agent"] == "laptop" and row["local_id"] == m.id
    assert (row["category"], row["kind"], row["title"], row["content"]) == (
        "core", "decision", "Shared store", "Chose PostgreSQL for the shared store")
    assert row["tags"] == ["db", "sync"] and row["metadata"] == {"project": "maxmem", "n": 3}
    assert row["importance"] == 0.9 and row["pinned"] is True and row["session_id"] == "s1"
    assert row["created_at"].isoformat() == "2026-11-30T12:00:00+00:00"
    assert row["started_at"].isoformat() == "2026-11-29T10:00:00+00:00"
    assert row["embedder"] == identity(hash_embedder) and row["fts_length"] > 0
    assert np.allclose(np.array(row["embedding"].to_numpy()), vector)
    assert pg_scalar(pg_dsn, "SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_embedding'").count("hnsw")
    assert pg_scalar(pg_dsn, "SELECT count(*) FROM maxmem.schema_migrations") == len(PG_MIGRATIONS)


def test_incremental_push_sends_only_new_changes_and_nothing_when_idle(tmp_path, hash_embedder, pg_dsn):
    with open_brain(tmp_path / "a.db", hash_embedder) as brain:
        add_many(brain, 10)
        push(brain, pg_dsn, batch_size=4)
        versions = dict(psycopg.connect(pg_dsn).execute("SELECT uid, xmin::text FROM maxmem.memories").fetchall())
        add_many(brain, 3, start=10)
        second = push(brain, pg_dsn)
        assert (second.upserted, second.batches, second.backlog) == (3, 1, 0)
        after = dict(psycopg.connect(pg_dsn).execute("SELECT uid, xmin::text FROM maxmem.memories").fetchall())
        assert len(after) == 13 and all(after[u] == v for u, v in versions.items())  # old rows untouched
        last_push = pg_scalar(pg_dsn, "SELECT last_export_at FROM maxmem.instances")
        idle = push(brain, pg_dsn)
        assert (idle.upserted, idle.deleted, idle.batches) == (0, 0, 0)
        assert dict(psycopg.connect(pg_dsn).execute("SELECT uid, xmin::text FROM maxmem.memories").fetchall()) == after
        assert pg_scalar(pg_dsn, "SELECT last_export_at FROM maxmem.instances") == last_push
        [state] = status(brain)
        assert state.cursor == brain.db.scalar("SELECT max(seq) FROM changes") and state.backlog == 0


def test_update_supersede_forget_and_retention_deletes_propagate(tmp_path, hash_embedder, clock, pg_dsn):
    from maxmem.retention.run import apply

    with open_brain(tmp_path / "a.db", hash_embedder, clock=clock) as brain:
        ms = add_many(brain, 4, category="core")
        ms += add_many(brain, 2, start=4, category="daily", created_at="2026-03-01T00:00:00Z")
        push(brain, pg_dsn)
        brain.update(ms[0].id, content="the deploy was fixed by pinning the kernel", title="fixed")
        brain.supersede(ms[1].id, ms[2].id)
        brain.forget(ms[3].id)
        expired = apply(brain)  # daily memories older than 90 days go
        assert expired["deleted_total"] == 2
        report = push(brain, pg_dsn)
        new_vector = np.frombuffer(brain.db.scalar("SELECT embedding FROM memories_vec WHERE rowid = ?",
                                                   (ms[0].id,)), dtype=np.float32)
    assert report.deleted == 3
    rows = {r["uid"]: r for r in pg_rows(pg_dsn)}
    assert set(rows) == {ms[0].uid, ms[1].uid, ms[2].uid}
    assert rows[ms[0].uid]["content"] == "the deploy was fixed by pinning the kernel"
    assert rows[ms[0].uid]["title"] == "fixed"
    assert np.allclose(rows[ms[0].uid]["embedding"].to_numpy(), new_vector)
    assert "kernel" in pg_scalar(pg_dsn, "SELECT tsv::text FROM maxmem.memories WHERE uid = %s", (ms[0].uid,))
    assert rows[ms[1].uid]["status"] == "superseded" and rows[ms[1].uid]["superseded_by"] == ms[2].uid


class Outage:
    """The hash embedder's identity, but every call fails like an unreachable API."""

    def __init__(self, embedder: Any) -> None:
        self.provider, self.model, self.dim = embedder.provider, embedder.model, embedder.dim

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        from maxmem.errors import EmbeddingError

        raise EmbeddingError("embedding API unreachable")

    embed_query = embed_documents


def test_a_vector_backfilled_later_is_pushed(tmp_path, hash_embedder, pg_dsn):
    with open_brain(tmp_path / "a.db", hash_embedder) as brain:
        add_many(brain, 2)
        brain.vectors.embedder = Outage(hash_embedder)
        late = brain.remember("stored while the embedding API was down")
        push(brain, pg_dsn)
        assert pg_rows(pg_dsn, "uid = %s", (late.uid,))[0]["embedding"] is None
        brain.vectors.embedder = hash_embedder
        assert brain.embed_pending().embedded == 1
        report = push(brain, pg_dsn)
    assert report.upserted == 1
    [row] = pg_rows(pg_dsn, "uid = %s", (late.uid,))
    assert row["embedding"] is not None and row["embedder"] == identity(hash_embedder)


def test_a_neighbour_arriving_later_changes_the_session_context_that_is_pushed(tmp_path, hash_embedder,
                                                                                 pg_dsn):
    turn = {"category": "conversation", "session_id": "s1"}
    with open_brain(tmp_path / "a.db", hash_embedder) as brain:
        first = brain.remember("do you play any instruments", created_at="2026-11-30T10:00:00Z", **turn)
        push(brain, pg_dsn)
        assert "clarinet" not in pg_scalar(pg_dsn, "SELECT tsv::text FROM maxmem.memories")
        brain.remember("yes I play the clarinet", created_at="2026-11-30T10:01:00Z", **turn)
        report = push(brain, pg_dsn)
        local = brain.search("clarinet", limit=5, mode="keyword", track=False)
        bm25 = keyword_candidates(brain.db, "clarinet", Filters(), 50)
        shared, _ = pgsearch.search(brain, pg_dsn, "clarinet", limit=5, mode="keyword")
    assert report.upserted == 2  # the new turn, and the first one whose context it entered
    assert "clarinet" in pg_scalar(pg_dsn, "SELECT tsv::text FROM maxmem.memories WHERE uid = %s", (first.uid,))
    assert [h.memory.uid for h in shared] == [h.memory.uid for h in local] and len(local) == 2
    assert all(abs(h.bm25 - bm25[h.memory.id]) < 1e-9 for h in shared)


def test_two_agents_share_one_database_without_touching_each_other(tmp_path, hash_embedder, pg_dsn):
    with open_brain(tmp_path / "a.db", hash_embedder, agent="laptop") as a, \
            open_brain(tmp_path / "b.db", hash_embedder, agent="server") as b:
        add_many(a, 5)
        add_many(b, 4)
        # A memory that arrived in both brains with the same uid (an import) stays two rows.
        shared = a.remember("both agents know this", category="core")
        b.import_records([{**shared.to_dict(), "content": "the server's own version"}])
        push(a, pg_dsn)
        push(b, pg_dsn)
        assert a.db.get_meta("instance_id") != b.db.get_meta("instance_id")
        a.forget(shared.id)
        push(a, pg_dsn)
        push(b, pg_dsn)
        ids = {a.db.get_meta("instance_id"): "laptop", b.db.get_meta("instance_id"): "server"}
    counts = dict(psycopg.connect(pg_dsn).execute(
        "SELECT instance_id, count(*) FROM maxmem.memories GROUP BY 1").fetchall())
    assert {ids[k]: v for k, v in counts.items()} == {"laptop": 5, "server": 5}
    [row] = pg_rows(pg_dsn, "uid = %s", (shared.uid,))
    assert ids[row["instance_id"]] == "server" and row["content"] == "the server's own version"
    # The row keeps the memory's own agent (it was written on the laptop), as local search does.
    assert row["agent"] == "laptop"
    assert dict(psycopg.connect(pg_dsn).execute("SELECT agent, count(*) FROM maxmem.memories "
                                                "WHERE uid <> %s GROUP BY 1", (shared.uid,)).fetchall()) == {
        "laptop": 5, "server": 4}
    assert pg_scalar(pg_dsn, "SELECT count(*) FROM maxmem.instances") == 2


# -- failures -----------------------------------------------------------------------

KILL_TRIGGER = """
CREATE FUNCTION public.drop_connection() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.uid = '{uid}' THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER drop_connection BEFORE INSERT ON maxmem.memories
    FOR EACH ROW EXECUTE FUNCTION public.drop_connection();
"""


def test_connection_dropped_mid_push_loses_nothing_and_the_next_run_resumes(tmp_path, hash_embedder, pg_dsn):
    with open_brain(tmp_path / "a.db", hash_embedder) as brain:
        add_many(brain, 5)
        push(brain, pg_dsn)
        later = add_many(brain, 250, start=5)
        # The server ends the push's session while it inserts the 150th new memory
        # (the second batch of 100): a real mid-batch connection loss.
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            admin.execute(KILL_TRIGGER.format(uid=later[149].uid))
        with pytest.raises(SyncError) as caught:
            push(brain, pg_dsn, batch_size=100)
        message = str(caught.value)
        assert "\n" not in message and "terminat" in message and "nothing is lost" in message
        assert "pg-test-secret" not in message
        assert pg_scalar(pg_dsn, "SELECT count(*) FROM maxmem.memories") == 105  # batch 1 only
        cursor = status(brain)[0].cursor
        assert cursor == pg_scalar(pg_dsn, "SELECT last_seq FROM maxmem.instances") == 105
        assert status(brain)[0].last_error == message and status(brain)[0].backlog == 150
        assert brain.db.scalar("SELECT count(*) FROM memories") == 255  # nothing lost locally
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            admin.execute("DROP TRIGGER drop_connection ON maxmem.memories")
        report = push(brain, pg_dsn, batch_size=100)
        assert (report.upserted, report.batches, report.backlog) == (150, 2, 0)
    assert pg_scalar(pg_dsn, "SELECT count(*) FROM maxmem.memories") == 255
    assert status_error_cleared(tmp_path / "a.db", hash_embedder)


def status_error_cleared(path: Path, embedder: Any) -> bool:
    with open_brain(path, embedder) as brain:
        return status(brain)[0].last_error is None


def test_replay_after_a_crash_before_the_local_cursor_was_saved_duplicates_nothing(tmp_path, hash_embedder,
                                                                                   pg_dsn):
    with open_brain(tmp_path / "a.db", hash_embedder) as brain:
        add_many(brain, 12)
        push(brain, pg_dsn)
        # As if the process died after PostgreSQL committed but before brain.db recorded it.
        with brain.db.atomic():
            brain.db.execute("UPDATE sync_targets SET cursor = 0")
        again = push(brain, pg_dsn)
        assert again.upserted == 0  # PostgreSQL's own cursor says it has them
        # And if PostgreSQL lost its cursor row too, the full replay still adds no row twice.
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            admin.execute("DELETE FROM maxmem.instances")
        replay = push(brain, pg_dsn)
        assert replay.upserted == 12
    assert pg_scalar(pg_dsn, "SELECT count(*) FROM maxmem.memories") == 12


def test_brain_restored_from_an_older_backup_is_pushed_again_and_pruned(tmp_path, hash_embedder, pg_dsn,
                                                                         capsys):
    path = tmp_path / "a.db"
    with open_brain(path, hash_embedder) as brain:
        add_many(brain, 4)
        push(brain, pg_dsn)
    shutil.copy(path, tmp_path / "backup.db")
    with open_brain(path, hash_embedder) as brain:
        add_many(brain, 3, start=4)
        push(brain, pg_dsn)
    assert pg_scalar(pg_dsn, "SELECT count(*) FROM maxmem.memories") == 7
    shutil.copy(tmp_path / "backup.db", path)
    with open_brain(path, hash_embedder) as brain:
        report = push(brain, pg_dsn)
    assert any("backup" in n for n in report.notices)
    assert pg_scalar(pg_dsn, "SELECT count(*) FROM maxmem.memories") == 4
    with open_brain(path, hash_embedder) as brain:  # once more, through the command
        add_many(brain, 2, start=4)
        push(brain, pg_dsn)
    shutil.copy(tmp_path / "backup.db", path)
    capsys.readouterr()  # only what the command prints
    code, out, err = run_cli(["--db", str(path), "--embedder", "none", "sync", "postgres", "--dsn", pg_dsn], capsys)
    assert code == 0 and err.count("restored from a backup?") == 1, err  # said once, not twice


def test_postgres_down_or_wrong_password_is_one_line_and_the_next_run_catches_up(tmp_path, hash_embedder,
                                                                                  pg_cluster, pg_dsn):
    down = f"postgresql://postgres:hunter2-secret@127.0.0.1:1/{pg_dsn.rsplit('/', 1)[1]}"
    wrong = pg_dsn.replace("pg-test-secret", "wrong-secret-42")
    with open_brain(tmp_path / "a.db", hash_embedder) as brain:
        add_many(brain, 3)
        for dsn, secret in ((down, "hunter2-secret"), (wrong, "wrong-secret-42")):
            with pytest.raises(SyncError) as caught:
                push(brain, dsn)
            message = str(caught.value)
            assert "\n" not in message and secret not in message and "127.0.0.1" in message
        assert "password authentication failed" in message
        assert brain.db.scalar("SELECT count(*) FROM memories") == 3
        push(brain, pg_dsn)
    assert pg_scalar(pg_dsn, "SELECT count(*) FROM maxmem.memories") == 3


def test_server_stopped_mid_run_then_restarted(tmp_path, hash_embedder, pg_cluster, pg_dsn):
    with open_brain(tmp_path / "a.db", hash_embedder) as brain:
        add_many(brain, 3)
        push(brain, pg_dsn)
        add_many(brain, 2, start=3)
        pg_cluster.stop()
        try:
            with pytest.raises(SyncError, match="cannot connect"):
                push(brain, pg_dsn)
        finally:
            pg_cluster.start()
        assert push(brain, pg_dsn).upserted == 2
    assert pg_scalar(pg_dsn, "SELECT count(*) FROM maxmem.memories") == 5


def test_dsn_masking_and_target_names():
    assert mask_dsn("postgresql://me:s3cr%40t@db.example:5432/mem?sslmode=require") == \
        "postgresql://me:***@db.example:5432/mem?sslmode=require"
    assert mask_dsn("host=db user=me password='a b' dbname=mem") == "host=db user=me password=*** dbname=mem"
    assert mask_dsn("postgres://h/db?password=xyz&user=me") == "postgres://h/db?password=***&user=me"
    assert target_name("postgresql://me:pw@db.example:5432/mem") == "me@db.example:5432/mem"
    assert target_name("host=db port=5433 user=me password=pw dbname=mem") == "me@db:5433/mem"


def test_bad_dsn_text_never_echoes_the_password(tmp_path, hash_embedder):
    with open_brain(tmp_path / "a.db", hash_embedder) as brain:
        with pytest.raises(SyncError) as caught:
            push(brain, "postgresql://me:topsecret@localhost:notaport/db")
    assert "topsecret" not in str(caught.value)


# -- without pgvector ---------------------------------------------------------------------

def test_server_without_pgvector_stores_real_arrays_and_still_searches(tmp_path, hash_embedder,
                                                                       pg_dsn_novector):
    assert pg_scalar(pg_dsn_novector, "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'") == 0
    with open_brain(tmp_path / "a.db", hash_embedder) as brain:
        ms = add_many(brain, 20)
        report = push(brain, pg_dsn_novector)
        assert report.vector_type == "real[]" and not report.index_built
        assert any("no pgvector" in n for n in report.notices)
        # limit 20: local search then rescores all 20 exactly (see the cross-agent test)
        local = brain.search("deploy of service 3 failed", limit=20, track=False, min_relevance=0)
        hits, plan = pgsearch.search(brain, pg_dsn_novector, "deploy of service 3 failed", limit=20, min_relevance=0)
    column_type = pg_scalar(pg_dsn_novector, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                                             "WHERE attrelid = 'maxmem.memories'::regclass AND attname = 'embedding'")
    assert column_type == "real[]"
    assert len(pg_rows(pg_dsn_novector, "embedding IS NOT NULL")) == len(ms)
    assert plan.vector_type == "real[]" and plan.note is None
    assert [h.memory.uid for h in hits] == [h.memory.uid for h in local]
    assert [round(h.score, 5) for h in hits] == [round(h.score, 5) for h in local]


# -- cross-agent search -------------------------------------------------------------------

LAPTOP = [
    "Decided to use PostgreSQL with pgvector as the shared memory for the agent fleet",
    "The nightly backup of the photo library failed because the NAS disk was full",
    "User prefers short answers with code first and explanations after",
    "Deployed the home assistant update; the zigbee bridge needed a restart",
    "Lesson: always pin the Python version in CI, the 3.12 upgrade broke apsw wheels",
    "Meeting with Dana moved to Thursday 3pm to review the budget spreadsheet",
    "The grocery list app syncs through a CalDAV server on the raspberry pi",
    "Kernel 6.8 fixed the suspend bug on the ThinkPad",
    "Use ripgrep instead of grep for searching large repositories",
    "The wifi drops every evening around 9pm; suspect the neighbour's channel overlap",
    "Project maxmem: the push must never lose a change when the network drops",
    "Booked flights to Lisbon for the conference in March",
]
SERVER = [
    "Postgres autovacuum was falling behind on the events table; raised the cost limit",
    "The backup job now writes to the second NAS volume after the disk filled up",
    "Certificate renewal for the reverse proxy runs every sixty days via certbot",
    "Decision: keep embeddings at 384 dimensions to save memory on the small server",
    "Failure: the GPU container crashed when the driver updated underneath it",
    "User asked to be notified on Signal when a deploy fails",
    "Grafana dashboard shows disk latency spikes during the nightly backup window",
    "Moved the DNS resolver to a dedicated container with unbound",
    "The monitoring agent restarts the zigbee bridge if it stops reporting",
    "Rotated the database passwords and updated the secrets store",
    "Python 3.12 upgrade on the server needed new wheels for apsw and numpy",
    "The search service answers in 40 ms for 100k memories after adding HNSW",
]
LAPTOP_CHAT = [
    "Do you remember which disk failed last month?",
    "It was the old 2 TB drive in the NAS, the one from 2019.",
    "Right, order a replacement with more capacity then.",
]
SERVER_CHAT = [
    "Can you check why the nightly job was slow?",
    "The backup overlapped with the database vacuum window.",
    "Move the vacuum to 4am so they no longer collide.",
]
QUERIES = [
    "backup disk full", "python upgrade broke wheels", "zigbee bridge restart", "shared memory database for agents",
    "what did the user ask for", "network drops", "deploy failure notification", "how fast is search",
    "replacement drive capacity", "vacuum collided with the backup",
    "où est la sauvegarde quand le disque est plein",  # French: its keyword side weighs less, in both
]


class Memo:
    """The real local embedder, asked once per text: three brains store the same texts
    and each query is asked a dozen times here."""

    def __init__(self, embedder: Any) -> None:
        self.inner, self.provider, self.model, self.dim = embedder, embedder.provider, embedder.model, embedder.dim
        self.documents: dict[str, np.ndarray] = {}
        self.queries: dict[str, np.ndarray] = {}

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.documents]
        if missing:
            self.documents.update(zip(missing, self.inner.embed_documents(missing)))
        return np.vstack([self.documents[t] for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        if text not in self.queries:
            self.queries[text] = self.inner.embed_query(text)
        return self.queries[text]


def test_cross_agent_search_matches_local_search_on_the_same_data(tmp_path, local_embedder, pg_dsn):
    local_embedder = Memo(local_embedder)
    def items(texts: list[str], agent: str, category: str) -> list[dict[str, Any]]:
        return [{"content": t, "agent": agent, "category": category if i % 3 else "core",
                 "tags": ["home"] if i % 2 else ["work"], "importance": 0.3 + (i % 5) / 10}
                for i, t in enumerate(texts)]

    def turns(texts: list[str], agent: str) -> list[dict[str, Any]]:
        # A conversation: each turn is indexed with its neighbours' text and its vector is
        # blended with theirs (session context), in PostgreSQL as locally.
        return [{"content": t, "agent": agent, "category": "conversation", "session_id": f"{agent}-chat",
                 "created_at": f"2026-11-29T20:0{i}:00Z"} for i, t in enumerate(texts)]

    laptop_items = items(LAPTOP, "laptop", "daily") + turns(LAPTOP_CHAT, "laptop")
    server_items = items(SERVER, "server", "project") + turns(SERVER_CHAT, "server")
    everything = len(laptop_items) + len(server_items)
    with open_brain(tmp_path / "laptop.db", local_embedder, agent="laptop") as laptop, \
            open_brain(tmp_path / "server.db", local_embedder, agent="server") as server, \
            open_brain(tmp_path / "both.db", local_embedder) as both:
        laptop.remember_many(laptop_items)
        server.remember_many(server_items)
        both.remember_many(laptop_items + server_items)  # one brain holding the same data
        push(laptop, pg_dsn)
        push(server, pg_dsn)
        # Local search estimates cosines from int8 codes and rescores exactly the head of
        # its ranking: asked for every memory, all its scores are exact, so PostgreSQL
        # (always exact) must give the same whole ranking and the same scores.
        # Vector scores are cosines around the querying brain's centre (its quantizer's,
        # search.centred_cosine), so the brain holding the same data asks.
        cases: list[tuple[str, dict[str, Any]]] = [
            ("hybrid", {}), ("keyword", {}), ("vector", {}), ("hybrid", {"category": "core"}),
            ("hybrid", {"tags": ["home"]}), ("hybrid", {"min_importance": 0.5, "max_importance": 0.7}),
        ]
        compared = 0
        for query in QUERIES:
            for mode, f in cases:
                local = both.search(query, limit=everything, mode=mode, track=False, min_relevance=0, **f)
                shared, _ = pgsearch.search(both, pg_dsn, query, limit=everything, mode=mode, min_relevance=0, **f)
                assert [h.memory.content for h in shared] == [h.memory.content for h in local], (query, f, mode)
                assert np.allclose([h.score for h in shared], [h.score for h in local], atol=1e-5)
                # judged as locally: the same evidence, read from PostgreSQL
                assert np.allclose([h.relevance for h in shared], [h.relevance for h in local], atol=1e-4)
                compared += 1
            # --agent: one agent's memories, as local search with agent=
            local = both.search(query, limit=everything, agent="server", track=False, min_relevance=0)
            shared, _ = pgsearch.search(both, pg_dsn, query, limit=everything, agents=["server"], min_relevance=0)
            assert [h.memory.content for h in shared] == [h.memory.content for h in local]
            assert {h.memory.agent for h in shared} <= {"server"}
        assert compared == len(QUERIES) * len(cases)
        # With the configured min_relevance, the same hits are listed, and a question about
        # nothing the brains hold lists none, in both.
        listed = set()
        for query in [*QUERIES, "what is the best recipe for lemon cake"]:
            for mode in ("hybrid", "vector"):
                local = both.search(query, limit=5, mode=mode, track=False)
                shared, plan = pgsearch.search(both, pg_dsn, query, limit=5, mode=mode)
                assert [h.memory.content for h in shared] == [h.memory.content for h in local], (query, mode)
                listed.update((query, len(local)) for _ in local[:1])
                assert plan.best_relevance == pytest.approx(local.plan.best_relevance, abs=1e-4)
                assert (plan.note is None) == (local.plan.note is None), (query, mode)
                if query.endswith("lemon cake"):
                    assert local == [] and plan.note and "nothing relevant" in plan.note
        assert len(listed) > len(QUERIES) // 2  # most questions find something, some fewer than 5
        assert {n for _, n in listed} != {5}
        both_agents, _ = pgsearch.search(laptop, pg_dsn, "backup disk full", limit=4,
                                         agents=["laptop", "server"])
    assert {h.memory.agent for h in both_agents} == {"laptop", "server"}


KOREAN_TOPICS = [
    "서버 백업", "데이터베이스 비밀번호", "회의 일정", "항공권 예약", "와이파이 끊김", "노트북 배터리",
    "사진 보관함", "인증서 갱신", "모니터링 경보", "예산 검토", "장보기 목록", "커널 업데이트",
]
KOREAN_DEEDS = [
    "문제를 해결했다", "다음 주로 미뤘다", "다시 확인해야 한다", "담당자에게 전달했다", "설정을 바꿨다",
    "기록을 남겼다", "실패해서 재시도했다", "완료되었다", "비용이 늘었다",
]
KOREAN_QUERIES = ["서버 백업은 언제 실패했어?", "회의 일정을 바꿨나요", "인증서 갱신 담당자"]
CHINESE = [
    "我们决定把发票存放在Hetzner的服务器上", "数据库密码已经在周一更换了", "下周的会议改到星期三下午",
    "备份服务器的硬盘快满了，需要扩容", "证书续期交给运维同事处理", "家里的路由器每天晚上都会断线",
    "机票预订好了：周五飞往上海", "把监控告警发到值班手机上", "预算审查推迟到下个月",
]
JAPANESE = [
    "請求書はHetznerのサーバーに保存することにした", "データベースのパスワードを月曜日に変更した",
    "来週の会議は水曜日の午後に変更", "バックアップ用のディスクがいっぱいになった",
    "証明書の更新は運用チームが担当する",
    "自宅のWi-Fiが夜になると切れる", "金曜日の東京行きの航空券を予約した", "監視アラートを当番の携帯に送る",
]
MIXED = [
    "Hetzner 서버에 nightly backup을 옮겼다", "The 发票 PDFs live in the invoices bucket on Hetzner",
    "Postgres の VACUUM が backup と重なった", "Kernel update 후 zigbee bridge 재시작 필요",
    "서버 백업 schedule moved to 4am", "备份 job failed again on the NAS",
]
CJK_QUERIES = [
    "发票存放在哪里", "服务器备份", "会議の変更", "バックアップ ディスク", "Hetzner 서버 backup", "发票 invoices",
    "VACUUM と backup", "zigbee 재시작", "backup disk full",
]


def test_cjk_and_english_rank_and_score_in_postgresql_as_locally(tmp_path, local_embedder, pg_dsn):
    # A brain in Korean, Chinese, Japanese and English, and texts mixing them: local
    # search adds two bm25 scores for text in scripts written without spaces (FTS5's and
    # memories_spaced's), and PostgreSQL computes the same two, whole ranking and every
    # score (within 1e-5), in hybrid and keyword mode, with and without a filter. More
    # Korean memories than search.hybrid.NEIGHBOURHOOD: a question in Hangul takes its
    # cosines around the mean of its 100 nearest memories, in PostgreSQL as locally. Each
    # memory's number makes every Korean text, and so every vector, its own: no two scores
    # tie where a pool is cut. Some memories are conversation turns (their neighbours' text
    # is their context, a column of both indexes), one is edited and one forgotten (the
    # index's totals follow).
    local_embedder = Memo(local_embedder)
    korean = [{"content": f"{topic}: {deed} (메모 {i})", "category": "project" if i % 3 else "core"}
              for i, (topic, deed) in enumerate((t, d) for d in KOREAN_DEEDS for t in KOREAN_TOPICS)]
    others = [{"content": text, "category": "daily" if i % 2 else "core", "tags": ["混合"] if i % 3 == 0 else []}
              for i, text in enumerate(CHINESE + JAPANESE + LAPTOP + SERVER)]
    chat = [{"content": text, "category": "conversation", "session_id": "mixed-chat",
             "created_at": f"2026-11-29T20:0{i}:00Z"} for i, text in enumerate(MIXED)]
    with open_brain(tmp_path / "cjk.db", local_embedder) as brain:
        stored = brain.remember_many(korean + others + chat)
        brain.update(stored[len(korean)].id, content="我们决定把发票和合同都存放在Hetzner的服务器上")
        brain.forget(stored[len(korean) + 1].uid)
        everything = brain.db.scalar("SELECT count(*) FROM memories")
        assert len(korean) > hybrid.NEIGHBOURHOOD
        push(brain, pg_dsn)
        compared = 0
        for query in KOREAN_QUERIES + CJK_QUERIES:
            for mode in ("hybrid", "keyword"):
                for f in ({}, {"category": "project"}, {"category": "conversation"}):
                    local = brain.search(query, limit=everything, mode=mode, track=False, min_relevance=0, **f)
                    shared, _ = pgsearch.search(brain, pg_dsn, query, limit=everything, mode=mode, min_relevance=0,
                                                **f)
                    assert [h.memory.content for h in shared] == [h.memory.content for h in local], (query, mode, f)
                    assert np.allclose([h.score for h in shared], [h.score for h in local], atol=1e-5), (query, f)
                    bm25 = keyword_candidates(brain.db, query, Filters.of(None, **f), 10 * everything)
                    assert np.allclose([h.bm25 or 0.0 for h in shared],
                                       [bm25.get(h.memory.id, 0.0) for h in local], atol=1e-9), (query, mode, f)
                    assert np.allclose([h.relevance for h in shared], [h.relevance for h in local], atol=1e-4)
                    compared += bool(local)
        assert compared > len(KOREAN_QUERIES + CJK_QUERIES) * 3


def test_postgresql_search_filters_as_brain_db_does(tmp_path, hash_embedder, pg_dsn):
    # SQLite reads JSON true/false as 1/0, and `= NULL` matches nothing: PostgreSQL's
    # filters mean what brain.db's do, value for value.
    values = [True, False, 1, 0, 1.0, 2, None, "1", "yes"]
    with open_brain(tmp_path / "a.db", hash_embedder) as brain:
        brain.remember_many([{"content": f"filtered note {i} of the filter test", "kind": "note",
                              "metadata": {"v": v}} for i, v in enumerate(values)])
        push(brain, pg_dsn)
        found = {}
        for asked in [*values, float("nan"), "no\x00te"]:  # (a NUL: as brain.db binds it, U+FFFD)
            for f in ({"metadata": {"v": asked}}, {"kind": asked} if isinstance(asked, str) else {}):
                local = brain.search("filtered note", limit=20, mode="keyword", track=False, min_relevance=0, **f)
                shared, _ = pgsearch.search(brain, pg_dsn, "filtered note", limit=20, mode="keyword", min_relevance=0,
                                            **f)
                assert [h.memory.uid for h in shared] == [h.memory.uid for h in local], (asked, f)
                found.setdefault(repr(asked), len(local))
    assert found["True"] == found["1"] == found["1.0"] == 3  # true, 1 and 1.0
    assert found["None"] == found["nan"] == found["'no\\x00te'"] == 0


def test_postgresql_search_takes_the_candidates_and_recency_of_the_querying_brain(tmp_path, hash_embedder,
                                                                                   pg_dsn):
    # " ok" * i: no two reports of the same length, so no two tie at the pool's cut, where
    # SQLite and PostgreSQL may order equal scores either way.
    items = [{"content": f"Backup report {i}: the nightly backup of volume {i % 7} finished" + " again" * (i % 5)
              + " ok" * i,
              "category": "project", "created_at": f"2026-{1 + i % 11:02d}-{1 + (7 * i) % 27:02d}T08:00:00Z"}
             for i in range(60)]
    tuned = Config().with_(search=SearchSettings(candidates=10, recency_weight=0.5, recency_half_life=20.0))
    with Brain.open(tmp_path / "tuned.db", embedder=hash_embedder, config=tuned) as brain:
        brain.remember_many(items)
        push(brain, pg_dsn)
        for query in ("nightly backup of volume 3", "backup report finished again", "volume 5"):
            # Every hit asked: local search's cosines are all exact, as PostgreSQL's are.
            for mode, limit in (("hybrid", len(items)), ("keyword", len(items)), ("keyword", 5)):
                local = brain.search(query, limit=limit, mode=mode, track=False, min_relevance=0)
                shared, _ = pgsearch.search(brain, pg_dsn, query, limit=limit, mode=mode, min_relevance=0)
                assert [h.memory.content for h in shared] == [h.memory.content for h in local], (query, mode, limit)
                assert np.allclose([h.score for h in shared], [h.score for h in local], atol=1e-5)
        # Both knobs change what PostgreSQL returns: ten keyword candidates, not fifty,
        # and the newer of them first.
        query = "backup report finished again"
        tuned_hits = [h.memory.uid for h in pgsearch.search(brain, pg_dsn, query, limit=5, mode="keyword",
                                                            min_relevance=0)[0]]
    for other in (SearchSettings(candidates=10), SearchSettings(recency_weight=0.5, recency_half_life=20.0)):
        with Brain.open(tmp_path / "tuned.db", embedder=hash_embedder, config=Config().with_(search=other)) as brain:
            hits = [h.memory.uid for h in pgsearch.search(brain, pg_dsn, query, limit=5, mode="keyword",
                                                          min_relevance=0)[0]]
            assert hits != tuned_hits, other


# -- CLI --------------------------------------------------------------------------------

@pytest.fixture
def run(tmp_path, capsys, monkeypatch):
    """maxmem ARGS against a temp brain.db; returns (exit code, stdout, stderr)."""
    db = tmp_path / "cli.db"

    def invoke(*args: str) -> tuple[int, str, str]:
        return run_cli(["--db", str(db), "--embedder", "none", *args], capsys)

    return invoke


def test_cli_sync_postgres_status_and_search(run, pg_dsn, monkeypatch):
    import json

    assert run("remember", "-c", "core", "the NAS backup failed because the disk was full")[0] == 0
    assert run("remember", "the zigbee bridge needed a restart")[0] == 0
    code, out, err = run("sync", "status")
    assert code == 0 and "never synced" in out
    code, out, err = run("sync", "postgres", "--dsn", pg_dsn, "--agent", "laptop")
    assert code == 0 and "2 upserted" in out and "backlog 0" in out, err
    assert "pg-test-secret" not in out + err
    monkeypatch.setenv("MAXMEM_PG_DSN", pg_dsn)
    code, out, err = run("sync", "postgres", "--json")
    assert code == 0 and json.loads(out)["upserted"] == 0
    code, out, err = run("sync", "status", "--json")
    [state] = json.loads(out)
    assert state["target"] == target_name(pg_dsn) and state["backlog"] == 0 and state["last_error"] is None
    code, out, err = run("sync", "search", "backup disk", "--agent", "laptop")
    assert code == 0 and "NAS backup" in out.splitlines()[0] and "[laptop]" in out
    assert "keyword-only" in err  # --embedder none
    code, out, err = run("sync", "search", "backup disk", "--agent", "nobody")
    assert code == 0 and "no memories found" in out


def test_cli_sync_errors_are_one_line_with_exit_codes(run, pg_dsn, tmp_path):
    run("remember", "something to push")
    code, out, err = run("sync", "postgres")
    assert code == 2 and "MAXMEM_PG_DSN" in err and len(err.strip().splitlines()) == 1
    wrong = pg_dsn.replace("pg-test-secret", "not-the-password")
    code, out, err = run("sync", "postgres", "--dsn", wrong)
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "not-the-password" not in err and "password authentication failed" in err
    code, out, err = run("sync", "status")
    assert "last error" in out and "not-the-password" not in out
    code, out, err = run("sync", "postgres", "--dsn", pg_dsn)
    assert code == 0 and "1 upserted" in out
    # The DSN and the agent label from [sync.postgres] in the config file.
    config = tmp_path / "maxmem.toml"
    config.write_text(f'[sync.postgres]\ndsn = "{pg_dsn}"\nagent = "from-config"\n')
    run("remember", "a memory pushed with the configured settings")
    code, out, err = run("--config", str(config), "sync", "postgres")
    assert code == 0 and "1 upserted" in out, err
    code, out, err = run("--config", str(config), "sync", "search", "configured settings", "-n", "1")
    assert code == 0 and "[from-config]" in out
    code, out, err = run("--config", str(config), "sync", "search", " ")
    assert code == 2 and "search query is empty" in err and len(err.strip().splitlines()) == 1


def test_the_tick_script_pushes_logs_without_the_password_and_exits_1_on_failure(tmp_path, pg_dsn):
    import os
    import subprocess
    import sys

    script = Path(__file__).resolve().parent.parent / "scripts" / "maxmem-jobs-cron"
    db = tmp_path / "cron-brain.db"
    with Brain.open(db, embedder="none") as brain:
        brain.remember("pushed from cron")
    wrapper = tmp_path / "maxmem"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -m maxmem \"$@\"\n")
    wrapper.chmod(0o755)
    logs, env_file = tmp_path / "logs", tmp_path / "maxmem.env"
    env = {**os.environ, "HOME": str(tmp_path), "MAXMEM_BIN": str(wrapper), "MAXMEM_LOG_DIR": str(logs),
           "MAXMEM_ENV_FILE": str(env_file)}
    for dsn, code in ((pg_dsn.replace("pg-test-secret", "cron-wrong-pw"), 1), (pg_dsn, 0)):
        env_file.write_text(f"MAXMEM_DB={db}\nMAXMEM_EMBEDDER=none\nMAXMEM_PG_DSN={dsn}\n")
        done = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == code, done.stdout + done.stderr
    log = (logs / "jobs.log").read_text()
    assert "password authentication failed" in log and "1 upserted" in log and "jobs: exit 0" in log
    assert "cron-wrong-pw" not in log and "pg-test-secret" not in log
    assert pg_scalar(pg_dsn, "SELECT content FROM maxmem.memories") == "pushed from cron"


def test_missing_psycopg_names_the_pip_command(tmp_path, hash_embedder, monkeypatch):
    import sys

    from maxmem.errors import MissingDependency

    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the extra were not installed
    with open_brain(tmp_path / "a.db", hash_embedder) as brain:
        with pytest.raises(MissingDependency, match=r"pip install 'maxmem\[postgres\]'"):
            push(brain, "postgresql://me@localhost/db")


def test_daemon_runs_the_sync_job_only_when_a_dsn_is_configured(tmp_path, pg_dsn):
    from maxmem.config import load_config
    from maxmem.jobs.daemon import default_jobs, run_job, sync_job

    config = load_config(env={}, db_path=tmp_path / "daemon.db")
    assert sync_job(config, {}) is None and "sync" not in [j.name for j in default_jobs(config, {})]
    path = tmp_path / "maxmem.toml"
    path.write_text('[sync.postgres]\ninterval_minutes = 5\n')
    assert sync_job(load_config(env={}, path=path, db_path=tmp_path / "daemon.db"), {}) is None
    config = load_config(env={"MAXMEM_PG_DSN": pg_dsn}, path=path, db_path=tmp_path / "daemon.db")
    with Brain.open(config.db_path, embedder="none", config=config) as brain:
        brain.remember("pushed by the daemon")
    job = sync_job(config, {})
    assert job is not None and "every 5 min" in job.description and "pg-test-secret" not in job.description
    summary = run_job(job)
    assert summary is not None and "1 upserted" in summary and "pg-test-secret" not in summary
    assert pg_scalar(pg_dsn, "SELECT content FROM maxmem.memories") == "pushed by the daemon"


def test_a_role_without_create_rights_pushes_into_the_existing_schema(tmp_path, hash_embedder, pg_cluster,
                                                                        pg_dsn):
    dbname = pg_dsn.rsplit("/", 1)[1]
    role = f"rw_{dbname}"
    with open_brain(tmp_path / "a.db", hash_embedder) as a:  # the admin's brain creates the schema
        add_many(a, 2)
        push(a, pg_dsn)
    with psycopg.connect(pg_dsn, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'rw-secret'")
        admin.execute(f"GRANT USAGE ON SCHEMA maxmem TO {role}")
        admin.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA maxmem TO {role}")
        admin.execute("DROP INDEX maxmem.memories_embedding")  # as if the admin's first run never finished
    try:
        dsn = f"postgresql://{role}:rw-secret@127.0.0.1:{pg_cluster.port}/{dbname}"
        with open_brain(tmp_path / "b.db", hash_embedder) as b:
            add_many(b, 3)
            report = push(b, dsn)
        assert report.upserted == 3 and not report.index_built
        assert any("only the table's owner" in n for n in report.notices)
        assert pg_scalar(pg_dsn, "SELECT count(*) FROM maxmem.memories") == 5
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            admin.execute(f"DROP OWNED BY {role}")
            admin.execute(f"DROP ROLE {role}")


def test_a_word_inside_a_run_of_cjk_characters_is_found_in_postgresql(tmp_path, hash_embedder, pg_dsn):
    with open_brain(tmp_path / "a.db", hash_embedder) as brain:
        chinese = brain.remember("我们决定把发票存放在Hetzner的服务器上", category="core")
        korean = brain.remember("청구서는 Hetzner 서버에 보관하기로 했다", category="core")
        english = brain.remember("The invoices are kept on the Hetzner server", category="core")
        push(brain, pg_dsn)
        found = {q: [h.memory.uid for h in pgsearch.search(brain, pg_dsn, q, limit=5, mode="keyword",
                                                             min_relevance=0)[0]]
                 for q in ("发票", "服务器", "서버", "invoices", "票的")}
        pgsearch.search(brain, pg_dsn, '"发票" OR NEAR(', limit=5, mode="keyword")  # quoted: no error
        local = [h.memory.uid for h in brain.search("invoices", limit=5, mode="keyword", track=False)]
        # The script characters are tokens of their own, not of bm25's document length: a
        # query without them scores as in brain.db (the Chinese memory is the longest there).
        bm25 = keyword_candidates(brain.db, "Hetzner invoices", Filters(), 50)
        shared = pgsearch.search(brain, pg_dsn, "Hetzner invoices", limit=5, mode="keyword", min_relevance=0)[0]
    assert found["发票"] == [chinese.uid] and found["服务器"] == [chinese.uid]
    assert found["서버"] == [korean.uid]
    assert found["invoices"] == local == [english.uid]
    assert found["票的"] == []  # the two characters are not side by side
    assert len(shared) == len(bm25) == 2  # (the Chinese memory holds "Hetzner" in a longer token)
    assert all(abs(h.bm25 - bm25[h.memory.id]) < 1e-9 for h in shared)


OLD_FORM = """
DROP INDEX maxmem.memories_spaced_tsv;
DROP INDEX maxmem.memories_spaced_length;
ALTER TABLE maxmem.memories DROP COLUMN spaced_tsv, DROP COLUMN spaced_terms, DROP COLUMN spaced_length,
    DROP COLUMN spaced_freq;
ALTER TABLE maxmem.instances DROP COLUMN terms_version;
DELETE FROM maxmem.schema_migrations WHERE name = '0002_spaced_terms';
UPDATE maxmem.memories SET fts_freq = '{}';
"""


def test_a_database_of_an_older_maxmem_is_upgraded_in_place_and_pushed_again(tmp_path, hash_embedder, pg_dsn):
    # A database as the maxmem before migration 0002_spaced_terms left it (its rows marked
    # as of then): search says to push once; the next push migrates the schema, pushes
    # this brain's memories again, and from then on ranks Chinese and Korean as locally;
    # until another agent pushes again, search names it; a push after that sends nothing.
    with open_brain(tmp_path / "a.db", hash_embedder, agent="laptop") as a, \
            open_brain(tmp_path / "b.db", hash_embedder, agent="server") as b, \
            open_brain(tmp_path / "both.db", hash_embedder) as both:
        a.remember_many([{"content": t} for t in [*CHINESE, *MIXED, *LAPTOP]])
        b.remember_many([{"content": t} for t in SERVER])
        both.remember_many([{"content": t} for t in [*CHINESE, *MIXED, *LAPTOP, *SERVER]])
        push(a, pg_dsn)
        push(b, pg_dsn)
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(OLD_FORM)
        with pytest.raises(SyncError, match="older than this maxmem.*run  maxmem sync postgres  once"):
            pgsearch.search(a, pg_dsn, "发票", mode="keyword")
        report = push(a, pg_dsn)
        assert report.upserted == len(CHINESE) + len(MIXED) + len(LAPTOP)
        assert any("pushed by an older maxmem" in n for n in report.notices)
        assert pg_scalar(pg_dsn, "SELECT count(*) FROM maxmem.schema_migrations") == len(PG_MIGRATIONS)
        plan = pgsearch.search(a, pg_dsn, "发票", mode="keyword", min_relevance=0)[1]
        assert plan.note and "server pushed with an older maxmem" in plan.note
        assert push(b, pg_dsn).upserted == len(SERVER)
        for query in ("发票存放在哪里", "Hetzner 서버 backup", "backup disk full"):
            local = both.search(query, limit=50, mode="keyword", track=False, min_relevance=0)
            shared, plan = pgsearch.search(both, pg_dsn, query, limit=50, mode="keyword", min_relevance=0)
            assert [h.memory.content for h in shared] == [h.memory.content for h in local], query
            assert np.allclose([h.score for h in shared], [h.score for h in local], atol=1e-5), query
            assert plan.note is None
        again = push(a, pg_dsn)
        assert (again.upserted, again.batches, again.notices) == (0, 0, [])


def test_each_keyword_index_brings_its_own_candidates_in_postgresql_as_locally(tmp_path, hash_embedder, pg_dsn):
    # Local search takes each keyword index's best `candidates`, sums a memory's two
    # scores and keeps the best of the sums: a memory among one index's best only gets
    # that index's score. So does PostgreSQL, with a pool small enough to cut both lists.
    texts = ["invoices invoices invoices", "invoices are due", "我们的发票在这里", "发票 invoices",
             "发票很多发票，还有更多的发票", "the invoices again and again", "Hetzner 发票 invoices 发票 服务器",
             "服务器上的发票 and invoices",
             # among FTS5's best for "发票 invoices", not among memories_spaced's (its long
             # run of other characters counts only there): it gets FTS5's score alone
             "发票 invoices invoices " + "很多" * 30]
    # others, so that those words are rare enough to count (an IDF above FTS5's floor)
    texts += [f"unrelated note {i} about the garden" for i in range(12)] + [f"今天天气很好 {i}" for i in range(12)]
    for candidates in (2, 3, 50):
        config = Config().with_(search=SearchSettings(candidates=candidates))
        with Brain.open(tmp_path / "pool.db", embedder=hash_embedder, config=config) as brain:
            if candidates == 2:
                brain.remember_many([{"content": t} for t in texts])
                push(brain, pg_dsn)
            for query in ("发票 invoices", "服务器 发票", "invoices"):
                local = brain.search(query, limit=3, mode="keyword", track=False, min_relevance=0)
                shared, _ = pgsearch.search(brain, pg_dsn, query, limit=3, mode="keyword", min_relevance=0)
                assert [h.memory.content for h in shared] == [h.memory.content for h in local], (query, candidates)
                # (ten hits or fewer: each side brings `candidates`, search.hybrid.pool_size)
                bm25 = keyword_candidates(brain.db, query, Filters(), candidates)
                assert np.allclose([h.bm25 for h in shared], [bm25[h.memory.id] for h in local], atol=1e-9)


def test_a_role_that_may_not_upgrade_the_schema_is_told_who_may(tmp_path, hash_embedder, pg_cluster, pg_dsn):
    dbname = pg_dsn.rsplit("/", 1)[1]
    role = f"rw_{dbname}"
    with open_brain(tmp_path / "a.db", hash_embedder) as a:  # the owner's brain, of an older maxmem
        add_many(a, 2)
        push(a, pg_dsn)
    with psycopg.connect(pg_dsn, autocommit=True) as admin:
        admin.execute(OLD_FORM)
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'rw-secret'")
        admin.execute(f"GRANT USAGE ON SCHEMA maxmem TO {role}")
        admin.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA maxmem TO {role}")
    try:
        dsn = f"postgresql://{role}:rw-secret@127.0.0.1:{pg_cluster.port}/{dbname}"
        with open_brain(tmp_path / "b.db", hash_embedder) as b:
            add_many(b, 3)
            with pytest.raises(SyncError, match=r"needs upgrading \(0002_spaced_terms\), which only the owner"):
                push(b, dsn)
            assert "only the owner" in status(b)[0].last_error
            with open_brain(tmp_path / "a.db", hash_embedder) as a:
                push(a, pg_dsn)  # the owner upgrades it
            assert push(b, dsn).upserted == 3
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            admin.execute(f"DROP OWNED BY {role}")
            admin.execute(f"DROP ROLE {role}")


def test_relevance_reads_the_same_pairs_in_postgresql_as_locally(tmp_path, hash_embedder, pg_dsn):
    # Which pairs of spaceless-script characters a hit holds is read from the index's
    # tokens on both sides: the scripts' punctuation (a katakana middle dot) is no token,
    # and a pair past the first SPACED_CHARS characters of a column is not in the index.
    with open_brain(tmp_path / "a.db", hash_embedder) as brain:
        brain.remember("データ・ベースの移行は金曜日に決めた", category="core")
        brain.remember("データベースのバックアップは毎晩", category="core")
        brain.remember("y" * (SPACED_CHARS + 50) + " 我们决定把发票存放在服务器上", category="core")
        brain.remember("发票和合同都在服务器上", category="core")
        push(brain, pg_dsn)
        for query in ("データベースの移行", "发票存放在服务器", "タ・ベ"):
            local = brain.search(query, limit=10, mode="keyword", track=False, min_relevance=0)
            shared, _ = pgsearch.search(brain, pg_dsn, query, limit=10, mode="keyword", min_relevance=0)
            assert [h.memory.content for h in shared] == [h.memory.content for h in local], query
            assert np.allclose([h.relevance for h in shared], [h.relevance for h in local], atol=1e-4), query
