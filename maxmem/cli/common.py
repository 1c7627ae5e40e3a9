"""What every command module shares: the click state, output, options, input.

Command modules import this module, never each other and never the package root.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path
from typing import Any, TypeVar

import click
from tqdm import tqdm

from ..brain import Brain
from ..clock import Clock
from ..config import Config, local_timezone
from ..errors import InvalidInput
from ..files import open_regular, read_at_most
from ..inert import inert, json_inert, one_line
from ..memory import CATEGORIES, STATUSES, Filters, parse_pairs
from ..search.nlquery import parse_when

Command = TypeVar("Command", bound=Callable[..., Any])
ISO_START = re.compile(r"^\d{4}-\d{2}-\d{2}|^\d+(?:\.\d+)?$")


@dataclass
class State:
    """What the `maxmem` group resolved once for every command (click's ctx.obj)."""

    config: Config
    embedder: str | None = None
    brains: list[Brain] = field(default_factory=list)
    config_error: str | None = None  # only `maxmem hook` runs on with a bad config (it must exit 0)

    def brain(self, embedder: str | None = None, check_embedder: bool = True, create: bool = True) -> Brain:
        """The configured Brain; create=False for a command that only reads (a missing
        brain.db is then a one-line error, never an empty new file)."""
        brain = Brain.open(
            self.config.db_path,
            embedder=embedder or self.embedder,
            config=self.config,
            check_embedder=check_embedder,
            create=create,
        )
        self.brains.append(brain)
        return brain

    def close(self) -> None:
        for brain in self.brains:
            for warning in brain.warnings:
                say(f"maxmem: warning: {warning}", err=True)
            brain.close()
        self.brains.clear()

    def local_timezone(self) -> tzinfo:
        """Your zone, whose calendar day "today" means (config.local_timezone)."""
        return local_timezone(self.config)


class FiniteFloat(click.FloatRange):
    """A number option: a finite float, within the range given if any (nan and inf are
    refused here, in one line)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


MAX_COUNT = 1_000_000_000  # the largest count an option takes (budgets)
COUNT = click.IntRange(max=MAX_COUNT)


MAX_INPUT_BYTES = 256 << 20  # what a command reads of its standard input or a --file: /dev/zero is refused


def read_file(path: Path) -> str:
    """A file the user named, as UTF-8 text, at most MAX_INPUT_BYTES of it (one line
    saying why not, else)."""
    try:
        with open_regular(path) as handle:  # a FIFO or a device is refused, never waited on
            raw = read_at_most(handle, MAX_INPUT_BYTES)
        if raw is None:
            raise InvalidInput(f"{path} holds more than {MAX_INPUT_BYTES >> 20} MiB: give less")
        return raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from None


def read_stdin() -> str:
    """Standard input as UTF-8 text, or one line saying where it is not (whatever the
    locale: a strict decoder raises mid-read, a lenient one changes the text quietly)
    or that it holds more than MAX_INPUT_BYTES."""
    raw = (sys.stdin.buffer.read(MAX_INPUT_BYTES + 1) if hasattr(sys.stdin, "buffer")
           else sys.stdin.read(MAX_INPUT_BYTES + 1).encode("utf-8", "surrogateescape"))  # undecodable bytes as given
    if len(raw) > MAX_INPUT_BYTES:
        raise InvalidInput(f"standard input holds more than {MAX_INPUT_BYTES >> 20} MiB: give less")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"standard input is not UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
                           f"{exc.start}): convert it first, e.g. with iconv -t UTF-8") from None


def say(line: Any = "", err: bool = False, nl: bool = True) -> None:
    """Print a line for a person: every character a terminal acts on (escape sequences,
    bidi overrides that reorder what follows) shown escaped (memory.inert). Every command
    prints stored or harness-given text through this; JSON goes through `emit`. A line for
    stderr (a diagnostic) stays one line: a line break in it (a path's, a file name's)
    is shown as \x0a, never starting a line of its own that reads as maxmem's."""
    click.echo(one_line(str(line)) if err else inert(str(line)), err=err, nl=nl)


def emit(data: Any, as_json: bool, text: Callable[[Any], Iterable[str]] | None = None) -> None:
    """Print `data` as JSON (inert.json_inert: nothing a terminal acts on left raw in its
    strings), or as the lines `text(data)` gives (through `say`)."""
    if as_json:
        # What a terminal acts on (U+009B, U+202E, …) and a lone surrogate (an argument's
        # undecodable byte) as JSON's own escapes: \u009b, \udcff.
        click.echo(json_inert(json.dumps(data, ensure_ascii=False, indent=2, default=str)))
    elif text is not None:
        for line in text(data):
            say(line)


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")(f)


def min_relevance_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """--min-relevance: search and sync search, which judge their hits alike (search.relevance)."""
    return click.option(
        "--min-relevance", type=float, default=None, metavar="X",
        help="List only hits whose relevance (0-1, the same scale for every query) reaches X, "
             "and say \"nothing relevant\" when none does [default: config min_relevance; "
             "0: list every hit].")(f)


def nothing_relevant(plan: Any) -> str | None:
    """What a search that found nothing relevant prints instead of its hits (None: it did
    find something, or was not judged)."""
    if plan.best_relevance is None or not plan.min_relevance or plan.best_relevance >= plan.min_relevance:
        return None
    return (f"nothing relevant: the closest memory's relevance is {plan.best_relevance:.3f}, "
            f"below {plan.min_relevance:g} (--min-relevance 0 shows it)")


def parse_metadata(pairs: Iterable[str]) -> dict[str, Any] | None:
    """--meta key=value pairs (memory.parse_pairs)."""
    return parse_pairs(pairs, "--meta")


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



pass_state = click.make_pass_decorator(State)


class OlderSpellings(click.Option):
    """An option whose names after the first are older spellings: still accepted, left
    out of --help (the CHANGELOG names them once)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        names, self.opts = self.opts, self.opts[:1]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = names


def session_option(help: str | None = None) -> Callable[[Command], Command]:
    """--session-id ID, the session a memory belongs to (`--session` still accepted)."""
    return click.option("--session-id", "--session", "session_id", metavar="ID", cls=OlderSpellings, help=help)


def filter_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The filter vocabulary (memory.Filters) as options: search, list, sync search."""
    options = [
        click.option("-c", "--category", multiple=True, type=click.Choice(CATEGORIES)),
        click.option("-k", "--kind", multiple=True),
        click.option("--tag", "tags", multiple=True, help="Only memories with this tag (repeatable: all of them)."),
        click.option("--since", help='Created at or after: a date or time, or "yesterday", "3 days ago", … '
                                      '(days in your zone)'),
        click.option("--until", help="Created before: a date or time, or plain English as --since."),
        click.option("--min-importance", type=float),
        click.option("--max-importance", type=float),
        click.option("--meta", multiple=True, help="Metadata key=value that must match."),
        click.option("--status", multiple=True, type=click.Choice(STATUSES)),
        click.option("--agent", "agents", multiple=True, help="Only this agent's memories (repeatable)."),
        session_option("Only the memories of the session with this id."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def filters_from(state: State, category: tuple[str, ...], kind: tuple[str, ...], tags: tuple[str, ...],
                 since: str | None, until: str | None, min_importance: float | None,
                 max_importance: float | None, meta: tuple[str, ...], status: tuple[str, ...],
                 agents: tuple[str, ...], session_id: str | None, **more: Any) -> Filters:
    """The Filters the filter options gave (`more`: include_superseded, pinned)."""
    return Filters.of(
        category=list(category) or None, kind=list(kind) or None, tags=split_tags(tags),
        since=_when(state, since), until=_when(state, until), min_importance=min_importance,
        max_importance=max_importance, metadata=parse_metadata(meta), status=list(status) or None,
        agent=list(agents) or None, session_id=session_id, **more,
    )


def _when(state: State, text: str | None) -> Any:
    """A --since/--until value: an ISO date or time as given (Filters reads it), else
    English as `maxmem query` reads it ("yesterday", "3 days ago", "last friday")."""
    if text is None or ISO_START.match(text.strip()):
        return text
    return parse_when(text, Clock(), state.local_timezone())


def print_hits(query: str, hits: list[Any], plan: Any, as_json: bool,
               explain_line: Callable[[Any], str] | None = None, show_agent: bool = False) -> None:
    """Search results as ranked lines (or JSON), the plan's note on stderr."""
    if plan.note:
        say(f"maxmem: note: {plan.note}", err=True)
    if as_json:
        emit({"query": query, "mode": plan.mode, "note": plan.note,
              "hits": [h.to_dict() for h in hits]}, True)
        return
    if not hits:
        say("no memories found")
    for rank, hit in enumerate(hits, start=1):
        who = f"[{hit.memory.agent}] " if show_agent else ""
        # The relevance where the hit has one (one scale for every query), else the
        # rank score within this search, labelled as such.
        shown = (f"relevance {hit.relevance:.3f}" if getattr(hit, "relevance", None) is not None
                 else f"rank score {hit.score:.3f}")
        say(f"{rank:>2}. {shown}  {who}{memory_line(hit.memory)}")
        if explain_line is not None:
            say(explain_line(hit))


def fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"



class Progress:
    """A tqdm bar on stderr, drawn on a terminal only: under cron, into a pipe or a log
    file, or with --json (enabled=False), it draws nothing. Call it with (done, total)
    and counts to show beside the bar; use it in a `with` so it ends on its line."""

    def __init__(self, label: str, unit: str = "memory", enabled: bool = True) -> None:
        self.label, self.unit = label, unit
        self.enabled = enabled and sys.stderr.isatty()
        self._bar: Any = None

    def __call__(self, done: int, total: int, **counts: int) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            self._bar = tqdm(total=total, desc=self.label, unit=self.unit, file=sys.stderr,
                             dynamic_ncols=True, leave=True)
        if counts:
            self._bar.set_postfix(counts, refresh=False)
        self._bar.update(done - self._bar.n)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
