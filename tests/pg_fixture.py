"""A real PostgreSQL 16 (+ pgvector) for the sync tests, started from the pgserver wheel.

The `pgserver` package bundles PostgreSQL and pgvector binaries. Its own
`get_server()` listens only on a Unix socket with trust authentication; these tests
also need TCP with a password (wrong-password errors, password masking) and a second
server *without* pgvector, so we drive the same bundled binaries (initdb, pg_ctl)
ourselves:

- `pg_cluster` (session): one server on 127.0.0.1 with scram-sha-256 over TCP.
- `pg_dsn` (per test): a fresh database on it, dropped afterwards.
- `PgCluster.kill()`: SIGKILL every process of a server (a crash); `start()` recovers it.
- `pg_cluster_novector` / `pg_dsn_novector`: a server started from a copy of the
  install with the vector extension files left out, so
  `pg_available_extensions` has no `vector` — the real condition of a host without
  pgvector, not a flag that pretends.

PostgreSQL refuses to run as root. Like pgserver, we then run it as an unprivileged
system user named `pgserver` (created with useradd if missing); each server runs from
its own hard-linked copy of the binaries in its temporary folder, which that user can
reach wherever the venv lives (pgserver instead opens up the permissions of every
parent folder of the venv).

If PostgreSQL cannot start here, every test using these fixtures is skipped with
the reason (shown by `pytest -rs`), never silently.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PASSWORD = "pg-test-secret"
USER = "postgres"
SYSTEM_USER = "pgserver"  # the name pgserver itself uses when run as root


class PgUnavailable(Exception):
    """PostgreSQL cannot be started on this machine; the message says why."""


def bundled_install() -> Path:
    """The pginstall folder of the pgserver wheel (found without importing pgserver)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise PgUnavailable("the pgserver package is not installed (pip install pgserver)")
    install = Path(list(spec.submodule_search_locations)[0]) / "pginstall"
    if not (install / "bin" / "postgres").exists():
        raise PgUnavailable(f"pgserver has no PostgreSQL binaries at {install}")
    return install


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_as() -> dict[str, Any]:
    """subprocess keywords that drop root privileges for initdb / pg_ctl."""
    if os.geteuid() != 0:
        return {}
    try:
        entry = pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        try:
            subprocess.run(
                ["useradd", "--system", "-M", "-s", "/usr/sbin/nologin", SYSTEM_USER],
                check=True, capture_output=True, text=True,
            )
        except (OSError, subprocess.CalledProcessError) as exc:
            raise PgUnavailable(f"running as root and cannot create user {SYSTEM_USER}: {exc}") from None
        entry = pwd.getpwnam(SYSTEM_USER)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


class PgCluster:
    """One PostgreSQL server in its own temporary folder, listening on 127.0.0.1."""

    _names = itertools.count(1)

    def __init__(self, *, label: str = "pg", with_vector: bool = True) -> None:
        self.root = Path(tempfile.mkdtemp(prefix=f"maxmem-{label}-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = _free_port()
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
        try:
            self.run_as = _run_as()
            if self.run_as:
                os.chmod(self.root, 0o755)
                os.chown(self.root, self.run_as["user"], self.run_as["group"])
            self.install = private_install(self.root, with_vector)
            self._initdb()
        except OSError as exc:
            shutil.rmtree(self.root, ignore_errors=True)
            raise PgUnavailable(f"cannot prepare {self.root}: {exc}") from None
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise

    # -- lifecycle ------------------------------------------------------------
    def _tool(self, name: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                [str(self.install / "bin" / name), *args],
                cwd=self.root, env=self.env, capture_output=True, text=True,
                timeout=timeout, check=True, **self.run_as,
            )
        except subprocess.CalledProcessError as exc:
            detail = (exc.stderr or exc.stdout or "").strip().splitlines()
            log_tail = self.log.read_text().strip().splitlines()[-3:] if self.log.exists() else []
            raise PgUnavailable(f"{name} failed: {' | '.join(detail[-3:] + log_tail)}") from None
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PgUnavailable(f"{name} failed: {exc}") from None

    def _initdb(self) -> None:
        pwfile = self.root / "pwfile"
        pwfile.write_text(PASSWORD + "\n")
        os.chmod(pwfile, 0o644)
        self._tool(
            "initdb", "-D", str(self.data), "-U", USER, "-E", "UTF8", "--no-sync",
            "--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={pwfile}",
        )
        pwfile.unlink()

    def start(self) -> None:
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} "
            f"-c unix_socket_directories={self.root} "
            "-c fsync=off -c full_page_writes=off -c max_connections=40"
        )
        self._tool("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "30",
                   "-o", options, "start")

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._tool("pg_ctl", "-D", str(self.data), "-w", "-m", "fast", "stop")

    def kill(self) -> list[int]:
        """SIGKILL the server and every process of it at once: a crash, not a shutdown
        (no checkpoint, clients cut off mid-query; the next start runs crash recovery).
        The stale postmaster.pid and socket lock left by a killed postmaster that nobody
        reaps (a zombie keeps its pid) are removed, as an admin does after a crash. Returns the pids killed."""
        pid_file = self.data / "postmaster.pid"
        if not pid_file.exists():
            return []
        postmaster = int(pid_file.read_text().split()[0])
        family = [postmaster] + [pid for pid, parent in _parents().items() if parent == postmaster]
        for pid in family:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(pid) for pid in family):
            time.sleep(0.02)
        if not _alive(postmaster):
            pid_file.unlink(missing_ok=True)
            for stale in self.root.glob(".s.PGSQL.*"):  # the socket and its lock file name the pid too
                stale.unlink(missing_ok=True)
        return family

    def destroy(self) -> None:
        with contextlib.suppress(PgUnavailable):
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    @property
    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    # -- connections ----------------------------------------------------------
    def dsn(self, dbname: str = "postgres", password: str = PASSWORD) -> str:
        return f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{dbname}"

    def connect(self, dbname: str = "postgres") -> Any:
        import psycopg

        return psycopg.connect(self.dsn(dbname), autocommit=True)

    def create_database(self) -> str:
        name = f"t{os.getpid()}_{next(self._names)}"
        with self.connect() as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return name

    def drop_database(self, name: str) -> None:
        if not self.running:
            return
        with self.connect() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process (from /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                # the command name in (…) may hold spaces: the fields after it are fixed
                found[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    return found


def _alive(pid: int) -> bool:
    """Running (a zombie, dead but not reaped, is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _start_cluster(label: str, with_vector: bool = True) -> PgCluster:
    if importlib.util.find_spec("psycopg") is None:
        raise PgUnavailable("psycopg is not installed (pip install 'maxmem[postgres]')")
    cluster = PgCluster(label=label, with_vector=with_vector)
    atexit.register(cluster.destroy)  # also when pytest is interrupted
    try:
        cluster.start()
    except PgUnavailable:
        # One retry on a fresh port: another process may have taken ours.
        cluster.port = _free_port()
        cluster.start()
    return cluster


def _link(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system
        shutil.copy2(src, dst)


def private_install(into: Path, with_vector: bool = True) -> Path:
    """A hard-linked copy of pgserver's PostgreSQL inside `into`.

    The wheel's layout is kept (pgserver/pginstall next to pgserver.libs), so the
    binaries find their libraries through their RPATH; and the unprivileged server user
    can reach them wherever the venv is (a checkout under a 0700 home included). With
    `with_vector` False pgvector's files are left out: a server without pgvector.
    """
    install = bundled_install()

    def skip(folder: str, names: list[str]) -> list[str]:
        left_out = [n for n in names if not with_vector and n.startswith("vector")]
        if Path(folder) == install:
            left_out.append("include")
        return left_out

    site = into / "site"
    target = site / "pgserver" / "pginstall"
    shutil.copytree(install, target, ignore=skip, copy_function=_link, symlinks=True)
    libs = install.parent.parent / "pgserver.libs"
    if libs.is_dir():
        shutil.copytree(libs, site / "pgserver.libs", copy_function=_link, symlinks=True)
    return target


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """A running PostgreSQL 16 with pgvector available; skipped with the reason if impossible."""
    try:
        cluster = _start_cluster("pg")
    except PgUnavailable as exc:
        pytest.skip(f"PostgreSQL could not start: {exc}")
    yield cluster
    cluster.destroy()


@pytest.fixture(scope="session")
def pg_cluster_novector() -> Iterator[PgCluster]:
    """A running PostgreSQL 16 whose installation has no pgvector at all."""
    try:
        cluster = _start_cluster("pgnovec", with_vector=False)
    except PgUnavailable as exc:
        pytest.skip(f"PostgreSQL without pgvector could not start: {exc}")
    yield cluster
    cluster.destroy()


@pytest.fixture
def pg_dsn(pg_cluster: PgCluster) -> Iterator[str]:
    """A DSN (with password, over TCP) to an empty database of its own."""
    if not pg_cluster.running:  # a previous test stopped it and failed before restarting
        pg_cluster.start()
    name = pg_cluster.create_database()
    yield pg_cluster.dsn(name)
    if not pg_cluster.running:
        pg_cluster.start()
    pg_cluster.drop_database(name)


@pytest.fixture
def pg_dsn_novector(pg_cluster_novector: PgCluster) -> Iterator[str]:
    name = pg_cluster_novector.create_database()
    yield pg_cluster_novector.dsn(name)
    pg_cluster_novector.drop_database(name)
