"""The `maxmem` command's entry point: the prompt hook's short path, else the CLI.

`maxmem hook user-prompt` runs on every prompt an agent sends, in a new process each
time, and the user waits for it. So before brain.db's modules are loaded at all, this
module asks the warm recall server (hooks/warm.py) and prints its answer. Only when none
answers does it do the work itself (hooks.events, without the CLI: click and the
command modules stay unloaded), then starts the server for the next prompt. Any other
command goes straight to the CLI.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import mcp_start
from .agents import DEFAULT
from .config import MAX_HOOK_BUDGET_SECONDS, PROMPT_HOOK_BUDGET_SECONDS, brain_path, load_config, state_dir
from .errors import MaxmemError
from .hooks import harness_named, read_input
from .hooks.log import append_hook_log, process_seconds
from .hooks.warm import ask, code_stamp, socket_path, start_server

WARM_SHARE = 0.4  # of the hook's budget, the most it waits for the server before working alone
MCP_GREETING_SECONDS = 3.0  # the most `maxmem mcp` waits for a client's first requests before loading the SDK


@dataclass(frozen=True)
class PromptHook:
    """`maxmem [--db P] [--config P] [--embedder E] hook user-prompt [--harness H] [--budget S]
    [--budget-tokens N]`, the options as given."""

    db: Path | None = None
    config: Path | None = None
    embedder: str | None = None
    harness: str = DEFAULT
    budget_seconds: float | None = None
    budget_tokens: int | None = None


GLOBAL_OPTIONS = {"--db": "db", "--config": "config", "--embedder": "embedder"}
HOOK_OPTIONS = {"--harness": "harness", "--budget": "budget_seconds", "--budget-tokens": "budget_tokens"}


def prompt_hook_args(argv: Sequence[str]) -> PromptHook | None:
    """The prompt hook's options, or None for any other command line (the CLI's to read)."""
    values: dict[str, str] = {}
    words = list(argv)
    try:
        at = words.index("hook")
    except ValueError:
        return None
    if words[at + 1:at + 2] != ["user-prompt"]:
        return None
    for part, options in ((words[:at], GLOBAL_OPTIONS), (words[at + 2:], HOOK_OPTIONS)):
        pairs = _pairs(part)
        if pairs is None or any(key not in options for key, _ in pairs):
            return None
        values.update({options[key]: value for key, value in pairs})
    try:
        budget = float(values["budget_seconds"]) if "budget_seconds" in values else None
        hook = PromptHook(
            db=Path(values["db"]) if "db" in values else None,
            config=Path(values["config"]) if "config" in values else None,
            embedder=values.get("embedder"), harness=harness_named(values.get("harness", DEFAULT)),
            budget_seconds=budget,
            budget_tokens=int(values["budget_tokens"]) if "budget_tokens" in values else None)
    except ValueError:
        return None  # the CLI logs what is wrong with the option
    if budget is not None and not 0 < budget <= MAX_HOOK_BUDGET_SECONDS:  # nan and inf too
        return None
    return hook


def _pairs(words: Sequence[str]) -> list[tuple[str, str]] | None:
    pairs = []
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if "=" in word and word.startswith("--"):
            key, value = word.split("=", 1)
        elif rest:
            key, value = word, rest.pop(0)
        else:
            return None
        pairs.append((key, value))
    return pairs


def warm(hook: PromptHook, text: str, started: float) -> bool:
    """Whether the warm server answered (and its answer was printed and logged)."""
    try:
        db_path = brain_path(os.environ, hook.config, hook.db)
    except MaxmemError:
        return False  # the CLI logs the config's error
    folder = state_dir(os.environ)
    path = socket_path(folder, db_path, hook.config, os.environ)
    budget = hook.budget_seconds if hook.budget_seconds is not None else PROMPT_HOOK_BUDGET_SECONDS
    wait = max(0.2, budget * WARM_SHARE)
    request = {"code": code_stamp(), "harness": hook.harness, "stdin": text, "budget_tokens": hook.budget_tokens,
               "wait": wait * 0.9}
    answer = ask(path, request, wait)
    if answer is None:
        return False
    if answer["stdout"]:
        sys.stdout.write(answer["stdout"] + "\n")
        sys.stdout.flush()
    took = time.monotonic() - started
    line = (f"hook user-prompt --harness {hook.harness}: {answer.get('line', '')} "
            f"(warm, {took:.2f} s, budget {budget:g} s)")
    append_hook_log(folder, line, bool(answer.get("ok", True)))
    return True


def cold(hook: PromptHook, text: str, started: float) -> None:
    """The hook's work on the stdin already read, without the CLI (click and the command
    modules are not loaded: a cold hook pays only for what recall needs); then a server
    for the next prompt."""
    from .hooks.events import run_hook  # loaded only when no server answered: brain.db's modules, the model
    from .redact import redact

    try:
        try:
            config = load_config(path=hook.config, db_path=hook.db, embedder=hook.embedder)
        except MaxmemError as exc:
            ok, stdout, line = False, "", f"hook user-prompt --harness {hook.harness}: failed: {exc}"
        else:
            result = run_hook("user-prompt", hook.harness, text, config, os.environ, hook.budget_seconds,
                              hook.budget_tokens, started=started)
            ok, stdout, line = result.ok, result.stdout, result.line
        if stdout:
            sys.stdout.write(stdout + "\n")
            sys.stdout.flush()
        append_hook_log(state_dir(os.environ), redact(line)[0], ok)
    finally:
        offer_server(hook)


def offer_server(hook: PromptHook) -> None:
    """Start the recall server unless [recall] warm_minutes is 0 or there is no brain.db."""
    try:
        config = load_config(path=hook.config, db_path=hook.db, embedder=hook.embedder)
        if config.recall.warm_minutes <= 0:
            return
        if Path(config.db_path).expanduser().exists():
            start_server(Path(config.db_path), hook.config, os.environ)
    except (MaxmemError, OSError):
        return


def watchdog(hook: PromptHook) -> threading.Timer:
    """The hard stop: whatever the hook is inside of (a C call the CLI's alarm cannot
    interrupt), at its budget and a half second it logs one line and exits 0, having
    printed nothing more (the default budget leaves room below the harness's timeout).
    Its time counts from the process's start, interpreter and imports included."""
    budget = hook.budget_seconds if hook.budget_seconds is not None else PROMPT_HOOK_BUDGET_SECONDS

    def stop() -> None:
        line = f"hook user-prompt --harness {hook.harness}: failed: over its time budget of {budget:g} s: stopped"
        append_hook_log(state_dir(os.environ), line, False)
        os._exit(0)

    timer = threading.Timer(max(0.1, max(0.5, budget) + 0.5 - (process_seconds() or 0.0)), stop)
    timer.daemon = True
    timer.start()
    return timer


def is_mcp(argv: Sequence[str]) -> bool:
    """`maxmem [--db P] [--config P] [--embedder E] mcp`: the MCP server, started by a client."""
    words = list(argv)
    if not words or words[-1] != "mcp":
        return False
    pairs = _pairs(words[:-1])
    return pairs is not None and all(key in GLOBAL_OPTIONS for key, _ in pairs)


def mcp(argv: Sequence[str]) -> None:
    """The MCP server, its first answers given before the SDK is loaded (mcp_start)."""
    front = mcp_start.start(state_dir(os.environ))
    if front is not None:
        front.wait_greeted(MCP_GREETING_SECONDS)
    from .cli import main as cli_main

    try:
        cli_main(list(argv))
    finally:
        if front is not None:
            sys.stdout.flush()
            front.close()


def main() -> None:
    argv = sys.argv[1:]
    if is_mcp(argv):
        mcp(argv)
        return
    hook = prompt_hook_args(argv)
    if hook is None:
        from .cli import main as cli_main  # every other command: the CLI as it is

        cli_main(argv)
        return
    started = time.monotonic() - (process_seconds() or 0.0)  # the harness has waited since the fork
    watchdog(hook)
    text = read_input()
    if not warm(hook, text, started):
        cold(hook, text, started)
    sys.exit(0)
