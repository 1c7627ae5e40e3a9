"""What retention would do now (`plan`, the dry run) and how the brain grows (`growth`):
counts and sizes per category, read from brain.db, which they leave as it is."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..clock import iso
from ..errors import InvalidInput
from ..memory import CATEGORIES
from .archives import expired_archives, pending
from .policy import PROTECTED, TRANSCRIPT_CATEGORY, Policy, cutoffs, load_policy

if TYPE_CHECKING:  # pragma: no cover
    from ..brain import Brain

CATEGORY_SIZE_SQL = """
SELECT count(*), coalesce(sum(length(CAST(content AS BLOB)) + length(CAST(coalesce(title, '') AS BLOB))
       + length(tags) + length(metadata)), 0), sum(embedded_at IS NOT NULL)
FROM memories WHERE category = ? AND created_at < coalesce(?, '9999')
"""
EXPIRED_SIZE_SQL = f"""
SELECT count(*), coalesce(sum(length(CAST(content AS BLOB)) + length(CAST(coalesce(title, '') AS BLOB))
       + length(tags) + length(metadata)), 0), sum(embedded_at IS NOT NULL)
FROM memories WHERE category = ? AND created_at < ? AND NOT {PROTECTED}
"""
PROTECTED_SQL = f"SELECT count(*) FROM memories WHERE category = ? AND created_at < ? AND {PROTECTED}"
OLDEST_SQL = f"""
SELECT id, category, kind, created_at, title, content FROM memories
WHERE category = ? AND created_at < ? AND NOT {PROTECTED}
ORDER BY created_at ASC, id ASC LIMIT ?
"""
GROWTH_SQL = """
SELECT category, substr(created_at, 1, 7) AS month, count(*) AS memories,
       coalesce(sum(length(CAST(content AS BLOB))), 0) AS bytes
FROM memories WHERE created_at >= ?
GROUP BY 1, 2 ORDER BY 2, 1
"""


def _vector_bytes(brain: Brain) -> int:
    dim = brain.db.get_meta("embedder_dim")
    return 4 * int(dim) if dim and str(dim).isdigit() else 0


def plan(brain: Brain, policy: Policy | None = None, oldest: int = 5) -> dict[str, Any]:
    """What `apply` would do now: per category counts and sizes, and the oldest items to go."""
    policy = policy or load_policy(brain.config.retention)
    now = brain.clock.now()
    limits = cutoffs(policy, now)
    per_vector = _vector_bytes(brain)
    categories: dict[str, Any] = {}
    going: list[dict[str, Any]] = []
    for category in CATEGORIES:
        count, size, embedded = brain.db.execute(CATEGORY_SIZE_SQL, (category, None)).fetchone() or (0, 0, 0)
        entry: dict[str, Any] = {
            "keep_days": policy.days.get(category),
            "cutoff": limits[category],
            "count": int(count),
            "bytes": int(size) + per_vector * int(embedded or 0),
            "expired": 0,
            "expired_bytes": 0,
            "protected": 0,
        }
        if limits[category]:
            n, size, embedded = brain.db.execute(EXPIRED_SIZE_SQL, (category, limits[category])).fetchone() or (0, 0, 0)
            entry["expired"] = int(n)
            entry["expired_bytes"] = int(size) + per_vector * int(embedded or 0)
            entry["protected"] = int(brain.db.scalar(PROTECTED_SQL, (category, limits[category])))
            for row in brain.db.rows(OLDEST_SQL, (category, limits[category], oldest)):
                going.append({
                    "id": row["id"], "category": row["category"], "kind": row["kind"],
                    "created_at": row["created_at"], "text": _snippet(row["title"], row["content"]),
                })
        categories[category] = entry
    going.sort(key=lambda r: r["created_at"])
    result = {
        "now": iso(now),
        "timezone": str(policy.timezone),
        "categories": categories,
        "expired": sum(c["expired"] for c in categories.values()),
        "expired_bytes": sum(c["expired_bytes"] for c in categories.values()),
        "oldest": going[:oldest],
        "transcripts": _transcript_counts(brain, limits[TRANSCRIPT_CATEGORY]),
        "archives_to_prune": [str(p) for p in expired_archives(brain, policy, now)],
        "interrupted": [str(p) for p in pending(brain.db)],
    }
    return result


def _snippet(title: str | None, content: str, width: int = 80) -> str:
    text = " ".join(f"{title} — {content}".split()) if title else " ".join(content.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _transcript_counts(brain: Brain, limit: str | None) -> dict[str, int]:
    if not limit or not brain.db.table_exists("turns"):
        return {}
    turns = int(brain.db.scalar("SELECT count(*) FROM turns WHERE created_at < ?", (limit,)))
    calls = 0
    if brain.db.table_exists("tool_calls"):
        calls = int(brain.db.scalar(
            "SELECT count(*) FROM tool_calls WHERE turn_id IN (SELECT id FROM turns WHERE created_at < ?) "
            "OR (turn_id IS NULL AND coalesce(started_at, finished_at) < ?)",
            (limit, limit),
        ))
    return {"turns": turns, "tool_calls": calls}


def growth(brain: Brain, months: int = 6) -> dict[str, Any]:
    """Memories and bytes created per category per month, for the last `months` months."""
    if not 1 <= int(months) <= 120:
        raise InvalidInput("months must be from 1 to 120")
    now = brain.clock.now()
    first = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    for _ in range(int(months) - 1):
        first = (first - timedelta(days=1)).replace(day=1)
    rows = brain.db.rows(GROWTH_SQL, (iso(first),))
    month_names = sorted({r["month"] for r in rows})
    table: dict[str, dict[str, dict[str, int]]] = {c: {} for c in CATEGORIES}
    for row in rows:
        table[row["category"]][row["month"]] = {"memories": row["memories"], "bytes": row["bytes"]}
    totals = {}
    for category in CATEGORIES:
        count, size, _ = brain.db.execute(CATEGORY_SIZE_SQL, (category, None)).fetchone() or (0, 0, 0)
        totals[category] = {"memories": int(count), "bytes": int(size)}
    return {"since": iso(first), "months": month_names, "per_month": table, "totals": totals}
