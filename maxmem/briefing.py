"""The boot brief: what an agent should know on waking (`maxmem context`).

`build_brief(brain, session=...)` is read at session start and after compaction: a
compact Markdown page within a token budget — core memories (pinned, then most
important), work in progress with how long it has been open, today's and yesterday's
daily notes, the session's latest exchanges, and the last day's important
observations. Each memory appears once. Tokens are estimated at 4 characters each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from .clock import iso, parse_time
from .errors import InvalidInput
from .memory import Memory
from .work import active, format_hours

if TYPE_CHECKING:  # pragma: no cover
    from .brain import Brain

CHARS_PER_TOKEN = 4
DEFAULT_BUDGET_TOKENS = 2000
MIN_BUDGET_TOKENS = 100

# The share of the budget each section of the brief starts with; what a section does
# not use goes to the sections that were cut short, in this order.
SHARES = (
    ("core", 0.30),
    ("work", 0.20),
    ("daily", 0.20),
    ("session", 0.20),
    ("recent", 0.10),
)


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _label(memory: Memory, limit: int = 240) -> str:
    body = _one_line(memory.content, limit)
    if memory.title and not memory.content.startswith(memory.title):
        return f"**{_one_line(memory.title, 80)}** — {body}"
    return body


@dataclass
class Section:
    name: str
    heading: str
    lines: list[str]
    ids: list[int]
    shown: int = 0

    def render(self, budget_chars: int) -> tuple[str, int]:
        """The section's Markdown within `budget_chars`; returns (text, lines shown)."""
        if not self.lines:
            return "", 0
        head = f"## {self.heading}\n"
        if len(head) >= budget_chars:
            return "", 0
        out, used, shown = [head], len(head), 0
        for line in self.lines:
            more = len(self.lines) - shown - 1
            tail = f"- … {more} more\n" if more else ""
            if used + len(line) + 1 + len(tail) > budget_chars:
                break
            out.append(line + "\n")
            used += len(line) + 1
            shown += 1
        if shown == 0:
            return "", 0
        if shown < len(self.lines):
            out.append(f"- … {len(self.lines) - shown} more\n")
        return "".join(out), shown


@dataclass
class Brief:
    """The boot context: Markdown within the budget, and what went into it."""

    markdown: str
    budget_tokens: int
    sections: dict[str, list[int]]

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.markdown)

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget_tokens": self.budget_tokens,
            "tokens": self.tokens,
            "sections": self.sections,
            "markdown": self.markdown,
        }


def _time(at: str, tz: tzinfo) -> str:
    return parse_time(at).astimezone(tz).strftime("%H:%M")


def build_brief(
    brain: Brain,
    session: str | None = None,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    tz: tzinfo = UTC,
    exchanges: int = 10,
) -> Brief:
    """A Markdown brief of what the agent should know on waking, within the budget."""
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int):
        raise InvalidInput("budget-tokens must be a whole number")
    if budget_tokens < MIN_BUDGET_TOKENS:
        raise InvalidInput(f"budget-tokens must be at least {MIN_BUDGET_TOKENS}")
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
    if session:
        recent = brain.list(category="conversation", session_id=session, order="recent",
                            limit=max(1, exchanges))
        for m in reversed(fresh(recent)):
            session_lines.append(f"- {_time(m.created_at, tz)} {_one_line(m.content, 400)}")
            session_ids.append(m.id)

    sections = [
        Section("core", "Core", core_lines, [m.id for m in core]),
        Section("work", "Work in progress", work_lines, [w.memory.id for w in work]),
        Section("daily", "Daily notes (today and yesterday)", daily_lines,
                [m.id for m in daily]),
        Section("session", f"This session ({session})" if session else "This session",
                session_lines, session_ids),
        Section("recent", "Important in the last day", recent_lines,
                [m.id for m in important]),
    ]
    header = f"# Memory brief — {local_now.strftime('%Y-%m-%d %H:%M %Z')}\n\n"
    total = budget_tokens * CHARS_PER_TOKEN - len(header)
    texts = _fit(sections, total)
    body = "\n".join(t for t in texts if t)
    if not body:
        body = "(nothing remembered yet)\n"
    markdown = header + body
    return Brief(
        markdown=markdown,
        budget_tokens=budget_tokens,
        sections={s.name: s.ids[: s.shown] for s in sections if s.shown},
    )


def _fit(sections: list[Section], total_chars: int) -> list[str]:
    """Render every section within its share; then hand what was left over to the
    sections that were cut short, in order of importance."""
    shares = dict(SHARES)
    budgets = {s.name: int(total_chars * shares[s.name]) for s in sections}
    texts: dict[str, str] = {}
    for s in sections:
        texts[s.name], s.shown = s.render(budgets[s.name])
    for _ in range(2):
        left = total_chars - sum(len(t) + 1 for t in texts.values() if t)
        for s in sections:
            if left <= 0:
                break
            if s.shown < len(s.lines):
                budget = len(texts[s.name]) + left
                text, shown = s.render(budget - (0 if texts[s.name] else 1))
                left -= len(text) - len(texts[s.name]) + (1 if text and not texts[s.name] else 0)
                texts[s.name], s.shown = text, shown
    return [texts[s.name] for s in sections]
