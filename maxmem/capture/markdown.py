"""Markdown transcripts: role-prefixed paragraphs, e.g. OpenClaw's session-memory files.

    # Session: 2026-01-16 14:30:00 UTC
    - **Session Key**: agent:main:main
    - **Session ID**: abc123def456
    ## Conversation Summary
    user: …
    assistant: …

A turn starts at a line `role: text` (optionally bold: `**User:**`) or a heading that
is only a role (`## Assistant`) and runs until the next one. There are no ids, so a
turn is keyed by a hash of its role, its text and how many identical turns came
before it: editing one turn does not duplicate the others.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from .model import Parsed, ReadContext, Session, Turn, parts_hash, utc
from .text import clean

FORMAT = "markdown"

ROLES = {"user": "user", "human": "user", "you": "user", "assistant": "assistant", "ai": "assistant",
         "claude": "assistant", "chatgpt": "assistant", "agent": "assistant", "tool": "tool",
         "system": None}
_ROLE = "|".join(ROLES)
_PREFIX = re.compile(rf"^(?:\*\*|__)?({_ROLE})(?:\*\*|__)?[ \t]*:(?:\*\*|__)?[ \t]?(.*)$", re.IGNORECASE)
_HEADING = re.compile(rf"^#{{1,6}}[ \t]*({_ROLE})[ \t]*:?[ \t]*$", re.IGNORECASE)
_SESSION_HEADER = re.compile(r"^#[ \t]*Session:[ \t]*(.+?)[ \t]*$", re.IGNORECASE)
_BULLET = re.compile(r"^[-*][ \t]+\*\*([^*]+)\*\*:[ \t]*(.*)$")


def parse_document(data: bytes, ctx: ReadContext) -> Parsed:
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\x00", "")
    out = Parsed()
    session_id = Path(ctx.path).stem
    when = ctx.default_time
    meta: dict[str, str] = {}
    turns: list[tuple[str | None, list[str]]] = []
    preamble: list[str] = []
    for line in text.split("\n"):
        header = _SESSION_HEADER.match(line)
        bullet = _BULLET.match(line) if not turns else None
        role_match = _PREFIX.match(line) or _HEADING.match(line)
        if header and not turns:
            when = utc(header.group(1).replace(" UTC", "Z"), when) or when
        elif bullet:
            name, value = bullet.group(1).strip(), bullet.group(2).strip()
            meta[name] = value
            if name.lower() == "session id" and value:
                session_id = value
        elif role_match:
            role = ROLES[role_match.group(1).lower()]
            rest = role_match.group(2) if role_match.re is _PREFIX else ""
            turns.append((role, [rest] if rest else []))
        elif turns:
            turns[-1][1].append(line)
        elif not line.startswith("#"):
            preamble.append(line)

    sess = out.session(Session(id=session_id, format=FORMAT, agent="markdown", started_at=when,
                               metadata={k.lower().replace(" ", "_"): v for k, v in meta.items()}))
    seen: Counter[tuple[str, str]] = Counter()
    blocks: list[tuple[str | None, str]] = []
    if clean("\n".join(preamble)):
        blocks.append(("summary", clean("\n".join(preamble))))
    blocks.extend((role, clean("\n".join(lines))) for role, lines in turns)
    for role, body in blocks:
        if role is None:
            out.dropped["role:system"] += 1
            continue
        if not body:
            out.dropped["empty"] += 1
            continue
        seen[(role, body)] += 1
        key = "h" + parts_hash(role, body, seen[(role, body)])
        out.turns.append(Turn(sess.id, key, role, body, when, entry_ids=[key],
                              kind="compaction" if role == "summary" else "message",
                              fingerprint=parts_hash(sess.id, key)))
    return out
