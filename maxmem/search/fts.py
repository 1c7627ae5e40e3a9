"""The keyword index's own view of text: brain.db's FTS5 tokenizer, callable from
Python, and the index's column layout (what `memories_fts` reads from where).

Used where maxmem must know which tokens a text gives without asking the index: the
relevance evidence (which query terms a hit holds) and the PostgreSQL sync (the
tsvectors it pushes).
"""

from __future__ import annotations

import re

import apsw

from ..store.db import Database, check_identifier
from .hybrid import keyword_terms

DEFAULT_TOKENIZE = "porter unicode61 remove_diacritics 2"
_TOKENIZE = re.compile(r"tokenize\s*=\s*'([^']*)'", re.IGNORECASE)
_CONTENT = re.compile(r"content\s*=\s*'([^']*)'", re.IGNORECASE)


def _fts_sql(db: Database) -> str:
    return db.scalar("SELECT sql FROM sqlite_master WHERE name = 'memories_fts'") or ""


def tokenizer_spec(db: Database) -> list[str]:
    """The `tokenize` argument of memories_fts, as words: ["porter", "unicode61", ...]."""
    found = _TOKENIZE.search(_fts_sql(db))
    return (found.group(1) if found else DEFAULT_TOKENIZE).split()


def fts_layout(db: Database) -> tuple[list[str], str]:
    """The columns of memories_fts, in order, and the table or view it reads them from."""
    columns = [row[1] for row in db.execute("PRAGMA table_info(memories_fts)")]
    found = _CONTENT.search(_fts_sql(db))
    source = found.group(1) if found else "memories"
    for name in (*columns, source):
        check_identifier(name, "keyword index column")
    return columns, source


class Tokenizer:
    """brain.db's FTS5 tokenizer, callable from Python, and the index's column layout."""

    def __init__(self, db: Database) -> None:
        name, *args = tokenizer_spec(db)
        self._tokenize = db.conn.fts5_tokenizer(name, args)
        self.columns, self.source = fts_layout(db)

    def tokens(self, text: str | None, reason: int = apsw.FTS5_TOKENIZE_DOCUMENT) -> list[str]:
        if not text:
            return []
        # with offsets (the default) each token is (start, end, text, *colocated forms)
        return [str(token[2]) for token in self._tokenize(text.encode("utf-8"), reason, None)
                if isinstance(token, tuple) and len(token) > 2]

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
