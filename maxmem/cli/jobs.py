"""Commands for the scheduled jobs: capture, daemon and jobs. Each parses, calls one
function of maxmem.capture / maxmem.jobs.daemon, and prints."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from ..capture import CaptureReport, agents_folders, run_capture
from ..capture.model import FORMATS
from ..capture.openclaw_store import is_store
from ..clock import Clock
from ..config import state_dir
from ..files import same_file
from ..jobs.daemon import default_jobs, listing, run_daemon, run_due, run_job
from ..jobs.runs import last_runs
from ..store.db import Database
from .common import Progress, State, emit, json_option, pass_state, say


@click.command()
@click.option("--path", "paths", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="A transcript file or folder to read instead of the agents' folders (repeat); "
                   "an OpenClaw store (openclaw-agent.sqlite) too.")
@click.option("--format", "fmt", type=click.Choice(FORMATS),
              help="Format of --path (default: guessed from each file).")
@click.option("--dry-run", is_flag=True, help="Show what would be read; write nothing.")
@json_option
@pass_state
def capture(state: State, paths: tuple[Path, ...], fmt: str | None, dry_run: bool, as_json: bool) -> None:
    """Read new transcript lines (OpenClaw, Claude Code, Codex, …) into conversation memories.

    Without --path, reads the agents' own folders (~/.openclaw, ~/.claude, ~/.codex, or
    OPENCLAW_STATE_DIR, CLAUDE_CONFIG_DIR, CODEX_HOME, or [capture] in the config),
    OpenClaw's SQLite transcript stores included (--dry-run lists where it looked).
    Only complete new lines are read; running it again adds nothing twice.
    Memories are stored keyword-searchable at once, without waiting on the embedding
    model:  maxmem embed  gives them their vectors (the scheduled tick runs it right
    after capture). On a terminal a progress bar counts files, turns, memories and
    secrets redacted. Exits 1 if a file could not be read (the others are still captured).
    """
    if fmt and not paths:
        raise click.UsageError("--format applies to --path: give the file or folder too")
    settings = agents_folders(state.config.capture, os.environ)

    def shown(so_far: CaptureReport, done: int, total: int) -> None:
        bar(done, total, turns=so_far.new_turns, memories=so_far.memories, secrets=so_far.redactions)

    with Progress("capture", unit="file", enabled=not as_json) as bar:
        report = run_capture(state.brain(), paths=list(paths) or None, format=fmt, dry_run=dry_run,
                             settings=settings, progress=shown)

    def text(data: Any) -> Iterable[str]:
        if dry_run and report.roots:
            yield "looked in " + ", ".join(report.roots)
        if dry_run:
            for d in report.details:
                if d.status != "unchanged":
                    unit = "rows" if is_store(d.path) else "bytes"  # an OpenClaw store: rows read
                    yield (f"{d.status:10} {d.path} [{d.format}] {unit} {d.start}–{d.end}: "
                           f"{d.new_turns} new turns, {d.memories} memories"
                           + (f" ({d.note})" if d.note else ""))
        yield report.summary()

    emit(report.to_dict(), as_json, text)
    failed = [d for d in report.details if d.status == "error"]
    for detail in failed:
        say(f"maxmem: error: {detail.path}: {detail.note}", err=True)
    if failed:
        sys.exit(1)


@click.command()
@click.option("--once", is_flag=True, help="Run every job once now and exit.")
@click.option("--if-due", is_flag=True,
              help="With --once: only the jobs due now from their last success in brain.db "
                   "(for a scheduler's hourly or 15-minute tick).")
@click.option("--job", "only", multiple=True, help="With --once: only this job (repeat).")
@json_option
@pass_state
def daemon(state: State, once: bool, if_due: bool, only: tuple[str, ...], as_json: bool) -> None:
    """Run the scheduled jobs (capture every 2 h, …) until stopped, for machines without cron.

    `daemon --once --if-due` is what `maxmem setup cron|systemd|launchd` schedules:
    each tick runs only what is due (retention once a day of the jobs' zone, America/New_York
    unless [retention] timezone says otherwise, after 03:00 there,
    a missed night caught up at the next tick); `maxmem jobs` lists the jobs. Log lines
    go to stderr, or to --log-file. Stop it with Ctrl-C or SIGTERM.
    """
    jobs = default_jobs(state.config, os.environ)
    if (if_due or only or as_json) and not once:
        raise click.UsageError("--if-due, --job and --json go with --once")
    if only:
        names = {j.name.split(":")[0] for j in jobs} | {j.name for j in jobs}
        unknown = sorted(set(only) - names)
        if unknown:
            raise click.UsageError(f"unknown job {', '.join(unknown)}: known: "
                                   f"{', '.join(j.name for j in jobs)}")
        jobs = [j for j in jobs if j.name in only or j.name.split(":")[0] in only]
    if once and (if_due or only or as_json):
        outcomes = run_due(jobs, state.config, lock_dir=state_dir(os.environ) / "locks", if_due=if_due)
        # Under the cron script stdout goes into the --log-file, which has each job's line already.
        logged = [h.baseFilename for h in logging.getLogger("maxmem").handlers if isinstance(h, logging.FileHandler)]
        if as_json or not any(same_file(sys.stdout, name) for name in logged):
            emit([vars(o) for o in outcomes], as_json,
                 lambda _: [f"{o.job}: {o.status}: {o.detail}" for o in outcomes
                            if o.status != "not-due" or not if_due])
        failed = [o.job for o in outcomes if o.status == "failed"]
        if failed:
            say(f"maxmem: error: failed: {', '.join(failed)} (see the log)", err=True)
            sys.exit(1)
        return
    if once:
        failed = []
        for job in jobs:
            summary = run_job(job, state.config)
            if summary is None:
                failed.append(job.name)
            else:
                say(summary)
        if failed:
            say(f"maxmem: error: failed: {', '.join(failed)} (see the log)", err=True)
            sys.exit(1)
        return
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    say(f"maxmem daemon: {', '.join(job.name for job in jobs)} (Ctrl-C to stop)", err=True)
    try:
        run_daemon(jobs, stop, config=state.config)
    except KeyboardInterrupt:
        stop.set()


@click.command("jobs")
@json_option
@pass_state
def jobs_list(state: State, as_json: bool) -> None:
    """List the scheduled jobs: when each runs and in which zone, its last run, when it is next due.

    These are the jobs the scheduler's tick (`daemon --once --if-due`) and `maxmem daemon`
    run; a daily time is read in the zone shown, not the machine's. Reads brain.db
    (its recorded runs) without writing to it.
    """
    path = Path(state.config.db_path).expanduser()
    runs: dict[str, dict[str, Any]] = {}
    if path.exists():
        db = Database(path, busy_timeout_ms=state.config.busy_timeout_ms, readonly=True, key=state.config.key)
        try:
            runs = last_runs(db)
        finally:
            db.close()
    rows = listing(state.config, os.environ, runs, Clock().now())
    emit(rows, as_json, lambda _: job_lines(rows))


def job_lines(rows: list[dict[str, Any]]) -> list[str]:
    table = [("JOB", "WHEN", "ZONE", "LAST RUN", "NEXT DUE")]
    for row in rows:
        table.append((row["name"], row["when"], row["zone"] or "-", last_text(row), next_text(row)))
    widths = [max(len(line[i]) for line in table) for i in range(4)]
    return ["  ".join([*(cell.ljust(width) for cell, width in zip(line, widths, strict=False)), line[4]])
            for line in table]


def last_text(row: dict[str, Any]) -> str:
    if not row["last_run"]:
        return "never"
    return f"{row['last_run'][:16]}Z {'ok' if row['last_ok'] else 'failed'}"


def next_text(row: dict[str, Any]) -> str:
    due = row["next_due"]
    if due is None:
        return f"off: {row['off']}"
    if due["at"] is None:
        return "every tick"
    return "now" if due["due"] else f"{due['at'][:16]}Z"


COMMANDS = [capture, daemon, jobs_list]
