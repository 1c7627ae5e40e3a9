"""Reviewing core: its budget (count and tokens) and `maxmem core review`, the
consolidation candidates (near-duplicates, superseded, never recalled, least important).

Reads through Brain's public API; `recall_count` comes from search's usage record.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from .clock import iso
from .errors import InvalidInput
from .memory import Memory
from .settings import CurationSettings

if TYPE_CHECKING:  # pragma: no cover
    from .brain import Brain


CORE_SIZE_SQL = """
SELECT count(*) AS count,
       coalesce(sum(length(CAST(content AS BLOB)) + length(CAST(coalesce(title, '') AS BLOB))), 0) AS size
FROM memories WHERE category = 'core' AND status != 'superseded'
"""


def core_budget(brain: Brain, config: CurationSettings | None = None) -> dict[str, Any]:
    """Active core memories against the budget: count, estimated tokens, and a warning."""
    config = config or brain.config.curation
    row = brain.db.one(CORE_SIZE_SQL) or {"count": 0, "size": 0}
    count, size = int(row["count"]), int(row["size"])
    tokens = (int(size) + 3 * int(count)) // 4
    over = []
    if config.core_max_count and count > config.core_max_count:
        over.append(f"{count} core memories (budget {config.core_max_count})")
    if config.core_max_tokens and tokens > config.core_max_tokens:
        over.append(f"about {tokens} tokens of core (budget {config.core_max_tokens})")
    warning = None
    if over:
        warning = "core is over budget: " + " and ".join(over) + ": consolidate with  maxmem core review"
    return {
        "count": int(count),
        "tokens": int(tokens),
        "max_count": config.core_max_count,
        "max_tokens": config.core_max_tokens,
        "over": bool(over),
        "warning": warning,
    }


def budget_check(brain: Brain) -> dict[str, Any]:
    """The core budget as a `maxmem doctor` check."""
    budget = core_budget(brain)
    detail = budget["warning"] or (
        f"{budget['count']}/{budget['max_count']} memories, about {budget['tokens']}/{budget['max_tokens']} tokens"
    )
    return {"name": "core budget", "ok": not budget["over"], "detail": detail}


def _core_vectors(brain: Brain) -> tuple[list[Memory], np.ndarray]:
    memories = brain.list(category="core", include_superseded=False, limit=100_000, order="oldest")
    if brain.embedder is None or not memories:
        return [], np.zeros((0, 0), dtype=np.float32)
    stored = brain.vectors.stored(m.id for m in memories)
    kept = [m for m in memories if m.id in stored]
    return kept, (np.vstack([stored[m.id] for m in kept]) if kept else np.zeros((0, 0), dtype=np.float32))


def near_duplicate_pairs(brain: Brain, threshold: float, limit: int) -> list[dict[str, Any]]:
    """Pairs of active core memories at least `threshold` similar, most similar first."""
    memories, matrix = _core_vectors(brain)
    pairs: list[tuple[float, int, int]] = []
    block = 512
    for start in range(0, len(memories), block):
        sims = matrix[start : start + block] @ matrix.T
        for i, j in zip(*np.nonzero(sims >= threshold)):
            a, b = start + int(i), int(j)
            if a < b:
                pairs.append((float(sims[i, j]), a, b))
    pairs.sort(key=lambda p: -p[0])
    return [
        {"similarity": round(s, 4), "ids": [memories[a].id, memories[b].id], "memories": [memories[a], memories[b]]}
        for s, a, b in pairs[:limit]
    ]


def core_review(brain: Brain, limit: int = 10, threshold: float | None = None) -> dict[str, Any]:
    """Consolidation candidates in core: near-duplicates, superseded, never recalled, least important."""
    config = brain.config.curation
    if limit < 1:
        raise InvalidInput("limit must be at least 1")
    brain.flush_usage()  # the candidates are chosen by their recall counts, in SQL
    threshold = config.review_threshold if threshold is None else float(threshold)
    if not 0 < threshold <= 1:
        raise InvalidInput("the similarity threshold must be in (0, 1]")
    cutoff = iso(brain.clock.now() - timedelta(days=config.never_recalled_days))
    superseded = brain.list(category="core", status="superseded", limit=limit, order="oldest")
    never = [
        Memory.from_row(r)
        for r in brain.db.rows(
            "SELECT * FROM memories WHERE category = 'core' AND status != 'superseded' AND pinned = 0 "
            "AND recall_count = 0 AND created_at < ? ORDER BY created_at ASC, id ASC LIMIT ?",
            (cutoff, limit),
        )
    ]
    lowest = [
        Memory.from_row(r)
        for r in brain.db.rows(
            "SELECT * FROM memories WHERE category = 'core' AND status != 'superseded' AND pinned = 0 "
            "ORDER BY importance ASC, recall_count ASC, created_at ASC LIMIT ?",
            (limit,),
        )
    ]
    return {
        "budget": core_budget(brain, config),
        "threshold": threshold,
        "near_duplicates": near_duplicate_pairs(brain, threshold, limit),
        "superseded": superseded,
        "never_recalled": never,
        "never_recalled_days": config.never_recalled_days,
        "lowest_importance": lowest,
    }


