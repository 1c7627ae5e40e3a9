"""Commands for memories one by one: remember, search, get, list, update,
forget, pin. Each parses, calls one Brain method (or the Markdown workspace), prints."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..errors import InvalidInput
from ..memory import CATEGORIES, STATUSES
from .common import (
    State,
    emit,
    filter_options,
    filters_from,
    fmt,
    json_option,
    memory_detail,
    memory_line,
    min_relevance_option,
    nothing_relevant,
    parse_metadata,
    pass_state,
    print_hits,
    read_stdin,
    say,
    session_option,
    split_tags,
)


@click.command()
@click.argument("content", required=False)
@click.option("-c", "--category", default="daily", show_default=True,
              type=click.Choice(CATEGORIES))
@click.option("-k", "--kind", default="note", show_default=True, help="note, decision, fact, task, …")
@click.option("-t", "--title")
@click.option("--tag", "tags", multiple=True, help="A tag (repeat, or comma-separated).")
@click.option("-i", "--importance", type=float, default=0.5, show_default=True, help="0 to 1.")
@click.option("--meta", multiple=True, help="Metadata key=value (repeat).")
@click.option("--created-at", help="When it happened (ISO-8601); default now.")
@session_option("The session to file it under.")
@click.option("--pin", is_flag=True, help="Never expires; first in the boot context.")
@json_option
@pass_state
def remember(state: State, content: str | None, category: str, kind: str, title: str | None,
        tags: tuple[str, ...], importance: float, meta: tuple[str, ...], created_at: str | None,
        session_id: str | None, pin: bool, as_json: bool) -> None:
    """Remember CONTENT (or standard input when CONTENT is - or absent)."""
    if content in (None, "-"):
        if sys.stdin.isatty():
            raise InvalidInput("give the text to remember, or pipe it on standard input")
        content = read_stdin().rstrip()  # the newline `echo` ends with is not content
    item = {"content": content, "category": category, "kind": kind, "title": title, "tags": split_tags(tags),
            "importance": importance, "metadata": parse_metadata(meta), "created_at": created_at,
            "session_id": session_id, "pinned": pin}
    stored = state.brain().remember_item({k: v for k, v in item.items() if v is not None})
    merged = stored.action == "updated"
    emit(stored.memory.to_dict(), as_json, lambda d: [
        f"updated #{d['id']} ({d['uid']}): it already said nearly this (see  maxmem history {d['id']})"
        if merged else f"remembered #{d['id']} ({d['uid']})"])


@click.command()
@click.argument("query")
@click.option("-n", "--limit", default=10, show_default=True)
@filter_options
@click.option("--mode", type=click.Choice(["hybrid", "keyword", "vector"]), default="hybrid",
              show_default=True, help="Rank by both (default), or by one side only.")
@click.option("--include-superseded", is_flag=True, help="Also return superseded memories.")
@click.option("--explain", is_flag=True, help="Show each hit's vector and keyword components.")
@min_relevance_option
@json_option
@pass_state
def search(state: State, query: str, limit: int, mode: str, include_superseded: bool,
           explain: bool, min_relevance: float | None, as_json: bool, **filters: Any) -> None:
    """Find the memories that best answer QUERY (0.7 vector + 0.3 keyword).

    Each line starts with the hit's relevance (0-1, one scale for every query); only
    relevant hits are listed, whatever --limit."""
    hits = state.brain(create=False).search(query, limit=limit, mode=mode, explain=explain, min_relevance=min_relevance,
                                filters=filters_from(state, include_superseded=include_superseded, **filters))
    plan = hits.plan
    if not hits and not as_json and (nothing := nothing_relevant(plan)):
        say(nothing)
        return

    def explain_line(hit: Any) -> str:
        e = hit.explain
        wv, wk = e.get("weights") or (0.0, 1.0)  # as the search fused this hit (search.hybrid.fuse)
        return (f"      rank score {hit.score:.3f} = vector {fmt(e.get('vector'))} (cosine {fmt(e.get('cosine'))}) × "
                f"{wv:g} + keyword {fmt(e.get('keyword'))} (bm25 {fmt(e.get('bm25'))}) × {wk:g}"
                + (f" − {e['penalty']:g} (a question)" if e.get("penalty") else "")
                + f"; relevance {fmt(hit.relevance)} (similarity {fmt(e.get('similarity'))}, "
                  f"cover {fmt(e.get('cover'))}, unknown {fmt(e.get('unknown'))}, lift {fmt(e.get('lift'))}, "
                  f"hub {fmt(e.get('hub'))}, off_topic {fmt(e.get('off_topic'))}, lead {fmt(e.get('lead'))})")

    print_hits(query, hits, plan, as_json, explain_line if explain else None)
    if explain and not as_json:
        say(f"FTS5 query: {plan.match or '(no keyword terms)'}; filters: {plan.where} {plan.params}; "
                   f"candidates: {plan.vector_candidates} vector, {plan.keyword_candidates} keyword")



@click.command()
@click.argument("ids", nargs=-1, required=True)
@json_option
@pass_state
def get(state: State, ids: tuple[str, ...], as_json: bool) -> None:
    """Show memories by id or uid.

    A memory a search of yours returned in the last five minutes makes that search a
    question for  maxmem tune  (its words redacted, kept in brain.db only)."""
    memories = state.brain(create=False).get_many(list(ids), track=True)
    if as_json:
        emit([m.to_dict() for m in memories] if len(ids) > 1 else memories[0].to_dict(), True)
        return
    for index, memory in enumerate(memories):
        if index:
            say("---")
        for line in memory_detail(memory):
            say(line)


@click.command("list")
@filter_options
@click.option("-n", "--limit", default=50, show_default=True)
@click.option("--offset", default=0)
@click.option("--order", type=click.Choice(["recent", "oldest", "importance", "updated"]),
              default="recent", show_default=True)
@click.option("--pinned", is_flag=True, default=None, help="Only pinned memories.")
@json_option
@pass_state
def list_(state: State, limit: int, offset: int, order: str, pinned: bool | None,
          as_json: bool, **filters: Any) -> None:
    """List memories, newest first, with the same filters as search."""
    chosen = filters_from(state, include_superseded=True, pinned=pinned or None, **filters)
    memories = state.brain(create=False).list(chosen, limit=limit, offset=offset, order=order)
    emit([m.to_dict() for m in memories], as_json,
         lambda _: [memory_line(m) for m in memories] or ["no memories"])



@click.command()
@click.argument("id_or_uid")
@click.option("--content")
@click.option("-t", "--title")
@click.option("-c", "--category", type=click.Choice(CATEGORIES))
@click.option("-k", "--kind")
@click.option("--tag", "tags", multiple=True, help="Replace the tags.")
@click.option("-i", "--importance", type=float)
@click.option("--status", type=click.Choice(STATUSES))
@click.option("--meta", multiple=True, help="Set metadata key=value (merged into the existing).")
@json_option
@pass_state
def update(state: State, id_or_uid: str, content: str | None, title: str | None,
           category: str | None, kind: str | None, tags: tuple[str, ...], importance: float | None,
           status: str | None, meta: tuple[str, ...], as_json: bool) -> None:
    """Change a memory; new content is re-embedded and the old version kept in history."""
    brain = state.brain()
    fields: dict[str, Any] = {k: v for k, v in {
        "content": content, "title": title, "category": category, "kind": kind,
        "importance": importance, "status": status, "tags": split_tags(tags),
    }.items() if v is not None}
    extra = parse_metadata(meta)
    if extra:
        fields["metadata"] = {**brain.get(id_or_uid).metadata, **extra}
    if not fields:
        raise InvalidInput("nothing to change: give --content, --title, --tag, --importance, …")
    memory = brain.update(id_or_uid, **fields)
    emit(memory.to_dict(), as_json, lambda d: [f"updated #{d['id']}"])


@click.command()
@click.argument("ids", nargs=-1, required=True)
@json_option
@pass_state
def forget(state: State, ids: tuple[str, ...], as_json: bool) -> None:
    """Delete memories everywhere (keyword index and vectors too)."""
    brain = state.brain()
    gone = [brain.forget(i) for i in ids]
    emit([m.to_dict() for m in gone], as_json, lambda _: [f"forgot #{m.id}" for m in gone])


@click.command()
@click.argument("id_or_uid")
@click.option("--off", is_flag=True, help="Unpin instead.")
@json_option
@pass_state
def pin(state: State, id_or_uid: str, off: bool, as_json: bool) -> None:
    """Pin a memory: it never expires and leads the boot context."""
    memory = state.brain().pin(id_or_uid, pinned=not off)
    emit(memory.to_dict(), as_json,
         lambda d: [f"{'unpinned' if off else 'pinned'} #{d['id']}"])


COMMANDS = [remember, search, get, list_, update, forget, pin]
