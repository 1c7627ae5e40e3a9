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
search/spaced.py) gets, after FTS5's tokens of each column, that column's script
characters one a token (a '0' where other text stood), as brain.db's memories_spaced
holds them; a query asks for its pairs of such characters as two-token phrases. So a
word inside a run of CJK characters is found in PostgreSQL too, ranked by one bm25 over
both kinds of token (brain.db sums two), and English text is pushed as before. Memories
pushed by an earlier maxmem carry those tokens from their next change on. `fts_length`
counts FTS5's tokens only (bm25's document length, as in memories_fts): counting the
script characters too made every English query's bm25 differ from brain.db's in a
database holding such text (memories pushed by an earlier maxmem get it right at their
next change).

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
from ..search.spaced import SPACED_RUN, spaced_terms
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

    def tokens(self, text: str | None, reason: int = apsw.FTS5_TOKENIZE_DOCUMENT) -> list[str]:
        """FTS5's tokens of `text`; of a document, then its script characters (spaced_tokens)."""
        found = super().tokens(text, reason)
        return found + spaced_tokens(text) if reason == apsw.FTS5_TOKENIZE_DOCUMENT and text else found

    def phrases(self, query: str) -> list[list[str]]:
        """FTS5's phrases of the query (fts.Tokenizer.phrases), and each pair of characters
        of its spaceless runs as a phrase of two tokens (a lone character as itself)."""
        return super().phrases(query) + [list(term) for term in spaced_terms(query)]

    def document(self, values: Sequence[str | None]) -> Document:
        """The tsvector literal, token count and per-column counts of one memory's FTS5
        columns (`values` in the order of `self.columns`)."""
        positions: dict[str, list[str]] = {}
        counts: dict[str, list[int]] = {}
        length = 0
        position = 0
        width = len(values)
        for column, (label, text) in enumerate(zip(COLUMN_LABELS, values)):
            own = super().tokens(text)
            length += len(own)  # FTS5's document length: its own tokens, not the script characters
            tokens = own + spaced_tokens(text) if text else own
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

def spaced_tokens(text: str) -> list[str]:
    """The characters of `text`'s spaceless runs, one a token, a '0' between two runs
    (as migration 0012 writes memories_spaced)."""
    out: list[str] = []
    last = 0
    for run in SPACED_RUN.finditer(text):
        if out and run.start() > last:
            out.append("0")
        out.extend(run.group())
        last = run.end()
    return out


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
