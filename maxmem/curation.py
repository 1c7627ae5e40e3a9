"""Curation: when a new memory restates one already stored, and how the two merge.

`Brain.remember_item` asks these questions on its way down the write path, before anything is
written: is the new text an exact copy of a stored memory of its category, or a
near-duplicate (`is_near_duplicate`, from the cosine similarity search computed)? Then
the stored memory is updated with `merged_fields` instead of a second one being added
(the change log keeps the old version: `maxmem history ID`). `remember_many` asks the
same of each item, of brain.db and of the items before it (`earlier_restatements`).

Nothing here reads or writes brain.db. The core budget and `maxmem core review` are in
review.py.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from .memory import Memory
from .settings import DEDUP_SUPERSET_THRESHOLD, DEDUP_THRESHOLD

_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_WORDS = re.compile(r"[^\W_]+")


def numbers(text: str) -> frozenset[str]:
    """The numbers in a text: two memories that differ in one are different facts.

    The embedder scores "We shipped 2.0" and "We shipped 2.1" at 0.978 (measured,
    bench/dedup_threshold.py), as close as real paraphrases; the numbers tell them apart.
    """
    return frozenset(_NUMBER.findall(text))


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


# -- merging --------------------------------------------------------------------

# Metadata lists that say where a memory came from: a restatement adds to them.
PROVENANCE_LISTS = ("source_turns",)


def merged_metadata(existing: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The new metadata over the old, with provenance lists joined (old first)."""
    merged = {**existing, **new}
    for key in PROVENANCE_LISTS:
        joined = [*existing.get(key, []), *new.get(key, [])]
        if joined:
            merged[key] = list(dict.fromkeys(joined))
    return merged


def adds_nothing(existing: Memory, record: Mapping[str, Any]) -> bool:
    """Whether an exact copy of `existing` brings nothing new: no tag, no metadata, no
    higher importance (then it is not a restatement worth counting)."""
    return (
        set(record.get("tags") or ()) <= set(existing.tags)
        and merged_metadata(existing.metadata, record.get("metadata") or {}) == existing.metadata
        and float(record.get("importance", 0) or 0) <= existing.importance
    )


def merged_fields(existing: Memory, record: Mapping[str, Any], now: str,
                  similarity: float | None = None) -> dict[str, Any]:
    """Fold a restatement into an existing memory: the newer wording (unless it says
    less), the union of tags, the higher importance, merged metadata, a count."""
    content = record["content"]
    if words(content) <= words(existing.content):
        content = existing.content
    metadata = merged_metadata(existing.metadata, record.get("metadata") or {})
    metadata["restated"] = int(existing.metadata.get("restated", 0)) + 1
    metadata["restated_at"] = now
    if similarity is not None:
        metadata["restated_similarity"] = round(float(similarity), 4)
    fields: dict[str, Any] = {
        "content": content,
        "tags": list(dict.fromkeys([*existing.tags, *(record.get("tags") or [])])),
        "importance": max(existing.importance, float(record.get("importance", 0) or 0)),
        "metadata": metadata,
        "pinned": bool(existing.pinned or record.get("pinned")),
    }
    if record.get("title") and not existing.title:
        fields["title"] = record["title"]
    if existing.kind == "note" and record.get("kind") not in (None, "note"):
        fields["kind"] = record["kind"]
    return fields


# -- a batch --------------------------------------------------------------------

# Rows of a batch compared at a time with the rows before them (a block of similarities
# stays a few tens of MB however large the batch).
BLOCK_ROWS = 1024


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / max(float(np.linalg.norm(a) * np.linalg.norm(b)), 1e-12))


def earlier_restatements(vectors: Sequence[np.ndarray], groups: Sequence[Hashable],
                         threshold: float) -> dict[int, list[tuple[int, float]]]:
    """For each vector of a batch, the earlier ones of its group whose cosine with it is
    at least `threshold`, most similar first. Only a group's members are compared: a
    restatement has the category and the numbers of what it restates (the caller's
    groups)."""
    members: dict[Hashable, list[int]] = {}
    for position, group in enumerate(groups):
        members.setdefault(group, []).append(position)
    found: dict[int, list[tuple[int, float]]] = {}
    for positions in members.values():
        if len(positions) < 2:
            continue
        matrix = np.vstack([vectors[p] for p in positions]).astype(np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        for start in range(1, len(positions), BLOCK_ROWS):
            block = matrix[start:start + BLOCK_ROWS]
            similarities = block @ matrix[:start + len(block)].T
            for offset, row in enumerate(similarities):
                before = row[:start + offset]
                hits = np.flatnonzero(before >= threshold)
                if len(hits):
                    found[positions[start + offset]] = sorted(
                        ((positions[h], float(before[h])) for h in hits), key=lambda pair: -pair[1])
    return found
