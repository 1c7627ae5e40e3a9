"""Commands for sharing memory: sync folder (between your own machines), and through
PostgreSQL: sync postgres, sync status, sync search.

Each parses, calls one function of maxmem.sync, and prints. The DSN comes from --dsn,
MAXMEM_PG_DSN, or `dsn` under [sync.postgres] in the config file; its password is
never printed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from ..config import default_config_path
from ..sync import folder, pgconnect, pgpush, pgsearch, pgstatus
from .common import (
    State,
    emit,
    filter_options,
    filters_from,
    json_option,
    min_relevance_option,
    nothing_relevant,
    pass_state,
    print_hits,
    say,
)

DSN_HELP = "libpq URL or key=value string (default: MAXMEM_PG_DSN, then [sync.postgres] dsn)."


def _dsn(state: State, dsn: str | None) -> str:
    return pgconnect.resolve_dsn(dsn, state.config)


@click.group()
def sync() -> None:
    """Share memory between your own machines (a synced folder) or between agents
    (PostgreSQL + pgvector).

    `sync folder DIR`: each machine writes its changes, encrypted, into a folder your
    sync tool already shares, and merges the others'. `sync postgres`: each agent
    keeps its brain.db and pushes it to one database; `sync search` then ranks every
    agent's memories together.
    """


def _given_path(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """A path the user typed; an empty one ("") is refused, not read as the current folder."""
    if value is not None and not value.strip():
        raise click.BadParameter("is empty: give a path")
    return None if value is None else Path(value)


@sync.command("folder")
@click.argument("directory", required=False, type=click.Path(file_okay=False), callback=_given_path)
@click.option("--key-file", type=click.Path(dir_okay=False), callback=_given_path,
              help="Join with this copy of another machine's sync.key (copied into the config folder).")
@click.option("--repack", is_flag=True,
              help="Also repack this machine's files now: new files hold the memories it wrote as they are "
                   "and its forgets; the old ones, with the text edits replaced, are deleted. Done on its own "
                   "when more than half of its records are out of date.")
@json_option
@pass_state
def sync_folder(state: State, directory: Path | None, key_file: Path | None, repack: bool, as_json: bool) -> None:
    """Exchange changes with your other machines through DIR, a folder your sync tool
    shares (Syncthing, Dropbox, iCloud Drive, a network share). Encrypted with
    sync.key in the config folder, made on first use; a second machine joins with a
    copy of it (--key-file). DIR is recorded as [sync.folder] dir, so the scheduled
    tick syncs from then on; without DIR, the recorded folder. Safe to re-run.

    Exits 1 when a file could not be applied (unreadable, from a newer maxmem); nothing
    of it is applied, everything else is. A damaged file, or a record that is not
    what the format holds, is quarantined (sync status and doctor name it) and the
    rest applied; a record stamped ahead of this machine's clock waits for it.
    """
    settings = folder.FolderSettings.from_config(state.config, os.environ, directory)
    brain = state.brain()  # the embedder names the vectors that can travel; sync never embeds
    had_key = settings.key_path.exists()
    report = folder.sync(brain, settings, key_file=key_file, repack=repack or None)
    if not had_key and key_file is None and settings.key_path.exists():
        report.notes.append(
            f"made a new sync key: {settings.key_path}. Your other machines need a copy of it to read this "
            "folder: copy it to each privately (not through the synced folder) and run there  maxmem sync "
            f"folder {settings.folder} --key-file COPY ; keep a copy safe: without it the folder cannot be read")
    if directory is not None:
        config_path = state.config.config_path or default_config_path(os.environ)
        if folder.record_folder(config_path, directory.expanduser().resolve()):
            report.notes.append(f"recorded in {config_path}: [sync.folder] dir = {directory.expanduser().resolve()}")
    emit(report.to_dict(), as_json, lambda r: [report.summary()])
    if not as_json:
        for line in report.lines():
            say(f"maxmem: {line}", err=True)
    if report.failures:
        sys.exit(1)


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
    """Push the changes since the last run to PostgreSQL (safe to re-run, e.g. from cron).

    Exits 1 with one line if PostgreSQL is down, refuses the login or the connection
    drops; nothing is lost, and the next run continues where this one stopped.
    """
    url = _dsn(state, dsn)
    brain = state.brain(embedder="none")  # pushing reads stored vectors; no model needed
    report = pgpush.push(brain, url, agent=agent, batch_size=batch_size)  # logs its notices as warnings
    emit(report.to_dict(), as_json, lambda r: [report.summary()])


@sync.command("status")
@click.option("--dsn", help=DSN_HELP)
@json_option
@pass_state
def sync_status(state: State, dsn: str | None, as_json: bool) -> None:
    """Each machine's last file in the synced folder, and the cursor, backlog and last
    run of each database this brain pushes to."""
    chosen = dsn or state.config.sync_postgres.dsn
    brain = state.brain(embedder="none", create=False)
    found = pgstatus.status(brain, chosen)
    machines = folder.status(brain)
    emit([*(m.to_dict() for m in machines), *(s.to_dict() for s in found)], as_json,
         lambda rows: [*folder.machines_text(machines), *_status_lines(rows[len(machines):], bool(machines))])


def _status_lines(rows: list[dict[str, Any]], folder_synced: bool = False) -> Iterable[str]:
    if not rows and not folder_synced:
        yield "never synced: run  maxmem sync folder DIR  (your own machines) or  maxmem sync postgres --dsn URL"
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
@min_relevance_option
@json_option
@pass_state
def sync_search(state: State, query: str, dsn: str | None, limit: int, mode: str, include_superseded: bool,
                min_relevance: float | None, as_json: bool, **filters: Any) -> None:
    """Search every agent's memories in PostgreSQL, ranked and judged as local search.

    The same rank score (0.7 vector + 0.3 keyword), candidate pool and recency, from your
    config's weights and [search] table; each line starts with the hit's relevance, and
    only relevant hits are listed, as in  maxmem search."""
    url = _dsn(state, dsn)
    chosen = filters_from(state, include_superseded=include_superseded, **filters)
    hits, plan = pgsearch.search(state.brain(create=False), url, query, limit=limit, mode=mode, filters=chosen,
                                 min_relevance=min_relevance)
    if not hits and not as_json and (nothing := nothing_relevant(plan)):
        say(nothing)
        return
    print_hits(query, hits, plan, as_json, show_agent=True)


COMMANDS = [sync]
