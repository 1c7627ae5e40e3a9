"""The boot brief: what an agent should know on waking (`maxmem brief`).

`build_brief(brain, session_id=...)` is read at session start and after compaction: a
compact Markdown page within a token budget. Its sections always come in this order,
each left out when it has nothing to show:

1. **Core** — core memories, pinned first (📌), then by importance;
2. **Work in progress** — open work, with how long it has been open;
3. **Daily notes (today and yesterday)** — newest first;
4. **Current session** — the session's latest exchanges, oldest first;
5. **Important in the last day** — observations of importance ≥ 0.7.

Each memory appears at most once, in the first section that claims it (the last
day's important observations are claimed before the daily notes). Each section
starts with a share of the budget (30/20/20/20/10 %); what one does not use goes to
the sections that were cut short, in the order above, and a cut section ends with
`- … N more`.

The brief is handed to agents fenced (`Brief.text`): a one-line factual preface, then
the Markdown inside a code fence longer than any backtick run in it, so a harness and
a model can tell stored notes from instructions. Every path that hands memory text to a
model fences it with `fenced` (this brief, the prompt hook's recall, the MCP prompts and
resources); inside the fence, characters a terminal or reader acts on are shown escaped
(inert.inert), and a harness-given string (a session id) is quoted on one line (`quoted`).
The budget covers all of that text, counted with `memory.estimate_tokens` (four bytes
of UTF-8 a token, the estimate capture's chunks use):
`estimate_tokens(brief.text) <= budget_tokens`, always.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from .clock import iso, parse_time
from .errors import InvalidInput
from .inert import inert
from .memory import BYTES_PER_TOKEN, Memory, estimate_tokens
from .settings import MIN_BRIEF_TOKENS, BriefSettings
from .work import active, format_hours

if TYPE_CHECKING:  # pragma: no cover
    from .brain import Brain


# The share of the budget each section of the brief starts with, in the brief's order;
# what a section does not use goes to the sections that were cut short, in this order.
SHARES = (
    ("core", 0.30),
    ("work", 0.20),
    ("daily", 0.20),
    ("session", 0.20),
    ("recent", 0.10),
)
# Said before the fence: factual, not imperative (imperative text in a hook's output
# can trip a model's prompt-injection defences).
PREFACE = ("maxmem memory brief: notes stored by maxmem from past conversations with this user "
           "(background facts; search them with the maxmem tools for more).")
EMPTY = "(nothing remembered yet)\n"
_BACKTICKS = re.compile(r"`+")
_PLAIN = re.compile(r"[A-Za-z0-9_.:@/+=-]+")


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _one_line(text: str, limit: int) -> str:
    line = inert(" ".join(text.split()))
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def quoted(value: str, limit: int = 120) -> str:
    """A string a harness or client gave (a session id, a question) as it may appear in
    text for a model: as it is when it holds only letters, digits and `_.:@/+=-` (a UUID,
    agent:main:main), else on one line in double quotes, escaped, at most `limit` characters."""
    text = str(value)
    if _PLAIN.fullmatch(text) and len(text) <= limit:
        return text
    line = " ".join(text.split())
    line = line if len(line) <= limit else line[: limit - 1] + "…"
    return inert(json.dumps(line, ensure_ascii=False))


def _label(memory: Memory, limit: int = 240) -> str:
    body = _one_line(memory.content, limit)
    if memory.title and not memory.content.startswith(memory.title):
        return f"**{_one_line(memory.title, 80)}** — {body}"
    return body


def _more(count: int) -> str:
    return f"- … {count} more\n"


@dataclass
class Section:
    name: str
    heading: str
    lines: list[str]
    ids: list[int]

    def __post_init__(self) -> None:
        self._prefix = [0]  # bytes of the first k lines, each with its newline
        for line in self.lines:
            self._prefix.append(self._prefix[-1] + _size(line) + 1)
        self._head = _size(f"## {self.heading}\n")

    def cost(self, shown: int) -> int:
        """The bytes the section takes with its first `shown` lines (0: left out)."""
        if shown <= 0 or not self.lines:
            return 0
        more = _size(_more(len(self.lines) - shown)) if shown < len(self.lines) else 0
        return self._head + self._prefix[shown] + more

    def most(self, budget: int) -> int:
        """The most lines that fit in `budget` bytes."""
        return max((k for k in range(len(self.lines) + 1) if self.cost(k) <= budget), default=0)

    def render(self, shown: int) -> str:
        if shown <= 0 or not self.lines:
            return ""
        more = _more(len(self.lines) - shown) if shown < len(self.lines) else ""
        return f"## {self.heading}\n" + "".join(line + "\n" for line in self.lines[:shown]) + more


@dataclass
class Brief:
    """The boot context: the fenced text within the budget, its Markdown, and what went into it."""

    markdown: str  # the brief itself
    text: str  # what agents are given: the preface and the Markdown, fenced
    budget_tokens: int
    sections: dict[str, list[int]]

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget_tokens": self.budget_tokens,
            "tokens": self.tokens,
            "sections": self.sections,
            "markdown": self.markdown,
            "text": self.text,
        }


def fence_for(texts: Sequence[str]) -> str:
    """A backtick fence longer than any backtick run in `texts` (at least three)."""
    longest = max((len(run) for text in texts if "`" in text for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def fenced(markdown: str, fence: str | None = None, preface: str = PREFACE) -> str:
    """The preface, then `markdown` inside a code fence it cannot close (longer than any
    backtick run in it, whatever fence was asked for), its control characters escaped."""
    body = inert(markdown.rstrip())
    fence = max(fence or "", fence_for([body]), key=len)
    return f"{preface}\n{fence}markdown\n{body}\n{fence}\n"


def _time(at: str, tz: tzinfo) -> str:
    return parse_time(at).astimezone(tz).strftime("%H:%M")


def build_brief(
    brain: Brain,
    session_id: str | None = None,
    budget_tokens: int = BriefSettings.budget_tokens,
    tz: tzinfo = UTC,
    exchanges: int = 10,
) -> Brief:
    """A Markdown brief of what the agent should know on waking, within the budget."""
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int):
        raise InvalidInput("budget-tokens must be a whole number")
    if budget_tokens < MIN_BRIEF_TOKENS:
        raise InvalidInput(f"budget-tokens must be at least {MIN_BRIEF_TOKENS}")
    now = brain.clock.now()
    local_now = now.astimezone(tz)
    today = local_now.date()
    start_yesterday = datetime.combine(today - timedelta(days=1), datetime.min.time(), tzinfo=tz)

    shown_ids: set[int] = set()

    def fresh(memories: Sequence[Memory]) -> list[Memory]:
        """The memories not shown yet, each once (pinned core memories come in twice)."""
        out = []
        for m in memories:
            if m.id not in shown_ids:
                shown_ids.add(m.id)
                out.append(m)
        return out

    pinned = brain.list(category="core", pinned=True, order="importance", limit=200,
                        include_superseded=False)
    core = fresh([*pinned, *brain.list(category="core", order="importance", limit=200,
                                       include_superseded=False)])
    core_lines = [("- 📌 " if m.pinned else "- ") + _label(m) + f" (#{m.id})" for m in core]

    work = [w for w in active(brain, limit=200) if w.memory.id not in shown_ids]
    shown_ids.update(w.memory.id for w in work)
    work_lines = [
        f"- {_label(w.memory, 200)} — {w.memory.status}, open {format_hours(w.hours_open)}"
        f" (#{w.memory.id})"
        for w in work
    ]

    # The last day's important observations are taken before the daily notes, so a
    # high-importance note is listed there once rather than lost among the others.
    important = fresh([
        m for m in brain.list(since=iso(now - timedelta(days=1)), min_importance=0.7,
                              order="importance", limit=100, include_superseded=False)
        if m.category != "conversation"
    ])
    recent_lines = [f"- {_label(m, 200)} ({m.kind}, #{m.id})" for m in important]

    daily = fresh(brain.list(category="daily", since=iso(start_yesterday), order="recent",
                             limit=200, include_superseded=False))
    daily_lines = []
    for m in daily:
        day = parse_time(m.created_at).astimezone(tz).date()
        when = "today" if day == today else "yesterday"
        daily_lines.append(f"- {when} {_time(m.created_at, tz)} {_label(m, 200)} (#{m.id})")

    session_lines: list[str] = []
    session_ids: list[int] = []
    if session_id:
        recent = brain.list(category="conversation", session_id=session_id, order="recent",
                            limit=max(1, exchanges))
        for m in reversed(fresh(recent)):
            session_lines.append(f"- {_time(m.created_at, tz)} {_one_line(m.content, 400)}")
            session_ids.append(m.id)

    sections = [
        Section("core", "Core", core_lines, [m.id for m in core]),
        Section("work", "Work in progress", work_lines, [w.memory.id for w in work]),
        Section("daily", "Daily notes (today and yesterday)", daily_lines,
                [m.id for m in daily]),
        Section("session", f"Current session ({quoted(session_id)})" if session_id else "Current session",
                session_lines, session_ids),
        Section("recent", "Important in the last day", recent_lines,
                [m.id for m in important]),
    ]
    header = f"# Memory brief — {local_now.strftime('%Y-%m-%d %H:%M %Z')}\n\n"
    fence = fence_for([header, *(s.heading for s in sections), *(line for s in sections for line in s.lines)])
    # The fence, the preface and the header are paid for first; the sections share the rest.
    room = budget_tokens * BYTES_PER_TOKEN - _size(fenced(header + EMPTY, fence)) + _size(EMPTY)
    shown = _fit(sections, room)
    body = "\n".join(t for t in (s.render(shown[s.name]) for s in sections) if t) or EMPTY
    markdown = header + body
    return Brief(
        markdown=markdown,
        text=fenced(markdown, fence),
        budget_tokens=budget_tokens,
        sections={s.name: s.ids[: shown[s.name]] for s in sections if shown[s.name]},
    )


def _used(sections: Sequence[Section], shown: dict[str, int]) -> int:
    """The bytes of the sections shown, joined by blank lines."""
    costs = [s.cost(shown[s.name]) for s in sections]
    present = sum(1 for c in costs if c)
    return sum(costs) + max(0, present - 1)


def _fit(sections: Sequence[Section], room: int) -> dict[str, int]:
    """How many lines of each section to show within `room` bytes: each its share
    first, then what is left over to the sections cut short, in order."""
    shares = dict(SHARES)
    shown = {s.name: s.most(int(room * shares[s.name]) - 1) for s in sections}
    for s in sections:
        if shown[s.name] < len(s.lines):
            others = _used(sections, {**shown, s.name: 0})
            fits = [k for k in range(shown[s.name], len(s.lines) + 1)
                    if others + s.cost(k) + (1 if k and others else 0) <= room]
            shown[s.name] = max(fits, default=shown[s.name])
    return shown
