"""Start `maxmem browse`: Datasette over brain.db with the maxmem plugin, on 127.0.0.1.

Datasette reads SQLite through Python's sqlite3 module, or through pysqlite3 when it
can import it. brain.db needs more than many Pythons' sqlite3 gives: its keyword
index uses FTS5 secure-delete (file format 5, SQLite 3.42 and later; older FTS5
answers "invalid fts5 file format"), its index of spaceless scripts FTS5's
contentless_delete (3.43 and later), and its vectors a vec0 table (sqlite-vec, an
extension to load, which some builds of sqlite3 cannot). The `browse` extra installs
pysqlite3, whose wheels bundle a current SQLite that loads extensions, and
`check_sqlite` says so in one line when what Datasette got cannot read brain.db.

That SQLite is not apsw's, and sqlite-vec cannot serve two SQLite libraries in one
process: the Brain behind maxmem's pages runs in a process of its own (worker.py).

An encrypted brain.db is refused in one line: pysqlite3 cannot decrypt it, a decrypted
copy on disk would undo the encryption, and pysqlite3 cannot load an image into memory
(it has no `deserialize`).

Datasette opens brain.db as a mutable file with read-only connections (mode=ro): a
table page or a SQL query can read, never write, and each query is its own short
read. Never immutable (-i): that skips locking, and brain.db is written by the jobs
and the agent while it is browsed.
"""

from __future__ import annotations

import asyncio
import html
import logging
import os
import shutil
import socket
import sys
import tempfile
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import Config
from ..errors import InvalidInput, MaxmemError, MissingDependency
from ..keys import is_encrypted
from .guard import Access, Session, is_loopback
from .worker import BrainWorker

log = logging.getLogger("maxmem")

HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DATABASE = "brain"
MIN_SQLITE = (3, 43, 0)  # FTS5 secure-delete (file format 5), contentless_delete
SETTINGS = {
    "allow_download": False,      # a copy of a file being written can tear: use maxmem backup
    "sql_time_limit_ms": 2000,
    "max_returned_rows": 1000,
    "default_page_size": 50,
    # Suggesting facets tries every column: 2 s a table page at 100k memories. The
    # memories table offers category, kind and status facets instead (metadata).
    "suggest_facets": False,
}


class BrowseError(MaxmemError):
    """maxmem browse cannot start as asked."""


def check_sqlite() -> None:
    """The sqlite3 module Datasette uses must read FTS5 format 5 and load sqlite-vec."""
    try:
        from datasette.utils.sqlite import sqlite3, sqlite_version
    except ImportError:
        raise MissingDependency("datasette", "browse") from None
    version = sqlite_version()
    loads = hasattr(sqlite3.connect(":memory:"), "enable_load_extension")
    if version < MIN_SQLITE or not loads:
        found = ".".join(map(str, version)) + ("" if loads else " without extension loading")
        raise MissingDependency(
            f"a SQLite for Datasette that reads brain.db (3.43+ with extension loading; found {found})",
            "browse",
        )


def metadata(internal: list[str]) -> dict[str, Any]:
    """Datasette's metadata for brain.db: keyword search on the memories table through
    memories_fts (its content is a view, which Datasette would not find on its own),
    and the vector index's own tables (`internal`) kept out of the table list."""
    tables: dict[str, Any] = {name: {"hidden": True} for name in internal}
    tables["memories"] = {"fts_table": "memories_fts", "fts_pk": "id", "sort_desc": "created_at",
                          "label_column": "title", "facets": ["category", "kind", "status"]}
    return {"title": "maxmem browse", "databases": {DATABASE: {"tables": tables}}}


def build(config: Config, *, read_only: bool = False, embedder: str | None = None,
          port: int = DEFAULT_PORT, token: str | None = None) -> tuple[Any, Any]:
    """The Datasette instance with the maxmem plugin registered, and the plugin's state
    (whose Brain process is started here: a brain.db that cannot be opened, or vectors
    from another embedder, fail here with the Brain's own message).

    `port` only names the cookies; `token`: this run's (default: a new random one,
    state.access.token). The caller closes the state."""
    check_sqlite()
    if is_encrypted(Path(config.db_path).expanduser()):
        # pysqlite3's SQLite has no cipher, and a decrypted copy on disk would undo the encryption.
        raise BrowseError("maxmem browse cannot show an encrypted brain.db (Datasette's SQLite cannot decrypt it, "
                          "and a decrypted copy would put your memories on disk): use  maxmem search, get, "
                          "history  and  stats, or  maxmem decrypt  first")
    from datasette.app import Datasette
    from datasette.database import Database as DatasetteDatabase
    from datasette.plugins import pm

    from .plugin import BrowseState, MaxmemPlugin  # imports datasette

    pages = BrainWorker(config, embedder)
    checks = BrainWorker(config, embedder, open_brain=False)
    pages.start()
    try:
        checks.start()
        internal = pages.call("internal_tables")
    except BaseException:
        pages.stop()
        raise
    state = BrowseState(pages, checks, read_only, Session(port), Access(port, token), DATABASE)
    plugin = MaxmemPlugin(state)
    for name in [n for n, p in pm.list_name_plugin() if isinstance(p, MaxmemPlugin)]:
        pm.unregister(name=name)  # one maxmem plugin per process: the newest server's
    pm.register(plugin, name=f"maxmem.browse.{id(plugin)}")
    ds = Datasette([], metadata=metadata(internal), settings=SETTINGS,
                   template_dir=str(Path(__file__).parent / "templates"))
    ds.add_database(DatasetteDatabase(ds, path=str(Path(config.db_path).expanduser()), is_mutable=True),
                    name=DATABASE)
    return ds, state


def listen(port: int, host: str = HOST) -> socket.socket:
    """A TCP socket bound to a loopback address only; port 0 picks a free one."""
    if not is_loopback(host):
        raise InvalidInput(f"maxmem browse listens on 127.0.0.1 only, not {host!r}")
    if not 0 <= port <= 65535:
        raise InvalidInput("port must be from 0 to 65535")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise BrowseError(f"cannot listen on {host}:{port}: {exc.strerror}: "
                          "pick another with --port (0 for any free port)") from None
    sock.listen(128)
    return sock


def serve(config: Config, *, port: int = DEFAULT_PORT, open_browser: bool = False,
          read_only: bool = False, embedder: str | None = None,
          announce: Callable[[str], None] | None = None) -> None:
    """Serve until interrupted. `announce(url)` is called once the socket listens, with
    the address that carries this run's token (print it for the person, nowhere else)."""
    import uvicorn

    sock = listen(port)
    bound = sock.getsockname()[1]
    try:
        ds, state = build(config, read_only=read_only, embedder=embedder, port=bound)
    except BaseException:
        sock.close()
        raise
    url = state.access.url(f"http://{HOST}:{bound}/")
    server = uvicorn.Server(uvicorn.Config(ds.app(), log_level="warning", lifespan="on",
                                           access_log=False, server_header=False))
    folder = Path(tempfile.mkdtemp(prefix="maxmem-browse-"))  # 0700
    try:
        asyncio.run(_serve(ds, server, sock, url, launcher(folder, url) if open_browser else None, announce))
    finally:
        state.close()
        sock.close()
        shutil.rmtree(folder, ignore_errors=True)


def launcher(folder: Path, url: str) -> str:
    """A file:// address of a private page (0600) that sends the browser on to `url`:
    the browser is started on it, so the token is never on a command line (ps shows
    those to every user)."""
    path = folder / "open.html"
    quoted = html.escape(url, quote=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={quoted}">'
                  f'<title>maxmem browse</title><a href="{quoted}">maxmem browse</a>\n')
    return path.as_uri()


async def _serve(ds: Any, server: Any, sock: socket.socket, url: str, opener: str | None,
                 announce: Callable[[str], None] | None) -> None:
    await ds.invoke_startup()
    (announce or _print)(url)
    if opener is not None:
        webbrowser.open(opener)
    await server.serve(sockets=[sock])


def _print(url: str) -> None:
    print(url, flush=True)
    base = url.split("?", 1)[0]
    print(f"maxmem browse: serving {base} to you only: open the address above, which carries this "
          "run's token (Ctrl-C stops)", file=sys.stderr, flush=True)
