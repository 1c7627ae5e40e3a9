"""maxmem backup / restore: consistent under writers, checked, rotated, private."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest
from conftest import HashEmbedder, run_cli

from maxmem import Brain, Config, DatabaseError, FixedClock, InvalidInput
from maxmem.backup import backup, create_backup, list_backups, restore
from maxmem.jobs.runs import last_runs

WORKER = Path(__file__).with_name("stress_worker.py")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def make_brain(path: Path, n: int = 50) -> None:
    with Brain.open(path, embedder=HashEmbedder()) as brain:
        brain.remember_many([{"content": f"memory {i} about the backup plan {i % 5}", "category": "project"}
                             for i in range(n)])


def count(path: Path) -> int:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute("SELECT count(*) FROM memories").fetchall()[0][0]
    finally:
        conn.close()


def test_backup_while_other_processes_write_is_consistent(tmp_path):
    db = tmp_path / "brain.db"
    make_brain(db, 500)
    procs = [subprocess.Popen([sys.executable, str(WORKER), role, str(db), "5", str(tmp_path / f"{role}.log")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for role in ("writer", "agent")]
    deadline = time.time() + 60
    while time.time() < deadline and not (tmp_path / "writer.log").exists():
        time.sleep(0.1)  # the writers have started writing
    results = []
    with Brain.open(db, embedder=HashEmbedder()) as brain:
        for _ in range(3):
            before = brain.stats()["memories"]
            results.append((before, backup(brain.db, config=Config(), keep=10)))
            time.sleep(0.5)
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    for before, result in results:
        copy = Path(result.path)
        conn = apsw.Connection(str(copy), flags=apsw.SQLITE_OPEN_READONLY)
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA journal_mode").fetchall() == [("delete",)]
        n = conn.execute("SELECT count(*) FROM memories").fetchall()[0][0]
        # Every memory of the copy has its change logged: one snapshot, not a torn one.
        unlogged = conn.execute("SELECT count(*) FROM memories m WHERE NOT EXISTS "
                                "(SELECT 1 FROM changes c WHERE c.uid = m.uid)").fetchall()[0][0]
        conn.close()
        assert n == result.memories and n >= before and unlogged == 0
        assert not Path(f"{copy}-wal").exists()
    assert results[-1][1].memories > results[0][1].memories, "the writers were not writing meanwhile"


def test_rotation_keeps_the_newest_and_files_are_private(tmp_path):
    old_umask = os.umask(0o022)
    try:
        db = tmp_path / "home" / "brain.db"
        make_brain(db, 5)
        clock = FixedClock("2026-11-30T03:00:00Z")
        made = []
        for _ in range(5):
            made.append(create_backup(db, config=Config(), keep=3, clock=clock).path)
            clock.advance(days=1)
    finally:
        os.umask(old_umask)
    folder = db.parent / "backups"
    kept = list_backups(folder)
    assert [str(p) for p in kept] == made[-3:]
    assert mode(folder) == 0o700 and all(mode(p) == 0o600 for p in kept)
    assert kept[-1].name == "brain-20261204T030000.000Z.db"
    assert not [p for p in folder.iterdir() if ".tmp-" in p.name]


def test_keep_comes_from_the_config_and_dest_can_be_a_folder_or_a_new_file(tmp_path):
    db = tmp_path / "brain.db"
    make_brain(db, 3)
    config = Config.from_tables({"backup": {"keep": 2, "dir": str(tmp_path / "elsewhere")}})
    for _ in range(3):
        create_backup(db, config=config)
    assert len(list_backups(tmp_path / "elsewhere")) == 2
    made = create_backup(db, f"{tmp_path / 'new-folder'}/", config=config)  # a folder that is not there yet
    assert Path(made.path).parent == tmp_path / "new-folder" and Path(made.path).name.startswith("brain-")
    target = tmp_path / "one" / "copy.db"
    assert create_backup(db, target, config=config).path == str(target)
    assert mode(target) == 0o600 and count(target) == 3
    with pytest.raises(InvalidInput, match="already exists"):
        create_backup(db, target, config=config)
    with pytest.raises(InvalidInput, match="already exists"):
        create_backup(db, db, config=config)
    with pytest.raises(DatabaseError, match="does not exist"):
        create_backup(tmp_path / "missing.db", config=config)


def test_restore_checks_then_replaces_and_keeps_the_old_one_aside(tmp_path):
    db = tmp_path / "brain.db"
    make_brain(db, 20)
    saved = create_backup(db, config=Config()).path
    with Brain.open(db, embedder=HashEmbedder()) as brain:
        brain.remember_many([{"content": f"written after the backup {i}"} for i in range(7)])
    # Another process has brain.db open during the restore, and sees the result.
    other = Brain.open(db, embedder=HashEmbedder())
    assert other.stats()["memories"] == 27
    result = restore(saved, db, config=Config(), embedder=HashEmbedder())
    assert result.method == "backup-api" and result.memories == 20
    assert other.stats()["memories"] == 20
    assert [h.memory.content for h in other.search("backup plan 3", limit=1)][0].startswith("memory")
    other.close()
    aside = Path(result.kept_aside)
    assert count(aside) == 27 and mode(aside) == 0o600
    with Brain.open(db, embedder=HashEmbedder()) as brain:
        assert brain.db.scalar("PRAGMA integrity_check") == "ok"
        assert brain.db.scalar("PRAGMA journal_mode") == "wal"
        assert last_runs(brain.db)["restore"]["ok"]


def test_restore_refuses_a_damaged_backup_and_leaves_brain_db_untouched(tmp_path):
    db = tmp_path / "brain.db"
    make_brain(db, 400)
    saved = Path(create_backup(db, config=Config()).path)
    damaged = tmp_path / "damaged.db"
    data = bytearray(saved.read_bytes())
    data[len(data) // 2: len(data) // 2 + 8192] = os.urandom(8192)
    damaged.write_bytes(bytes(data))
    truncated = tmp_path / "truncated.db"
    truncated.write_bytes(saved.read_bytes()[: saved.stat().st_size // 3])
    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("hello")
    before = db.read_bytes()
    for bad in (damaged, truncated, not_sqlite, tmp_path / "missing.db"):
        with pytest.raises((DatabaseError, InvalidInput)) as caught:
            restore(bad, db, config=Config(), embedder=HashEmbedder())
        assert "\n" not in str(caught.value)
    assert db.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if ".restore-" in p.name]


def test_restore_refuses_vectors_from_another_embedder_unless_forced(tmp_path):
    db = tmp_path / "brain.db"
    make_brain(db, 5)
    saved = create_backup(db, config=Config()).path
    with pytest.raises(DatabaseError, match=r"holds vectors from test:hash-bow:\d+, "
                       r"but the configured embedder is test:hash-bow:32: .*--force"):
        restore(saved, db, config=Config(), embedder=HashEmbedder(dim=32))
    result = restore(saved, db, config=Config(), embedder=HashEmbedder(dim=32), force=True)
    assert result.memories == 5


def test_restore_over_a_corrupt_brain_db_moves_it_aside(tmp_path):
    db = tmp_path / "brain.db"
    make_brain(db, 300)
    saved = create_backup(db, config=Config()).path
    size = db.stat().st_size
    with open(db, "r+b") as handle:
        handle.truncate(size // 2)
    result = restore(saved, db, config=Config(), embedder=HashEmbedder())
    assert result.method == "moved" and Path(result.kept_aside).stat().st_size == size // 2
    assert count(db) == 300 and mode(db) == 0o600


def test_cli_backup_restore_and_doctor_report_the_backup(tmp_path, capsys):
    db = tmp_path / "brain.db"
    make_brain(db, 4)
    code, out, err = run_cli(["--db", str(db), "backup"], capsys)
    assert code == 0 and out.startswith("backed up 4 memories to ")
    path = out.split(" to ")[1].split(" (")[0]
    code, out, err = run_cli(["--db", str(db), "--embedder", "none", "restore", "--yes", path], capsys)
    assert code == 0 and "restored 4 memories" in out and "kept at" in out
    code, out, err = run_cli(["--db", str(db), "--embedder", "none", "restore", "--yes",
                              str(tmp_path / "nope.db")], capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("maxmem: error:")
    code, out, err = run_cli(["--db", str(db), "--embedder", "none", "doctor", "--json"], capsys)
    import json

    report = json.loads(out)
    backup_check = next(c for c in report["checks"] if c["name"] == "last backup")
    assert backup_check["ok"] and "ok " in backup_check["detail"]
    assert report["backups"]["count"] == 1


def test_a_name_planted_beside_the_copy_cannot_stop_or_redirect_it(tmp_path):
    """In a folder others may write to, the copy's temporary file has a name no one can
    guess: what another user left under the name a temporary once had (a folder they own,
    a link to a file of yours) neither stops the backup nor is written through."""
    db = tmp_path / "brain.db"
    make_brain(db, 3)
    shared = tmp_path / "shared"
    shared.mkdir()
    target = shared / "copy.db"
    (shared / f".copy.db.tmp-{os.getpid()}").mkdir()  # someone else's folder: it cannot be removed
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (shared / f".copy.db.tmp-{os.getpid()}-journal").symlink_to(victim)
    assert create_backup(db, target, config=Config()).path == str(target)
    assert count(target) == 3 and victim.read_text() == "mine"
    assert sorted(p.name for p in shared.iterdir() if ".tmp-" in p.name) == [
        f".copy.db.tmp-{os.getpid()}", f".copy.db.tmp-{os.getpid()}-journal"]  # left as they were
