"""The Brain behind the pages, in a process of its own.

maxmem browse has two SQLite libraries to serve: apsw's (the Brain) and pysqlite3's
(Datasette). Both need sqlite-vec, and sqlite-vec cannot be loaded into two SQLite
libraries of one process: SQLite loads extensions RTLD_GLOBAL, so every copy of the
extension binds to the first one's global `sqlite3_api`, each load points it at its
own library, and a vector query through the other one then crashes the process
(seen here: SIGSEGV in the next Brain.similar after a Datasette page, also with a
private copy of the file). So the server process holds only Datasette's SQLite, and
the Brain lives here, in a child process started with `spawn` (no inherited threads
or connections), answering one call at a time over a pipe.

A call names an operation of OPERATIONS and gets its plain-data result back, or the
MaxmemError it raised (re-raised in the server as the same class, same message).
"""

from __future__ import annotations

import dataclasses
import logging
import multiprocessing
import threading
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from typing import Any

from ..brain import Brain
from ..config import Config
from ..errors import (
    ConfigError,
    DatabaseError,
    EmbeddingError,
    InvalidInput,
    MaxmemError,
    NotFound,
)
from . import charts, views

log = logging.getLogger("maxmem")

OPERATIONS: dict[str, Callable[..., Any]] = {
    "overview": views.overview,
    "search": views.search,
    "memory": views.memory_page,
    "timeline": views.timeline,
    "day": views.timeline_day,
    "charts": charts.charts,
    "tend": views.tend,
    "internal_tables": views.internal_tables,
}
NO_BRAIN = {"jobs": views.jobs}  # run_checks opens its own connection
ERRORS = {cls.__name__: cls for cls in (InvalidInput, NotFound, DatabaseError, EmbeddingError, ConfigError)}
START_SECONDS = 120.0


class WorkerGone(MaxmemError):
    """The Brain's process stopped (it is restarted on the next call)."""


def portable(config: Config) -> dict[str, Any]:
    """The configuration as the child gets it (the file's tables are read-only mappings,
    which do not pickle): `Config(**portable(config))` is the same configuration."""
    data = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    data["file_tables"] = _plain(config.file_tables)
    return data


def _plain(value: Any) -> Any:
    return {k: _plain(v) for k, v in value.items()} if isinstance(value, Mapping) else value


def _main(conn: Connection, settings: dict[str, Any], embedder: str | None, open_brain: bool) -> None:
    """The child: open the Brain once, then answer calls until the pipe closes."""
    brain: Brain | None = None
    config = Config(**settings)
    try:
        if open_brain:
            brain = Brain.open(config.db_path, embedder=embedder, config=config)
        conn.send(("ready", None))
    except MaxmemError as exc:
        conn.send(("error", (type(exc).__name__, str(exc))))
        return
    try:
        while True:
            try:
                name, args, kwargs = conn.recv()
            except EOFError:
                return
            try:
                if name in NO_BRAIN:
                    result = NO_BRAIN[name](config, embedder, *args, **kwargs)
                else:
                    assert brain is not None
                    result = OPERATIONS[name](brain, *args, **kwargs)
                    brain.warnings.clear()  # each page shows the warnings of its own call
                conn.send(("ok", result))
            except MaxmemError as exc:
                conn.send(("error", (type(exc).__name__, str(exc))))
            except Exception as exc:  # a bug: said once, and the page says so
                log.exception("maxmem browse: %s failed", name)
                conn.send(("error", ("MaxmemError", f"{name} failed: {type(exc).__name__}: {exc}")))
    finally:
        if brain is not None:
            brain.close()


class BrainWorker:
    """The server's handle on the child process: `call(name, *args)` from any thread."""

    def __init__(self, config: Config, embedder: str | None, open_brain: bool = True) -> None:
        self.config, self.embedder, self.open_brain = config, embedder, open_brain
        self._lock = threading.Lock()
        self._process: Any = None
        self._conn: Connection | None = None

    def start(self) -> None:
        """Start the child and wait until its Brain is open; its error is raised here."""
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        process = context.Process(target=_main, args=(child, portable(self.config), self.embedder, self.open_brain),
                                  name="maxmem-browse-brain", daemon=True)
        process.start()
        child.close()
        if not parent.poll(START_SECONDS):
            process.kill()
            raise WorkerGone(f"the Brain's process did not start in {START_SECONDS:.0f} s")
        try:
            status, payload = parent.recv()
        except EOFError:
            process.join(5)
            raise WorkerGone(f"the Brain's process stopped while opening (exit code {process.exitcode})") from None
        if status == "error":
            process.join(5)
            raise _rebuilt(payload)
        self._process, self._conn = process, parent

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            if self._conn is None or not self._process.is_alive():
                self.stop()
                self.start()
            assert self._conn is not None
            try:
                self._conn.send((name, args, kwargs))
                status, payload = self._conn.recv()
            except (EOFError, OSError):
                code = self._process.exitcode if self._process else None
                self.stop()
                raise WorkerGone(f"the Brain's process stopped during {name} (exit code {code}); "
                                 "it restarts on the next page") from None
        if status == "error":
            raise _rebuilt(payload)
        return payload

    def stop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._process is not None:
            self._process.join(10)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
            self._process = None


def _rebuilt(payload: tuple[str, str]) -> MaxmemError:
    name, message = payload
    return ERRORS.get(name, MaxmemError)(message)
