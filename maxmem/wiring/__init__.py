"""`maxmem setup`: wire maxmem into the agents and schedulers on this machine.

    from maxmem.wiring import Install, find_maxmem, plan, run
    ctx = Install.from_config(config, os.environ, find_maxmem(sys.argv[0], sys.executable))
    p = plan("claude-code", ctx)            # what would change: p.diff(), p.steps, p.notes
    run(p, ctx)                             # write it (backups, manifest); run what it can

One module per agent (its record in maxmem.agents names it: claude_code, codex,
openclaw), each with the same five functions (`AgentSetup`), and `schedulers` for
cron, systemd and launchd; `files` holds what they share: plans, diffs, JSON, atomic
writes, backups and the manifest that lets `--uninstall` restore a file byte for
byte; `hookjson` the hooks JSON of Claude Code and Codex. Every target is
idempotent: planning again after a run gives no change.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..agents import AGENTS as RECORDS
from ..errors import InvalidInput
from ..hooks.warm import stop_servers
from . import claude_code, codex, openclaw, schedulers
from .files import Change, Plan, WiringError, apply, originals, which
from .install import Install, find_maxmem

__all__ = ["AGENTS", "SETUP", "TARGETS", "Install", "Outcome", "Plan", "WiringError", "agent_checks", "commands",
           "detect", "find_maxmem", "plan", "problems", "run", "unplan"]


class AgentSetup(Protocol):
    """What `maxmem setup AGENT` and doctor need of an agent's module: what setup and its
    --uninstall would change (their options are the agent's own), the maxmem commands
    its wiring runs, what of the agent is on this machine, and doctor's checks."""

    @property
    def plan(self) -> Callable[..., Plan]: ...
    @property
    def unplan(self) -> Callable[..., Plan]: ...
    @property
    def commands(self) -> Callable[[Install], list[list[str]]]: ...
    @property
    def detect(self) -> Callable[[Install], str | None]: ...
    @property
    def checks(self) -> Callable[[Install], list[tuple[str, str]]]: ...


# Each agent's setup module, by its record's name (tests/test_agents.py: one for every record).
SETUP: dict[str, AgentSetup] = {"claude-code": claude_code, "codex": codex, "openclaw": openclaw}


@dataclass(frozen=True)
class Target:
    name: str
    summary: str
    plan: Callable[..., Plan]
    unplan: Callable[..., Plan]
    commands: Callable[[Install], list[list[str]]]
    detect: Callable[[Install], str | None]


def _scheduler_present(name: str) -> Callable[[Install], str | None]:
    def detect(ctx: Install) -> str | None:

        if name == "launchd":
            return "launchd (macOS)" if ctx.platform == "darwin" else None
        if name == "systemd":
            return "systemd user timers" if ctx.platform.startswith("linux") and (
                which("systemctl", ctx.env) or Path("/run/systemd/system").is_dir()) else None
        return "cron" if which("crontab", ctx.env) else None
    return detect


TARGETS: dict[str, Target] = {
    **{a.name: Target(a.name, a.setup, SETUP[a.name].plan, SETUP[a.name].unplan, SETUP[a.name].commands,
                      SETUP[a.name].detect) for a in RECORDS},
    "cron": Target("cron", f"a {schedulers.TICK_MINUTES}-minute tick in the user crontab",
                   lambda ctx, **_: schedulers.cron_plan(ctx), lambda ctx, **_: schedulers.cron_unplan(ctx),
                   schedulers.cron_commands, _scheduler_present("cron")),
    "systemd": Target("systemd", f"a user timer ticking every {schedulers.TICK_MINUTES} minutes",
                      lambda ctx, **_: schedulers.systemd_plan(ctx), lambda ctx, **_: schedulers.systemd_unplan(ctx),
                      schedulers.systemd_commands, _scheduler_present("systemd")),
    "launchd": Target("launchd", f"a LaunchAgent ticking every {schedulers.TICK_MINUTES} minutes",
                      lambda ctx, **_: schedulers.launchd_plan(ctx), lambda ctx, **_: schedulers.launchd_unplan(ctx),
                      schedulers.launchd_commands, _scheduler_present("launchd")),
}
AGENTS = tuple(a.name for a in RECORDS)


def _target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:

        raise InvalidInput(f"unknown target {name!r}: use one of {', '.join(TARGETS)}") from None


def plan(name: str, ctx: Install, **options: Any) -> Plan:
    """What `maxmem setup NAME` would change (nothing is written)."""
    return _target(name).plan(ctx, **options)


def unplan(name: str, ctx: Install, **options: Any) -> Plan:
    """What `maxmem setup NAME --uninstall` would change: maxmem's parts taken out, and
    each file still exactly as setup left it put back as it was, byte for byte."""
    result = _target(name).unplan(ctx, **options)
    current = {("crontab" if c.crontab else str(c.path)): c.before for c in result.changes}
    restore = originals(name, ctx.state, current)
    result.changes = [
        Change(c.path, c.before, restore[key], c.mode, c.crontab) if key in restore else c
        for c, key in ((c, "crontab" if c.crontab else str(c.path)) for c in result.changes)
    ]
    result.changes = [c for c in result.changes if c.changed]
    return result


def detect(ctx: Install) -> dict[str, str | None]:
    """target -> what was found on this machine (None: not found)."""
    return {name: target.detect(ctx) for name, target in TARGETS.items()}


def commands(ctx: Install) -> dict[str, list[list[str]]]:
    """target -> the maxmem commands its current wiring runs (for `maxmem doctor`)."""
    out: dict[str, list[list[str]]] = {}
    for name, target in TARGETS.items():
        try:
            found = target.commands(ctx)
        except (WiringError, OSError, ValueError):
            found = []
        if found:
            out[name] = found
    return out


@dataclass
class Outcome:
    target: str
    changed: list[str] = field(default_factory=list)
    backups: list[str] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def run(p: Plan, ctx: Install, uninstall: bool = False, run_commands: bool = True) -> Outcome:
    """Write the plan (backing up each existing file first), then run the commands it can
    (systemctl --user, launchctl); a command that cannot run becomes a step for the user."""

    outcome = Outcome(p.target, notes=list(p.notes), steps=list(p.steps))
    for argv in p.before_commands:
        _try(argv, ctx, outcome, run_commands, quiet=True)
    outcome.backups = apply(p, ctx.state, ctx.now, which("crontab", ctx.env), uninstall=uninstall, home=ctx.home)
    outcome.changed = ["crontab" if c.crontab else str(c.path) for c in p.changes]
    if p.changes or uninstall:
        for argv in p.after_commands:
            _try(argv, ctx, outcome, run_commands)
    if uninstall and p.target in AGENTS:
        stopped = stop_servers(ctx.state)  # the prompt hook's recall servers go with the hook
        if stopped:
            outcome.notes.append(f"stopped {stopped} recall server(s) the prompt hook had started")
    return outcome


def _try(argv: list[str], ctx: Install, outcome: Outcome, allowed: bool, quiet: bool = False) -> None:

    text = " ".join(argv)
    program = which(argv[0], ctx.env)
    reachable = program is not None and (argv[0] != "systemctl" or bool(ctx.env.get("XDG_RUNTIME_DIR")))
    if not allowed or not reachable or program is None:
        if not quiet:
            outcome.steps.append(f"Run:  {text}")
        return
    try:
        done = subprocess.run([program, *argv[1:]], capture_output=True, text=True, timeout=60,
                              env=dict(ctx.env))
    except (OSError, subprocess.SubprocessError) as exc:
        outcome.steps.append(f"Run:  {text}  (setup could not: {exc})")
        return
    if done.returncode == 0:
        outcome.ran.append(text)
    elif not quiet:
        reason = (done.stderr or done.stdout).strip().splitlines()[:1]
        outcome.steps.append(f"Run:  {text}  (setup's try failed: {reason[0] if reason else done.returncode})")


def old_script_problem(script: str) -> tuple[str, str]:
    """A crontab line running a per-job script of an older version: it fails once the script is gone."""
    path = Path(script)
    gone = not (path.is_file() and os.access(path, os.X_OK))
    return ("fail" if gone else "warn",
            f"cron runs {script}, a per-job script maxmem no longer ships{' (it is gone)' if gone else ''}: "
            "run  maxmem setup cron  to replace it with the one tick (it says what to do for doctor and triggers)")


def problems(ctx: Install) -> list[tuple[str, str]]:
    """(level, message) for wiring that points at a maxmem (or job script) that does not
    exist ("fail"), or that starts a bare `maxmem` a short PATH may not find ("warn")."""

    out: list[tuple[str, str]] = []
    for name, argvs in commands(ctx).items():
        for argv in argvs:
            if name == "cron" and len(argv) > 1 and Path(argv[1]).name in schedulers.OLD_SCRIPTS:
                out.append(old_script_problem(argv[1]))
                continue
            programs = [argv[0]] + [a for a in argv[1:2] if a.endswith("-cron")]
            for program in programs:
                path = Path(program)
                if not path.is_absolute():
                    out.append(("warn", (f"{name} runs a bare {program!r}: cron and services have a short "
                                         f"PATH without it; run  maxmem setup {name}  to write the absolute path")))
                elif not (path.is_file() and os.access(path, os.X_OK)):
                    out.append(("fail", (f"{name} runs {program}, which does not exist (moved or uninstalled): "
                                         f"run  maxmem setup {name}  again with the maxmem you use")))
    return out


def agent_checks(ctx: Install) -> list[tuple[str, str]]:
    """(level, message) for agent wiring that is written but will not run (Codex hooks not
    trusted yet, Claude Code's hooks disabled, …), or that an older maxmem wrote: each
    agent module's `checks`."""
    out: list[tuple[str, str]] = []
    for name in AGENTS:
        try:
            out.extend(SETUP[name].checks(ctx))
        except (WiringError, OSError, ValueError):
            continue
    return out
