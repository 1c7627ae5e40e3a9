"""Cut a session's turns into chunks of a few hundred tokens: the `conversation` memories.

Turns are kept whole when they fit: a chunk ends before the turn that would push it
past `target_tokens`, and the next chunk starts with the last turn(s) of the previous
one (up to `overlap_tokens`) so a question and its answer are found together. Only a
turn longer than `max_tokens` is split, at paragraph, line, sentence or word breaks.
Tool results appear in the text (truncated): a port number in `docker ps` output is
exactly what a user asks about later.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..memory import estimate_tokens
from .text import truncate

TARGET_TOKENS = 350  # multilingual-e5 reads 512 tokens; leave room for the prefix
OVERLAP_TOKENS = 60
MAX_TOKENS = 480
TOOL_RESULT_CHARS = 800  # of a tool result, inside a chunk (the table keeps more)
ARGUMENT_CHARS = 300


@dataclass
class ChunkTurn:
    """A stored turn, as the chunker needs it."""

    seq: int
    role: str
    text: str
    timestamp: str
    entry_ids: list[str] = field(default_factory=list)
    speaker: str | None = None
    # (name, arguments JSON text) of the calls an assistant turn made
    calls: list[tuple[str | None, str | None]] = field(default_factory=list)
    tool_name: str | None = None  # for a tool result
    tool_arguments: str | None = None
    tool_status: str | None = None


@dataclass
class Chunk:
    text: str
    first_seq: int
    last_seq: int
    started_at: str
    ended_at: str
    entry_ids: list[str]
    seqs: list[int]


@dataclass
class _Piece:
    turn: ChunkTurn
    text: str
    tokens: int


def _arguments(arguments: str | None) -> str:
    if not arguments:
        return ""
    try:
        value = json.loads(arguments)
    except ValueError:
        value = None
    if isinstance(value, dict):
        text = ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}"
                         for k, v in value.items())
    else:
        text = arguments
    return truncate(text.replace("\n", " "), ARGUMENT_CHARS)


def render(turn: ChunkTurn) -> str:
    """One turn as a readable, searchable paragraph."""
    if turn.role == "tool":
        tool = turn.tool_name or "tool"
        args = _arguments(turn.tool_arguments)
        status = " (error)" if turn.tool_status == "error" else ""
        head = f"tool {tool}({args}){status}:" if args else f"tool {tool}{status}:"
        return f"{head} {truncate(turn.text, TOOL_RESULT_CHARS)}".rstrip()
    who = f"{turn.role} ({turn.speaker})" if turn.speaker else turn.role
    lines = [f"{who}: {turn.text}" if turn.text else f"{who}:"]
    for name, arguments in turn.calls:
        args = _arguments(arguments)
        lines.append(f"→ {name or 'tool'}({args})")
    return "\n".join(lines)


_BREAKS = (re.compile(r"\n\s*\n"), re.compile(r"\n"), re.compile(r"(?<=[.!?。！？])\s+"), re.compile(r"\s+"))


def _split(text: str, limit: int) -> list[str]:
    """Split a long text into parts of at most `limit` tokens, at the coarsest break
    that works; hard-cut only a single word longer than the limit."""
    if estimate_tokens(text) <= limit:
        return [text]
    for pattern in _BREAKS:
        parts = [p for p in pattern.split(text) if p.strip()]
        if len(parts) < 2:
            continue
        out: list[str] = []
        current = ""
        sep = "\n\n" if pattern is _BREAKS[0] else ("\n" if pattern is _BREAKS[1] else " ")
        for part in parts:
            candidate = f"{current}{sep}{part}" if current else part
            if estimate_tokens(candidate) <= limit:
                current = candidate
                continue
            if current:
                out.append(current)
            if estimate_tokens(part) > limit:
                out.extend(_split(part, limit))
                current = ""
            else:
                current = part
        if current:
            out.append(current)
        return out
    size = limit * 4  # no break at all: cut by bytes' worth of characters
    return [text[i:i + size] for i in range(0, len(text), size)]


def chunk(turns: Sequence[ChunkTurn], target_tokens: int = TARGET_TOKENS,
          overlap_tokens: int = OVERLAP_TOKENS, max_tokens: int = MAX_TOKENS,
          lead: Sequence[ChunkTurn] = ()) -> list[Chunk]:
    """Chunks over `turns` (in order), each a few hundred tokens.

    `lead` are the turns just before, already stored in earlier chunks: the first
    chunk starts with as much of their tail as fits the overlap, so a question
    captured in one run and its answer captured in the next are still found together.
    """
    max_tokens = max(max_tokens, target_tokens)
    pieces = _pieces(turns, target_tokens, max_tokens)
    chunks: list[Chunk] = []
    current = _overlap(_pieces(lead, target_tokens, max_tokens), overlap_tokens,
                       max_tokens - (pieces[0].tokens if pieces else 0))
    fresh = False  # does `current` hold anything not already in an earlier chunk?
    for piece in pieces:
        size = sum(p.tokens for p in current)
        if current and fresh and size + piece.tokens > target_tokens:
            chunks.append(_make(current))
            current = _overlap(current, overlap_tokens, max_tokens - piece.tokens)
        current.append(piece)
        fresh = True
    if current and fresh:
        chunks.append(_make(current))
    return chunks


def _pieces(turns: Sequence[ChunkTurn], target_tokens: int, max_tokens: int) -> list[_Piece]:
    pieces: list[_Piece] = []
    for turn in turns:
        text = render(turn)
        for part in _split(text, target_tokens if estimate_tokens(text) > max_tokens else max_tokens):
            pieces.append(_Piece(turn, part, estimate_tokens(part)))
    return pieces


def _overlap(pieces: list[_Piece], budget: int, room: int) -> list[_Piece]:
    tail: list[_Piece] = []
    used = 0
    for piece in reversed(pieces):
        if used + piece.tokens > min(budget, room):
            break
        tail.insert(0, piece)
        used += piece.tokens
    return tail


def _make(pieces: list[_Piece]) -> Chunk:
    seqs: list[int] = []
    entry_ids: list[str] = []
    for piece in pieces:
        if piece.turn.seq not in seqs:
            seqs.append(piece.turn.seq)
            entry_ids.extend(e for e in piece.turn.entry_ids if e not in entry_ids)
    return Chunk(
        text="\n\n".join(p.text for p in pieces),
        first_seq=min(seqs),
        last_seq=max(seqs),
        started_at=min(p.turn.timestamp for p in pieces),
        ended_at=max(p.turn.timestamp for p in pieces),
        entry_ids=entry_ids,
        seqs=seqs,
    )
