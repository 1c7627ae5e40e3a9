"""FTS5's own tokens, carried to PostgreSQL so that keyword scores there equal brain.db's.

PostgreSQL's parsers and stemmers (Snowball) split and stem differently from FTS5's
`porter unicode61` tokenizer, and PostgreSQL has no bm25. So the exporter tokenizes
each memory with brain.db's FTS5 tokenizer (through apsw) and sends the tokens as a
tsvector literal: title tokens weighted A, content D, tags B (the bm25 column weights
are applied to those labels in SQL), one empty position between columns so that a
phrase never spans two of them. The token count goes along as `fts_length`, FTS5's
document length. Search tokenizes the query the same way.

PostgreSQL limits: positions stop at 16383 and a lexeme keeps at most 256 of them,
so in memories longer than ~16k tokens, or with one word more than 256 times, the
keyword score undercounts a little compared with FTS5. Lexemes over 2046 bytes
(PostgreSQL's limit) are left out of the tsvector but still counted in the length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import apsw

from ..db import Database
from ..search import keyword_terms

MAX_POSITION = 16383
MAX_POSITIONS_PER_LEXEME = 256
MAX_LEXEME_BYTES = 2046
MAX_TSVECTOR_BYTES = 900_000  # PostgreSQL refuses tsvectors over 1 MB
# The label of each FTS5 column (title, content, tags) in the tsvector.
COLUMN_LABELS = ("A", "D", "B")
DEFAULT_TOKENIZE = "porter unicode61 remove_diacritics 2"
_TOKENIZE = re.compile(r"tokenize\s*=\s*'([^']*)'", re.IGNORECASE)


def tokenizer_spec(db: Database) -> list[str]:
    """The `tokenize` argument of memories_fts, as words: ["porter", "unicode61", ...]."""
    sql = db.scalar("SELECT sql FROM sqlite_master WHERE name = 'memories_fts'") or ""
    found = _TOKENIZE.search(sql)
    return (found.group(1) if found else DEFAULT_TOKENIZE).split()


class Tokenizer:
    """brain.db's FTS5 tokenizer, callable from Python."""

    def __init__(self, db: Database) -> None:
        name, *args = tokenizer_spec(db)
        self._tokenize = db.conn.fts5_tokenizer(name, args)

    def tokens(self, text: str | None, reason: int = apsw.FTS5_TOKENIZE_DOCUMENT) -> list[str]:
        if not text:
            return []
        return [t[2] for t in self._tokenize(text.encode("utf-8"), reason, None)]

    def document(self, title: str | None, content: str, tags_json: str) -> "Document":
        """The tsvector literal and token count of one memory's three FTS5 columns."""
        positions: dict[str, list[str]] = {}
        length = 0
        position = 0
        for label, text in zip(COLUMN_LABELS, (title, content, tags_json)):
            tokens = self.tokens(text)
            length += len(tokens)
            for token in tokens:
                position += 1
                if position > MAX_POSITION:
                    break
                slots = positions.setdefault(token, [])
                if len(slots) < MAX_POSITIONS_PER_LEXEME:
                    slots.append(f"{position}{label}" if label != "D" else str(position))
            position += 1  # the gap between columns
        return Document(_literal(positions), length)

    def phrases(self, query: str) -> list[list[str]]:
        """The phrases of the FTS5 query that local search builds for `query`.

        One phrase per keyword term (local search quotes each term, and FTS5 tokenizes
        the quoted text), in order; terms that yield no token match nothing in FTS5 and
        are left out.
        """
        out = []
        for term in keyword_terms(query):
            tokens = self.tokens(term, apsw.FTS5_TOKENIZE_QUERY)
            if tokens:
                out.append(tokens)
        return out


@dataclass(frozen=True)
class Document:
    terms: str  # a tsvector literal
    length: int  # FTS5's token count over all columns


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
