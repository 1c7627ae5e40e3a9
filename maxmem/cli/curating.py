"""Commands that keep memory clean: commit triggers, retention, supersede, core review,
history. Each parses, calls one function of triggers / retention / review (or one
Brain method), and prints."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import click

from .. import review
from ..errors import InvalidInput
from ..retention import archives, report, run, stats
from ..triggers.commit import commit as commit_trigger
from ..triggers.commit import sweep
from ..triggers.detect import detect
from ..triggers.rules import load_rules
from .common import State, emit, json_option, memory_line, pass_state, read_stdin, session_option, split_tags


def _memory_json(m: Any) -> dict[str, Any]:
    return m.to_dict()


# -- the six mandatory commit triggers ---------------------------------------------

@click.command()
@click.argument("trigger", metavar="TRIGGER")
@click.argument("text")
@click.option("-t", "--title")
@click.option("--tag", "--tags", "tags", multiple=True, help="A tag (repeat, or comma-separated).")
@click.option("-i", "--importance", type=float, help="0 to 1 (default: [triggers] importance, 0.9).")
@click.option("-p", "--project", help="The project it belongs to (metadata.project).")
@session_option("The session it came from.")
@json_option
@pass_state
def commit(state: State, trigger: str, text: str, title: str | None, tags: tuple[str, ...],
           importance: float | None, project: str | None, session_id: str | None, as_json: bool) -> None:
    """Commit a decision, milestone, preference, failure, lesson or remember to core.

    TRIGGER is one of those six words; TEXT says what was decided and why, what
    shipped, what the user wants, what broke (cause and fix), what to do differently,
    or what to remember. A near-identical core memory is updated instead of duplicated.
    """
    result = commit_trigger(state.brain(), trigger, text, title=title, tags=split_tags(tags),
                            importance=importance, project=project, session_id=session_id,
                            agent=state.config.agent)
    emit({"action": result.action, "memory": _memory_json(result.memory)}, as_json,
         lambda d: [f"{d['action']} #{d['memory']['id']} core/{trigger}"])


@click.group()
def triggers() -> None:
    """Find the six commit triggers in conversation text."""


@triggers.command("detect")
@click.argument("text", required=False)
@click.option("--role", type=click.Choice(["user", "assistant"]), default="user", show_default=True)
@json_option
@pass_state
def triggers_detect(state: State, text: str | None, role: str, as_json: bool) -> None:
    """Show which sentences of TEXT (or stdin) fire a trigger; stores nothing."""
    if text is None:
        text = read_stdin()
    found = detect(text, role=role, rules=load_rules(state.config.triggers))
    emit([{"trigger": d.trigger, "rule": d.rule, "text": d.text} for d in found], as_json,
         lambda rows: [f"{r['trigger']:<10} {r['text']}  [{r['rule']}]" for r in rows] or ["no trigger found"])


@triggers.command("sweep")
@click.option("--since", default="1d", show_default=True,
              help="How far back: 1d, 12h, 2w, or a date (2026-11-01).")
@json_option
@pass_state
def triggers_sweep(state: State, since: str, as_json: bool) -> None:
    """Commit the triggers found in recent conversation memories (idempotent)."""
    result = sweep(state.brain(), since=since)
    emit(result, as_json, lambda d: [
        f"triggers: scanned {d['scanned']} conversation memories since {d['since'][:16]}, "
        f"{d['detections']} triggers: {d['added']} added, {d['updated']} updated, {d['unchanged']} unchanged"
    ])


# -- retention ---------------------------------------------------------------------

@click.command()
@click.option("--apply", "apply_", is_flag=True, help="Archive and delete (default: a dry run).")
@click.option("--stats", "show_stats", is_flag=True, help="Growth per category per month instead.")
@click.option("--months", default=6, show_default=True, help="With --stats: how many months.")
@click.option("--oldest", default=5, show_default=True, help="Dry run: how many of the oldest to list.")
@click.option("--repair-archives", is_flag=True,
              help="Rewrite archives an interrupted run left cut short, keeping their complete lines.")
@json_option
@pass_state
def retain(state: State, apply_: bool, show_stats: bool, months: int, oldest: int, repair_archives: bool,
           as_json: bool) -> None:
    """Expire memories past their category's retention (a dry run unless --apply).

    core and project forever, daily 90 days, conversation 30 days ([retention] in the
    config), counted in the jobs' days ([retention] timezone, America/New_York by default);
    pinned and trigger memories never expire. --apply writes the expired rows,
    batch by batch, to gzipped JSONL archives next to brain.db, each written whole and
    checked before its rows are deleted (restore with  maxmem import FILE...); a run
    that was interrupted is finished by the next one.
    """
    if sum((show_stats, apply_, repair_archives)) > 1:
        raise InvalidInput("--stats, --apply and --repair-archives do not go together: run them one after the other")
    if oldest < 0:
        raise InvalidInput("--oldest must be 0 or more")
    brain = state.brain()
    if repair_archives:
        repaired = archives.repair_archives(brain)
        emit(repaired, as_json, lambda rows: [
            f"repaired {r['path']}: {r['lines']} complete lines kept, {r['lost_bytes']} bytes lost" for r in rows
        ] or ["every archive is whole"])
    elif show_stats:
        emit(stats.growth(brain, months), as_json, report.growth_lines)
    elif apply_:
        emit(run.apply(brain), as_json, lambda r: [report.summary(r)])
    else:
        emit(stats.plan(brain, oldest=oldest), as_json, report.plan_lines)


# -- curation ----------------------------------------------------------------------

@click.command()
@click.argument("old")
@click.argument("new")
@json_option
@pass_state
def supersede(state: State, old: str, new: str, as_json: bool) -> None:
    """Mark memory OLD superseded by NEW; search leaves OLD out (unless --include-superseded)."""
    brain = state.brain()
    old_memory = brain.supersede(_id(old), _id(new))
    new_memory = brain.get(_id(new))
    emit({"old": _memory_json(old_memory), "new": _memory_json(new_memory)}, as_json,
         lambda d: [f"#{d['old']['id']} superseded by #{d['new']['id']}"])


def _id(value: str) -> str:
    return value.strip().lstrip("#")


@click.group()
def core() -> None:
    """The core memories: budget and consolidation."""


@core.command("review")
@click.option("-n", "--limit", default=10, show_default=True, help="Candidates per list.")
@click.option("--threshold", type=float, help="Similarity for near-duplicates ([curation] review_threshold).")
@json_option
@pass_state
def core_review(state: State, limit: int, threshold: float | None, as_json: bool) -> None:
    """List consolidation candidates: near-duplicates, superseded, never recalled, least important."""
    result = review.core_review(state.brain(create=False), limit=limit, threshold=threshold)
    data = {
        **result,
        "near_duplicates": [
            {"similarity": p["similarity"], "ids": p["ids"], "memories": [_memory_json(m) for m in p["memories"]]}
            for p in result["near_duplicates"]
        ],
        **{k: [_memory_json(m) for m in result[k]] for k in ("superseded", "never_recalled", "lowest_importance")},
    }
    emit(data, as_json, lambda _: _review_lines(result))


def _review_lines(result: dict[str, Any]) -> Iterable[str]:
    budget = result["budget"]
    yield (f"core: {budget['count']}/{budget['max_count']} memories, "
           f"about {budget['tokens']}/{budget['max_tokens']} tokens" + ("  OVER BUDGET" if budget["over"] else ""))
    yield f"near-duplicates (similarity ≥ {result['threshold']:g}; merge with  maxmem supersede OLD NEW):"
    for pair in result["near_duplicates"] or ():
        a, b = pair["memories"]
        yield f"  {pair['similarity']:.3f}  {memory_line(a)}"
        yield f"         {memory_line(b)}"
    if not result["near_duplicates"]:
        yield "  none"
    for key, title in (
        ("superseded", "superseded (delete with  maxmem forget ID):"),
        ("never_recalled", f"never returned by a search in {result['never_recalled_days']} days:"),
        ("lowest_importance", "lowest importance:"),
    ):
        yield title
        for memory in result[key] or ():
            yield f"  {memory_line(memory)}  (importance {memory.importance:g}, recalled {memory.recall_count}×)"
        if not result[key]:
            yield "  none"


@click.command()
@click.argument("id_or_uid")
@json_option
@pass_state
def history(state: State, id_or_uid: str, as_json: bool) -> None:
    """Show a memory's versions from the change log (deleted memories too)."""
    versions = state.brain(create=False).history(_id(id_or_uid))

    def text(rows: list[dict[str, Any]]) -> Iterable[str]:
        for v in rows:
            m = v["memory"]
            if v["op"] == "delete":
                what = (f"deleted by retention, archived in {m.get('archive')}" if m.get("expired")
                        else "forgotten" if m.get("forgotten") else "deleted")
            elif not m:  # forgetting erased this version's data; its date stays
                what = ("created" if v is rows[0] else "changed") + " (erased when forgotten)"
            else:
                what = "created" if v is rows[0] else "changed " + ", ".join(v["changed"] or ["nothing"])
            yield f"v{v['version']} {v['at']} {what}"
            if m and v["op"] != "delete" and (v is rows[0] or {"content", "status"} & set(v["changed"])):
                content = " ".join(str(m.get("content", "")).split())
                yield f"    [{m.get('status')}] {content[:200]}"
    emit(versions, as_json, text)


COMMANDS = [commit, triggers, retain, supersede, core, history]
