"""Curation: keep brain.db free of duplicates and stale facts.

- Near-duplicates: `brain.remember` asks `merge_near_duplicate` first; a new memory
  that restates one already stored in its category updates that memory instead of
  adding another (the change log keeps the old version: `maxmem history ID`).
  `remember_many` (bulk loads, capture, benchmarks) skips this check.
- Supersession: `supersede(old, new)` marks the old memory superseded and links it to
  the new one; default search leaves superseded memories out.
- The core budget (count and tokens) and `core_review`, the consolidation candidates.
- `history`: a memory's versions from the change log.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from .clock import iso
from .errors import ConfigError, InvalidInput, NotFound
from .memory import Memory

if TYPE_CHECKING:  # pragma: no cover
    from .brain import Brain

log = logging.getLogger("maxmem")

_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_WORDS = re.compile(r"[^\W_]+")

# Measured with multilingual-e5-small (bench/dedup_threshold.py): at 0.98 none of 40
# related-but-different pairs merges ("Postgres for billing" / "for analytics" score
# 0.971, "shipped 2.0" / "shipped 2.1" 0.978); restatements that only add words
# ("remember that ...") score 0.964-0.979, so they merge from 0.93 when the new text
# keeps every word of the old one.
DEDUP_THRESHOLD = 0.98
DEDUP_SUPERSET_THRESHOLD = 0.93
# `core review` lists pairs from here for a person to judge: paraphrases of one fact
# score 0.87-0.99 with this model, so this lists most of them, and some different facts.
REVIEW_THRESHOLD = 0.93
# A judgement, not a measurement: the boot context reads core, and a core much larger
# than this is no longer a summary of what matters.
CORE_MAX_COUNT = 300
CORE_MAX_TOKENS = 30_000
NEVER_RECALLED_DAYS = 30


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


def estimate_tokens(text: str) -> int:
    """About four bytes of UTF-8 per token (the chunker's estimate)."""
    return max(1, (len(text.encode("utf-8")) + 3) // 4)


# -- settings -----------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """The `[curation]` section of the config."""

    dedup: bool = True
    dedup_threshold: float = DEDUP_THRESHOLD
    dedup_superset_threshold: float = DEDUP_SUPERSET_THRESHOLD
    review_threshold: float = REVIEW_THRESHOLD
    core_max_count: int = CORE_MAX_COUNT
    core_max_tokens: int = CORE_MAX_TOKENS
    never_recalled_days: int = NEVER_RECALLED_DAYS


def settings(config: Any) -> Settings:
    """Settings from `config.section("curation")` (or a plain mapping); ConfigError names the key."""
    section: Mapping[str, Any] = {}
    if config is not None:
        section = config.section("curation") if hasattr(config, "section") else config
    known = Settings.__dataclass_fields__
    out: dict[str, Any] = {}
    for key, value in section.items():
        if key not in known:
            raise ConfigError(f"[curation]: unknown setting {key!r} (known: {', '.join(known)})")
        kind = known[key].type
        try:
            if kind == "bool":
                if not isinstance(value, bool):
                    raise ValueError
                out[key] = value
            elif kind == "float":
                out[key] = float(value)
                if not 0 < out[key] <= 1:
                    raise ValueError
            else:
                out[key] = int(value)
                if out[key] < 0 or isinstance(value, bool):
                    raise ValueError
        except (TypeError, ValueError):
            what = {"bool": "true or false", "float": "a number in (0, 1]", "int": "a whole number ≥ 0"}[kind]
            raise ConfigError(f"[curation] {key} = {value!r} must be {what}") from None
    return Settings(**out)


# -- near-duplicates ----------------------------------------------------------


def find_near_duplicate(
    brain: "Brain", content: str, category: str, title: str | None = None, config: Settings | None = None
) -> tuple[Memory, float] | None:
    """The stored memory of `category` that `content` restates, with its similarity."""
    config = config or settings(brain.config)
    if brain.embedder is None:
        return None
    for memory, similarity in brain.similar(content, title=title, category=category, limit=3):
        if is_near_duplicate(
            similarity, memory.content, content, config.dedup_threshold, config.dedup_superset_threshold
        ):
            return memory, similarity
    return None


def merge_near_duplicate(brain: "Brain", record: Mapping[str, Any]) -> Memory | None:
    """Called by `Brain.remember` with the checked record before it is stored.

    Returns the memory it updated instead, or None when the record is new (or an exact
    copy, which remember already returns as is).
    """
    config = settings(brain.config)
    if not config.dedup or brain.embedder is None:
        return None
    exact = brain.db.scalar(
        "SELECT 1 FROM memories WHERE content_hash = ? AND category = ?",
        (record["content_hash"], record["category"]),
    )
    if exact:
        return None
    found = find_near_duplicate(brain, record["content"], record["category"], record.get("title"), config)
    if found is None:
        return None
    existing, similarity = found
    log.info("near-duplicate of #%d (similarity %.3f): updating it instead", existing.id, similarity)
    return merge_into(brain, existing, record, similarity)


def merge_into(brain: "Brain", existing: Memory, record: Mapping[str, Any], similarity: float | None = None) -> Memory:
    """Fold a restatement into an existing memory: the newer wording (unless it says
    less), the union of tags, the higher importance, merged metadata, a count."""
    content = record["content"]
    if words(content) <= words(existing.content):
        content = existing.content
    metadata = {**existing.metadata, **(record.get("metadata") or {})}
    metadata["restated"] = int(existing.metadata.get("restated", 0)) + 1
    metadata["restated_at"] = iso(brain.clock.now())
    if similarity is not None:
        metadata["restated_similarity"] = round(float(similarity), 4)
    tags = list(dict.fromkeys([*existing.tags, *(record.get("tags") or [])]))
    fields: dict[str, Any] = {
        "content": content,
        "tags": tags,
        "importance": max(existing.importance, float(record.get("importance", 0) or 0)),
        "metadata": metadata,
        "pinned": bool(existing.pinned or record.get("pinned")),
    }
    if record.get("title") and not existing.title:
        fields["title"] = record["title"]
    if existing.kind == "note" and record.get("kind") not in (None, "note"):
        fields["kind"] = record["kind"]
    return brain.update(existing.id, **fields)


# -- supersession -------------------------------------------------------------


def supersede(brain: "Brain", old: int | str, new: int | str) -> tuple[Memory, Memory]:
    """Mark `old` superseded by `new` (linked both ways), in one transaction."""
    old_memory, new_memory = brain.get(old), brain.get(new)
    if old_memory.id == new_memory.id:
        raise InvalidInput("a memory cannot supersede itself: give two different ids")
    if new_memory.status == "superseded":
        raise InvalidInput(
            f"#{new_memory.id} is itself superseded (by {new_memory.superseded_by}): supersede with its successor"
        )
    if old_memory.status == "superseded" and old_memory.superseded_by not in (None, new_memory.uid):
        raise InvalidInput(f"#{old_memory.id} is already superseded by {old_memory.superseded_by}")
    supersedes = list(dict.fromkeys([*new_memory.metadata.get("supersedes", []), old_memory.uid]))
    with brain.db.atomic():
        old_memory = brain.update(
            old_memory.id,
            status="superseded",
            superseded_by=new_memory.uid,
            metadata={**old_memory.metadata, "superseded_at": iso(brain.clock.now())},
        )
        new_memory = brain.update(new_memory.id, metadata={**new_memory.metadata, "supersedes": supersedes})
    return old_memory, new_memory


# -- the core budget and its review ---------------------------------------------

CORE_SIZE_SQL = """
SELECT count(*), coalesce(sum(length(CAST(content AS BLOB)) + length(CAST(coalesce(title, '') AS BLOB))), 0)
FROM memories WHERE category = 'core' AND status != 'superseded'
"""


def core_budget(brain: "Brain", config: Settings | None = None) -> dict[str, Any]:
    """Active core memories against the budget: count, estimated tokens, and a warning."""
    config = config or settings(brain.config)
    count, size = brain.db.execute(CORE_SIZE_SQL).fetchone()
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


def budget_check(brain: "Brain") -> dict[str, Any]:
    """The core budget as a `maxmem doctor` check."""
    budget = core_budget(brain)
    detail = budget["warning"] or (
        f"{budget['count']}/{budget['max_count']} memories, about {budget['tokens']}/{budget['max_tokens']} tokens"
    )
    return {"name": "core budget", "ok": not budget["over"], "detail": detail}


def _core_vectors(brain: "Brain") -> tuple[list[Memory], np.ndarray]:
    memories = brain.list(category="core", include_superseded=False, limit=100_000, order="oldest")
    if brain.embedder is None or not brain.db.table_exists("memories_vec") or not memories:
        return [], np.zeros((0, 0), dtype=np.float32)
    kept, rows = [], []
    for memory in memories:
        blob = brain.db.scalar("SELECT embedding FROM memories_vec WHERE rowid = ?", (memory.id,))
        if blob is not None:
            kept.append(memory)
            rows.append(np.frombuffer(blob, dtype=np.float32))
    return kept, (np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32))


def near_duplicate_pairs(brain: "Brain", threshold: float, limit: int) -> list[dict[str, Any]]:
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


def core_review(brain: "Brain", limit: int = 10, threshold: float | None = None) -> dict[str, Any]:
    """Consolidation candidates in core: near-duplicates, superseded, never recalled, least important."""
    config = settings(brain.config)
    if limit < 1:
        raise InvalidInput("limit must be at least 1")
    threshold = config.review_threshold if threshold is None else float(threshold)
    if not 0 < threshold <= 1:
        raise InvalidInput("the similarity threshold must be in (0, 1]")
    cutoff = iso(brain.clock.now() - _days(config.never_recalled_days))
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


def _days(n: int) -> Any:
    from datetime import timedelta

    return timedelta(days=n)


# -- history ------------------------------------------------------------------


def history(brain: "Brain", id_or_uid: int | str) -> list[dict[str, Any]]:
    """Every recorded version of a memory, oldest first, each with the fields it changed.

    Works for deleted memories too (by uid, or by the id they had).
    """
    uid = _uid_of(brain, id_or_uid)
    versions = []
    previous: dict[str, Any] = {}
    for row in brain.db.rows("SELECT seq, op, at, data FROM changes WHERE uid = ? ORDER BY seq", (uid,)):
        data = json.loads(row["data"]) if row["data"] else {}
        changed = sorted(
            k for k in set(data) | set(previous)
            if data.get(k) != previous.get(k) and k not in ("updated_at", "embedded_at")
        )
        versions.append({"seq": row["seq"], "op": row["op"], "at": row["at"], "changed": changed if previous else [], "memory": data})
        previous = data
    if not versions:
        raise NotFound(f"no recorded history for {id_or_uid!r}: see  maxmem list")
    return versions


def _uid_of(brain: "Brain", id_or_uid: int | str) -> str:
    try:
        return brain.get(id_or_uid).uid
    except NotFound:
        pass
    text = str(id_or_uid).strip().lstrip("#")
    if text.isdigit():
        uid = brain.db.scalar(
            "SELECT uid FROM changes WHERE json_extract(data, '$.id') = ? ORDER BY seq DESC LIMIT 1", (int(text),)
        )
        if uid:
            return str(uid)
        raise NotFound(f"no memory #{text}, now or in the change log: see  maxmem list")
    return text
