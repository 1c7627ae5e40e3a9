"""Work tracking: observations that stay open until resolved.

An observation is a memory whose `kind` is its type (project, decision, failure, ...)
and which may be *work*: `status` "ongoing", or "active" with a `started_at`. Work
stays open, and shows in `maxmem active` and in the boot context with how long it
has been open, until `resolve` sets `resolved_at` (the duration is kept: it is
resolved_at − started_at).

`ensure_observation` is the observation protocol for projects: at the start of a task
the agent calls it with the project's name; it creates the project's observation
from a template only if none exists yet, and says which happened.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from .clock import iso, parse_time
from .errors import InvalidInput
from .memory import Memory, check_kind

if TYPE_CHECKING:  # pragma: no cover
    from .brain import Brain

# Work that is open: ongoing, or active with a start time; the most important first.
OPEN_WORK_SQL = """
SELECT * FROM memories
WHERE (status = 'ongoing' OR (status = 'active' AND started_at IS NOT NULL))
  AND importance >= ?
ORDER BY importance DESC, coalesce(started_at, created_at) ASC
LIMIT ?
"""

# Everything that started, was created or was resolved in a window (not raw conversation).
TIMELINE_SQL = """
SELECT * FROM memories
WHERE category != 'conversation'
  AND (created_at >= ? OR started_at >= ? OR resolved_at >= ?)
ORDER BY created_at ASC, id ASC
"""

FIND_PROJECT_SQL = """
SELECT * FROM memories
WHERE kind = 'project' AND status != 'superseded'
  AND json_extract(metadata, '$.project') = ?
ORDER BY id ASC
LIMIT 1
"""

PROJECT_TEMPLATE = """\
Project: {project}
Opened: {opened}
Location: {location}
Assigned by: {assigned_by}
Key details: {key_details}
Next steps: {next_steps}"""

UNKNOWN = "(not recorded yet)"


@dataclass(frozen=True)
class OpenWork:
    """A piece of open work and how long it has been open."""

    memory: Memory
    hours_open: float

    def to_dict(self) -> dict[str, Any]:
        return {"hours_open": round(self.hours_open, 1), "memory": self.memory.to_dict()}


@dataclass(frozen=True)
class Ensured:
    """What ensure_observation did: found the project's observation, or created it."""

    memory: Memory
    created: bool
    project: str

    def describe(self) -> str:
        verb = "created" if self.created else "already exists:"
        return f"{verb} observation #{self.memory.id} for project {self.project!r}"

    def to_dict(self) -> dict[str, Any]:
        return {"created": self.created, "project": self.project, "memory": self.memory.to_dict()}


def category_for(kind: str) -> str:
    """Projects are kept for good; other observations are running (daily) context."""
    return "project" if kind == "project" else "daily"


def observe(
    brain: Brain,
    type: str,
    content: str,
    title: str | None = None,
    importance: float = 0.5,
    tags: Sequence[str] | None = None,
    ongoing: bool = False,
    started: Any = None,
    category: str | None = None,
    session_id: str | None = None,
    agent: str | None = None,
    source: str = "manual",
) -> Memory:
    """Record an observation; `ongoing` (or a `started` time) makes it open work.

    `started` is a time already read (datetime or ISO text); the CLI turns phrases
    like "2 days ago" into one with nlquery.parse_when.
    """
    kind = check_kind(type)
    now = brain.clock.now()
    started_at = parse_time(started) if started is not None else (now if ongoing else None)
    if started_at is not None and started_at > now:
        raise InvalidInput("started is in the future: give a time in the past")
    return brain.remember(
        content,
        category=category or category_for(kind),
        kind=kind,
        title=title,
        tags=list(tags or []),
        importance=importance,
        status="ongoing" if ongoing else "active",
        started_at=iso(started_at) if started_at is not None else None,
        session_id=session_id,
        agent=agent,
        source=source,
    )


def resolve(brain: Brain, id_or_uid: int | str, title: str | None = None,
            content: str | None = None) -> Memory:
    """Close a piece of work: status resolved, resolved_at now; a `content` note is
    appended as the resolution, a `title` replaces the old one."""
    memory = brain.get(id_or_uid)
    if memory.status == "resolved":
        raise InvalidInput(f"#{memory.id} is already resolved (at {memory.resolved_at})")
    if memory.status == "superseded":
        raise InvalidInput(f"#{memory.id} is superseded: resolve the memory that replaced it")
    fields: dict[str, Any] = {"status": "resolved", "resolved_at": iso(brain.clock.now())}
    if memory.started_at is None:
        fields["started_at"] = memory.created_at  # so the duration is always known
    if title is not None:
        fields["title"] = title
    if content is not None:
        if not content.strip():
            raise InvalidInput("the resolution note is empty: leave out --content or write one")
        fields["content"] = f"{memory.content}\n\nResolution: {content.strip()}"
    return brain.update(memory.id, **fields)


def hours_between(start: str | None, end: datetime) -> float:
    if start is None:
        return 0.0
    return max(0.0, (end - parse_time(start)).total_seconds() / 3600)


def duration_hours(memory: Memory) -> float | None:
    """How long a resolved piece of work was open."""
    if memory.resolved_at is None:
        return None
    return hours_between(memory.started_at or memory.created_at, parse_time(memory.resolved_at))


def active(brain: Brain, min_importance: float | None = None, limit: int = 100) -> list[OpenWork]:
    """Open work, most important first, each with how many hours it has been open."""
    if min_importance is not None and not 0.0 <= float(min_importance) <= 1.0:
        raise InvalidInput("min-importance must be from 0 to 1")
    if limit < 1:
        raise InvalidInput("limit must be at least 1")
    now = brain.clock.now()
    rows = brain.db.rows(OPEN_WORK_SQL, (float(min_importance or 0.0), int(limit)))
    return [
        OpenWork(m, hours_between(m.started_at or m.created_at, now))
        for m in (Memory.from_row(r) for r in rows)
    ]


@dataclass(frozen=True)
class TimelineEvent:
    at: str
    event: str  # "started", "recorded", "resolved"
    memory: Memory

    def to_dict(self) -> dict[str, Any]:
        out = {"at": self.at, "event": self.event, "id": self.memory.id, "kind": self.memory.kind,
               "title": self.memory.title, "content": self.memory.content,
               "status": self.memory.status}
        if self.event == "resolved":
            out["hours_open"] = round(duration_hours(self.memory) or 0.0, 1)
        return out


def timeline(brain: Brain, days: int = 30) -> list[TimelineEvent]:
    """What started, was recorded and was resolved in the last `days` days, in time order."""
    if not isinstance(days, int) or days < 1 or days > 36500:
        raise InvalidInput("days must be a whole number from 1 to 36500")
    since = iso(brain.clock.now() - timedelta(days=days))
    events: list[TimelineEvent] = []
    for row in brain.db.rows(TIMELINE_SQL, (since, since, since)):
        m = Memory.from_row(row)
        if m.started_at and m.started_at >= since and m.started_at != m.created_at:
            events.append(TimelineEvent(m.started_at, "started", m))
        if m.created_at >= since:
            events.append(TimelineEvent(m.created_at, "started" if m.started_at == m.created_at
                                        else "recorded", m))
        if m.resolved_at and m.resolved_at >= since:
            events.append(TimelineEvent(m.resolved_at, "resolved", m))
    events.sort(key=lambda e: (e.at, e.memory.id))
    return events


def project_key(project: str) -> str:
    """The name a project is found by: lowercase words joined by hyphens."""
    key = re.sub(r"[^\w.]+", "-", project.strip().lower()).strip("-.")
    if not key:
        raise InvalidInput("the project name is empty: give one, e.g. --project maxmem")
    return key[:100]


_TASK_WORDS = frozenset(
    """a an the to for of in on at with and or please can you could would we i my our
    fix add build make write implement update create set up setup get improve refactor
    test debug finish start continue work working help me let us let's should need
    bug bugs issue issues feature task some new this that it is are""".split()
)


def project_from_task(task: str) -> str:
    """A project name from a task description.

    In order: a quoted name; the word before or after "project"/"repo"; the last part
    of a path; else the first three meaningful words.
    """
    if not isinstance(task, str) or not task.strip():
        raise InvalidInput("the task is empty: describe it, e.g. --from-task 'fix login in acme-web'")
    text = task.strip()
    if m := re.search(r'"([^"]+)"|“([^”]+)”|`([^`]+)`', text):
        return project_key(next(g for g in m.groups() if g))
    if m := re.search(r"\b(?:project|repo|repository|codebase)\s+(?:called\s+|named\s+)?"
                      r"([\w][\w.\-]*)", text, re.I):
        if m.group(1).lower() not in _TASK_WORDS:
            return project_key(m.group(1))
    if m := re.search(r"\b([\w][\w.\-]*)\s+(?:project|repo|repository|codebase)\b", text, re.I):
        if m.group(1).lower() not in _TASK_WORDS:
            return project_key(m.group(1))
    if m := re.search(r"(?:~|\.{0,2})?/?(?:[\w.\-]+/)+([\w][\w.\-]*)/?", text):
        return project_key(m.group(1))
    words = [w for w in re.findall(r"[\w][\w.\-]*", text) if w.lower() not in _TASK_WORDS]
    if not words:
        raise InvalidInput(f"cannot tell the project from {text[:60]!r}: pass --project NAME")
    return project_key("-".join(words[:3]))


def ensure_observation(
    brain: Brain,
    project: str,
    location: str | None = None,
    assigned_by: str | None = None,
    key_details: str | None = None,
    next_steps: str | None = None,
    session_id: str | None = None,
    agent: str | None = None,
) -> Ensured:
    """The project's observation: found if one exists, else created from the template
    (kind project, ongoing, started now). Never creates a second one."""
    if not isinstance(project, str):
        raise InvalidInput("project must be text")
    key = project_key(project)
    content = PROJECT_TEMPLATE.format(
        project=project.strip(),
        opened=brain.clock.now().strftime("%Y-%m-%d %H:%M:%S UTC"),
        location=location or UNKNOWN,
        assigned_by=assigned_by or UNKNOWN,
        key_details=key_details or UNKNOWN,
        next_steps=next_steps or UNKNOWN,
    )
    if brain.db.one(FIND_PROJECT_SQL, (key,)) is None:
        # Embed before the write transaction opens: a slow API must not hold the lock.
        brain.prefetch_vectors([{"content": content, "title": project.strip(), "category": "project"}])
    with brain.db.atomic():  # find-then-create must not race another writer
        row = brain.db.one(FIND_PROJECT_SQL, (key,))
        if row is not None:
            return Ensured(Memory.from_row(row), False, key)
        metadata = {"project": key}
        if location:
            metadata["location"] = location
        if assigned_by:
            metadata["assigned_by"] = assigned_by
        memory = brain.remember(
            content,
            category="project",
            kind="project",
            title=project.strip(),
            tags=["project"],
            importance=0.7,
            status="ongoing",
            started_at=iso(brain.clock.now()),
            metadata=metadata,
            session_id=session_id,
            agent=agent,
            source="agent",
        )
    return Ensured(memory, True, key)


def format_hours(hours: float) -> str:
    """'45 min', '5.2 h', '3.1 days'."""
    if hours < 1:
        return f"{round(hours * 60)} min"
    if hours < 48:
        return f"{hours:.1f} h"
    return f"{hours / 24:.1f} days"


def local(at: str, tz: tzinfo = UTC) -> str:
    return parse_time(at).astimezone(tz).strftime("%Y-%m-%d %H:%M")
