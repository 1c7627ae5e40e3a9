"""Keyword search in scripts written without spaces between words.

Chinese, Japanese, Thai, Lao, Khmer and Myanmar write words without spaces, and Korean
attaches particles to its words ("서버에" is "서버" + "에"). FTS5's unicode61 tokenizer
makes a whole run of such characters one token, so "发票" inside "我们决定把发票存放在…"
is never found in memories_fts. brain.db keeps a second keyword index, memories_spaced
(migration 0012_spaced_index), holding only those characters of a memory, one token
each, and only for memories that hold any. A query's runs of such characters are asked
there as overlapping pairs of characters, each a two-token phrase, joined by OR (a run of
one character is asked as itself): bm25 ranks the memories sharing more, rarer pairs
first, and a pair only matches where its characters stand side by side. English queries
never touch this index.
"""

from __future__ import annotations

import re

# Must agree with SPACED_RANGES of migration 0012_spaced_index (tests check it):
# Thai, Lao, Myanmar, Hangul Jamo, Khmer, Hiragana, Katakana, Hangul compatibility
# Jamo, CJK extension A, CJK unified ideographs, Hangul syllables, CJK compatibility
# ideographs, halfwidth Katakana, CJK extensions B-F.
SPACED_RANGES = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1100, 0x11FF), (0x1780, 0x17FF), (0x3040, 0x30FF),
                 (0x3130, 0x318F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF),
                 (0xFF66, 0xFF9F), (0x20000, 0x2FFFD))
SPACED_RUN = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in SPACED_RANGES) + "]+")
MAX_PAIRS = 64
# Also as migration 0012_spaced_index has them (tests check it): how many characters of
# each column are indexed, and memories_spaced's tokenizer (each script character a
# token of its own; the few punctuation marks of those blocks none).
SPACED_CHARS = 10_000
SPACED_TOKENIZER = ("unicode61", "remove_diacritics", "0", "categories", "L* N* Co M*")
# bm25 column weights of memories_spaced: the memory's own text (title, content, tags),
# and its session context (as in memories_fts).
SPACED_WEIGHTS = (1.0, 0.5)


def spaced_columns(title: str | None, content: str, tags: str, context: str | None) -> tuple[str, str] | None:
    """memories_spaced's two columns of a memory (its own text: title, content and tags;
    its session context), as the triggers of migration 0012 write them from the
    memories row (tags as stored, JSON); None when the memory has no row there (it holds
    no character of those scripts)."""
    own = f"{title or ''} {content} {tags}"
    if SPACED_RUN.search(f"{own} {context or ''}") is None:
        return None
    return spaced_text(own), spaced_text(context or "")


def spaced_text(text: str) -> str:
    """The characters of `text`'s spaceless runs, one a token, and a '0' for the first
    other character after each run, space-separated: what migration 0012's SQL writes
    for a column, over its first SPACED_CHARS characters.

    That SQL looks for "the character before" the first one at the text's end, so a text
    that starts with other text and ends with such a character (one of the Basic
    Multilingual Plane) starts with a '0': kept, since bm25 counts it in the memory's
    length."""
    text = text[:SPACED_CHARS]
    after = bool(text) and ord(text[-1]) < 0x10000 and SPACED_RUN.fullmatch(text[-1]) is not None
    out: list[str] = []
    for char in text:
        if SPACED_RUN.fullmatch(char):
            out.append(char)
            after = True
        elif after:
            out.append("0")
            after = False
    return " ".join(out)


def spaced_terms(text: str) -> list[str]:
    """The pairs of characters (or lone characters) of `text`'s spaceless runs, in order,
    without repeats; empty when it holds none."""
    seen: dict[str, None] = {}
    for run in SPACED_RUN.findall(text):
        if len(run) == 1:
            seen.setdefault(run, None)
        for at in range(len(run) - 1):
            seen.setdefault(run[at:at + 2], None)
    return list(seen)[:MAX_PAIRS]


def spaced_query(text: str) -> str | None:
    """The MATCH expression for memories_spaced: each term a quoted phrase of its
    characters, joined by OR; None when `text` holds no such characters. The terms hold
    only characters of SPACED_RANGES, and are quoted all the same."""
    terms = spaced_terms(text)
    if not terms:
        return None
    return " OR ".join('"' + " ".join(term).replace('"', '""') + '"' for term in terms)
