"""`maxmem hook EVENT --harness H`: the command agents' hooks run (maxmem.hooks).

It always exits 0 and prints only what
the harness should read; what happened goes to one line in hook.log in maxmem's
state folder (~/.local/state/maxmem on Linux, ~/Library/Logs/maxmem on macOS).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any

import click

from ..agents import DEFAULT, listed
from ..config import MAX_HOOK_BUDGET_SECONDS, state_dir
from ..hooks import harness_named, read_input
from ..hooks.events import HookResult, after_answer, budget_from, run_hook
from ..hooks.log import append_hook_log
from ..redact import redact
from .common import COUNT, FiniteFloat, State, pass_state


class _OverBudget(Exception):
    def __str__(self) -> str:
        return "over its time budget: stopped (the next hook or capture goes on from the cursor)"


class _HookCommand(click.Command):
    """A hook's command line is written into the agent's settings: one it cannot read (a
    hand-edited --budget, an unknown option) is a FAIL line in hook.log and exit 0, never
    exit 2, which would block the user's prompt or the compaction."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            line = f"hook {' '.join(args)}: failed: {exc.format_message()}"
            append_hook_log(state_dir(os.environ), redact(line)[0], False)
            ctx.exit(0)


@click.command(cls=_HookCommand, context_settings={"ignore_unknown_options": True})
@click.argument("event")
@click.option("--harness", default=DEFAULT, show_default=True, help=f"The agent running the hook: {listed()}.")
@click.option("--budget", "budget_seconds", type=FiniteFloat(0, MAX_HOOK_BUDGET_SECONDS, min_open=True), default=None,
              help="Seconds it may take before it stops and prints nothing ([hook] "
                   "budget_seconds, default 10; user-prompt at most 4 unless given here).")
@click.option("--budget-tokens", type=COUNT, default=None,
              help="Size of what is printed: the session-start brief ([context] budget_tokens, default 2000) "
                   "or a prompt's recall ([recall] budget_tokens, default 400).")
@pass_state
def hook(state: State, event: str, harness: str, budget_seconds: float | None, budget_tokens: int | None) -> None:
    """Run an agent hook: session-start (print the brief), user-prompt (print the memories
    relevant to the prompt), pre-compact, stop, session-end (capture the current session's
    transcript). The harness gives the event's JSON on stdin.

    Always exits 0, within its time budget; failures are one line in hook.log.
    """
    started = time.monotonic()
    harness = harness_named(harness)  # `claude`: how older wiring spelt claude-code
    budget = budget_from(state.config, budget_seconds, event) if state.config is not None else 10.0

    def over(*_: Any) -> None:
        raise _OverBudget()

    # The deadline inside capture is what keeps to the budget; the alarm is the backstop
    # for anything else (a stuck file system): one second after the budget, give up.
    answered: HookResult | None = None
    previous = signal.signal(signal.SIGALRM, over) if hasattr(signal, "SIGALRM") else None
    if previous is not None:
        signal.setitimer(signal.ITIMER_REAL, budget + 1.0)
    try:
        text = read_input()
        if state.config_error is not None:
            line = f"hook {event} --harness {harness}: failed: {state.config_error}"
            ok, stdout = False, ""
        else:
            result = run_hook(event, harness, text, state.config, os.environ, budget_seconds, budget_tokens,
                              started=started)
            ok, stdout, line = result.ok, result.stdout, result.line
            answered = result
    except _OverBudget as exc:
        ok, stdout, line = False, "", f"hook {event} --harness {harness}: failed: {exc}"
    finally:
        if previous is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    if stdout:
        click.echo(stdout)
    sys.stdout.flush()  # the harness has its answer; what follows does not keep it waiting long
    started_after = after_answer(answered, state.config, os.environ) if answered and state.config else None
    if started_after:
        line += f"; {started_after}"
    append_hook_log(state_dir(os.environ), redact(line)[0], ok)
    sys.exit(0)


COMMANDS = [hook]
