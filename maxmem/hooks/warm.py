"""The warm recall server's socket: where it listens, how a hook asks it, how it starts.

A prompt hook is a new process on every prompt; loading the model and brain.db's
modules is most of its time. The first prompt's hook does the work itself and starts a
recall server (`python -m maxmem.hooks.server`) in the background; later hooks send
their stdin to it over a Unix socket and print its answer. The server holds the
embedder and brain.db open and leaves after [recall] warm_minutes without a request
(0: no server; every hook works alone).

One server per brain.db and config file: the socket is named by a digest of both, in
maxmem's state folder (0700), and only its owner can connect (0600). This module is
what the hook's side needs and imports nothing heavy.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MAX_MESSAGE = 8 << 20  # a request holds the hook's stdin: a 1 MB prompt fits
MAX_SOCKET_PATH = 100  # sun_path holds 104 bytes on macOS, 108 on Linux
ACK = b"ok\n"  # the hook's word that it read the answer (one that gave up waiting sends none)


def code_stamp() -> int:
    """Which maxmem's code is installed: a hook and a server of different installs (an
    upgrade in between) do not talk (the stamp is this file's modification time)."""
    try:
        return Path(__file__).stat().st_mtime_ns
    except OSError:
        return 0


def server_name(db_path: Path, config_path: Path | None) -> str:
    key = f"{Path(db_path).expanduser().resolve()}\n{config_path or ''}"
    return "recall-" + hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:16]


def socket_path(folder: Path, db_path: Path, config_path: Path | None, env: Mapping[str, str]) -> Path | None:
    """The socket of the server for this brain.db and config: in the state folder, or
    where that path is too long for a socket, in $XDG_RUNTIME_DIR/maxmem or
    /tmp/maxmem-UID (made 0700, refused when another user owns it); None if none fits."""
    name = f"{server_name(db_path, config_path)}-{hashlib.sha256(os.fsencode(folder)).hexdigest()[:8]}.sock"
    runtime = env.get("XDG_RUNTIME_DIR")
    for place in (folder, Path(runtime) / "maxmem" if runtime else None, Path(f"/tmp/maxmem-{os.getuid()}")):
        if place is None or len(os.fsencode(place / name)) > MAX_SOCKET_PATH:
            continue
        if place == folder or private_folder(place):
            return place / name
    return None


def private_folder(place: Path) -> bool:
    """Whether `place` is (now) a folder of this user's only."""
    try:
        place.mkdir(mode=0o700, exist_ok=True)
        info = place.lstat()
    except OSError:
        return False
    return info.st_uid == os.getuid() and not info.st_mode & 0o077 and place.is_dir() and not place.is_symlink()


def lock_path(folder: Path, db_path: Path, config_path: Path | None) -> Path:
    """The server's lock file, in the state folder: it holds the server's pid."""
    return folder / f"{server_name(db_path, config_path)}.lock"


def send(connection: socket.socket, message: Mapping[str, Any]) -> None:
    connection.sendall(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")


def receive(connection: socket.socket) -> dict[str, Any] | None:
    """One JSON object up to a newline; None for anything else."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n") or size > MAX_MESSAGE:
            break
    try:
        message = json.loads(b"".join(chunks).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return message if isinstance(message, dict) else None


def ask(path: Path | None, request: Mapping[str, Any], timeout: float) -> dict[str, Any] | None:
    """The server's answer to `request`, or None when no server answers in `timeout`
    seconds (no socket, a stale one, a server that is leaving or out of date)."""
    if path is None or not path.exists():
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(timeout)
            connection.connect(str(path))
            send(connection, request)
            answer = receive(connection)
            if answer is None or answer.get("retry") or not isinstance(answer.get("stdout"), str):
                return None
            connection.sendall(ACK)  # the server records what was shown only once the hook has it
    except OSError:
        return None
    return answer


def start_server(db_path: Path, config_path: Path | None, env: Mapping[str, str]) -> None:
    """Start the recall server in the background, detached from the hook: its own
    session, no inherited stdin, stdout or stderr (the harness waits for the hook's
    output to close), so the hook exits at once. A second server for the same socket
    sees the first one's lock and leaves."""
    args = [sys.executable, "-m", "maxmem.hooks.server", "--db", str(db_path)]
    if config_path is not None:
        args += ["--config", str(config_path)]
    try:
        subprocess.Popen(args, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    except OSError:
        pass


def server_running(folder: Path, db_path: Path, config_path: Path | None) -> bool:
    """Whether a recall server holds its lock for this brain.db and config."""
    try:
        with open(lock_path(folder, db_path, config_path)) as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return True
    except OSError:
        return False
    return False


def start_embedding(db_path: Path, config_path: Path | None, env: Mapping[str, str], seconds: float) -> None:
    """`maxmem embed --max-seconds SECONDS` in the background, detached like the server:
    the vectors of what a capture hook stored, when no recall server is wanted."""
    args = [sys.executable, "-m", "maxmem", "--db", str(db_path)]
    if config_path is not None:
        args += ["--config", str(config_path)]
    args += ["embed", "--max-seconds", f"{seconds:g}"]
    try:
        subprocess.Popen(args, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    except OSError:
        pass


def stop_servers(folder: Path) -> int:
    """Stop every recall server of this state folder; how many were asked to stop. A
    lock file that nobody holds is left alone (its pid may be another process's now)."""
    stopped = 0
    for lock in folder.glob("recall-*.lock"):
        try:
            with open(lock) as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    continue  # no server holds it
                except OSError:
                    pid = int(handle.read().strip() or 0)
            if pid > 0:
                os.kill(pid, signal.SIGTERM)
                stopped += 1
        except (OSError, ValueError):
            continue
    return stopped
