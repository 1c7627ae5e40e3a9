"""Commands for sharing memory through PostgreSQL: sync postgres, sync status, sync search.

Each parses, calls one function of maxmem.sync, and prints. The DSN comes from --dsn,
MAXMEM_PG_DSN, or `dsn` under [sync.postgres] in the config file; its password is
never printed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import click

from ..sync import pgconnect, pgexport, pgsearch, pgstatus
from .common import State, emit, filter_options, filters_from, json_option, pass_state, print_hits

DSN_HELP = "libpq URL or key=value string (default: MAXMEM_PG_DSN, then [sync.postgres] dsn)."


def _dsn(state: State, dsn: str | None) -> str:
    return pgconnect.resolve_dsn(dsn, os.environ.get("MAXMEM_PG_DSN"), state.config)


@click.group()
def sync() -> None:
    """Share memory between agents through PostgreSQL (+ pgvector).

    Each agent keeps its brain.db and exports it to one database; `sync search`
    then ranks every agent's memories together.
    """


@sync.command("postgres")
@click.option("--dsn", help=DSN_HELP)
@click.option("--agent", help="This brain's agent name there (default: [sync.postgres] agent, "
                               "the configured agent, or the host name).")
@click.option("--batch-size", type=click.IntRange(1, 100_000),
              help="Changes per PostgreSQL transaction (default 500).")
@json_option
@pass_state
def sync_postgres(state: State, dsn: str | None, agent: str | None, batch_size: int | None,
                  as_json: bool) -> None:
    """Export the changes since the last run to PostgreSQL (safe to re-run, e.g. from cron).

    Exits 1 with one line if PostgreSQL is down, refuses the login or the connection
    drops; nothing is lost, and the next run continues where this one stopped.
    """
    url = _dsn(state, dsn)
    brain = state.brain(embedder="none")  # exporting reads stored vectors; no model needed
    report = pgexport.export(brain, url, agent=agent, batch_size=batch_size)  # logs its notices as warnings
    emit(report.to_dict(), as_json, lambda r: [report.summary()])


@sync.command("status")
@click.option("--dsn", help=DSN_HELP)
@json_option
@pass_state
def sync_status(state: State, dsn: str | None, as_json: bool) -> None:
    """Cursor, backlog and last run of each database this brain exports to."""
    chosen = dsn or os.environ.get("MAXMEM_PG_DSN") or state.config.section("sync.postgres").get("dsn")
    brain = state.brain(embedder="none", create=False)
    found = pgstatus.status(brain, str(chosen) if chosen else None)
    emit([s.to_dict() for s in found], as_json, lambda rows: _status_lines(rows))


def _status_lines(rows: list[dict[str, Any]]) -> Iterable[str]:
    if not rows:
        yield "never synced: run  maxmem sync postgres --dsn URL"
    for s in rows:
        yield f"{s['target']}: cursor #{s['cursor']}, backlog {s['backlog']} change(s)"
        if s["last_ok_at"]:
            yield (f"  last success {s['last_ok_at']}: {s['last_upserted']} upserted, "
                   f"{s['last_deleted']} deleted in {s['last_seconds']:.2f} s")
        elif not s["last_error"]:
            yield "  never synced"
        if s["last_error"]:
            yield f"  last error at {s['last_run_at']}: {s['last_error']}"


@sync.command("search")
@click.argument("query")
@click.option("--dsn", help=DSN_HELP)
@click.option("-n", "--limit", default=10, show_default=True, type=click.IntRange(1, 100_000))
@filter_options
@click.option("--mode", type=click.Choice(["hybrid", "keyword", "vector"]), default="hybrid",
              show_default=True)
@click.option("--include-superseded", is_flag=True, help="Also return superseded memories.")
@json_option
@pass_state
def sync_search(state: State, query: str, dsn: str | None, limit: int, mode: str, include_superseded: bool,
                as_json: bool, **filters: Any) -> None:
    """Search every agent's memories in PostgreSQL (0.7 vector + 0.3 keyword, as local search)."""
    url = _dsn(state, dsn)
    chosen = filters_from(state, include_superseded=include_superseded, **filters)
    hits, plan = pgsearch.search(state.brain(create=False), url, query, limit=limit, mode=mode, filters=chosen)
    print_hits(query, hits, plan, as_json, show_agent=True)


COMMANDS = [sync]
