"""Finding triggers in conversation turns: each sentence masked (code and quoted text
blanked), the guards every sentence must pass, then the rules that may match it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..envelopes import strip as strip_envelopes
from .rules import PRIORITY, SPEAKING_ROLES, USER, Rules, default_rules

# Guards for every trigger.
_QUESTION_START = re.compile(
    r"^\W*(?:(?:so|and|but|ok|okay|hey|also|then|wait)\W+)?"
    r"(?:(?:do|does|did|should|shall|can|could|would|will|is|are|was|were|have|has|had|am|may|must)(?:n't)?\s+"
    r"(?:i|we|you|they|it|he|she|the|this|that|there|anyone|anything|our|my|your)\b"
    r"|(?:what|why|how|when|where|which|who|whom|whose)\b(?![^:]{0,40}:))",
    re.IGNORECASE,
)
_CONDITION = re.compile(
    r"\b(?:if|when|whenever|once|unless|whether|in case|suppose|supposing|assuming|imagine|"
    r"hypothetically|what if|let's say|as soon as|until|in order to|as if)\b",
    re.IGNORECASE,
)
_SPECULATION = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|might|hopefully|not sure|i think|i guess|i suppose|"
    r"unsure|wondering|i wonder|presumably|apparently|seems like|seems to)\b",
    re.IGNORECASE,
)
_SPECULATION_APPLIES = frozenset({"decision", "milestone", "failure"})
_REPORTED = re.compile(
    r"\b(?:according to|reportedly|allegedly|(?:he|she|they|someone|somebody|everyone|everybody|people|"
    r"the article|the report|the news|the paper|the post|tom|anna)\s+(?:said|says|told|wrote|writes|"
    r"claims?|claimed|thinks?|thought|reckons?|tweeted|posted|announced|mentioned))\b",
    re.IGNORECASE,
)
_THIRD_PARTY_SUBJECT = re.compile(
    r"^\W*(?:(?:my|his|her|their|our|a)\s+(?:best\s+)?(?:friend|friends|sister|brother|mom|mum|mother|dad|"
    r"father|parents|neighbou?r|neighbou?rs|colleague|colleagues|coworker|coworkers|co-worker|boss|"
    r"manager|cousin|uncle|aunt|son|daughter|wife|husband|partner|kids?|competitors?|rivals?|"
    r"landlord|roommate|teacher|doctor)(?:'s)?\b|(?:he|she|they|someone|somebody|everyone|people|most people|"
    r"some people|users|customers)\b)",
    re.IGNORECASE,
)
_THIRD_PARTY_APPLIES = frozenset({"decision", "milestone", "preference", "failure", "lesson"})
_LOG_LINE = re.compile(
    r"^\W*(?:FAILED|PASSED|ERROR|Traceback|E\s{2,}|\$\s|>>>|at\s+\S+\(|\d+\s+(?:failed|passed)\b|"
    r"[\w./-]+\.(?:py|rs|js|ts|go|java|rb|c|cpp|h)(?::\d+|::))",
)

_FENCE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|„[^“”\n]*[“”]|«[^»\n]*»")
_QUOTE_LINE = re.compile(r"^[ \t]*>.*$", re.MULTILINE)
_INDENTED_CODE = re.compile(r"^(?: {4}|\t).*$", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n\s*\n|\n(?=\s*(?:[-*•]\s|\d+[.)]\s))|\n")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_WORD = re.compile(r"[A-Za-zÀ-ÿ0-9']+")
_ASCII_LETTERS_AND_SPACES = {c: None for c in range(128) if chr(c).isalpha() or chr(c).isspace()}


@dataclass(frozen=True)
class Detection:
    """A sentence that fired a trigger, with where it came from."""

    trigger: str
    text: str
    rule: str
    role: str | None = None
    turn_index: int | None = None
    source_turns: tuple[Any, ...] = ()
    session_id: str | None = None
    agent: str | None = None
    at: str | None = None
    context: str = ""
    also: tuple[str, ...] = field(default=())


# --- sentences --------------------------------------------------------------------


def _blank(match: re.Match[str]) -> str:
    # Same length, newlines kept, so spans in the masked text are spans in the original.
    return "".join("\n" if ch == "\n" else " " for ch in match.group(0))


def mask(text: str) -> str:
    """Blank out code and quoted text (same length) and straighten apostrophes."""
    masked = text.replace("’", "'").replace("‘", "'")
    for pattern in (_FENCE, _INDENTED_CODE, _QUOTE_LINE, _INLINE_CODE, _QUOTED):
        masked = pattern.sub(_blank, masked)
    return masked


def sentences(text: str) -> list[tuple[str, str]]:
    """Split text into (original sentence, masked sentence) pairs."""
    masked = mask(text)
    out: list[tuple[str, str]] = []
    start = 0
    for boundary in list(_SENTENCE_END.finditer(masked)) + [None]:
        end = boundary.start() if boundary else len(masked)
        if boundary is not None and boundary.end() <= start:
            continue
        piece_masked = masked[start:end]
        piece = text[start:end]
        start = boundary.end() if boundary else len(masked)
        bullet = _BULLET.match(piece_masked)
        if bullet:
            piece_masked, piece = piece_masked[bullet.end():], piece[bullet.end():]
        if piece_masked.strip():
            out.append((piece.strip(), piece_masked.strip()))
    return out


def _is_question(masked: str) -> bool:
    stripped = masked.rstrip(" \t\"')]}*_")
    return stripped.endswith("?") or bool(_QUESTION_START.match(masked))


def _looks_like_code(original: str, masked: str) -> bool:
    if _LOG_LINE.match(original):
        return True
    # Dropping ASCII letters and spaces in C first leaves few characters to count in Python.
    rest = masked.translate(_ASCII_LETTERS_AND_SPACES)
    letters = len(masked) - len(rest) + sum(ch.isalpha() or ch.isspace() for ch in rest)
    return letters < 0.75 * len(masked)


def classify(text: str, role: str | None = USER, rules: Rules | None = None) -> list[tuple[str, str]]:
    """The triggers a text fires, best first, as (trigger, rule name) pairs."""
    rules = rules or default_rules()
    role = USER if role is None else role
    if role not in SPEAKING_ROLES:
        return []
    found: list[tuple[str, str]] = []
    for original, masked in sentences(strip_envelopes(text).text):
        found.extend(_classify_masked(original, masked, role, rules))
    return _ordered(found)


def _ordered(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for trigger, rule in found:
        seen.setdefault(trigger, rule)
    return sorted(seen.items(), key=lambda item: PRIORITY.index(item[0]))


def _classify_masked(original: str, masked: str, role: str, rules: Rules) -> list[tuple[str, str]]:
    candidates = rules.candidates(masked, role)
    if not candidates:  # the checks below only ever reject a hit; with no rule to try there is none
        return []
    words = _WORD.findall(masked)
    if not (rules.min_words <= len(words) <= rules.max_words):
        return []
    if _is_question(masked) or _looks_like_code(original, masked):
        return []
    if any(guard.search(masked) for guard in rules.guards):
        return []
    hits: list[tuple[str, str]] = []
    for rule in candidates:
        match = rule.regex.search(masked)
        if not match:
            continue
        # Most sentences match nothing, so the guards below run only for a match.
        if _REPORTED.search(masked) or _CONDITION.search(masked[: match.start()]):
            continue
        if rule.trigger in _THIRD_PARTY_APPLIES and _THIRD_PARTY_SUBJECT.match(masked):
            continue
        if rule.trigger in _SPECULATION_APPLIES and _SPECULATION.search(masked):
            continue
        if any(ex.search(masked) for ex in rules.excludes.get(rule.trigger, ())):
            continue
        hits.append((rule.trigger, rule.name))
    return hits


# --- turns ------------------------------------------------------------------------


def _field(turn: Any, *names: str) -> Any:
    for name in names:
        if isinstance(turn, Mapping):
            if turn.get(name) is not None:
                return turn[name]
        elif getattr(turn, name, None) is not None:
            return getattr(turn, name)
    return None


def detect(text: str, role: str | None = USER, rules: Rules | None = None) -> list[Detection]:
    """Every trigger sentence in one text said by one role."""
    return detect_triggers([{"role": role or USER, "content": text}], rules=rules)


def detect_triggers(turns: Iterable[Any], rules: Rules | None = None) -> list[Detection]:
    """Scan conversation turns (dicts or objects with role and content/text) for triggers.

    Only user and assistant turns are read; tool output, system prompts and the like
    never make a trigger. A harness's envelope (OpenClaw's timestamp prefix, channel
    metadata, Claude Code's system reminders) is taken off first. Each detection keeps
    the id of the turn it came from.
    """
    rules = rules or default_rules()
    detections: list[Detection] = []
    for index, turn in enumerate(turns):
        role = _field(turn, "role")
        role = USER if role is None else str(role).lower()
        if role not in SPEAKING_ROLES:
            continue
        text = _field(turn, "content", "text")
        if not isinstance(text, str) or not text.strip():
            continue
        text = strip_envelopes(text).text  # "[Sat 2026-11-28 19:00 GMT+1] remember that …"
        turn_id = _field(turn, "id", "uid", "turn_id", "key")
        parts = sentences(text)
        for position, (original, masked) in enumerate(parts):
            found = _ordered(_classify_masked(original, masked, role, rules))
            if not found:
                continue
            trigger, rule = found[0]
            detections.append(
                Detection(
                    trigger=trigger,
                    text=original,
                    rule=rule,
                    role=role,
                    turn_index=index,
                    source_turns=(turn_id,) if turn_id is not None else (),
                    session_id=_field(turn, "session_id"),
                    agent=_field(turn, "agent"),
                    at=_iso_or_none(_field(turn, "created_at", "at", "ts", "timestamp")),
                    context=_context(parts, position),
                    also=tuple(t for t, _ in found[1:]),
                )
            )
    return detections


def _iso_or_none(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else str(value)


def _context(parts: list[tuple[str, str]], position: int, limit: int = 400) -> str:
    """The sentence, followed by the next ones when it is a bare label ("What broke: X.")."""
    text = parts[position][0]
    following = parts[position + 1 :]
    while following and len(_WORD.findall(text)) < 12 and len(text) < limit:
        text = f"{text} {following[0][0]}"
        following = following[1:]
    return text[:limit]
