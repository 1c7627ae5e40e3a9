"""PostgreSQL killed in the middle of `maxmem sync postgres`, then restarted.

A real `python -m maxmem sync postgres` pushes a brain of 12,000 memories (with
vectors) in batches; the pgserver-started PostgreSQL is killed with SIGKILL (every
process of it: a crash, not a shutdown) at a few points of the run: early, late, and
while it builds the HNSW index after the last batch. Each time the command fails
with one clear line, a run while the server is down says it cannot connect, and once
the server is back (crash recovery) the next run completes: every memory is in
PostgreSQL exactly once and as it is in brain.db, and both cursors stand at the last
change.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from maxmem import Brain
from maxmem.sync.pgconnect import target_name
from maxmem.sync.pgstatus import status

psycopg = pytest.importorskip("psycopg")

MEMORIES = 12_000
BATCH = 400


def sync(db: Path, dsn: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "maxmem", "--db", str(db), "--embedder", "none", "sync",
                             "postgres", "--dsn", dsn, "--batch-size", str(BATCH)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def remote(dsn: str, sql: str) -> Any:
    """One value from PostgreSQL, or None while it is down or has no such table yet."""
    try:
        with psycopg.connect(dsn, connect_timeout=2) as conn:
            return conn.execute(sql).fetchone()[0]
    except psycopg.Error:
        return None


def pushed(dsn: str) -> int:
    return remote(dsn, "SELECT coalesce(max(last_seq), 0) FROM maxmem.instances") or 0


def building_index(dsn: str) -> bool:
    return bool(remote(dsn, "SELECT count(*) FROM pg_stat_activity WHERE query ILIKE 'CREATE INDEX%memories_embedding%'"
                            " AND state = 'active'"))


@pytest.mark.slow
def test_postgres_killed_mid_sync_then_restarted(tmp_path, hash_embedder, pg_cluster, pg_dsn):
    db = tmp_path / "brain.db"
    with Brain.open(db, embedder=hash_embedder) as brain:
        brain.remember_many([{"content": f"memory {i}: the deploy of service {i % 31} on host h{i}",
                              "category": "conversation" if i % 3 else "daily", "tags": [f"t{i % 5}"]}
                             for i in range(MEMORIES)])
        last_change = int(brain.db.scalar("SELECT max(seq) FROM changes"))
    target = target_name(pg_dsn)
    points = {
        "early": lambda: pushed(pg_dsn) >= last_change * 0.15,
        "late": lambda: pushed(pg_dsn) >= last_change * 0.7,
        "index build": lambda: building_index(pg_dsn),
    }
    seen: dict[str, str] = {}
    for name, ready in points.items():
        if seen:  # from scratch again (and the index is built again at the end)
            with psycopg.connect(pg_dsn, autocommit=True) as admin:
                admin.execute("DROP INDEX IF EXISTS maxmem.memories_embedding")
                admin.execute("DELETE FROM maxmem.memories")
                admin.execute("DELETE FROM maxmem.instances")
            with Brain.open(db, embedder="none") as brain, brain.db.atomic():
                brain.db.execute("UPDATE sync_targets SET cursor = 0")
        child = sync(db, pg_dsn)
        deadline = time.monotonic() + 120
        while child.poll() is None and not ready() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert child.poll() is None, f"{name}: the sync ended before the kill: {child.stderr.read()}"
        at = pushed(pg_dsn)
        killed = pg_cluster.kill()
        out, err = child.communicate(timeout=60)
        assert killed and child.returncode == 1, (name, child.returncode, out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"maxmem: error: PostgreSQL sync to {target} failed: "), err
        assert "the server went away mid-run" in lines[0] and "nothing is lost" in lines[0]
        assert "pg-test-secret" not in err and "Traceback" not in err
        seen[name] = lines[0]
        with Brain.open(db, embedder="none") as brain:
            local = status(brain)[0]
            assert local.last_error == lines[0].removeprefix("maxmem: error: ")
            assert local.cursor <= max(at, last_change)
        # while it is down: one line that says so
        down = sync(db, pg_dsn)
        _, err = down.communicate(timeout=60)
        assert down.returncode == 1 and err.strip().count("\n") == 0 and "cannot connect to PostgreSQL" in err, err
        pg_cluster.start()  # crash recovery
        # PostgreSQL's cursor (committed with the data) is the local one, or one batch ahead
        # when the kill fell between its commit and brain.db's
        assert pushed(pg_dsn) - local.cursor in (0, BATCH) or pushed(pg_dsn) == last_change, name
        again = sync(db, pg_dsn)
        out, err = again.communicate(timeout=300)
        assert again.returncode == 0, (name, err)
        assert out.startswith(f"sync: {target}: ") and f"cursor #{last_change}, backlog 0" in out, out
        check_complete(db, pg_dsn, last_change)
    print("\n" + "\n".join(f"{k}: {v}" for k, v in seen.items()))


def check_complete(db: Path, dsn: str, last_change: int) -> None:
    with Brain.open(db, embedder="none") as brain:
        local = {m["uid"]: m for m in brain.db.rows("SELECT uid, content, updated_at FROM memories")}
        local_status = status(brain)[0]
        instance = brain.db.get_meta("instance_id")
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT uid, content, embedding IS NOT NULL FROM maxmem.memories "
                            "WHERE instance_id = %s", (instance,)).fetchall()
        cursor = conn.execute("SELECT last_seq FROM maxmem.instances WHERE instance_id = %s",
                              (instance,)).fetchone()[0]
        index = conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'memories_embedding'").fetchone()
    assert len(rows) == len(local) == MEMORIES  # none lost, none twice (and the key forbids twins)
    assert {uid: content for uid, content, _ in rows} == {u: m["content"] for u, m in local.items()}
    assert all(has_vector for _, _, has_vector in rows)
    assert cursor == local_status.cursor == last_change and local_status.backlog == 0
    assert local_status.last_error is None and index is not None
