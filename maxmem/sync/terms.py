"""FTS5's own tokens, carried to PostgreSQL so that keyword scores there equal brain.db's.

PostgreSQL's parsers and stemmers (Snowball) split and stem differently from FTS5's
`porter unicode61` tokenizer, and PostgreSQL has no bm25. So the push reads each
memory's keyword-index columns from the same source FTS5 reads them (title, content,
tags and the session context with the date written out, through the
`memories_fts_source` view), tokenizes them with brain.db's FTS5 tokenizer (through
apsw) and sends the tokens as a tsvector literal: one weight label per column (title
A, content D, tags B, context C; search applies the bm25 column weights to those
labels), one empty position between columns so that a phrase never spans two of them.
The token count goes along as `fts_length`, FTS5's document length, and each token's
count per column as JSON (`fts_freq`), from which search reads a single word's
frequency without unnesting the tsvector (4x faster at 100k memories); the tsvector
serves the GIN index and phrases of several tokens.
Search tokenizes the query the same way.

PostgreSQL limits: positions stop at 16383 and a lexeme keeps at most 256 of them,
so in memories longer than ~16k tokens a phrase of several words can be undercounted
(single words are counted exactly from `fts_freq`). Lexemes over 2046 bytes
(PostgreSQL's limit) are left out of the tsvector but still counted in the length.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import DatabaseError
from ..search import fts
from ..search.hybrid import BM25_WEIGHTS
from ..store.db import Database

MAX_POSITION = 16383
MAX_POSITIONS_PER_LEXEME = 256
MAX_LEXEME_BYTES = 2046
MAX_TSVECTOR_BYTES = 900_000  # PostgreSQL refuses tsvectors over 1 MB
# The tsvector label of each FTS5 column, in the table's order (title, content, tags,
# context): search maps label i back to the bm25 weight of column i.
COLUMN_LABELS = ("A", "D", "B", "C")


def column_weights(count: int) -> list[float]:
    """bm25's weight of each FTS5 column as local search passes them (1.0 when unset)."""
    return [float(w) for w in BM25_WEIGHTS[:count]] + [1.0] * max(0, count - len(BM25_WEIGHTS))


class Tokenizer(fts.Tokenizer):
    """The keyword index's tokenizer (fts.Tokenizer), and the tsvector of a memory."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        if not 1 <= len(self.columns) <= len(COLUMN_LABELS):
            raise DatabaseError(
                f"memories_fts has {len(self.columns)} columns; the PostgreSQL sync handles at most "
                f"{len(COLUMN_LABELS)}: upgrade maxmem"
            )

    def document(self, values: Sequence[str | None]) -> Document:
        """The tsvector literal, token count and per-column counts of one memory's FTS5
        columns (`values` in the order of `self.columns`)."""
        positions: dict[str, list[str]] = {}
        counts: dict[str, list[int]] = {}
        length = 0
        position = 0
        width = len(values)
        for column, (label, text) in enumerate(zip(COLUMN_LABELS, values)):
            tokens = self.tokens(text)
            length += len(tokens)
            for token in tokens:
                counts.setdefault(token, [0] * width)[column] += 1
                position += 1
                if position > MAX_POSITION:
                    break
                slots = positions.setdefault(token, [])
                if len(slots) < MAX_POSITIONS_PER_LEXEME:
                    slots.append(f"{position}{label}" if label != "D" else str(position))
            position += 1  # the gap between columns
        return Document(_literal(positions), length, json.dumps(counts, ensure_ascii=False, separators=(",", ":")))

@dataclass(frozen=True)
class Document:
    terms: str  # a tsvector literal
    length: int  # FTS5's token count over all columns
    counts: str  # JSON {token: [count in each column]}: exact, uncapped


def quote_lexeme(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def _literal(positions: dict[str, list[str]]) -> str:
    parts, size = [], 0
    for token, slots in positions.items():
        if len(token.encode("utf-8")) > MAX_LEXEME_BYTES:
            continue
        part = f"{quote_lexeme(token)}:{','.join(slots)}"
        size += len(part) + 1
        if size > MAX_TSVECTOR_BYTES:
            break
        parts.append(part)
    return " ".join(parts)


def phrase_query(tokens: Sequence[str]) -> str:
    """A tsquery literal matching the tokens as adjacent words."""
    return " <-> ".join(quote_lexeme(t) for t in tokens)


def query_payload(phrases: Sequence[Sequence[str]]) -> list[dict[str, Any]]:
    """The phrases as the JSON the search SQL unpacks: tsquery text and tokens."""
    return [{"q": phrase_query(p), "t": list(p)} for p in phrases]
