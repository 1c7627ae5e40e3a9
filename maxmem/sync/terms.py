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

Text in scripts written without spaces (Chinese, Japanese, Korean, Thai...: see
search/spaced.py) has a second keyword index in brain.db, memories_spaced, whose bm25
local search adds to FTS5's. Its tokens go apart (`spaced_*` columns), so that search
computes that second bm25 over them alone, with that index's own document count,
lengths and column weights: the memory's two columns there (spaced.spaced_columns),
tokenized by that index's tokenizer, sent as each token and each pair of neighbouring
tokens with its count per column (`spaced_freq`; a query asks for pairs of characters
as two-token phrases, and two tokens make a phrase only side by side), those keys again
as a tsvector without positions for the GIN index (`spaced_terms`), and the token count
(`spaced_length`, None for a memory without a row there, which bm25 does not count).

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

import apsw

from ..errors import DatabaseError
from ..search import fts
from ..search.hybrid import BM25_WEIGHTS
from ..search.spaced import SPACED_TOKENIZER, spaced_columns, spaced_terms
from ..store.db import Database

MAX_POSITION = 16383
MAX_POSITIONS_PER_LEXEME = 256
MAX_LEXEME_BYTES = 2046
MAX_TSVECTOR_BYTES = 900_000  # PostgreSQL refuses tsvectors over 1 MB
# The tsvector label of each FTS5 column, in the table's order (title, content, tags,
# context): search maps label i back to the bm25 weight of column i.
COLUMN_LABELS = ("A", "D", "B", "C")
# The token migration 0012 writes where other text follows a run of script characters
# (spaced.spaced_text): counted in the length, never asked for.
SPACED_GAP = "0"


def column_weights(count: int) -> list[float]:
    """bm25's weight of each FTS5 column as local search passes them (1.0 when unset)."""
    return [float(w) for w in BM25_WEIGHTS[:count]] + [1.0] * max(0, count - len(BM25_WEIGHTS))


class Tokenizer(fts.Tokenizer):
    """The keyword index's tokenizer (fts.Tokenizer), the tsvector of a memory, and what
    memories_spaced holds of it."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        if not 1 <= len(self.columns) <= len(COLUMN_LABELS):
            raise DatabaseError(
                f"memories_fts has {len(self.columns)} columns; the PostgreSQL sync handles at most "
                f"{len(COLUMN_LABELS)}: upgrade maxmem"
            )
        name, *args = SPACED_TOKENIZER
        self._spaced = db.conn.fts5_tokenizer(name, args)

    def spaced_phrases(self, query: str) -> list[str]:
        """The phrases local search asks memories_spaced for `query` (spaced.spaced_query:
        its pairs of characters, a lone character as itself), each as that index's tokens
        joined by a space (the keys of `spaced_freq`); a phrase that gives no token
        matches nothing and is left out."""
        return [key for key in map(self.spaced_key, spaced_terms(query)) if key]

    def spaced_key(self, term: str) -> str:
        """The key of `term` (a pair of script characters, or one) in `spaced_freq`: the
        tokens memories_spaced's tokenizer gives for it as a phrase, joined by a space
        (empty when it gives none)."""
        return " ".join(self._spaced_tokens(" ".join(term), apsw.FTS5_TOKENIZE_QUERY))

    def spaced(self, title: str | None, content: str, tags: str, context: str | None) -> Spaced:
        """What memories_spaced holds of a memory (a memories row's fields): its tokens and
        pairs of neighbouring tokens counted per column, and its length (None: no row)."""
        columns = spaced_columns(title, content, tags, context)
        if columns is None:
            return Spaced("", None, "{}")
        counts: dict[str, list[int]] = {}
        length = 0
        for column, text in enumerate(columns):
            tokens = self._spaced_tokens(text)
            length += len(tokens)
            keys = [t for t in tokens if t != SPACED_GAP]
            keys += [f"{a} {b}" for a, b in zip(tokens, tokens[1:]) if SPACED_GAP not in (a, b)]
            for key in keys:
                counts.setdefault(key, [0, 0])[column] += 1
        return Spaced(_literal({key: [] for key in counts}), length,
                      json.dumps(counts, ensure_ascii=False, separators=(",", ":")))

    def _spaced_tokens(self, text: str, reason: int = apsw.FTS5_TOKENIZE_DOCUMENT) -> list[str]:
        if not text:
            return []
        return [str(token[2]) for token in self._spaced(text.encode("utf-8"), reason, None)
                if isinstance(token, tuple) and len(token) > 2]

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


@dataclass(frozen=True)
class Spaced:
    """A memory as memories_spaced holds it (Tokenizer.spaced)."""

    terms: str  # a tsvector literal of the keys of `counts`, without positions
    length: int | None  # its token count over both columns; None: no row there
    counts: str  # JSON {token or "token token": [count in its own text, in its context]}


def quote_lexeme(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def _literal(positions: dict[str, list[str]]) -> str:
    parts, size = [], 0
    for token, slots in positions.items():
        if len(token.encode("utf-8")) > MAX_LEXEME_BYTES:
            continue
        part = f"{quote_lexeme(token)}:{','.join(slots)}" if slots else quote_lexeme(token)
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
