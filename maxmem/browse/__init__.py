"""maxmem browse: a local web page to look at, search and tend brain.db.

Datasette (the SQLite ecosystem's browser) serves the tables, keyword search, JSON and
CSV export and read-only SQL; the maxmem plugin (plugin.py) adds maxmem's own pages
over the Brain API. Installed with the `browse` extra: pip install 'maxmem[browse]'.
"""

from __future__ import annotations

from .server import DEFAULT_PORT, build, check_sqlite, listen, serve

__all__ = ["DEFAULT_PORT", "build", "check_sqlite", "listen", "serve"]
