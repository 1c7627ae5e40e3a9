"""A brain.db that cannot be written (a read-only mount, a read-only file or folder)
opens for reading: search, list, get, stats and doctor work; a write says "read-only".

The mount case uses a real read-only bind mount (skipped where mounting is not
allowed); the permission cases run the CLI as an unprivileged user (root ignores
file modes), or as the current user when it is not root.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import database_at_version
from other_user import OtherUser

from maxmem import Brain
from maxmem.errors import DatabaseError
from maxmem.store.db import Database, access
from maxmem.store.migrations import MIGRATIONS

READS = (["search", "quince"], ["list"], ["get", "1"], ["stats"], ["doctor"])


def seed(folder: Path) -> Path:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / "brain.db"
    with Brain.open(path, embedder="none") as b:
        b.remember("the quince tree by the shed flowers in April", category="core")
        b.remember("the boiler was serviced in October", category="project")
    return path


def cli(db: Path, args: list[str], home: Path | None = None,
        user: OtherUser | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "MAXMEM_HOME": str(home or db.parent / "home")}
    if user is not None:
        return user.run(["--db", str(db), "--embedder", "none", *args], env, timeout=120, cwd="/")
    return subprocess.run([sys.executable, "-m", "maxmem", "--db", str(db), "--embedder", "none", *args],
                          capture_output=True, text=True, env=env, timeout=120, cwd="/", check=False)


@contextlib.contextmanager
def read_only_mount(source: Path) -> Iterator[Path]:
    target = source.parent / "mounted"
    target.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True, check=False)
    if mounted.returncode != 0:
        target.rmdir()
        pytest.skip(f"cannot bind-mount here: {mounted.stderr.decode().strip()}")
    try:
        remount = subprocess.run(["mount", "-o", "remount,ro,bind", str(target)], capture_output=True, check=False)
        if remount.returncode != 0:
            pytest.skip(f"cannot remount read-only: {remount.stderr.decode().strip()}")
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=False)
        target.rmdir()


def test_on_a_read_only_mount_reads_work_and_a_write_says_read_only(tmp_path):
    source = tmp_path / "brain"
    seed(source)
    with read_only_mount(source) as mounted:
        db = mounted / "brain.db"
        assert access(db) == ("immutable", "the file and its folder are read-only")
        for args in READS:
            done = cli(db, args, home=tmp_path / "home")
            assert done.returncode == 0, (args, done.stdout, done.stderr)
            assert "restore" not in done.stdout + done.stderr
        assert "quince" in cli(db, ["search", "quince"], home=tmp_path / "home").stdout
        done = cli(db, ["remember", "a new memory"], home=tmp_path / "home")
        assert done.returncode == 1
        assert done.stderr.strip() == (f"maxmem: error: {db} is read-only (the file and its folder are read-only): "
                                       "it can be read and searched, not changed")
        database = Database(db)
        try:
            assert database.read_only == "the file and its folder are read-only"
            assert database.scalar("SELECT count(*) FROM memories") == 2
            with pytest.raises(DatabaseError, match=r"brain.db is read-only \(") as caught, database.atomic():
                database.execute("DELETE FROM memories")
            assert "restore" not in str(caught.value)
        finally:
            database.close()


def test_a_wal_on_a_read_only_mount_is_read_through_its_shm(tmp_path):
    source = tmp_path / "brain"
    source.mkdir(mode=0o700)
    scratch = seed(tmp_path / "scratch")
    writer = Brain.open(scratch, embedder="none")
    try:
        writer.db.execute("PRAGMA wal_autocheckpoint=0")
        writer.remember("a memory still in the WAL", category="core")
        for suffix in ("", "-wal", "-shm"):
            shutil.copy(f"{scratch}{suffix}", source / f"brain.db{suffix}")
    finally:
        writer.close()
    assert (source / "brain.db-wal").stat().st_size > 0
    with read_only_mount(source) as mounted:
        db = mounted / "brain.db"
        assert access(db)[0] == "ro"
        done = cli(db, ["list"], home=tmp_path / "home")
        assert done.returncode == 0 and "a memory still in the WAL" in done.stdout, done.stderr
    (source / "brain.db-shm").unlink()
    with read_only_mount(source) as mounted:
        done = cli(mounted / "brain.db", ["list"], home=tmp_path / "home")
        assert done.returncode == 1 and "cannot be read either" in done.stderr and "copy the folder" in done.stderr
        assert "restore" not in done.stderr


@pytest.mark.parametrize("case", ["read-only file", "read-only folder"])
def test_read_only_permissions(case, other_user):
    folder = Path(tempfile.mkdtemp(prefix="maxmem-ro-"))
    try:
        os.chmod(folder, 0o755)
        db = seed(folder / "brain")
        home = folder / "home"
        home.mkdir()
        other_user.own(folder / "brain", db, home)
        if case == "read-only file":
            os.chmod(db, 0o400)  # the folder stays writable: mode=ro
        else:
            os.chmod(folder / "brain", 0o500)  # the file stays writable, no -wal: immutable=1
        for args in READS[:4]:
            done = cli(db, args, home=home, user=other_user)
            assert done.returncode == 0, (case, args, done.stderr)
        done = cli(db, ["remember", "a new memory"], home=home, user=other_user)
        why = "the file is read-only" if case == "read-only file" else "its folder is read-only"
        assert done.returncode == 1 and f"{db} is read-only ({why})" in done.stderr, done.stderr
        assert "restore" not in done.stderr
    finally:
        os.chmod(folder / "brain", 0o700)
        shutil.rmtree(folder)


def test_a_writable_brain_is_opened_for_writing(tmp_path):
    db = seed(tmp_path / "brain")
    assert access(db) == ("rw", None) and access(tmp_path / "new.db") == ("rw", None)
    database = Database(db)
    try:
        assert database.read_only is None
    finally:
        database.close()
    reader = Database(db, readonly=True)
    try:
        assert reader.read_only == "opened for reading"
        with pytest.raises(DatabaseError, match="is read-only"), reader.atomic():
            pass
    finally:
        reader.close()


@pytest.mark.parametrize("stop", [1, len(MIGRATIONS) - 1])
def test_a_read_only_brain_of_an_older_schema_is_read_as_it_is(monkeypatch, stop, other_user):
    """Searching a read-only brain.db that an older maxmem wrote serves its memories
    (from an upgraded copy in memory); the file itself is not changed."""
    folder = Path(tempfile.mkdtemp(prefix="maxmem-ro-old-"))
    try:
        os.chmod(folder, 0o755)
        (folder / "brain").mkdir()
        db = folder / "brain" / "brain.db"
        with database_at_version(db, monkeypatch, stop) as old, old.atomic():
            old.execute(
                "INSERT INTO memories (uid, category, content, content_hash, created_at, updated_at) "
                "VALUES ('u1', 'core', 'the quince tree by the shed flowers in April', 'h', "
                "'2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')")
        home = folder / "home"
        home.mkdir()
        other_user.own(folder / "brain", db, home)
        os.chmod(db, 0o400)
        before = db.read_bytes()
        done = cli(db, ["search", "quince", "--min-relevance", "0"], home=home, user=other_user)
        assert done.returncode == 0 and "quince tree" in done.stdout, done.stderr
        for args in (["list"], ["get", "u1"], ["stats"]):
            done = cli(db, args, home=home, user=other_user)
            assert done.returncode == 0, (args, done.stderr)
        done = cli(db, ["remember", "a new memory"], home=home, user=other_user)
        assert done.returncode == 1 and f"{db} is read-only (the file is read-only" in done.stderr, done.stderr
        assert "upgraded first" not in done.stderr and "restore" not in done.stderr
        assert db.read_bytes() == before
    finally:
        shutil.rmtree(folder)
