"""`maxmem setup [TARGET]`: wire maxmem into an agent or a scheduler (maxmem.wiring).

Parses, plans with maxmem.wiring, prints the diff (--dry-run) or writes it, and lists
what the user still has to do.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from ..agents import AGENTS as RECORDS
from ..agents import agent_named
from ..config import Config
from ..importers import survey
from ..inert import one_line
from ..mcp_start import prime
from ..wiring import AGENTS, TARGETS, Install, WiringError, detect, find_maxmem, plan, run, unplan
from ..wiring.files import unwritable
from ..wiring.schedulers import activation_problem, working_scheduler
from .common import State, emit, json_option, pass_state

MCP_MISSING = ("the MCP server was left out: this maxmem has no mcp SDK. Install it with  "
               "pipx inject maxmem 'mcp>=2.3'  (or reinstall with the mcp extra:  pipx install --force "
               "'maxmem[local,mcp]' ) and run this setup again")


@click.command()
@click.argument("target", required=False, type=click.Choice(list(TARGETS)))
@click.option("--dry-run", is_flag=True, help="Print the diff of what would change; write nothing.")
@click.option("--uninstall", is_flag=True, help="Remove what setup added (restoring files it alone changed).")
@click.option("--no-mcp", is_flag=True,
              help=f"{', '.join(a.name for a in RECORDS if a.mcp_option)}: the hooks only, no MCP server entry.")
@click.option("--maxmem", "maxmem_path", type=click.Path(dir_okay=False, path_type=Path),
              help="The maxmem executable to write (default: the one running now).")
@click.option("--openclaw-profile", help="openclaw: the profile whose state dir to use.")
@click.option("--openclaw-workspace", type=click.Path(file_okay=False, path_type=Path),
              help="openclaw: install the skill in this workspace.")
@json_option
@pass_state
def setup(state: State, target: str | None, dry_run: bool, uninstall: bool, no_mcp: bool,
          maxmem_path: Path | None, openclaw_profile: str | None, openclaw_workspace: Path | None,
          as_json: bool) -> None:
    """Wire maxmem into TARGET: an agent (claude-code, codex, openclaw) or a scheduler
    (cron, systemd, launchd: a 15-minute tick of  maxmem daemon --once --if-due).

    Writes absolute paths (the maxmem running now, --db, --config), merges into the
    existing files, backs each one up first, and prints the steps left to you. Running
    it again changes nothing. Without TARGET: what is on this machine and what setup
    would do for each (nothing is written).
    """
    if maxmem_path is not None:
        if not (maxmem_path.is_file() and os.access(maxmem_path, os.X_OK)):
            raise click.UsageError(f"--maxmem {maxmem_path}: not an executable file")
        argv: tuple[str, ...] = (os.path.abspath(maxmem_path),)
    else:
        argv = find_maxmem(sys.argv[0], sys.executable)
    ctx = Install.from_config(state.config, os.environ, argv)
    options: dict[str, Any] = {}
    # The MCP server needs the mcp extra in the maxmem that setup writes (this one,
    # unless --maxmem names another): without it the agent would show a failed server.
    sdk_missing = maxmem_path is None and importlib.util.find_spec("mcp") is None
    record = agent_named(target) if target else None
    mcp_option = record is not None and record.mcp_option
    if mcp_option:
        options["mcp"] = not no_mcp and not (sdk_missing and not uninstall)
    if target == "openclaw":
        options.update(profile=openclaw_profile, skill_dir=openclaw_workspace)
    if target is None:
        _survey(ctx, as_json, state.config)
        return
    p = unplan(target, ctx, **options) if uninstall else plan(target, ctx, **options)
    if mcp_option and not no_mcp and sdk_missing and not uninstall:
        p.steps.append(MCP_MISSING)
    blocked = None if uninstall else activation_problem(target, ctx)
    if dry_run:
        if blocked is not None:
            p.notes.append(f"{blocked}: setup {target} would stop here and write nothing; "
                           f"here use  {working_scheduler(ctx, target)}")
        emit(p.to_dict(), as_json, lambda d: _dry_lines(p, ctx, uninstall))
        return
    if blocked is not None:
        raise WiringError(f"setup {target}: {blocked}: nothing was written; here use  "
                          f"{working_scheduler(ctx, target)}")
    refused = unwritable([c.path for c in p.changes if not c.crontab] + ([ctx.state / "setup"] if p.changes else []))
    if refused is not None:
        raise WiringError(f"setup {target}: {refused}: nothing was written")
    outcome = run(p, ctx, uninstall=uninstall)
    if options.get("mcp") and not uninstall and prime(ctx.argv("mcp"), ctx.env):
        outcome.notes.append("started the MCP server once: its first answers are kept, so an agent gets maxmem's "
                             "tools at once, before the server has loaded")
    emit(outcome.to_dict(), as_json, lambda d: _done_lines(outcome, uninstall, ctx))


def _dry_lines(p: Any, ctx: Any, uninstall: bool) -> Iterable[str]:
    """What setup --dry-run would do, a line each (a path's line break shown as \\x0a), and
    the diff of the files it would change."""
    lines = [f"maxmem setup {p.target}{' --uninstall' if uninstall else ''} --dry-run: " + (
        f"{len(p.changes)} file(s) would change" if p.changes else "nothing to change")]
    if not uninstall:
        lines.append(f"maxmem: {' '.join(ctx.maxmem)} --db {ctx.db}")
    yield from map(one_line, lines)
    diff = p.diff()
    if diff:
        yield diff.rstrip("\n")
    yield from map(one_line, [*(f"note: {n}" for n in p.notes),
                              *(f"would run: {' '.join(argv)}" for argv in p.before_commands + p.after_commands),
                              *(f"to do: {s}" for s in p.steps)])


def _done_lines(outcome: Any, uninstall: bool, ctx: Any) -> Iterable[str]:
    """What setup did, a line each (a path's line break shown as \\x0a)."""
    return map(one_line, _done(outcome, uninstall, ctx))


def _done(outcome: Any, uninstall: bool, ctx: Any) -> Iterable[str]:
    if not outcome.changed:
        yield f"maxmem setup {outcome.target}: nothing to change" + (
            "" if uninstall else " (already set up)")
    for path in outcome.changed:
        yield f"{'removed from' if uninstall else 'wrote'} {ctx.tilde(path)}"
    if outcome.backups:
        yield f"backups: {', '.join(ctx.tilde(b) for b in outcome.backups)}"
    yield from (f"ran: {r}" for r in outcome.ran)
    yield from (f"note: {n}" for n in outcome.notes)
    if outcome.steps:
        yield "left for you to do:"
        yield from (f"  - {s}" for s in outcome.steps)


def _survey(ctx: Any, as_json: bool, config: Config) -> None:
    found = detect(ctx)
    report: dict[str, Any] = {"maxmem": list(ctx.maxmem), "db": str(ctx.db), "targets": {}}
    report["imports"] = [{**asdict(f), "command": f.command} for f in survey(config, ctx.env)]
    for name, what in found.items():
        entry: dict[str, Any] = {"found": what}
        if what:
            try:
                p = plan(name, ctx)
                entry.update(files=[str(c.path) for c in p.changes], steps=p.steps)
            except WiringError as exc:
                entry["error"] = str(exc)
            blocked = activation_problem(name, ctx)
            if blocked is not None:
                entry["error"] = f"{blocked}: it would not run here"
        report["targets"][name] = entry
    report["scheduler"] = working_scheduler(ctx)

    def lines(_: Any) -> Iterable[str]:
        yield f"maxmem: {' '.join(ctx.maxmem)} (brain.db: {ctx.db})"
        for name, entry in report["targets"].items():
            if not entry["found"]:
                yield f"  {name:<12} not found"
            elif "error" in entry:
                yield f"  {name:<12} {entry['found']}: {entry['error']}"
            elif entry["files"]:
                yield (f"  {name:<12} {entry['found']}: would change {len(entry['files'])} file(s): "
                       f"maxmem setup {name}  (see first: --dry-run)")
            else:
                yield f"  {name:<12} {entry['found']}: already set up"
        agents = [n for n in AGENTS if report["targets"][n]["found"]]
        if not agents:
            yield f"no agent found ({', '.join(f'{a.title} {a.home}' for a in RECORDS)})"
        yield f"one scheduler is enough; the one that works here:  {report['scheduler']}"
        if report["imports"]:
            yield ("memory these agents keep themselves, to import (again: only what is new is added; "
                   "--dry-run shows it first):")
        for f in report["imports"]:
            yield f"  {f['source']:<12} {f['root']}: {f['items']} notes in {f['files']} file(s): {f['command']}"
    emit(report, as_json, lines)


COMMANDS = [setup]
