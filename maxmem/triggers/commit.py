"""Committing triggers to core: one at a time (`commit`: the CLI and the MCP tool), those
found in turns capture has just stored (`commit_new_turns`), and a sweep of the stored
conversation memories (`sweep`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..clock import iso, parse_since, parse_time
from ..errors import InvalidInput
from ..memory import Memory
from .detect import Detection, detect_triggers
from .rules import TRIGGERS, USER, Rules, load_rules

if TYPE_CHECKING:  # pragma: no cover
    from ..brain import Brain, Remembered


def check_trigger(trigger: Any) -> str:
    if trigger not in TRIGGERS:
        raise InvalidInput(f"unknown trigger {trigger!r}: use one of {', '.join(TRIGGERS)}")
    return str(trigger)


def _importance(brain: Brain, importance: float | None) -> float:
    return importance if importance is not None else brain.config.triggers.importance


def commit(
    brain: Brain,
    trigger: str,
    text: str,
    title: str | None = None,
    tags: Sequence[str] | None = None,
    importance: float | None = None,
    project: str | None = None,
    session_id: str | None = None,
    agent: str | None = None,
    source_turns: Sequence[Any] | None = None,
    at: Any = None,
    rule: str | None = None,
) -> Remembered:
    """Write a trigger to core: kind = the trigger, high importance, provenance, never expiring.

    A near-identical core memory (the same fact restated, see curation) is updated
    instead of duplicated: tags and source turns are merged, importance kept at the
    higher, and the count of restatements goes up. Returns what `Brain.remember_item` did:
    "added", "updated", or "unchanged" (the same text, already committed with as much).
    """
    trigger = check_trigger(trigger)
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("the text to commit is empty: say what was decided, learned, …")
    if project is not None and (not isinstance(project, str) or not project.strip()):
        raise InvalidInput("project must be a non-empty name")
    metadata: dict[str, Any] = {"trigger": trigger}
    if project:
        metadata["project"] = project.strip()
    if source_turns:
        metadata["source_turns"] = [str(t) for t in source_turns]
    if rule:
        metadata["rule"] = rule
    item: dict[str, Any] = {
        "content": text,
        "category": "core",
        "kind": trigger,
        "title": title,
        "tags": [] if tags is None else tags,
        "importance": _importance(brain, importance),
        "metadata": metadata,
        "source": "trigger",
        "agent": agent,
        "session_id": session_id,
        "created_at": iso(parse_time(at)) if at is not None else None,
    }
    return brain.remember_item({k: v for k, v in item.items() if v is not None}, merge_exact=True, near=True)


def commit_detections(brain: Brain, detections: Iterable[Detection]) -> dict[str, Any]:
    """Commit each detection to core; returns counts and the memories touched."""
    counts = {"added": 0, "updated": 0, "unchanged": 0}
    memories: list[Memory] = []
    for detection in detections:
        result = commit(
            brain,
            detection.trigger,
            detection.context or detection.text,
            session_id=detection.session_id,
            agent=detection.agent,
            source_turns=detection.source_turns,
            at=detection.at,
            rule=detection.rule,
        )
        counts[result.action] += 1
        memories.append(result.memory)
    return {**counts, "memories": memories}


def commit_new_turns(brain: Brain, turns: Iterable[Any]) -> dict[str, Any]:
    """Capture's hook: commit the triggers found in turns it has just stored.

    `[triggers] capture = false` turns it off. Call it after the turns' transaction
    (commit embeds, and an API call must not hold the write lock).
    """
    if not brain.config.triggers.capture:
        return {"detections": 0, "added": 0, "updated": 0, "unchanged": 0, "memories": []}
    detections = detect_triggers(turns, rules=load_rules(brain.config.triggers))
    return {"detections": len(detections), **commit_detections(brain, detections)}


# --- sweeping conversation memories -------------------------------------------------

# The chunker renders each turn as "role: text" (or "role (speaker): text"); tool
# results as "tool name(args): ..." and an assistant's calls as "→ name(args)" lines.
_ROLE_LINE = re.compile(
    r"^(?:(user|assistant|summary|system)(?: \([^)\n]*\))?|(tool)(?: [^\n]*?)?):(?:[ \t]|$)", re.MULTILINE
)


def turns_of(content: str) -> list[dict[str, str]]:
    """Split a conversation memory back into its turns (role and text)."""
    marks = list(_ROLE_LINE.finditer(content))
    if not marks:
        return [{"role": USER, "content": content}]
    turns = []
    for mark, following in zip(marks, marks[1:] + [None]):
        end = following.start() if following else len(content)
        text = content[mark.end() : end]
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("→"))
        turns.append({"role": mark.group(1) or mark.group(2), "content": text.strip()})
    return turns


SWEEP_SQL = """
SELECT * FROM memories
WHERE category = 'conversation' AND created_at >= ? AND id > ?
ORDER BY id
LIMIT ?
"""


def sweep(brain: Brain, since: Any = "1d", rules: Rules | None = None, batch: int = 200) -> dict[str, Any]:
    """Scan conversation memories created since `since` ("1d", "12h", or a time) and
    commit the triggers found in them. Running it twice adds nothing new."""
    rules = rules or load_rules(brain.config.triggers)
    start = parse_since(since, brain.clock.now())
    scanned, found = 0, 0
    totals = {"added": 0, "updated": 0, "unchanged": 0}
    last_id = 0
    while True:
        rows = brain.db.rows(SWEEP_SQL, (iso(start), last_id, batch))
        if not rows:
            break
        last_id = rows[-1]["id"]
        for row in rows:
            memory = Memory.from_row(row)
            scanned += 1
            turns = [
                {**t, "id": memory.uid, "session_id": memory.session_id, "agent": memory.agent, "at": memory.created_at}
                for t in turns_of(memory.content)
            ]
            detections = detect_triggers(turns, rules=rules)
            found += len(detections)
            result = commit_detections(brain, detections)
            for key in totals:
                totals[key] += result[key]
    return {"since": iso(start), "scanned": scanned, "detections": found, **totals}
