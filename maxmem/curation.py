"""Curation: keep brain.db free of duplicates and stale facts.

Near-duplicates on remember, supersession, the core budget and its review list,
and a memory's history from the change log.
"""

from __future__ import annotations

import re

_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")


def numbers(text: str) -> frozenset[str]:
    """The numbers in a text: two memories that differ in one are different facts.

    The embedder scores "We shipped 2.0" and "We shipped 2.1" at 0.978 (measured,
    bench/dedup_threshold.py), as close as real paraphrases; the numbers tell them apart.
    """
    return frozenset(_NUMBER.findall(text))


_WORDS = re.compile(r"[^\W_]+")

# Measured with multilingual-e5-small (bench/dedup_threshold.py): at 0.98 no related-
# but-different pair of 40 merges; restatements that only add words ("remember that
# ...") score 0.964-0.979, so they merge from 0.93 when nothing of the old is lost.
DEDUP_THRESHOLD = 0.98
DEDUP_SUPERSET_THRESHOLD = 0.93


def words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORDS.findall(text))


def is_near_duplicate(
    similarity: float,
    old: str,
    new: str,
    threshold: float = DEDUP_THRESHOLD,
    superset_threshold: float = DEDUP_SUPERSET_THRESHOLD,
) -> bool:
    """Whether `new` restates `old` closely enough to update it instead of adding a memory."""
    if numbers(old) != numbers(new):
        return False
    if similarity >= threshold:
        return True
    return similarity >= superset_threshold and words(old) <= words(new)
