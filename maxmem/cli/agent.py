"""Commands for agents: work tracking (observe, resolve, active, timeline,
ensure-observation), compaction (save-context, brief), plain-English queries, MCP.
Each parses, calls one function of work / compaction / brief / nlquery, prints."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from .. import compaction, work
from ..brief import build_brief
from ..clock import Clock
from ..errors import InvalidInput
from ..search import nlquery
from .common import (
    COUNT,
    State,
    emit,
    json_option,
    memory_line,
    pass_state,
    read_file,
    read_stdin,
    say,
    session_option,
    split_tags,
)

# -- work tracking ---------------------------------------------------------------

@click.command()
@click.argument("type")
@click.argument("content")
@click.option("-t", "--title")
@click.option("-i", "--importance", type=float, default=0.5, show_default=True, help="0 to 1.")
@click.option("--tag", "tags", multiple=True, help="A tag (repeat, or comma-separated).")
@click.option("--ongoing", is_flag=True, help="Open work: shows in `maxmem active` until resolved.")
@click.option("--started", help='When the work began: "2 days ago", "yesterday", an ISO time.')
@session_option("The session to file it under.")
@json_option
@pass_state
def observe(state: State, type: str, content: str, title: str | None, importance: float,
            tags: tuple[str, ...], ongoing: bool, started: str | None, session_id: str | None,
            as_json: bool) -> None:
    """Record an observation of TYPE (project, decision, failure, lesson, …)."""
    brain = state.brain()
    when = nlquery.parse_when(started, brain.clock, state.local_timezone()) if started is not None else None
    memory = work.observe(brain, type, content, title=title, importance=importance,
                      tags=split_tags(tags), ongoing=ongoing, started=when,
                      session_id=session_id)
    emit(memory.to_dict(), as_json, lambda d: [
        f"observed #{d['id']} ({d['kind']}, {d['status']}"
        + (f", started {d['started_at'][:16].replace('T', ' ')}" if d["started_at"] else "") + ")"
    ])


@click.command()
@click.argument("id_or_uid")
@click.option("-t", "--title", help="A new title.")
@click.option("--content", help="How it was resolved (appended to the memory).")
@json_option
@pass_state
def resolve(state: State, id_or_uid: str, title: str | None, content: str | None,
            as_json: bool) -> None:
    """Mark a piece of work resolved: sets resolved_at and keeps how long it was open."""
    memory = work.resolve(state.brain(), id_or_uid, title=title, content=content)
    hours = work.duration_hours(memory) or 0.0
    emit({**memory.to_dict(), "hours_open": round(hours, 2)}, as_json,
         lambda d: [f"resolved #{d['id']} after {work.format_hours(hours)}"])


@click.command()
@click.option("--min-importance", type=float, help="Only work at least this important (0 to 1).")
@click.option("-n", "--limit", default=100, show_default=True)
@json_option
@pass_state
def active(state: State, min_importance: float | None, limit: int, as_json: bool) -> None:
    """Open work (ongoing, or active with a start time), most important first."""
    open_work = work.active(state.brain(create=False), min_importance=min_importance, limit=limit)
    emit([w.to_dict() for w in open_work], as_json, lambda _: [
        f"{memory_line(w.memory)}  — open {work.format_hours(w.hours_open)}" for w in open_work
    ] or ["no open work"])


@click.command()
@click.option("--days", default=30, show_default=True, help="How far back.")
@json_option
@pass_state
def timeline(state: State, days: int, as_json: bool) -> None:
    """What was started, recorded and resolved day by day (not raw conversation)."""
    tz = state.local_timezone()
    events = work.timeline(state.brain(create=False), days=days)

    def text(_: Any) -> Iterable[str]:
        day = None
        for e in events:
            at = work.local(e.at, tz)
            if at[:10] != day:
                day = at[:10]
                yield day
            what = f"{e.memory.title} — " if e.memory.title else ""
            body = " ".join(e.memory.content.split())
            body = body if len(body) <= 100 else body[:99] + "…"
            extra = ""
            if e.event == "resolved":
                extra = f" (open {work.format_hours(e.to_dict()['hours_open'])})"
            yield f"  {at[11:]} {e.event:<8} #{e.memory.id} {e.memory.kind}: {what}{body}{extra}"
        if day is None:
            yield f"nothing in the last {days} days"

    emit([e.to_dict() for e in events], as_json, text)


@click.command("ensure-observation")
@click.option("--project", help="The project's name.")
@click.option("--from-task", "task", help="Derive the project name from a task description.")
@click.option("--location", help="Where the work lives (a path, a URL).")
@click.option("--assigned-by", help="Who asked for it.")
@click.option("--key-details", help="What matters about it.")
@click.option("--next-steps", help="What to do next.")
@session_option("The session to file it under.")
@json_option
@pass_state
def ensure_observation(state: State, project: str | None, task: str | None,
                       location: str | None, assigned_by: str | None, key_details: str | None,
                       next_steps: str | None, session_id: str | None, as_json: bool) -> None:
    """Create the project's observation from a template unless it already exists."""
    if bool(project) == bool(task):
        raise InvalidInput("give either --project NAME or --from-task TEXT")
    name = project or work.project_from_task(task or "")
    result = work.ensure_observation(state.brain(), name, location=location, assigned_by=assigned_by,
                    key_details=key_details, next_steps=next_steps, session_id=session_id)
    emit(result.to_dict(), as_json, lambda _: [result.describe()])


# -- compaction hooks ------------------------------------------------------------

@click.command("save-context")
@click.option("--file", "path", type=click.Path(dir_okay=False, path_type=Path),
              help="Read the JSON document from this file instead of standard input.")
@json_option
@pass_state
def save_context(state: State, path: Path | None, as_json: bool) -> None:
    """Store a session's exchanges, tool calls and observations (before compaction).

    Reads {"session_id", "agent", "exchanges": [...], "observations": [...]} as JSON
    from standard input or --file; saving the same document twice stores nothing twice.
    """
    if path is not None:
        raw = read_file(path)
    else:
        if sys.stdin.isatty():
            raise InvalidInput("pipe the JSON document on standard input, or pass --file")
        raw = read_stdin()
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise InvalidInput("not a save-context document: its JSON is nested too deeply") from None
    report = compaction.save_context(state.brain(), data)
    emit(report.to_dict(), as_json, lambda _: [report.describe()])


@click.command()
@session_option("The current session: its latest exchanges too.")
@click.option("--budget-tokens", type=COUNT, default=None,
              help="Size limit of the whole brief, fence included (4 bytes of UTF-8 a token; default 2000).")
@json_option
@pass_state
def brief(state: State, session_id: str | None, budget_tokens: int | None, as_json: bool) -> None:
    """Print the boot brief an agent reads after compaction or at session start.

    Sections in a fixed order (core, work in progress, daily notes, the current session,
    important in the last day), each memory once, fenced after a one-line preface so
    the agent tells stored notes from instructions."""
    budget = budget_tokens if budget_tokens is not None else state.config.brief.budget_tokens
    brief = build_brief(state.brain(create=False), session_id=session_id, budget_tokens=budget,
                        tz=state.local_timezone())
    if as_json:
        emit(brief.to_dict(), True)
    else:
        say(brief.text, nl=False)


# -- plain-English queries ---------------------------------------------------------

@click.command()
@click.argument("question")
@click.option("--explain", is_flag=True, help="Show the interpretation and the SQL; run nothing.")
@json_option
@pass_state
def query(state: State, question: str, explain: bool, as_json: bool) -> None:
    """Ask in plain English, e.g. "high-importance unresolved projects from last week"."""
    tz = state.local_timezone()
    if explain:
        interp = nlquery.interpret(question, Clock(), tz=tz)
        steps = nlquery.explain(interp)
        data = {**interp.to_dict(), "sql": [{"step": w, "sql": s, "params": p} for w, s, p in steps]}
        emit(data, as_json, lambda _: [f"interpreted as: {interp.describe()}",
                                       *interp.notes,
                                       *(f"{w}:\n  {s}\n  params: {json.dumps(p, ensure_ascii=False)}"
                                         for w, s, p in steps)])
        return
    interp = nlquery.interpret(question, Clock(), tz=tz)  # a question it cannot read: exit 2 first
    result = nlquery.answer(state.brain(create=False), interp)
    if as_json:
        emit(result.to_dict(), True)
        return
    say(f"interpreted as: {result.interpretation.describe()}")
    for note in result.interpretation.notes:
        say(f"note: {note}")
    if not result.memories:
        say("no memories found")
    for rank, memory in enumerate(result.memories, start=1):
        score = f"{result.scores[rank - 1]:.3f}  " if result.scores else ""
        say(f"{rank:>2}. {score}{memory_line(memory)}")


# -- MCP -------------------------------------------------------------------------

@click.command()
@pass_state
def mcp(state: State) -> None:
    """Serve this brain to an agent over the Model Context Protocol (stdio).

    Tools for every agent capability, the resources memory://brief, memory://core and
    memory://{id}, and prompts; see docs/mcp.md."""
    from ..mcp import serve  # the mcp SDK is an optional extra: loaded only to serve

    serve(state.brain(), state.local_timezone())


COMMANDS = [observe, resolve, active, timeline, ensure_observation, save_context, brief, query, mcp]
