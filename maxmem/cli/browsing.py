"""`maxmem browse`: a local web UI over brain.db (maxmem.browse, Datasette)."""

from __future__ import annotations

import click

from ..errors import MissingDependency
from .common import State, pass_state


@click.command("browse")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port on 127.0.0.1 (0: any free port).")
@click.option("--open", "open_browser", is_flag=True,
              help="Open the page in the web browser (through a private file: the token stays off command lines).")
@click.option("--read-only", is_flag=True, help="Look only: refuse pin, edit, supersede, forget.")
@pass_state
def browse(state: State, port: int, open_browser: bool, read_only: bool) -> None:
    """Look at, search and tend brain.db in a web page on 127.0.0.1 (Datasette).

    Prints the address to open, with this run's token, then serves until Ctrl-C:
    a request without the token (or the cookie the browser trades it for) gets
    403, from other users of this machine too. maxmem's pages (search with
    explain, a memory and its history, timeline, charts, jobs) sit beside
    Datasette's tables, keyword search, JSON/CSV export and read-only SQL.
    Needs the browse extra: pip install 'maxmem[browse]'.
    """
    try:
        from ..browse import serve  # datasette is an optional extra
    except ImportError:
        raise MissingDependency("datasette (maxmem browse)", "browse") from None
    # No Brain here: the server holds Datasette's SQLite, the Brain has its own process.
    serve(state.config, port=port, open_browser=open_browser, read_only=read_only,
          embedder=state.embedder)


COMMANDS = [browse]
