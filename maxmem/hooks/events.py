"""`maxmem hook EVENT`: what an agent's hook runs, within a time budget, failing open.

The harness (Claude Code, Codex, OpenClaw's maxmem plugin) sends one JSON object
on stdin: session_id, transcript_path, cwd, and for SessionStart the source.

  session-start  prints the boot brief (brief.build_brief's fenced text), within a
                 token budget and the harness's cap: Claude Code and Codex get
                 {"hookSpecificOutput": {"hookEventName": "SessionStart",
                 "additionalContext": …}} (Claude caps it at 10,000 characters, Codex
                 at ~2,500 tokens); OpenClaw plain text. A missing brain.db is not
                 created: nothing is printed.
  user-prompt    prints the few memories relevant to the prompt (recall.recall: at most
                 [recall] max_memories, within [recall] budget_tokens, none shown before in
                 the session, nothing for a prompt of no substance), in the same JSON shape
                 with "UserPromptSubmit"; OpenClaw plain text. It waits at most
                 PROMPT_LOCK_SECONDS for a lock: the user is waiting for the answer.
  pre-compact,   capture only that transcript (run_capture with paths=[it]), with the
  stop,          embedder off and a deadline on the capture loop itself: files and
  session-end    windows are taken in order and committed one by one, and once the
                 budget is spent the cursor keeps the place for next time. They print
                 nothing (Codex's Stop must print JSON or nothing). OpenClaw 2026.8.1
                 and later name a session key, not a file: that session from the
                 agent's SQLite store (capture.openclaw_store). Once answered
                 (`after_answer`), what they stored gets its vectors from the recall
                 server, which holds the model (started if none runs), or a background
                 `maxmem embed`; the scheduled tick embeds whatever is left.

`run_hook` never raises: every failure becomes a HookResult with ok=False and a
one-line reason for the hook log; the CLI exits 0 whatever happens (exit 2 from a
PreCompact hook would block compaction, any other code shows an error to the user).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..agents import agent
from ..brain import Brain
from ..brief import build_brief
from ..capture import Source, agents_folders, only_agent, run_capture, sessions_named
from ..clock import Clock
from ..config import PROMPT_HOOK_BUDGET_SECONDS, Config, local_timezone, state_dir
from ..memory import BYTES_PER_TOKEN
from ..settings import MIN_BRIEF_TOKENS, RecallSettings
from . import HARNESSES, harness_named
from .recall import has_substance, query_of, recall
from .shown import add_shown, shown_ids
from .warm import server_running, start_embedding, start_server

log = logging.getLogger("maxmem")

EVENTS = ("session-start", "user-prompt", "pre-compact", "stop", "session-end")
# Claude Code shares ~1.5 s among SessionEnd hooks (raised to the longest timeout set,
# 5 s for ours); Codex allows at most 3 s. The last capture there gets less.
SESSION_END_SECONDS = 3.0
CLOSE_RESERVE = 0.15  # of the budget, kept for committing, the brief and closing
HOOK_WINDOW_BYTES = 256 << 10  # commit a big transcript in small windows, so the deadline can bite
PROMPT_LOCK_SECONDS = 1.0
EMBED_AFTER_SECONDS = 50.0  # the background embed after a capture, without a recall server


@dataclass(frozen=True)
class HookInput:
    session_id: str | None = None
    transcript_path: Path | None = None
    cwd: str | None = None
    source: str | None = None
    prompt: str | None = None

    @classmethod
    def parse(cls, text: str) -> HookInput:
        """The fields maxmem uses; anything unreadable is simply absent."""
        try:
            data = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError:
            data = {}
        if not isinstance(data, dict):
            data = {}

        def text_of(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) and value.strip() else None

        path = text_of("transcript_path")
        return cls(session_id=text_of("session_id"), transcript_path=Path(path).expanduser() if path else None,
                   cwd=text_of("cwd"), source=text_of("source"), prompt=text_of("prompt"))


@dataclass(frozen=True)
class HookResult:
    ok: bool
    stdout: str  # what the harness reads (context), often ""
    line: str  # one line for the hook log
    pending: int = 0  # memories waiting for a vector after a capture (for after_answer)


def budget_from(config: Config, given: float | None, event: str | None = None) -> float:
    """The hook's budget in seconds: --budget, else [hook] budget_seconds (the prompt hook
    at most PROMPT_HOOK_BUDGET_SECONDS)."""
    if given is not None:
        return max(0.5, float(given))
    budget = max(0.5, config.hook.budget_seconds)
    return min(budget, PROMPT_HOOK_BUDGET_SECONDS) if event == "user-prompt" else budget


def run_hook(event: str, harness: str, stdin_text: str, config: Config, env: Mapping[str, str],
             budget_seconds: float | None = None, budget_tokens: int | None = None,
             clock: Clock | None = None, started: float | None = None) -> HookResult:
    """Do what `maxmem hook EVENT --harness HARNESS` does; never raises."""
    started = time.monotonic() if started is None else started
    harness = harness_named(harness)
    label = f"hook {event} --harness {harness}"
    try:
        if event not in EVENTS:
            return HookResult(False, "", f"{label}: unknown event (known: {', '.join(EVENTS)})")
        if harness not in HARNESSES:
            return HookResult(False, "", f"{label}: unknown harness (known: {', '.join(HARNESSES)})")
        budget = budget_from(config, budget_seconds, event)
        if event == "session-end":
            budget = min(budget, SESSION_END_SECONDS)
        deadline = started + budget * (1 - CLOSE_RESERVE)
        data = HookInput.parse(stdin_text)
        # A hook must not sit out a long lock wait: at most half its budget.
        lock_wait = PROMPT_LOCK_SECONDS if event == "user-prompt" else budget / 2
        config = config.with_(busy_timeout_ms=int(min(config.busy_timeout_ms, lock_wait * 1000)))
        pending = 0
        if event == "session-start":
            stdout, detail = _brief(harness, data, config, env, budget_tokens, clock)
        elif event == "user-prompt":
            stdout, detail = _recall(harness, data, config, env, budget_tokens, clock)
        else:
            stdout, (detail, pending) = "", _capture(event, harness, data, config, env, deadline, clock)
        took = time.monotonic() - started
        return HookResult(True, stdout, f"{label}: {detail} ({took:.1f} s, budget {budget:g} s)", pending)
    except Exception as exc:  # fail open: the agent goes on, the log says why
        log.debug("%s failed", label, exc_info=True)
        reason = " ".join(str(exc).split()) or exc.__class__.__name__
        return HookResult(False, "", f"{label}: failed: {reason}"[:400])


def _capture(event: str, harness: str, data: HookInput, config: Config, env: Mapping[str, str],
             deadline: float, clock: Clock | None) -> tuple[str, int]:

    settings = agents_folders(config.capture, env)
    settings = replace(settings, window_bytes=min(settings.window_bytes, HOOK_WINDOW_BYTES))
    if event == "session-end":
        settings = replace(settings, settle_seconds=0.0)  # the session is over: flush what is held back
    paths: list[Path] | None
    sources: list[Source] | None = None
    if agent(harness).capture_all and not (data.transcript_path and data.transcript_path.is_file()):
        # The event names a conversation (OpenClaw 2026.8.1 and later: its key, not a file), or
        # nothing: the conversation named, from the agent's stores, else all of this agent's
        # transcripts (and no other agent's), in time order.
        settings = only_agent(settings, harness)
        named = [str(data.transcript_path) if data.transcript_path else None, data.session_id]
        sources = sessions_named(settings, harness, named) or None
        paths = None
    elif data.transcript_path is not None:
        if not data.transcript_path.is_file():
            return f"no transcript at {data.transcript_path} yet; nothing captured", 0
        paths = [data.transcript_path]
    else:
        return "no transcript_path on stdin; nothing captured", 0
    with Brain.open(config.db_path, embedder="none", config=config, clock=clock) as brain:
        report = run_capture(brain, paths=paths, format=harness if paths else None, sources=sources,
                             settings=settings, deadline=deadline, record_as=f"hook:{harness}")
    where = str(paths[0]) if paths else (f"{sources[0].path}#{sources[0].session}" if sources
                                         else f"the {agent(harness).title} sessions")
    return f"{report.summary()} [{where}]", report.embedding_pending


def after_answer(result: HookResult, config: Config, env: Mapping[str, str]) -> str | None:
    """Once the harness has the hook's answer: the memories a capture stored without a
    vector get one soon, with no scheduler — from the recall server (started if none
    runs: it holds the model and embeds between prompts), or, with [recall]
    warm_minutes = 0, from a background `maxmem embed` of EMBED_AFTER_SECONDS at most.
    What was started, for the log; None when nothing waits. Never raises."""
    if not result.pending or config.embedder == "none":
        return None
    db_path = Path(config.db_path).expanduser()
    try:
        if config.recall.warm_minutes > 0:
            if not server_running(state_dir(env), db_path, config.config_path):
                start_server(db_path, config.config_path, env)
            return f"{result.pending} memories to embed by the recall server"
        start_embedding(db_path, config.config_path, env, EMBED_AFTER_SECONDS)
        return f"{result.pending} memories to embed in the background"
    except OSError:
        return None


def _brief(harness: str, data: HookInput, config: Config, env: Mapping[str, str], budget_tokens: int | None,
           clock: Clock | None) -> tuple[str, str]:

    path = Path(config.db_path).expanduser()
    if not path.exists():
        return "", f"no brain.db at {path} yet; no brief"
    wanted = budget_tokens or config.brief.budget_tokens
    # The budget covers the whole fenced text in UTF-8 bytes / 4, and a character is
    # at least a byte: a brief of N tokens has at most 4 N characters.
    tokens = max(MIN_BRIEF_TOKENS, min(wanted, agent(harness).context_chars // BYTES_PER_TOKEN))
    with Brain.open(path, embedder="none", config=config, clock=clock, check_embedder=False) as brain:
        brief = build_brief(brain, session_id=data.session_id, budget_tokens=tokens, tz=local_timezone(config))
    text = brief.text
    ids = [i for section in brief.sections.values() for i in section]
    add_shown(state_dir(env), data.session_id, ids)
    return added_context(harness, "session-start", text), f"brief of {len(ids)} memories, {len(text)} characters"


def _recall(harness: str, data: HookInput, config: Config, env: Mapping[str, str], budget_tokens: int | None,
            clock: Clock | None) -> tuple[str, str]:

    path = Path(config.db_path).expanduser()
    if data.prompt is None:
        return "", "no prompt on stdin; nothing recalled"
    if not has_substance(query_of(data.prompt)):
        return "", "no question of substance in the prompt; nothing recalled"
    if not path.exists():
        return "", f"no brain.db at {path} yet; nothing recalled"
    settings = config.recall
    folder = state_dir(env)
    with Brain.open(path, config=config, clock=clock, create=False) as brain:
        stdout, line, ids = recall_context(brain, harness, data, folder, settings, budget_tokens)
    add_shown(folder, data.session_id, ids)
    return stdout, line


def recall_context(brain: Brain, harness: str, data: HookInput, folder: Path, settings: RecallSettings,
                   budget_tokens: int | None = None) -> tuple[str, str, tuple[int, ...]]:
    """What the user-prompt hook prints for `data` over an open brain, its log line and
    the ids printed (for the caller to add to what the session was shown, in `folder`,
    once the harness has them)."""
    if data.prompt is None:
        return "", "no prompt on stdin; nothing recalled", ()
    if budget_tokens is not None:
        settings = replace(settings, budget_tokens=budget_tokens)
    found = recall(brain, data.prompt, session_id=data.session_id, shown=shown_ids(folder, data.session_id),
                   settings=settings, tz=local_timezone(brain.config))
    return added_context(harness, "user-prompt", found.text), found.reason, found.ids


def added_context(harness: str, event: str, text: str) -> str:
    """What the harness reads as added context: nothing, plain text, or hookSpecificOutput
    JSON naming the agent's own event (its record's `output`)."""
    record = agent(harness)
    if not text or record.output == "plain":
        return text
    name = next(h.event for h in record.hooks if h.word == event)
    payload = {"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}
    return json.dumps(payload, ensure_ascii=False)


def describe(result: HookResult) -> dict[str, Any]:
    return {"ok": result.ok, "line": result.line, "stdout_chars": len(result.stdout)}
