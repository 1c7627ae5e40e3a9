"""The warm recall server: `python -m maxmem.hooks.server --db PATH [--config PATH]`.

Started in the background by a prompt hook that found none, or by a capture hook that
stored memories (warm.py). It holds the embedder and brain.db open and answers each
hook's request with what `maxmem hook user-prompt` would print (events.recall_context),
one request at a time. Between requests it gives the memories stored without a vector
(what the capture hooks store) theirs, in slices of a second: a memory captured at the
end of an answer is found by meaning within a minute, with no scheduler running.

It leaves, removing its socket, after [recall] warm_minutes without a request, and as
soon as it would answer from something stale: brain.db replaced or removed, the config
file changed, or a hook of another install of maxmem asking (an upgrade) (that hook then works alone and
starts a fresh server). A lock file keeps one server per socket. It writes no log of its
own: each hook logs its line, as ever.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import signal
import socket
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..brain import Brain
from ..config import Config, default_config_path, load_config, state_dir
from ..errors import MaxmemError
from ..redact import redact
from ..settings import RecallSettings
from . import HARNESSES, harness_named
from .events import HookInput, recall_context
from .shown import add_shown
from .warm import ACK, code_stamp, lock_path, receive, send, socket_path

# Embedding between requests: a slice of at most this many seconds and memories, after
# this many idle seconds; new memories are looked for every POLL_SECONDS.
EMBED_SLICE_SECONDS = 1.0
EMBED_SLICE_BATCH = 8
SLICE_GAP_SECONDS = 0.2
POLL_SECONDS = 10.0
EMBED_RETRY_SECONDS = 60.0
ACK_SECONDS = 1.0  # how long the server waits for a hook to say it read the answer


@dataclass(frozen=True)
class Stamp:
    """What the server's answers depend on: brain.db's file and the config file's."""

    db: tuple[int, int] | None
    config: float | None

    @classmethod
    def of(cls, db_path: Path, config_path: Path | None) -> Stamp:
        return cls(_identity(db_path), _mtime(config_path))


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _mtime(path: Path | None) -> float | None:
    try:
        return path.stat().st_mtime if path is not None else None
    except OSError:
        return None


@dataclass(frozen=True)
class Answer:
    """The reply to one hook's request, and the ids it prints for which session."""

    reply: dict[str, object]
    session_id: str | None = None
    ids: tuple[int, ...] = ()


def answer(brain: Brain, request: dict[str, object], folder: Path, settings: RecallSettings) -> Answer:
    """What the hook prints, its log line and whether it went well; never raises."""
    harness = harness_named(str(request.get("harness")))
    if harness not in HARNESSES:
        return Answer({"stdout": "", "line": f"unknown harness (known: {', '.join(HARNESSES)})", "ok": False})
    stdin = request.get("stdin")
    tokens = request.get("budget_tokens")
    try:
        data = HookInput.parse(stdin if isinstance(stdin, str) else "")
        stdout, line, ids = recall_context(brain, harness, data, folder, settings,
                                           tokens if isinstance(tokens, int) else None)
        return Answer({"stdout": stdout, "line": line, "ok": True}, data.session_id, ids)
    except Exception as exc:  # the hook prints nothing and logs why
        reason = " ".join(str(exc).split()) or exc.__class__.__name__
        return Answer({"stdout": "", "line": redact(f"failed: {reason}")[0][:400], "ok": False})


def waited(request: dict[str, object]) -> float:
    """How long the hook waits for the answer (an answer later than that is not sent)."""
    wait = request.get("wait")
    return float(wait) if isinstance(wait, int | float) and not isinstance(wait, bool) else 1.0


def embed_some(brain: Brain) -> float:
    """Give the oldest memories waiting for a vector theirs, for at most EMBED_SLICE_SECONDS
    (what a capture hook stored a moment ago: findable by meaning within a minute, with
    no scheduler); the seconds to wait before the next slice (0: go on when idle again).
    An embedder that fails is left alone for EMBED_RETRY_SECONDS: recall goes on."""
    try:
        run = brain.embed_pending(max_seconds=EMBED_SLICE_SECONDS, batch_size=EMBED_SLICE_BATCH)
    except MaxmemError:
        return EMBED_RETRY_SECONDS
    return 0.0 if run.embedded else EMBED_RETRY_SECONDS


def pending(brain: Brain) -> bool:
    try:
        return brain.embedder is not None and brain.pending_count() > 0
    except MaxmemError:
        return False


def acknowledged(connection: socket.socket) -> bool:
    """Whether the hook read the answer (it says so at once; a hook that stopped waiting
    has closed the socket)."""
    try:
        connection.settimeout(ACK_SECONDS)
        return connection.recv(len(ACK)) == ACK
    except OSError:
        return False


def serve(listener: socket.socket, brain: Brain, folder: Path, settings: RecallSettings,
          stamp: Stamp, db_path: Path, config_path: Path | None) -> str:
    """Answer requests until idle for warm_minutes or stale; why it stopped. Between
    requests it looks for memories waiting for a vector every POLL_SECONDS and embeds
    them in short slices, so a hook's request waits at most one slice."""
    last_request = time.monotonic()
    resume = 0.0  # embedding paused until then (monotonic)
    while True:
        now = time.monotonic()
        left = settings.warm_minutes * 60 - (now - last_request)
        if left <= 0:
            return "idle"
        work = now >= resume and pending(brain)
        listener.settimeout(min(left, SLICE_GAP_SECONDS if work else POLL_SECONDS))
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            if work:
                resume = time.monotonic() + embed_some(brain)
            continue
        last_request = time.monotonic()
        with connection:
            connection.settimeout(5.0)
            try:
                request = receive(connection)
                if request is None:
                    continue
                if request.get("code") != code_stamp() or Stamp.of(db_path, config_path) != stamp:
                    send(connection, {"retry": True})
                    return "stale"
                started = time.monotonic()
                given = answer(brain, request, folder, settings)
                if time.monotonic() - started > waited(request):
                    continue  # the hook stopped waiting and works alone: nothing is shown by this
                send(connection, {**given.reply, "seconds": round(time.monotonic() - started, 3)})
                if acknowledged(connection):  # a hook that gave up meanwhile shows nothing of this
                    add_shown(folder, given.session_id, given.ids)
                if brain.usage.due():
                    brain.flush_usage()
            except OSError:
                continue


def listen(path: Path) -> socket.socket:
    """A socket at `path` only its owner may use (a stale file there is replaced)."""
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old)
    listener.listen(16)
    return listener


def hold_lock(path: Path) -> IO[str] | None:
    """The server's lock file, held; None when another server holds it."""
    handle = open(path, "a+")  # noqa: SIM115 - held open for the server's life
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    handle.truncate(0)
    handle.write(f"{os.getpid()}\n")  # warm.stop_servers reads it
    handle.flush()
    return handle


def run(config: Config, config_path: Path | None) -> str:
    """Serve for this config's brain.db until idle or stale; why it stopped."""
    settings = config.recall
    db_path = Path(config.db_path).expanduser()
    folder = state_dir(os.environ)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = socket_path(folder, db_path, config_path, os.environ)
    if settings.warm_minutes <= 0 or path is None or not db_path.exists():
        return "off"
    lock = hold_lock(lock_path(folder, db_path, config_path))
    if lock is None:
        return "another server is running"
    read = config_path or default_config_path(os.environ)  # the file load_config read, if any
    try:
        stamp = Stamp.of(db_path, read)
        with Brain.open(db_path, config=config, create=False) as brain:
            brain.search("warm up the model", limit=1, track=False)
            listener = listen(path)
            try:
                return serve(listener, brain, folder, settings, stamp, db_path, read)
            finally:
                listener.close()
                path.unlink(missing_ok=True)
    finally:
        lock.close()


def leave(*_: object) -> None:
    raise SystemExit(0)  # through run's finally: the socket is removed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maxmem.hooks.server", description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, help="brain.db to serve")
    parser.add_argument("--config", type=Path, help="config file")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, leave)
    try:
        run(load_config(path=args.config, db_path=args.db), args.config)
    except Exception as exc:  # in the background: nothing to tell but the exit status
        print(f"maxmem recall server: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
