"""`maxmem setup`: wire maxmem into the agents and schedulers on this machine.

    from maxmem.wiring import Install, find_maxmem, plan, run
    ctx = Install.from_config(config, os.environ, find_maxmem(sys.argv[0], sys.executable))
    p = plan("claude-code", ctx)            # what would change: p.diff(), p.steps, p.notes
    run(p, ctx)                             # write it (backups, manifest); run what it can

One module per target (claude_code, codex, openclaw, schedulers for cron, systemd
and launchd); `files` holds what they share: plans, diffs, JSON, atomic writes,
backups and the manifest that lets `--uninstall` restore a file byte for byte.
Every target is idempotent: planning again after a run gives no change.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..hooks.warm import stop_servers
from . import claude_code, codex, openclaw, schedulers
from .files import Change, Plan, WiringError, apply, originals, which
from .install import Install, find_maxmem

__all__ = ["TARGETS", "Install", "Outcome", "Plan", "WiringError", "commands", "detect", "find_maxmem",
           "inactive", "outdated", "plan", "problems", "run", "unplan"]


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
    "claude-code": Target("claude-code", "hooks in settings.json, the MCP server in ~/.claude.json",
                          claude_code.plan, claude_code.unplan, claude_code.commands, claude_code.detect),
    "codex": Target("codex", "the MCP server and hooks in config.toml", codex.plan, codex.unplan,
                    codex.commands, codex.detect),
    "openclaw": Target("openclaw", "the memory plugin (memory slot), the skill", openclaw.plan,
                       openclaw.unplan, openclaw.commands, openclaw.detect),
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
AGENTS = ("claude-code", "codex", "openclaw")


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
    if uninstall and p.target in ("claude-code", "codex", "openclaw"):
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


def inactive(ctx: Install) -> list[tuple[str, str]]:
    """(level, message) for agent wiring that is written but not active: Codex hooks not
    trusted yet or the hooks feature off, Claude Code's hooks disabled."""
    out: list[tuple[str, str]] = []
    for module in (claude_code, codex):
        try:
            out.extend(module.inactive(ctx))
        except (WiringError, OSError, ValueError):
            continue
    return out


def outdated(ctx: Install) -> list[tuple[str, str]]:
    """(level, message) for agent wiring an older maxmem wrote, in words it has renamed
    since: it works as it is, and setup rewrites it."""
    try:
        return claude_code.outdated(ctx)
    except (WiringError, OSError, ValueError):
        return []
