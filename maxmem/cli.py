"""The `maxmem` command: parse, call one Brain method (or job), print text or --json.

Errors reach people here and only here: a MaxmemError becomes one line on stderr
and exit code 1 (runtime) or 2 (usage); results go to stdout.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import click

from . import __version__
from .config import EMBEDDERS, Config, default_config_path, load_config
from .errors import InvalidInput, MaxmemError

log = logging.getLogger("maxmem")


@dataclass
class Context:
    """What the group resolved once for every command."""

    config: Config
    embedder: str | None = None
    brains: list[Any] = field(default_factory=list)

    def brain(self, embedder: str | None = None, check_embedder: bool = True) -> Any:
        from .brain import Brain

        brain = Brain.open(
            self.config.db_path,
            embedder=embedder or self.embedder,
            config=self.config,
            check_embedder=check_embedder,
        )
        self.brains.append(brain)
        return brain

    def close(self) -> None:
        for brain in self.brains:
            for warning in brain.warnings:
                click.echo(f"maxmem: warning: {warning}", err=True)
            brain.close()
        self.brains.clear()


def read_stdin() -> str:
    """Standard input as UTF-8 text, or one line saying where it is not (whatever the
    locale: a strict decoder raises mid-read, a lenient one changes the text quietly)."""
    raw = (sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer")
           else sys.stdin.read().encode("utf-8", "surrogateescape"))  # undecodable bytes back as they came
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"standard input is not UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
                           f"{exc.start}): convert it first, e.g. with iconv -t UTF-8") from None


# Characters a terminal acts on instead of showing (escape sequences, bidi overrides that
# reorder what follows): a stored memory must not move the cursor or disguise a line.
_TERMINAL_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7f, *range(0x80, 0xa0)) if c not in (0x09, 0x0a)}
_TERMINAL_CONTROLS.update({c: f"\\u{c:04x}" for c in (*range(0x202a, 0x202f), *range(0x2066, 0x206a))})


def emit(data: Any, as_json: bool, text: Callable[[Any], Iterable[str]] | None = None) -> None:
    """Print `data` as JSON, or as the lines `text(data)` gives (control characters shown
    escaped: JSON escapes them itself)."""
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    elif text is not None:
        for line in text(data):
            click.echo(str(line).translate(_TERMINAL_CONTROLS))


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")(f)


def parse_metadata(pairs: Iterable[str]) -> dict[str, Any] | None:
    """key=value pairs; values that parse as JSON (numbers, true, null) keep their type."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise InvalidInput(f"--meta {pair!r}: write key=value")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out or None


def split_tags(tags: Iterable[str]) -> list[str] | None:
    out = [t.strip() for value in tags for t in value.split(",") if t.strip()]
    return out or None


def memory_line(m: Any) -> str:
    title = f"{m.title} — " if m.title else ""
    text = " ".join(m.content.split())
    if len(text) > 160:
        text = text[:157] + "…"
    flags = " [pinned]" if m.pinned else ""
    if m.status != "active":
        flags += f" [{m.status}]"
    return f"#{m.id} {m.created_at[:10]} {m.category}/{m.kind}{flags}: {title}{text}"


def memory_detail(m: Any) -> Iterable[str]:
    data = m.to_dict()
    content = data.pop("content")
    for key, value in data.items():
        if value in (None, [], {}):
            continue
        if isinstance(value, (list, dict)):
            value = json.dumps(value, ensure_ascii=False)
        yield f"{key}: {value}"
    yield ""
    yield content


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="maxmem")
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path),
              help="brain.db to use (default: MAXMEM_DB, the config file, or "
                   "~/.openclaw/workspace/memory/brain.db).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Config file (default: ~/.config/maxmem/config.toml).")
@click.option("--embedder", type=click.Choice(EMBEDDERS),
              help="Embedding provider: auto (default), openai, local, none (keyword-only).")
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv for debug).")
@click.option("--log-file", type=click.Path(dir_okay=False, path_type=Path),
              help="Append log lines to this file (for cron).")
@click.pass_context
def cli(ctx: click.Context, db_path: Path | None, config_path: Path | None, embedder: str | None,
        verbose: int, log_file: Path | None) -> None:
    """maxmem: your agent's long-term memory in one SQLite file (brain.db).

    Remember with `maxmem add`, recall with `maxmem search`. Memories live in four
    categories: core and project (kept forever), daily (90 days), conversation (30 days).
    """
    _configure_logging(verbose, log_file)
    config = load_config(path=config_path, db_path=db_path, embedder=embedder)
    state = Context(config=config, embedder=embedder)
    ctx.obj = state
    ctx.call_on_close(state.close)


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Logs to sys.stderr as it is when a record comes, not as it was at set-up: the
    handler outlives main(), and library calls later in the same process (tests, an
    embedding program) may run with another stderr, the first one closed."""

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _configure_logging(verbose: int, log_file: Path | None) -> None:
    logger = logging.getLogger("maxmem")
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logger.setLevel(min(level, logging.INFO) if log_file else level)
    # Start afresh each time: an earlier call in this process (tests, an embedding
    # program) left its handlers and may have had another log file.
    for old in [h for h in logger.handlers if getattr(h, "_maxmem", False)]:
        logger.removeHandler(old)
        if isinstance(old, logging.FileHandler):
            old.close()
    handler = _StderrHandler()
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter("maxmem: %(levelname)s: %(message)s"))
    handler._maxmem = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.propagate = False
    if log_file:
        from .db import secure_create

        secure_create(log_file)  # 0600 in a 0700 folder when new: it may name memories
        file_handler = logging.FileHandler(log_file, encoding="utf-8")
        file_handler.setLevel(logging.INFO)
        file_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        file_handler._maxmem = True  # type: ignore[attr-defined]
        logger.addHandler(file_handler)


pass_state = click.make_pass_decorator(Context)


# -- setting up ----------------------------------------------------------------

@cli.command()
@click.option("--embedder", "init_embedder", type=click.Choice(EMBEDDERS), default=None,
              help="Provider to record in the config file.")
@click.option("--agent", help="This agent's name (stored on its memories, used by sync).")
@click.option("--force", is_flag=True, help="Overwrite an existing config file.")
@json_option
@pass_state
def init(state: Context, init_embedder: str | None, agent: str | None, force: bool, as_json: bool) -> None:
    """Write the config file and create brain.db (mode 0600, folder 0700)."""
    import tomli_w

    from .db import write_private

    path = state.config.config_path or default_config_path(os.environ)
    config = state.config.with_(embedder=init_embedder, agent=agent)
    wrote = False
    if not path.exists() or force:
        write_private(path, lambda handle: handle.write(tomli_w.dumps(config.to_toml_dict())))
        wrote = True
    state.config = config
    brain = state.brain()
    result = {"config": str(path), "config_written": wrote, "db": str(brain.path),
              "embedder": brain.stats()["embedder"]}
    emit(result, as_json, lambda r: [
        f"config: {r['config']}" + ("" if r["config_written"] else " (kept; --force to overwrite)"),
        f"brain.db: {r['db']}",
        f"embedder: {r['embedder']}",
    ])


# -- remembering ---------------------------------------------------------------

@cli.command()
@click.argument("content", required=False)
@click.option("-c", "--category", default="daily", show_default=True,
              type=click.Choice(["core", "daily", "conversation", "project"]))
@click.option("-k", "--kind", default="note", show_default=True, help="note, decision, fact, task, …")
@click.option("-t", "--title")
@click.option("--tag", "tags", multiple=True, help="A tag (repeat, or comma-separated).")
@click.option("-i", "--importance", type=float, default=0.5, show_default=True, help="0 to 1.")
@click.option("--meta", multiple=True, help="Metadata key=value (repeat).")
@click.option("--created-at", help="When it happened (ISO-8601); default now.")
@click.option("--session", "session_id", help="Session id to file it under.")
@click.option("--pin", is_flag=True, help="Never expires; first in the boot context.")
@json_option
@pass_state
def add(state: Context, content: str | None, category: str, kind: str, title: str | None,
        tags: tuple[str, ...], importance: float, meta: tuple[str, ...], created_at: str | None,
        session_id: str | None, pin: bool, as_json: bool) -> None:
    """Remember CONTENT (or standard input when CONTENT is - or absent)."""
    if content in (None, "-"):
        if sys.stdin.isatty():
            raise InvalidInput("give the text to remember, or pipe it on standard input")
        content = read_stdin().rstrip()  # the newline `echo` ends with is not content
    brain = state.brain()
    memory = brain.remember(
        content, category=category, kind=kind, title=title, tags=split_tags(tags),
        importance=importance, metadata=parse_metadata(meta), created_at=created_at,
        session_id=session_id, pinned=pin,
    )
    merged = brain.last_merged is not None
    emit(memory.to_dict(), as_json, lambda d: [
        f"updated #{d['id']} ({d['uid']}): it already said nearly this (see  maxmem history {d['id']})"
        if merged else f"remembered #{d['id']} ({d['uid']})"])


@cli.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "markdown"]), default="jsonl",
              show_default=True, help="markdown: PATH is a GLOB ('memory/*.md'), a file or a workspace.")
@json_option
@pass_state
def import_(state: Context, path: Path, fmt: str, as_json: bool) -> None:
    """Import memories from a JSONL file (.jsonl or .jsonl.gz, e.g. an export or archive)."""
    from .brain import read_jsonl

    if fmt == "markdown":
        from .agent_cli import local_tz
        from .markdown import import_markdown

        report = import_markdown(state.brain(), str(path), tz=local_tz(state))
        emit(report.to_dict(), as_json, lambda _: [report.describe()])
        return
    if not path.is_file():
        raise InvalidInput(f"{path}: " + ("a folder: give a JSONL file, or --format markdown for a workspace of notes"
                                          if path.is_dir() else "no such file" if not path.exists() else
                                          "not a regular file"))

    counts = state.brain().import_records(read_jsonl(path))
    emit(counts, as_json, lambda c: [
        f"imported {path}: {c['added']} added, {c['updated']} updated, {c['unchanged']} unchanged"
    ])


@cli.command()
@click.argument("dest", required=False, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "markdown"]), default="jsonl",
              show_default=True, help="markdown: MEMORY.md + memory/YYYY-MM-DD.md under DEST.")
@click.option("--keep", type=int, help="markdown: write DEST/YYYY-MM-DD/, keep the newest N.")
@click.option("--include-conversations", is_flag=True, help="markdown: also raw exchanges.")
@click.option("--force", is_flag=True, help="markdown: overwrite files maxmem did not write.")
@pass_state
def export(state: Context, dest: Path | None, fmt: str, keep: int | None,
           include_conversations: bool, force: bool) -> None:
    """Export every memory as JSONL (one memory per line, every field) to DEST or stdout.

    DEST is a file, written whole or not at all and readable by you only (0600).
    """
    from .brain import write_jsonl
    from .db import write_private

    brain = state.brain()
    if fmt == "markdown":
        from .agent_cli import local_tz
        from .markdown import backup_markdown, export_markdown

        if dest is None:
            raise InvalidInput("give the directory to write MEMORY.md and memory/ into")
        if keep is not None:
            report = backup_markdown(brain, dest, keep, tz=local_tz(state),
                                     include_conversations=include_conversations)
        else:
            report = export_markdown(brain, dest, tz=local_tz(state), force=force,
                                     include_conversations=include_conversations)
        click.echo(report.describe(), err=True)
        return
    if dest is None:
        count = write_jsonl(brain.export_records(), sys.stdout)  # type: ignore[arg-type]
    else:
        count = write_private(dest, lambda handle: write_jsonl(brain.export_records(), handle))
    click.echo(f"exported {count} memories" + (f" to {dest}" if dest else ""), err=True)


# -- recalling -----------------------------------------------------------------

def filter_options(f: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("-c", "--category", multiple=True,
                     type=click.Choice(["core", "daily", "conversation", "project"])),
        click.option("-k", "--kind", multiple=True),
        click.option("--tag", "tags", multiple=True, help="Only memories with this tag (repeatable: all of them)."),
        click.option("--since", help="Created at or after (ISO-8601 date or time)."),
        click.option("--until", help="Created before (ISO-8601 date or time)."),
        click.option("--min-importance", type=float),
        click.option("--meta", multiple=True, help="Metadata key=value that must match."),
        click.option("--status", multiple=True,
                     type=click.Choice(["active", "ongoing", "resolved", "superseded"])),
        click.option("--agent"),
        click.option("--session", "session_id"),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def filter_kwargs(category: tuple[str, ...], kind: tuple[str, ...], tags: tuple[str, ...],
                  since: str | None, until: str | None, min_importance: float | None,
                  meta: tuple[str, ...], status: tuple[str, ...], agent: str | None,
                  session_id: str | None) -> dict[str, Any]:
    return {
        "category": list(category) or None, "kind": list(kind) or None, "tags": split_tags(tags),
        "since": since, "until": until, "min_importance": min_importance,
        "metadata": parse_metadata(meta), "status": list(status) or None, "agent": agent,
        "session_id": session_id,
    }


@cli.command()
@click.argument("query")
@click.option("-n", "--limit", default=10, show_default=True)
@filter_options
@click.option("--mode", type=click.Choice(["hybrid", "keyword", "vector"]), default="hybrid",
              show_default=True, help="Rank by both (default), or by one side only.")
@click.option("--include-superseded", is_flag=True, help="Also return superseded memories.")
@click.option("--explain", is_flag=True, help="Show each hit's vector and keyword components.")
@json_option
@pass_state
def search(state: Context, query: str, limit: int, mode: str, include_superseded: bool,
           explain: bool, as_json: bool, **filters: Any) -> None:
    """Find the memories that best answer QUERY (0.7 vector + 0.3 keyword)."""
    brain = state.brain()
    hits = brain.search(query, limit=limit, mode=mode, include_superseded=include_superseded,
                        explain=explain, **filter_kwargs(**filters))
    plan = brain.last_plan

    def explain_line(hit: Any) -> str:
        e = hit.explain
        return (f"      vector {_fmt(e.get('vector'))} (cosine {_fmt(e.get('cosine'))}) × "
                f"{state.config.vector_weight:g} + keyword {_fmt(e.get('keyword'))} "
                f"(bm25 {_fmt(e.get('bm25'))}) × {state.config.keyword_weight:g}"
                + (f" − {e['penalty']:g} (a question)" if e.get("penalty") else ""))

    print_hits(query, hits, plan, as_json, explain_line if explain else None)
    if explain and not as_json:
        click.echo(f"FTS5 query: {plan.match or '(no keyword terms)'}; filters: {plan.where} {plan.params}; "
                   f"candidates: {plan.vector_candidates} vector, {plan.keyword_candidates} keyword")


def print_hits(query: str, hits: list[Any], plan: Any, as_json: bool,
               explain_line: Callable[[Any], str] | None = None, show_agent: bool = False) -> None:
    """Search results as ranked lines (or JSON), the plan's note on stderr."""
    if plan.note:
        click.echo(f"maxmem: note: {plan.note}", err=True)
    if as_json:
        emit({"query": query, "mode": plan.mode, "note": plan.note,
              "hits": [h.to_dict() for h in hits]}, True)
        return
    if not hits:
        click.echo("no memories found")
    for rank, hit in enumerate(hits, start=1):
        who = f"[{hit.memory.agent}] " if show_agent else ""
        click.echo(f"{rank:>2}. {hit.score:.3f}  {who}{memory_line(hit.memory)}")
        if explain_line is not None:
            click.echo(explain_line(hit))


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


@cli.command()
@click.argument("ids", nargs=-1, required=True)
@json_option
@pass_state
def get(state: Context, ids: tuple[str, ...], as_json: bool) -> None:
    """Show memories by id or uid."""
    brain = state.brain()
    memories = [brain.get(i) for i in ids]
    if as_json:
        emit([m.to_dict() for m in memories] if len(ids) > 1 else memories[0].to_dict(), True)
        return
    for index, memory in enumerate(memories):
        if index:
            click.echo("---")
        for line in memory_detail(memory):
            click.echo(line)


@cli.command("list")
@filter_options
@click.option("-n", "--limit", default=50, show_default=True)
@click.option("--offset", default=0)
@click.option("--order", type=click.Choice(["recent", "oldest", "importance", "updated"]),
              default="recent", show_default=True)
@click.option("--pinned", is_flag=True, default=None, help="Only pinned memories.")
@json_option
@pass_state
def list_(state: Context, limit: int, offset: int, order: str, pinned: bool | None,
          as_json: bool, **filters: Any) -> None:
    """List memories, newest first, with the same filters as search."""
    memories = state.brain().list(limit=limit, offset=offset, order=order, pinned=pinned or None,
                                  **filter_kwargs(**filters))
    emit([m.to_dict() for m in memories], as_json,
         lambda _: [memory_line(m) for m in memories] or ["no memories"])


# -- changing ------------------------------------------------------------------

@cli.command()
@click.argument("id_or_uid")
@click.option("--content")
@click.option("-t", "--title")
@click.option("-c", "--category", type=click.Choice(["core", "daily", "conversation", "project"]))
@click.option("-k", "--kind")
@click.option("--tag", "tags", multiple=True, help="Replace the tags.")
@click.option("-i", "--importance", type=float)
@click.option("--status", type=click.Choice(["active", "ongoing", "resolved", "superseded"]))
@click.option("--meta", multiple=True, help="Set metadata key=value (merged into the existing).")
@json_option
@pass_state
def update(state: Context, id_or_uid: str, content: str | None, title: str | None,
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


@cli.command()
@click.argument("ids", nargs=-1, required=True)
@json_option
@pass_state
def forget(state: Context, ids: tuple[str, ...], as_json: bool) -> None:
    """Delete memories everywhere (keyword index and vectors too)."""
    brain = state.brain()
    gone = [brain.forget(i) for i in ids]
    emit([m.to_dict() for m in gone], as_json, lambda _: [f"forgot #{m.id}" for m in gone])


@cli.command()
@click.argument("id_or_uid")
@click.option("--off", is_flag=True, help="Unpin instead.")
@json_option
@pass_state
def pin(state: Context, id_or_uid: str, off: bool, as_json: bool) -> None:
    """Pin a memory: it never expires and leads the boot context."""
    memory = state.brain().pin(id_or_uid, pinned=not off)
    emit(memory.to_dict(), as_json,
         lambda d: [f"{'unpinned' if off else 'pinned'} #{d['id']}"])


# -- upkeep --------------------------------------------------------------------

@cli.command()
@json_option
@pass_state
def stats(state: Context, as_json: bool) -> None:
    """Counts per category, size, pending embeddings and the embedder in use."""
    from .curation import core_budget

    brain = state.brain()
    data = {**brain.stats(), "core_budget": core_budget(brain)}

    def text(d: dict[str, Any]) -> Iterable[str]:
        yield f"brain.db: {d['path']} ({d['size_bytes'] / 1e6:.1f} MB)"
        yield f"memories: {d['memories']} (" + ", ".join(f"{k} {v}" for k, v in d["categories"].items()) + ")"
        yield f"embedder: {d['embedder']}"
        if d["vectors_from"] and d["vectors_from"] != d["embedder"]:
            yield f"vectors from: {d['vectors_from']}"
        yield f"pending embeddings: {d['unembedded']}"
        yield f"schema: {d['schema_version']}/{d['schema_latest']}"
        if d["core_budget"]["warning"]:
            yield f"warning: {d['core_budget']['warning']}"
    emit(data, as_json, text)


@cli.command()
@json_option
@pass_state
def doctor(state: Context, as_json: bool) -> None:
    """Check brain.db: integrity, schema, embedder, pending work, permissions, disk,
    the last capture / retention / sync / backup and their age, the core budget.

    Exits 1 when something needs attention, so cron can alert on it.
    """
    from .curation import budget_check
    from .doctor import run_checks, size_lines

    report = run_checks(state.config, embedder=state.embedder, extra=[budget_check])
    emit(report, as_json, lambda r: [
        *(f"{'ok  ' if c['ok'] else 'FAIL'} {c['name']}: {c['detail']}" for c in r["checks"]),
        *(size_lines(r["sizes"]) if "sizes" in r else []),
    ])
    if not report["ok"]:
        sys.exit(1)


def _progress(label: str) -> Callable[[int, int], None]:
    bar: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "bar" not in bar:
            bar["bar"] = click.progressbar(length=total, label=label, file=sys.stderr)
            bar["bar"].__enter__()
            bar["done"] = 0
        bar["bar"].update(done - bar["done"])
        bar["done"] = done
        if done >= total:
            bar["bar"].__exit__(None, None, None)

    return update


@cli.command()
@click.option("--pending", is_flag=True, required=True, help="Embed memories stored without a vector.")
@json_option
@pass_state
def embed(state: Context, pending: bool, as_json: bool) -> None:
    """Backfill vectors for memories stored while no embedder was reachable."""
    brain = state.brain()
    done = brain.embed_pending(progress=None if as_json else _progress("embedding"))
    emit({"embedded": done, "pending": brain.pending_count()}, as_json,
         lambda d: [f"embedded {d['embedded']} memories; {d['pending']} still pending"])


@cli.command()
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@json_option
@pass_state
def reindex(state: Context, yes: bool, as_json: bool) -> None:
    """Re-embed every memory with the configured embedder (after changing model)."""
    brain = state.brain(check_embedder=False)
    if brain.embedder is None:
        raise InvalidInput("no embedder to reindex with: pass --embedder local or openai")
    count = brain.stats()["memories"]
    if not yes and sys.stdin.isatty():
        click.confirm(f"re-embed {count} memories with {brain.stats()['embedder']}?", abort=True)
    done = brain.reindex(progress=None if as_json else _progress("reindexing"))
    emit({"reindexed": done, "embedder": brain.stats()["embedder"]}, as_json,
         lambda d: [f"reindexed {d['reindexed']} memories with {d['embedder']}"])


# Agent integration (observe, resolve, active, timeline, ensure-observation, save-context,
# context, query, mcp) lives in its own module and registers itself on `cli`.
from . import agent_cli  # noqa: E402,F401
# PostgreSQL sync (sync postgres, sync status, sync search) registers itself on `cli`.
from . import sync_cli  # noqa: E402,F401
# Scheduled jobs (capture, daemon) likewise, from jobs_cli.py.
from . import jobs_cli  # noqa: E402,F401
# Backups (backup, restore) likewise, from backup_cli.py.
from . import backup_cli  # noqa: E402,F401
# Keeping memory clean (commit, triggers, retain, supersede, core review, history) likewise.
from . import curation_cli  # noqa: E402,F401
# Checking the redactor's rules on a file (redact-test) likewise, from redact_cli.py.
from . import redact_cli  # noqa: E402,F401


_SHOW_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click 8.2 and later


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning expected errors into one line and an exit code."""
    try:
        cli.main(args=argv, prog_name="maxmem", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("maxmem: aborted", err=True)
        sys.exit(1)
    except _SHOW_HELP as exc:  # a group called with nothing: its help, as click prints it
        exc.show()
        sys.exit(exc.exit_code)
    except click.UsageError as exc:
        hint = f" (see {exc.ctx.command_path} --help)" if exc.ctx else ""
        _error(exc.format_message() + hint, exc.exit_code)
    except click.ClickException as exc:
        _error(exc.format_message(), exc.exit_code)
    except MaxmemError as exc:
        _error(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        click.echo("maxmem: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as exc:  # a file the user named: unwritable folder, disk full, …
        _error(f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""), 1)


ERROR_CHARS = 500


def _error(message: str, code: int) -> None:
    """The one error line, then exit. An error may quote what was given, so secrets are
    redacted (a key passed as --kind by mistake must not reach stderr or a cron log) and a
    huge value is cut."""
    from .redact import redact

    line = redact(" ".join(message.split()))[0]
    if len(line) > ERROR_CHARS:
        line = line[:ERROR_CHARS] + "…"
    click.echo(f"maxmem: error: {line}", err=True)
    sys.exit(code)
