"""Brain: the public API over one brain.db. Each public write is one transaction.

Embedding never happens inside a write transaction (a slow API must not hold the
write lock), and an embedding failure never loses a memory: the row is stored with
`embedded_at` NULL and `embed_pending()` backfills it later.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import apsw
import numpy as np

from . import relevance as relevance_mod
from . import search as search_mod
from . import session_context
from .clock import Clock, iso
from .config import Config
from .db import Database, guarded
from .embeddings import Embedder, identity, make_embedder, text_hash
from .errors import DatabaseError, EmbeddingError, InvalidInput, NotFound
from .memory import (
    CATEGORIES,
    Hit,
    Memory,
    check_category,
    check_content,
    check_count,
    check_flag,
    check_importance,
    check_kind,
    check_metadata,
    check_short,
    check_status,
    check_tags,
    check_time,
    check_title,
    check_uid,
    new_uid,
)
from .migrations import MIGRATIONS, migrate, schema_version

log = logging.getLogger("maxmem")

# The quantizer (centre and int8 steps of the RAM candidate stages, see search.py) is
# refitted each time the vector count doubles, up to this many vectors; then frozen.
CENTER_SAMPLE = 1000
ProgressFn = Callable[[int, int], None]
# After an embedding failure, this Brain stores new memories pending and searches by
# keyword for this long instead of waiting on the API again (an agent remembering in
# a loop during an outage would otherwise wait out every retry, on every call).
# `embed_pending()` always tries the API.
EMBED_PAUSE_SECONDS = 60.0

FIELDS = (
    "uid", "category", "kind", "title", "content", "tags", "importance", "status",
    "started_at", "resolved_at", "source", "agent", "session_id", "metadata",
    "content_hash", "pinned", "superseded_by", "created_at", "updated_at",
    "last_recalled_at", "recall_count", "embedded_at",
)
INSERT_SQL = (
    f"INSERT INTO memories (id, {', '.join(FIELDS)}) "
    f"VALUES ({', '.join('?' * (len(FIELDS) + 1))})"
)
INSERT_CONTEXT_SQL = (  # a new row with its session context (session_context.py)
    f"INSERT INTO memories (id, {', '.join(FIELDS)}, context) "
    f"VALUES ({', '.join('?' * (len(FIELDS) + 2))})"
)
# The vectors the embeddings cache refers to (_by_reference): a memory's own vector,
# read from vec0. The caller checks that the content hashes to the wanted text hash.
HELD_VECTORS_SQL = """
SELECT m.content_hash, m.content, v.embedding
FROM memories m JOIN memories_vec v ON v.rowid = m.id
WHERE {where} AND m.title IS NULL AND m.embedded_at IS NOT NULL
  AND NOT (m.category = 'conversation' AND m.session_id IS NOT NULL)
"""
# The models the embeddings cache holds vectors of, one index seek each (a plain
# DISTINCT reads the whole index, on every forget: a cost growing with the cache).
CACHE_MODELS_SQL = """
WITH RECURSIVE models (model) AS (
    SELECT min(model) FROM embeddings_cache
    UNION ALL
    SELECT (SELECT min(model) FROM embeddings_cache WHERE model > models.model) FROM models
    WHERE models.model IS NOT NULL
)
SELECT model FROM models WHERE model IS NOT NULL
"""
# The highest id ever given (meta 'last_id', migration 0007) and the stored ones.
NEXT_ID_SQL = """
SELECT max(coalesce((SELECT max(id) FROM memories), 0),
           coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'last_id'), 0)) + 1
"""
NOTE_ID_SQL = """
INSERT INTO meta (key, value) VALUES ('last_id', ?1)
ON CONFLICT (key) DO UPDATE SET value = max(CAST(value AS INTEGER), ?1)
"""
UPDATABLE = {
    "content", "title", "tags", "importance", "status", "kind", "category", "metadata",
    "pinned", "started_at", "resolved_at", "superseded_by", "agent", "session_id",
    "created_at", "source",
}
# Fields whose change moves a memory among its session neighbours (session_context.py).
CONTEXT_FIELDS = {"content", "title", "session_id", "category", "created_at"}
ORDERS = {
    "recent": "m.created_at DESC, m.id DESC",
    "oldest": "m.created_at ASC, m.id ASC",
    "importance": "m.importance DESC, m.created_at DESC",
    "updated": "m.updated_at DESC, m.id DESC",
}


def embed_text(title: str | None, content: str) -> str:
    """The text whose vector stands for a memory."""
    return f"{title}\n{content}" if title else content


def vector_table_sql(dim: int) -> str:
    """The vec0 table of a brain's float vectors.

    sqlite-vec keeps vectors in chunk blobs and reads one vector by walking the chunk's
    overflow pages, so a point lookup (search rescores its head that way) costs time in
    proportion to the chunk's bytes: at 1536-d, chunks of 256 vectors (1.5 MB) took
    ~350 µs a lookup, of 32 (192 KB) ~60 µs, inserting as fast (bench/vector_stages.py).
    Chunks stay near 192 KB.
    """
    chunk = min(256, max(16, 128 * 384 // dim))
    return (f"CREATE VIRTUAL TABLE memories_vec USING vec0("
            f"embedding float[{dim}] distance_metric=cosine, chunk_size={chunk})")


def content_hash(content: str) -> str:
    return text_hash(content.strip())


class Brain:
    """One agent's long-term memory in one SQLite file."""

    def __init__(
        self,
        db: Database,
        config: Config,
        embedder: Embedder | None,
        clock: Clock,
    ) -> None:
        self.db = db
        self.config = config
        self.embedder = embedder
        self.clock = clock
        self.warnings: list[str] = []
        self.last_merged: int | None = None  # the memory the last remember() updated instead of adding one
        self._index: search_mod.VectorIndex | None = None
        self._quantizer: search_mod.Quantizer | None = None
        self._seen_version: tuple[int, str | None] | None = None
        self._embed_failure: tuple[float, str] | None = None  # (monotonic time, message)

    # -- opening ------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        embedder: "str | Embedder | None" = None,
        config: Config | None = None,
        clock: Clock | None = None,
        check_embedder: bool = True,
    ) -> "Brain":
        """Open (creating and migrating if needed) the brain.db at `path`.

        embedder: "auto" | "openai" | "local" | "none" | an Embedder; None = config.embedder.
        """
        config = config or Config()
        path = Path(path).expanduser() if path is not None else Path(config.db_path).expanduser()
        clock = clock or Clock()
        db = Database(path, busy_timeout_ms=config.busy_timeout_ms)
        try:
            migrate(db, clock)
            recorded = db.get_meta("embedder_provider")
            chosen = make_embedder(embedder, config, recorded_provider=recorded)
            brain = cls(db, config, chosen, clock)
            if check_embedder:
                brain._check_embedder_identity()
            return brain
        except BaseException:
            db.close()
            raise

    def __enter__(self) -> "Brain":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    @property
    def path(self) -> Path:
        return self.db.path

    def _check_embedder_identity(self) -> None:
        recorded = self.db.get_meta("embedder")
        if self.embedder is None or recorded is None:
            return
        if (
            self.embedder.provider == self.db.get_meta("embedder_provider")
            and self.embedder.model == self.db.get_meta("embedder_model")
            and getattr(self.embedder, "_dim", 0) is None
        ):
            # Trust the recorded dimension instead of asking a remote model at open.
            self.embedder._dim = int(self.db.get_meta("embedder_dim") or 0)  # type: ignore[attr-defined]
        current = identity(self.embedder)
        if current != recorded:
            raise DatabaseError(
                f"{self.path} holds vectors from {recorded}, but the embedder in use is {current}: "
                f"run  maxmem reindex  to re-embed every memory with {current} "
                "(or configure the original embedder)"
            )

    def _record_embedder(self) -> None:
        assert self.embedder is not None
        if self.db.get_meta("embedder") is None:
            self.db.set_meta("embedder", identity(self.embedder))
            self.db.set_meta("embedder_provider", self.embedder.provider)
            self.db.set_meta("embedder_model", self.embedder.model)
            self.db.set_meta("embedder_dim", str(self.embedder.dim))

    # -- validation ---------------------------------------------------------
    def _record(self, item: Mapping[str, Any], now: str | None = None) -> dict[str, Any]:
        """A memories row from user input, checked; raises InvalidInput naming the field."""
        unknown = set(item) - set(REMEMBER_ARGS)
        if unknown:
            raise InvalidInput(f"unknown field(s) {', '.join(sorted(unknown))}")
        if "content" not in item:
            raise InvalidInput("content is missing: give the text to remember")
        now = now or iso(self.clock.now())
        content, title, tags, metadata = self._redact(
            check_content(item["content"]), check_title(item.get("title")),
            check_tags(item.get("tags")), check_metadata(item.get("metadata")),
        )
        created = check_time(item.get("created_at"), "created_at") or now
        return {
            "uid": check_uid(item.get("uid")) or new_uid(),
            "category": check_category(item.get("category", "daily")),
            "kind": check_kind(item.get("kind", "note")),
            "title": title,
            "content": content,
            "tags": tags,
            "importance": check_importance(item.get("importance", 0.5)),
            "status": check_status(item.get("status", "active")),
            "started_at": check_time(item.get("started_at"), "started_at"),
            "resolved_at": check_time(item.get("resolved_at"), "resolved_at"),
            "source": check_short(item.get("source", "manual"), "source") or "manual",
            "agent": check_short(item.get("agent", self.config.agent), "agent"),
            "session_id": check_short(item.get("session_id"), "session_id"),
            "metadata": metadata,
            "content_hash": content_hash(content),
            "pinned": check_flag(item.get("pinned", False), "pinned"),
            "superseded_by": check_uid(item.get("superseded_by"), "superseded_by"),
            "created_at": created,
            "updated_at": check_time(item.get("updated_at"), "updated_at") or now,
            "last_recalled_at": check_time(item.get("last_recalled_at"), "last_recalled_at"),
            "recall_count": check_count(item.get("recall_count"), "recall_count"),
            "embedded_at": None,
        }

    def _redact(
        self, content: str, title: str | None, tags: list[str], metadata: dict[str, Any]
    ) -> tuple[str, str | None, list[str], dict[str, Any]]:
        """Secrets out of every text field a memory stores and embeds (config.redact_on_remember)."""
        if not self.config.redact_on_remember:
            return content, title, tags, metadata
        from .redact import redact

        count = 0

        def clean(value: Any) -> Any:
            nonlocal count
            if isinstance(value, str):
                cleaned, found = redact(value)
                count += found
                return cleaned
            if isinstance(value, list):
                return [clean(v) for v in value]
            if isinstance(value, dict):
                return {k: clean(v) for k, v in value.items()}
            return value

        content, title = clean(content), clean(title)
        tags, metadata = clean(tags), clean(metadata)
        if not content.strip():
            raise InvalidInput("content is empty once secrets and <private> parts are taken out")
        if count:
            self._warn(f"redacted {count} secret(s) before storing")
            log.info("redacted %d secret(s) before storing a memory", count)  # and in .warnings
        return content, title, tags, metadata

    # -- writing ------------------------------------------------------------
    @guarded
    def remember(
        self,
        content: str,
        category: str = "daily",
        kind: str = "note",
        title: str | None = None,
        tags: Sequence[str] | None = None,
        importance: float = 0.5,
        metadata: Mapping[str, Any] | None = None,
        created_at: Any = None,
        source: str = "manual",
        agent: str | None = None,
        session_id: str | None = None,
        status: str = "active",
        pinned: bool = False,
        started_at: Any = None,
    ) -> Memory:
        """Store one memory (or return the identical one already stored in its category).

        A near-duplicate of a memory of the same category updates that memory instead
        (curation.merge_near_duplicate; `[curation] dedup = false` turns it off); its id
        is then in `last_merged`.
        remember_many does not look for near-duplicates: bulk loads stay fast.
        """
        item = {k: v for k, v in locals().items() if k != "self" and v is not None}
        record = self._record(item)
        from .curation import merge_near_duplicate  # lazy: curation sits above brain

        merged = merge_near_duplicate(self, record)
        self.last_merged = merged.id if merged is not None else None
        if merged is not None:
            return merged
        checked = {k: v for k, v in record.items() if k in REMEMBER_ARGS and v is not None}
        return self.remember_many([checked])[0]

    @guarded
    def similar(
        self, content: str, title: str | None = None, limit: int = 5, **filters: Any
    ) -> list[tuple[Memory, float]]:
        """Stored memories closest to `content` (as it would be stored), with their cosine
        similarity, most similar first; filters as in search (superseded left out).
        Empty without an embedder."""
        limit = _positive(limit, "limit")
        chosen = search_mod.Filters(**filters)
        index = self._vector_index()
        if index is None:
            return []
        vector = self._vectors_for([embed_text(title, check_content(content))])[0]
        if vector is None:
            return []
        allowed = None if chosen.is_empty() else search_mod.allowed_ids(self.db, chosen)
        quantizer = self._load_quantizer() or search_mod.Quantizer.identity(len(vector))
        # The int8 estimates rank near-duplicates first; a small pool keeps curation cheap.
        ids = index.candidates(vector, quantizer, max(16, 4 * limit), allowed)
        exact = search_mod.exact_similarities(self.db, ids, vector)
        best = sorted(exact.items(), key=lambda kv: -kv[1])[: limit + 8]
        memories = {m.id: m for m in self._get_many([i for i, _ in best])}
        found = [
            (memories[i], float(s)) for i, s in best
            if i in memories and (allowed is not None or memories[i].status != "superseded")
        ]
        return found[:limit]

    @guarded
    def remember_many(self, items: Iterable[Mapping[str, Any]], *, embed: bool = True) -> list[Memory]:
        """Store many memories in one transaction with batched embedding.

        Returns one Memory per item, in order; an item whose content already exists in
        its category (in brain.db or earlier in the batch) returns that memory.

        embed=False never calls the embedder: texts found in the embeddings cache get
        their vector, the rest are stored pending for `embed_pending()`. Jobs that
        store memories inside their own write transaction (capture) call
        `prefetch_vectors(items)` first, outside it, so no API call holds the lock.
        """
        records = self._records(items)
        if not records:
            return []
        texts = [embed_text(r["title"], r["content"]) for r in records]
        vectors, embedded = self._embed_uncached(texts) if embed else (self._cached_vectors(texts), {})
        with self.db.atomic():
            ids, fresh = self._insert(records, vectors)
            held = {m.content_hash for m in fresh.values() if m.embedded_at and _by_reference(m)}
            self._cache_vectors({h: v for h, v in embedded.items() if h not in held})
        known = {m.id: m for m in self._get_many([i for i in ids if i not in fresh])}
        return [fresh.get(i) or known[i] for i in ids]

    def prefetch_vectors(self, items: Iterable[Mapping[str, Any]]) -> int:
        """Embed, into the cache, the texts that remember_many(items) will store.

        Call it outside any transaction. Returns how many texts are still without a
        vector (embedding failed, or there is no embedder); 0 when all are cached.
        """
        if self.embedder is None:
            return len(list(items))
        records = self._records(items)
        vectors = self._vectors_for([embed_text(r["title"], r["content"]) for r in records])
        return sum(1 for v in vectors if v is None)

    def _records(self, items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        records = []
        now = iso(self.clock.now())
        for number, item in enumerate(items, start=1):
            if not isinstance(item, Mapping):
                raise InvalidInput(f"item {number}: must be an object with at least content")
            try:
                records.append(self._record(item, now))
            except InvalidInput as exc:
                raise InvalidInput(f"item {number}: {exc}") from None
        return records

    def _cached_vectors(self, texts: Sequence[str]) -> "list[np.ndarray | None]":
        if self.embedder is None:
            return [None] * len(texts)
        hashes = [text_hash(t) for t in texts]
        cached = self._cached(identity(self.embedder), hashes)
        return [cached.get(h) for h in hashes]

    def _next_id(self) -> int:
        """The id for a new memory: above every id brain.db ever gave, so a forgotten
        memory's id never names another one ("forget 12" sent twice forgets one memory)."""
        return int(self.db.scalar(NEXT_ID_SQL))

    def _note_id(self, memory_id: int) -> None:
        self.db.execute(NOTE_ID_SQL, (int(memory_id),))

    def _insert(
        self, records: list[dict[str, Any]], vectors: "list[np.ndarray | None]"
    ) -> tuple[list[int], dict[int, Memory]]:
        """Insert rows not already stored.

        Returns the id each record ended up as, and the Memory of each new row.
        """
        existing = self._existing_ids([(r["content_hash"], r["category"]) for r in records])
        next_id = self._next_id()
        rows, new_vectors, ids, seen = [], [], [], dict(existing)
        fresh: dict[int, Memory] = {}
        now = iso(self.clock.now())
        for record, vector in zip(records, vectors):
            key = (record["content_hash"], record["category"])
            if key in seen:
                ids.append(seen[key])
                continue
            memory_id = next_id
            next_id += 1
            seen[key] = memory_id
            ids.append(memory_id)
            if vector is not None:
                record["embedded_at"] = now
                new_vectors.append((memory_id, vector))
            rows.append(_row_values(memory_id, record))
            fresh[memory_id] = Memory(id=memory_id, **{k: record[k] for k in FIELDS})
        if rows:
            # New rows go in with their session context (one pass through the keyword
            # index); stored neighbours whose window they enter are updated after.
            pending = {
                m.id: session_context.Pending(m.category, m.session_id, m.created_at, m.content)
                for m in fresh.values()
                if session_context.in_session(m.category, m.session_id)
            }
            contexts = session_context.plan(self.db, list(pending), pending=pending) if pending else []
            text = {c.id: c.text for c in contexts if c.id in pending}
            self.db.executemany(INSERT_CONTEXT_SQL, [[*row, text.get(row[0])] for row in rows])
            self._note_id(next_id - 1)
            self._log_changes(list(fresh), "upsert", [m.to_dict() for m in fresh.values()])
            blended = self._apply_contexts(contexts, dict(new_vectors), logged=fresh)
            if new_vectors:
                self._store_vectors(
                    [i for i, _ in new_vectors], np.vstack([blended.get(i, v) for i, v in new_vectors])
                )
        return ids, fresh

    def _existing_ids(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
        found: dict[tuple[str, str], int] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 400):
            chunk = unique[start : start + 400]
            hashes = [h for h, _ in chunk]
            for row in self.db.execute(
                f"SELECT content_hash, category, min(id) FROM memories "
                f"WHERE content_hash IN ({','.join('?' * len(hashes))}) GROUP BY 1, 2",
                hashes,
            ):
                found[(row[0], row[1])] = row[2]
        return {k: v for k, v in found.items() if k in set(unique)}

    def _log_changes(self, ids: Sequence[int], op: str, snapshots: Sequence[dict[str, Any]] | None = None) -> None:
        now = iso(self.clock.now())
        if snapshots is None:
            snapshots = [m.to_dict() for m in self._get_many(ids)]
        self.db.executemany(
            "INSERT INTO changes (uid, op, at, data) VALUES (?, ?, ?, ?)",
            [(s["uid"], op, now, json.dumps(s, ensure_ascii=False)) for s in snapshots],
        )

    # -- session context ----------------------------------------------------
    def _refresh_context(
        self, ids: Iterable[int], own: Mapping[int, np.ndarray] | None = None, expand: bool = True,
        logged: Iterable[int] = (),
    ) -> dict[int, np.ndarray]:
        """Bring the session context of `ids` (and, with `expand`, of their neighbours) up to
        date: the context text, and the stored vectors blended from the own vectors.

        `own` holds the new own vectors of memories the caller is about to store: their
        blended vectors are returned for it to store. Other memories whose blend changed
        are re-stored here. Own vectors come from the embeddings cache (never the
        embedder); a neighbour without one is left out of the blend. Inside the caller's
        transaction.
        """
        return self._apply_contexts(session_context.plan(self.db, ids, expand), own, logged)

    def _apply_contexts(
        self, contexts: Sequence[session_context.Context], own: Mapping[int, np.ndarray] | None = None,
        logged: Iterable[int] = (),
    ) -> dict[int, np.ndarray]:
        """Store planned contexts and re-blended vectors (see _refresh_context)."""
        own = dict(own or {})
        if not contexts:
            return {}
        current = self._context_state([c.id for c in contexts])
        retexted = {c.id for c in contexts if c.id in current and current[c.id][0] != c.text}
        self.db.executemany(
            "UPDATE memories SET context = ? WHERE id = ?",
            [(c.text, c.id) for c in contexts if c.id in retexted],
        )
        # Memories changed here that the caller does not log (`logged`, `own`) are logged
        # here, so that the Postgres exporter sends their new context and vector.
        neighbours_changed = retexted - set(own) - set(logged)
        if self.embedder is None:
            if neighbours_changed:
                self._log_changes(sorted(neighbours_changed), "upsert")
            return {}
        session_ids = {c.id for c in contexts if c.text is not None}
        # A memory that left its session gets its own vector back (blend of no neighbours).
        leaving = {c.id for c in contexts if c.text is None and c.id in retexted}
        wanted = (session_ids | leaving | {n for c in contexts for n in c.neighbours}) - set(own)
        vectors = {**self._own_vectors(wanted), **own}
        blended: dict[int, np.ndarray] = {}
        restore: list[tuple[int, np.ndarray]] = []
        mixed = session_context.blend_many(vectors, contexts)
        for c in contexts:
            if c.id not in mixed:
                continue  # pending, or not in the cache: keeps what it has
            vector = mixed[c.id]
            if c.id in own:
                blended[c.id] = vector
            elif (c.id in session_ids or c.id in leaving) and current.get(c.id, (None, None))[1]:
                restore.append((c.id, vector))
        if restore:
            self._drop_vectors([i for i, _ in restore])
            self._store_vectors([i for i, _ in restore], np.vstack([v for _, v in restore]))
            neighbours_changed |= {i for i, _ in restore} - set(logged)
        if neighbours_changed:
            self._log_changes(sorted(neighbours_changed), "upsert")
        return blended

    def _context_state(self, ids: Sequence[int]) -> dict[int, tuple[str | None, str | None]]:
        """id -> (context, embedded_at) of the memories that exist."""
        out: dict[int, tuple[str | None, str | None]] = {}
        for start in range(0, len(ids), 400):
            chunk = list(ids[start : start + 400])
            for memory_id, context, embedded_at in self.db.execute(
                f"SELECT id, context, embedded_at FROM memories WHERE id IN ({','.join('?' * len(chunk))})", chunk
            ):
                out[memory_id] = (context, embedded_at)
        return out

    def _own_vectors(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        """The embeddings-cache vector of each memory's own text (not its stored blend)."""
        model = self.db.get_meta("embedder")  # what the cache is keyed by; None: no vectors yet
        wanted = sorted(set(ids))
        if not wanted or model is None:
            return {}
        hashes: dict[int, str] = {}
        for start in range(0, len(wanted), 400):
            chunk = wanted[start : start + 400]
            for row in self.db.execute(
                f"SELECT id, title, content FROM memories WHERE id IN ({','.join('?' * len(chunk))}) "
                "AND embedded_at IS NOT NULL", chunk
            ):
                hashes[row[0]] = text_hash(embed_text(row[1], row[2]))
        cached = self._cached(model, list(hashes.values()))
        return {i: cached[h] for i, h in hashes.items() if h in cached}

    # -- vectors ------------------------------------------------------------
    def _vectors_for(self, texts: Sequence[str]) -> "list[np.ndarray | None]":
        """Vectors from the cache, else from the embedder (outside any transaction).

        On an embedding failure the texts get None (stored as pending) and a warning.
        """
        vectors, fresh = self._embed_uncached(texts)
        if fresh:
            with self.db.atomic():
                self._cache_vectors(fresh)
        return vectors

    def _cache_vectors(self, fresh: Mapping[str, np.ndarray], model: str | None = None) -> None:
        """Keep vectors (by text hash) in the embeddings cache, as float16."""
        if not fresh or (model is None and self.embedder is None):
            return
        model = model or identity(self.embedder)  # type: ignore[arg-type]
        halves = np.asarray(np.vstack(list(fresh.values())), dtype=np.float16)
        self.db.executemany(
            "INSERT OR IGNORE INTO embeddings_cache (model, content_hash, vector) VALUES (?, ?, ?)",
            [(model, h, v.tobytes()) for h, v in zip(fresh, halves)],
        )

    def _embed_uncached(
        self, texts: Sequence[str]
    ) -> "tuple[list[np.ndarray | None], dict[str, np.ndarray]]":
        """Vectors from the cache, else from the embedder, and those just embedded (by
        text hash), which the caller keeps in the cache (_cache_vectors) unless a stored
        memory holds them (see _by_reference)."""
        if self.embedder is None:
            return [None] * len(texts), {}
        try:  # a remote model of unknown dimension is asked for it here
            model = identity(self.embedder)
        except EmbeddingError as exc:
            self._embed_failure = (time.monotonic(), str(exc))
            self._warn(_pending_note(str(exc)))
            return [None] * len(texts), {}
        hashes = [text_hash(t) for t in texts]
        cached = self._cached(model, hashes)
        missing = [i for i, h in enumerate(hashes) if h not in cached]
        if missing:
            unique: dict[str, str] = {}
            for i in missing:
                unique.setdefault(hashes[i], texts[i])
            failing = self._recent_embed_failure()
            if failing:
                self._warn(_pending_note(failing))
                return [cached.get(h) for h in hashes], {}
            try:
                matrix = self.embedder.embed_documents(list(unique.values()))
            except EmbeddingError as exc:
                self._embed_failure = (time.monotonic(), str(exc))
                self._warn(_pending_note(str(exc)))
                log.info("embedding failed, %d memories left pending: %s", len(unique), exc)  # and in .warnings
                return [cached.get(h) for h in hashes], {}
            fresh = dict(zip(unique, np.asarray(matrix, dtype=np.float32)))
            cached.update(fresh)
            return [cached.get(h) for h in hashes], fresh
        return [cached.get(h) for h in hashes], {}

    def _recent_embed_failure(self) -> str | None:
        """The message of an embedding failure less than EMBED_PAUSE_SECONDS ago."""
        if self._embed_failure and time.monotonic() - self._embed_failure[0] < EMBED_PAUSE_SECONDS:
            return self._embed_failure[1]
        return None

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def _cached(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors by text hash.

        The cache holds float16 (half the bytes written per memory; the cosine it
        changes is under 1e-3): a blob of 2 × dim bytes is float16, else float32.
        """
        out: dict[str, np.ndarray] = {}
        half = 2 * int(model.rsplit(":", 1)[-1]) if model.rsplit(":", 1)[-1].isdigit() else -1
        unique = list(dict.fromkeys(hashes))
        for start in range(0, len(unique), 400):
            chunk = unique[start : start + 400]
            for h, blob in self.db.execute(
                "SELECT content_hash, vector FROM embeddings_cache WHERE model = ? "
                f"AND content_hash IN ({','.join('?' * len(chunk))})",
                [model, *chunk],
            ):
                if len(blob) == half:
                    vector = np.frombuffer(blob, dtype=np.float16).astype(np.float32)
                    out[h] = vector / max(float(np.linalg.norm(vector)), 1e-12)
                else:
                    out[h] = np.frombuffer(blob, dtype=np.float32)
        missing = [h for h in unique if h not in out]
        if missing and model == self.db.get_meta("embedder"):
            out.update(self._held_vectors("m.content_hash", missing))
        return out

    def _held_vectors(self, column: str, values: Sequence[Any]) -> dict[str, np.ndarray]:
        """Text hash -> stored vector of the memories (`column` IN `values`) whose vec0 row
        the cache refers to (see _by_reference)."""
        held: dict[str, np.ndarray] = {}
        if not self.db.table_exists("memories_vec"):
            return held
        for start in range(0, len(values), 400):
            chunk = list(values[start : start + 400])
            for h, content, blob in self.db.execute(
                HELD_VECTORS_SQL.format(where=f"{column} IN ({','.join('?' * len(chunk))})"), chunk
            ):
                if text_hash(content) == h:  # the content as embedded, not only as hashed
                    held[h] = np.frombuffer(blob, dtype=np.float32)
        return held

    def _keep_held_vectors(self, ids: Sequence[int]) -> None:
        """Copy into the cache the vectors it only refers to (see _by_reference), before
        the memories holding them are deleted or re-embedded: a text is embedded once."""
        model = self.db.get_meta("embedder")  # the model of the stored vectors
        if model is not None:
            self._cache_vectors(self._held_vectors("m.id", [int(i) for i in ids]), model)

    def _ensure_vector_table(self) -> None:
        assert self.embedder is not None
        if not self.db.table_exists("memories_vec"):
            self.db.execute(vector_table_sql(int(self.embedder.dim)))
        self._record_embedder()

    def _store_vectors(self, ids: Sequence[int], matrix: np.ndarray) -> None:
        """Write float vectors (vec0) and their RAM-stage codes; inside the caller's transaction.

        The ids must have no vector yet (callers drop old ones first).
        """
        self._ensure_vector_table()
        matrix = np.asarray(matrix, dtype=np.float32)
        self.db.executemany(
            "INSERT INTO memories_vec (rowid, embedding) VALUES (?, ?)",
            [(int(i), v.tobytes()) for i, v in zip(ids, matrix)],
        )
        fitted_on = int(self.db.get_meta("quantizer_n", "0") or 0)
        total = self._vector_count() + len(ids)
        refit = fitted_on < CENTER_SAMPLE and total >= max(2 * fitted_on, 1)
        if refit and total == len(ids):
            # The first vectors of a brain fit the quantizer themselves: no read-back
            # (the first CENTER_SAMPLE of a big first batch, as if it came one by one).
            self._set_quantizer(search_mod.Quantizer.fit(matrix[:CENTER_SAMPLE]), min(total, CENTER_SAMPLE))
            refit = False
        quantizer = self._load_quantizer() or search_mod.Quantizer.identity(matrix.shape[1])
        bits, codes = quantizer.encode(matrix)
        self.db.executemany(
            "INSERT OR REPLACE INTO vector_codes (id, bits, codes) VALUES (?, ?, ?)",
            [(int(i), b.tobytes(), c.tobytes()) for i, b, c in zip(ids, bits, codes)],
        )
        if refit:
            self._refit_quantizer()
        else:
            if self._index is not None:
                self._index.add(ids, bits, codes)
            self._bump_vectors_epoch()

    def _vector_count(self) -> int:
        return int(self.db.scalar("SELECT count(*) FROM vector_codes"))

    def _load_quantizer(self) -> search_mod.Quantizer | None:
        if self._quantizer is None:
            raw = self.db.get_meta("quantizer")
            if raw:
                self._quantizer = search_mod.Quantizer.from_meta(raw)
        return self._quantizer

    def _refit_quantizer(self) -> None:
        """Re-centre on the stored vectors and re-take every code.

        Done each time the count doubles until CENTER_SAMPLE vectors, then frozen: a
        thousand memories pin down the model's mean direction well.
        """
        ids, rows = [], []
        for rowid, blob in self.db.execute("SELECT rowid, embedding FROM memories_vec"):
            ids.append(rowid)
            rows.append(np.frombuffer(blob, dtype=np.float32))
        matrix = np.vstack(rows)
        quantizer = self._set_quantizer(search_mod.Quantizer.fit(matrix), len(ids))
        bits, codes = quantizer.encode(matrix)
        self.db.executemany(
            "UPDATE vector_codes SET bits = ?, codes = ? WHERE id = ?",
            [(b.tobytes(), c.tobytes(), int(i)) for i, b, c in zip(ids, bits, codes)],
        )
        self._index = None
        self._bump_vectors_epoch()

    def _set_quantizer(self, quantizer: search_mod.Quantizer, fitted_on: int) -> search_mod.Quantizer:
        self._quantizer = quantizer
        self.db.set_meta("quantizer", quantizer.to_meta())
        self.db.set_meta("quantizer_n", str(fitted_on))
        self._index = None  # its codes were taken with the old quantizer
        return quantizer

    def _bump_vectors_epoch(self) -> None:
        epoch = int(self.db.get_meta("vectors_epoch", "0") or 0) + 1
        self.db.set_meta("vectors_epoch", str(epoch))
        if self._seen_version is not None:
            self._seen_version = (self._seen_version[0], str(epoch))

    def _vector_index(self) -> search_mod.VectorIndex | None:
        """The in-RAM candidate index, reloaded when another process changed the vectors."""
        if self.embedder is None or not self.db.table_exists("memories_vec"):
            return None
        data_version = int(self.db.scalar("PRAGMA data_version"))
        if self._index is not None and self._seen_version and self._seen_version[0] == data_version:
            return self._index
        epoch = self.db.get_meta("vectors_epoch")
        if self._index is not None and self._seen_version and self._seen_version[1] == epoch:
            self._seen_version = (data_version, epoch)
            return self._index
        self._quantizer = None
        dim = int(self.embedder.dim)
        quantizer = self._load_quantizer() or search_mod.Quantizer.identity(dim)
        words = quantizer.bits(np.zeros(dim, dtype=np.float32)).shape[1]
        index = search_mod.VectorIndex(words, dim)
        ids, bits, codes = [], [], []
        for memory_id, bit_blob, code_blob in self.db.execute("SELECT id, bits, codes FROM vector_codes"):
            ids.append(memory_id)
            bits.append(bit_blob)
            codes.append(code_blob)
        if ids:
            index.add(
                ids,
                np.frombuffer(b"".join(bits), dtype=np.uint64).reshape(len(ids), words),
                np.frombuffer(b"".join(codes), dtype=np.int8).reshape(len(ids), dim),
            )
        self._index = index
        self._seen_version = (data_version, epoch)
        return index

    # -- reading ------------------------------------------------------------
    @guarded
    def get(self, id_or_uid: int | str) -> Memory:
        """A memory by integer id or uid; NotFound if there is none."""
        if isinstance(id_or_uid, bool):  # True is 1 to int(): never memory #1 by accident
            row = None
        elif isinstance(id_or_uid, str) and not id_or_uid.isdigit():
            row = self.db.one("SELECT * FROM memories WHERE uid = ?", (id_or_uid,))
        else:
            try:
                row = self.db.one("SELECT * FROM memories WHERE id = ?", (int(id_or_uid),))
            except (TypeError, ValueError, OverflowError):
                row = None
        if row is None:
            raise NotFound(f"no memory {id_or_uid!r}: see  maxmem list  or  maxmem search")
        return Memory.from_row(row)

    def _get_many(self, ids: Sequence[int]) -> list[Memory]:
        found: dict[int, Memory] = {}
        unique = list(dict.fromkeys(int(i) for i in ids))
        for start in range(0, len(unique), 400):
            chunk = unique[start : start + 400]
            for row in self.db.rows(
                f"SELECT * FROM memories WHERE id IN ({','.join('?' * len(chunk))})", chunk
            ):
                found[row["id"]] = Memory.from_row(row)
        return [found[int(i)] for i in ids if int(i) in found]

    @guarded
    def list(
        self,
        category: str | Sequence[str] | None = None,
        kind: str | Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        since: Any = None,
        until: Any = None,
        min_importance: float | None = None,
        max_importance: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        status: str | Sequence[str] | None = None,
        agent: str | None = None,
        session_id: str | None = None,
        include_superseded: bool = True,
        pinned: bool | None = None,
        limit: int = 50,
        offset: int = 0,
        order: str = "recent",
    ) -> list[Memory]:
        """Memories matching the filters, newest first (or `order`: oldest, importance, updated)."""
        if order not in ORDERS:
            raise InvalidInput(f"order must be one of {', '.join(ORDERS)}")
        filters = search_mod.Filters(
            category, kind, tags, since, until, min_importance, _metadata_filter(metadata),
            status, agent, session_id, include_superseded, max_importance,
        )
        where, params = filters.where()
        if pinned is not None:
            where += " AND m.pinned = ?"
            params.append(int(check_flag(pinned, "pinned")))
        rows = self.db.rows(
            f"SELECT m.* FROM memories m WHERE {where} ORDER BY {ORDERS[order]} LIMIT ? OFFSET ?",
            [*params, _positive(limit, "limit"), _whole(offset, "offset")],
        )
        return [Memory.from_row(r) for r in rows]

    @guarded
    def search(
        self,
        query: str,
        limit: int = 10,
        category: str | Sequence[str] | None = None,
        kind: str | Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        since: Any = None,
        until: Any = None,
        min_importance: float | None = None,
        max_importance: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        status: str | Sequence[str] | None = None,
        agent: str | None = None,
        session_id: str | None = None,
        include_superseded: bool = False,
        mode: str = "hybrid",
        explain: bool = False,
        track: bool = True,
        min_relevance: float | None = None,
    ) -> list[Hit]:
        """The best `limit` memories for `query` among those matching the filters.

        score = vector_weight × vector + keyword_weight × keyword (config; 0.7 / 0.3),
        each scaled to 0–1 over the candidates. mode "keyword" or "vector" ranks by one
        side only. With no embedder the search is keyword-only (see `last_plan.note`).
        Each hit also carries a `relevance` that means the same in every search
        (relevance.py); when none reaches `min_relevance` (None: config.min_relevance,
        0: off) nothing relevant was found and the result is empty (`last_plan.note`).
        """
        query = search_mod.checked_query(query)
        threshold = self.config.min_relevance if min_relevance is None else _fraction(min_relevance, "min_relevance")
        filters = search_mod.Filters(
            category, kind, tags, since, until, min_importance, _metadata_filter(metadata),
            status, agent, session_id, include_superseded, max_importance,
        )
        limit = _positive(limit, "limit")
        index = self._vector_index() if mode != "keyword" else None
        query_vector = None
        if index is not None:
            try:
                failing = self._recent_embed_failure()
                if failing:
                    raise EmbeddingError(failing)
                query_vector = self.embedder.embed_query(search_mod.vector_query(query))  # type: ignore[union-attr]
            except EmbeddingError as exc:
                self._embed_failure = self._embed_failure if failing else (time.monotonic(), str(exc))
                self._warn(f"{exc}; searched by keyword only")
                if mode == "vector":
                    raise
        scored, plan = search_mod.hybrid_search(
            self.db, query, query_vector, index, self._load_quantizer(), filters, limit,
            self.config.vector_weight, self.config.keyword_weight, mode=mode,
        )
        if index is None and mode == "hybrid":  # (an embedder that failed has said so in a warning)
            plan.note = "keyword-only search: " + (
                "no embedder configured (see maxmem doctor)" if self.embedder is None
                else "no memory has a vector yet (maxmem embed --pending)")
        self.last_plan = plan
        memories = {m.id: m for m in self._get_many([s.id for s in scored])}
        found = self._evidence(query, scored)
        hits = [
            Hit(
                memories[s.id], s.score, s.vector_score, s.keyword_score,
                {**search_mod.explain_rows([s])[0], "cover": round(found[s.id].cover, 4),
                 "unknown": round(found[s.id].unknown, 4)} if explain else {},
                relevance_mod.relevance(found[s.id]),
            )
            for s in scored
            if s.id in memories
        ]
        plan.best_relevance = max((h.relevance or 0.0 for h in hits), default=None)
        plan.min_relevance = threshold
        if threshold and plan.best_relevance is not None and plan.best_relevance < threshold:
            plan.note = "; ".join(filter(None, [plan.note, (
                f"nothing relevant: the best hit's relevance {plan.best_relevance:.3f} is below "
                f"min_relevance {threshold:g}")]))
            hits = []
        if track and hits:
            self._track_recall([h.memory.id for h in hits])
        return hits

    def _evidence(self, query: str, scored: Sequence[search_mod.Scored]) -> dict[int, relevance_mod.Evidence]:
        """The relevance evidence of each scored memory. Cosines count only from the
        model the relevance was calibrated on (relevance.CALIBRATED_EMBEDDER)."""
        calibrated = self.embedder is not None and (
            f"{self.embedder.provider}:{self.embedder.model}" == relevance_mod.CALIBRATED_EMBEDDER)
        cosines = {s.id: s.raw_vector if calibrated else None for s in scored}
        return relevance_mod.evidence(self.db, query, cosines)

    def _track_recall(self, ids: Sequence[int]) -> None:
        """Count how often each memory is returned; best effort, never blocks a search."""
        now = iso(self.clock.now())
        self.db.conn.set_busy_timeout(50)
        try:
            with self.db.atomic():
                self.db.executemany(
                    "UPDATE memories SET recall_count = recall_count + 1, last_recalled_at = ? WHERE id = ?",
                    [(now, int(i)) for i in ids],
                )
        except (DatabaseError, apsw.BusyError):
            log.debug("recall counts skipped: database busy")
        finally:
            self.db.conn.set_busy_timeout(self.config.busy_timeout_ms)

    # -- changing -----------------------------------------------------------
    @guarded
    def update(self, id_or_uid: int | str, **fields: Any) -> Memory:
        """Change some fields of a memory; new content or title is re-embedded."""
        unknown = set(fields) - UPDATABLE
        if unknown:
            raise InvalidInput(
                f"cannot update {', '.join(sorted(unknown))}: updatable fields are {', '.join(sorted(UPDATABLE))}"
            )
        old = self.get(id_or_uid)
        merged = {**old.to_dict(), **{k: v for k, v in fields.items()}}
        merged.pop("id")
        record = self._record({k: merged[k] for k in REMEMBER_ARGS if k in merged})
        record["embedded_at"] = old.embedded_at
        changed = {k: record[k] for k in UPDATABLE | {"content_hash"} if record.get(k) != getattr(old, k)}
        if not changed:
            return old
        new_text = embed_text(record["title"], record["content"])
        reembed = new_text != embed_text(old.title, old.content)
        vector = self._vectors_for([new_text])[0] if reembed else None
        changed["updated_at"] = iso(self.clock.now())
        moved = bool(changed.keys() & CONTEXT_FIELDS)  # its session neighbours change
        with self.db.atomic():
            if reembed:
                changed["embedded_at"] = changed["updated_at"] if vector is not None else None
            near = session_context.around(self.db, [old.id]) if moved else set()
            if reembed or moved:  # its vector may stop being its text's own vector
                self._keep_held_vectors([old.id])
            assignments = ", ".join(f"{k} = ?" for k in changed)
            values = [_column_value(k, v) for k, v in changed.items()]
            self.db.execute(f"UPDATE memories SET {assignments} WHERE id = ?", [*values, old.id])
            if reembed:
                self._drop_vectors([old.id])
            own = {old.id: vector} if reembed and vector is not None else {}
            blended = self._refresh_context([old.id, *near], own, logged=[old.id]) if moved else {}
            if own:
                self._store_vectors([old.id], blended.get(old.id, vector).reshape(1, -1))
            self._log_changes([old.id], "upsert")
        return self.get(old.id)

    def supersede(self, old: int | str, new: int | str) -> Memory:
        """Mark `old` superseded by `new`; default search stops returning it. Returns old."""
        from .curation import supersede  # lazy: curation sits above brain

        return supersede(self, old, new)[0]

    def commit(self, trigger: str, text: str, **provenance: Any) -> Memory:
        """Commit a mandatory trigger (decision, milestone, preference, failure, lesson,
        remember) to core; see triggers.commit for the keyword arguments."""
        from .triggers import commit  # lazy: triggers sit above brain

        return commit(self, trigger, text, **provenance).memory

    def ensure_observation(self, project: str, location: str | None = None,
                           assigned_by: str | None = None, key_details: str | None = None,
                           next_steps: str | None = None, **provenance: Any) -> Any:
        """The project's observation, created from a template only if none exists;
        returns work.Ensured (.memory, .created). See work.ensure_observation."""
        from .work import ensure_observation  # lazy: work sits above brain

        return ensure_observation(self, project, location=location, assigned_by=assigned_by,
                                  key_details=key_details, next_steps=next_steps, **provenance)

    def pin(self, id_or_uid: int | str, pinned: bool = True) -> Memory:
        """Pinned memories never expire and come first in the boot context."""
        return self.update(id_or_uid, pinned=pinned)

    @guarded
    def forget(self, id_or_uid: int | str) -> Memory:
        """Delete a memory everywhere: row, keyword index, vectors, the cached vector of
        its text, the change log's copies, the captured transcript turns it was made of,
        and the freed bytes (see _delete); logged for sync."""
        memory = self.get(id_or_uid)
        self.forget_many([memory])
        return memory

    @guarded
    def forget_many(self, memories: Sequence[Memory], raw_turns: bool = True) -> int:
        """Delete many memories in one transaction, as `forget`.

        raw_turns=False keeps the captured transcript turns they were made of (retention,
        which archives those turns itself).
        """
        with self.db.atomic():
            self._delete(list(memories))
            if raw_turns:
                self._forget_turns(memories)
        if not self.db.conn.in_transaction:  # a caller's transaction (retention) is still open
            self._truncate_wal()
        return len(memories)

    def _delete(self, memories: Sequence[Memory]) -> None:
        """Delete rows, vectors and keyword entries; the change log keeps no copy.

        Forgetting must really forget (a secret remembered by mistake, say): earlier
        snapshots of the memory in `changes` lose their data, the delete entry keeps
        only what sync and `history` need to name it, the embeddings cache drops the
        vector (and text hash) of a text no other memory has, and the bytes freed are
        overwritten: PRAGMA secure_delete (db.py) and FTS5's secure-delete option
        (migration 0006). forget_many then empties the WAL (_truncate_wal).
        """
        ids = [m.id for m in memories]
        uids = [m.uid for m in memories]
        for start in range(0, len(uids), 400):
            chunk = uids[start : start + 400]
            self.db.execute(
                f"UPDATE changes SET data = NULL WHERE uid IN ({','.join('?' * len(chunk))})", chunk
            )
        self._log_changes(ids, "delete", [
            {"id": m.id, "uid": m.uid, "category": m.category, "kind": m.kind, "forgotten": True}
            for m in memories
        ])
        near = session_context.around(self.db, ids)
        self._drop_cached_texts(memories)
        self._drop_vectors(ids)
        self.db.executemany("DELETE FROM memories WHERE id = ?", [(i,) for i in ids])
        if near:  # their context and blend held the forgotten text
            self._refresh_context(near, expand=False)

    def _drop_cached_texts(self, memories: Sequence[Memory]) -> None:
        """Drop from the embeddings cache the vector of each text that no memory left
        outside `memories` has (its key is the text's hash: a fingerprint of the text)."""
        ids = {m.id for m in memories}
        still_used: set[tuple[str, str | None]] = set()
        for start in range(0, len(memories), 400):
            chunk = memories[start : start + 400]
            still_used.update(
                (row[1], row[2]) for row in self.db.execute(
                    f"SELECT id, content_hash, title FROM memories WHERE content_hash IN ({','.join('?' * len(chunk))})",
                    [m.content_hash for m in chunk],
                ) if row[0] not in ids
            )
        drop = {text_hash(embed_text(m.title, m.content)) for m in memories
                if (m.content_hash, m.title) not in still_used}
        # The key is (model, content_hash): delete by both, or each row is a full scan.
        models = [row[0] for row in self.db.execute(CACHE_MODELS_SQL)]
        self.db.executemany(
            "DELETE FROM embeddings_cache WHERE model = ? AND content_hash = ?",
            [(model, h) for model in models for h in sorted(drop)],
        )

    def _forget_turns(self, memories: Sequence[Memory]) -> None:
        """Blank the captured turns (and their tool calls) each memory was made of."""
        captured = [m for m in memories if m.source == "capture"
                    and isinstance(m.metadata.get("turn_range"), list) and len(m.metadata["turn_range"]) == 2]
        if not captured or not self.db.table_exists("turns"):
            return
        from .capture.store import forget_turns  # lazy: capture sits above brain

        for m in captured:
            forget_turns(self.db, m.metadata.get("session_id") or m.session_id or "", *m.metadata["turn_range"])

    def _truncate_wal(self) -> None:
        """After a forget, empty brain.db-wal, whose older frames still hold the deleted
        bytes until the log restarts. Best effort: another process reading brain.db
        holds the log, and the next checkpoint truncates it then."""
        if self.db.scalar("PRAGMA journal_mode") != "wal":
            return
        self.db.conn.set_busy_timeout(200)
        try:
            self.db.conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)
        except apsw.BusyError:
            self._warn("another process is reading brain.db: the forgotten text stays in brain.db-wal "
                       "until that file is emptied (by the next forget, or when the last process closes brain.db)")
        finally:
            self.db.conn.set_busy_timeout(self.config.busy_timeout_ms)

    def _drop_vectors(self, ids: Sequence[int]) -> None:
        if self.db.table_exists("memories_vec"):
            self.db.executemany("DELETE FROM memories_vec WHERE rowid = ?", [(int(i),) for i in ids])
        self.db.executemany("DELETE FROM vector_codes WHERE id = ?", [(int(i),) for i in ids])
        if self._index is not None:
            self._index.remove(ids)
        self._bump_vectors_epoch()

    # -- embeddings upkeep --------------------------------------------------
    def pending_count(self) -> int:
        return int(self.db.scalar("SELECT count(*) FROM memories WHERE embedded_at IS NULL"))

    @guarded
    def embed_pending(self, batch_size: int = 256, progress: ProgressFn | None = None) -> int:
        """Embed every memory stored without a vector; returns how many got one.

        Commits per batch, so an interrupted run keeps what it did and the next
        run picks up the rest.
        """
        if self.embedder is None:
            raise EmbeddingError("no embedder configured: set one with  maxmem init --embedder local")
        total, done = self.pending_count(), 0
        last_id = 0
        self._embed_failure = None  # an explicit backfill always tries the API
        while True:
            rows = self.db.rows(
                "SELECT id, title, content FROM memories WHERE embedded_at IS NULL AND id > ? "
                "ORDER BY id LIMIT ?",
                (last_id, batch_size),
            )
            if not rows:
                break
            last_id = rows[-1]["id"]
            vectors = self._vectors_for([embed_text(r["title"], r["content"]) for r in rows])
            if self._embed_failure:
                message = self._embed_failure[1]
                # It is the error now, not also a warning.
                self.warnings = [w for w in self.warnings if not w.startswith(message)]
                raise EmbeddingError(message)
            with self.db.atomic():
                now = iso(self.clock.now())
                ids = [r["id"] for r in rows]
                # Skip rows deleted or embedded by another process meanwhile.
                still = {
                    row[0]
                    for row in self.db.execute(
                        f"SELECT id FROM memories WHERE embedded_at IS NULL AND id IN ({','.join('?' * len(ids))})",
                        ids,
                    )
                }
                keep = [(i, v) for i, v in zip(ids, vectors) if i in still and v is not None]
                if keep:
                    self._drop_vectors([i for i, _ in keep])
                    self.db.executemany(
                        "UPDATE memories SET embedded_at = ? WHERE id = ?", [(now, i) for i, _ in keep]
                    )
                    blended = self._refresh_context([i for i, _ in keep], dict(keep))
                    self._store_vectors(
                        [i for i, _ in keep], np.vstack([blended.get(i, v) for i, v in keep])
                    )
                    # A new vector is a change too: the Postgres exporter sends it.
                    self._log_changes([i for i, _ in keep], "upsert")
            done += len(rows)
            if progress:
                progress(min(done, total), total)
        return done

    @guarded
    def reindex(self, progress: ProgressFn | None = None, batch_size: int = 256) -> int:
        """Re-embed every memory with the current embedder (after changing model)."""
        if self.embedder is None:
            raise EmbeddingError("no embedder configured: choose one with --embedder local|openai")
        dim = int(self.embedder.dim)
        with self.db.atomic():
            self.db.execute("DROP TABLE IF EXISTS memories_vec")
            self.db.execute("DELETE FROM vector_codes")
            self.db.execute("DELETE FROM meta WHERE key IN ('embedder', 'embedder_provider', "
                            "'embedder_model', 'embedder_dim', 'quantizer', 'quantizer_n')")
            self.db.execute("UPDATE memories SET embedded_at = NULL")
            self._quantizer, self._index = None, None
            self._record_embedder()
            self._bump_vectors_epoch()
        log.info("reindex: %d-d vectors from %s", dim, identity(self.embedder))
        return self.embed_pending(batch_size=batch_size, progress=progress)

    # -- import / export ----------------------------------------------------
    def export_records(self, **filters: Any) -> Iterator[dict[str, Any]]:
        """Every memory as a dict of all its fields, oldest first (for JSONL export)."""
        last = 0
        while True:
            rows = self.db.rows("SELECT * FROM memories WHERE id > ? ORDER BY id LIMIT 500", (last,))
            if not rows:
                return
            for row in rows:
                yield Memory.from_row(row).to_dict()
            last = rows[-1]["id"]

    @guarded
    def import_records(self, records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
        """Insert or update memories from exported dicts, keeping uid and timestamps.

        One transaction: a bad record raises InvalidInput naming its line, and nothing
        of the file is stored.
        """
        counts = {"added": 0, "updated": 0, "unchanged": 0}
        prepared: list[tuple[dict[str, Any], int | None]] = []
        for number, raw in enumerate(records, start=1):
            if not isinstance(raw, Mapping):
                raise InvalidInput(f"line {number}: not a JSON object")
            if raw.get("_table") not in (None, "memories"):
                # A retention archive also keeps the captured turns and tool calls it
                # deleted (for reference); importing restores the memories.
                counts["skipped"] = counts.get("skipped", 0) + 1
                continue
            item = {k: v for k, v in raw.items() if k in REMEMBER_ARGS or k in ("uid", "id")}
            try:
                record = self._record({k: v for k, v in item.items() if k != "id"})
                if "content_hash" in raw and raw.get("content_hash") not in (None, record["content_hash"]):
                    record["content_hash"] = content_hash(record["content"])
            except InvalidInput as exc:
                raise InvalidInput(f"line {number}: {exc}") from None
            wanted = raw.get("id")
            wanted_id = wanted if type(wanted) is int and 0 < wanted < 2**63 else None
            prepared.append((record, wanted_id))
        texts = [embed_text(r["title"], r["content"]) for r, _ in prepared]
        vectors = self._vectors_for(texts)
        now = iso(self.clock.now())
        touched: set[int] = set()  # whose session context to bring up to date at the end
        with self.db.atomic():
            for (record, wanted_id), vector in zip(prepared, vectors):
                old = self.db.one("SELECT * FROM memories WHERE uid = ?", (record["uid"],))
                if old is not None:
                    current = Memory.from_row(old).to_dict()
                    same = all(current.get(k) == record.get(k) for k in FIELDS if k not in ("embedded_at",))
                    if same:
                        counts["unchanged"] += 1
                        continue
                    record["embedded_at"] = now if vector is not None else None
                    touched |= session_context.around(self.db, [old["id"]])
                    self._keep_held_vectors([old["id"]])
                    values = [_column_value(k, record[k]) for k in FIELDS]
                    self.db.execute(
                        f"UPDATE memories SET {', '.join(f'{k} = ?' for k in FIELDS)} WHERE id = ?",
                        [*values, old["id"]],
                    )
                    self._drop_vectors([old["id"]])
                    memory_id = old["id"]
                    counts["updated"] += 1
                else:
                    taken = wanted_id is None or self.db.scalar("SELECT 1 FROM memories WHERE id = ?", (wanted_id,))
                    memory_id = self._next_id() if taken else int(wanted_id)  # type: ignore[arg-type]
                    record["embedded_at"] = now if vector is not None else None
                    self.db.execute(INSERT_SQL, _row_values(memory_id, record))
                    self._note_id(memory_id)
                    counts["added"] += 1
                if vector is not None:
                    self._store_vectors([memory_id], vector.reshape(1, -1))
                self._log_changes([memory_id], "upsert")
                touched.add(memory_id)
            if touched:
                self._refresh_context(touched, logged=touched)
        return counts

    # -- facts --------------------------------------------------------------
    @guarded
    def stats(self) -> dict[str, Any]:
        """Counts, sizes and the embedder in use: what `maxmem stats` prints."""
        per_category = {c: 0 for c in CATEGORIES}
        for category, count in self.db.execute("SELECT category, count(*) FROM memories GROUP BY 1"):
            per_category[category] = count
        size = sum(
            p.stat().st_size
            for p in (self.path, Path(f"{self.path}-wal"))
            if str(self.path) != ":memory:" and p.exists()
        )
        recorded = self.db.get_meta("embedder")
        return {
            "path": str(self.path),
            "memories": sum(per_category.values()),
            "categories": per_category,
            "pinned": int(self.db.scalar("SELECT count(*) FROM memories WHERE pinned = 1")),
            "pending_embeddings": self.pending_count() if self.embedder else 0,
            "unembedded": self.pending_count(),
            "embedder": identity(self.embedder) if self.embedder else "none (keyword-only search)",
            "vectors_from": recorded,
            "schema_version": schema_version(self.db),
            "schema_latest": len(MIGRATIONS),
            "size_bytes": size,
            "changes": int(self.db.scalar("SELECT coalesce(max(seq), 0) FROM changes")),
        }


REMEMBER_ARGS = (
    "content", "category", "kind", "title", "tags", "importance", "metadata", "created_at",
    "source", "agent", "session_id", "status", "pinned", "started_at", "resolved_at",
    "uid", "updated_at", "superseded_by", "last_recalled_at", "recall_count",
)


def _pending_note(message: str) -> str:
    """An embedding failure as the warning of a write: what happens to the memory."""
    if "embed --pending" in message:
        return message
    return f"{message}; the memory is kept and will be embedded by  maxmem embed --pending"


def _column_value(name: str, value: Any) -> Any:
    if name in ("tags", "metadata"):
        if not value:  # most memories: no tags, no metadata (a bulk-load hot path)
            return "[]" if name == "tags" else "{}"
        return json.dumps(value, ensure_ascii=False)
    if name == "pinned":
        return int(bool(value))
    return value


def _by_reference(memory: Memory) -> bool:
    """Whether the embeddings cache refers to this memory's vec0 row instead of holding
    a copy of its vector (writing a float16 copy was ~15 % of bulk-insert time at 1536-d).

    True when the stored vector is exactly the embedding of the text the cache is keyed
    by, and a cache lookup can find it (HELD_VECTORS_SQL): no title (the text is the
    content), content without outer whitespace (its content_hash is its text's hash),
    and not a session memory (whose stored vector is blended with its neighbours'; their
    own vectors stay in the cache).
    """
    return (
        memory.title is None
        and not session_context.in_session(memory.category, memory.session_id)
        and memory.content == memory.content.strip()
    )


def _row_values(memory_id: int, record: Mapping[str, Any]) -> list[Any]:
    """The INSERT_SQL parameters of a record (the bulk-load hot path: only the three
    columns that need converting go through _column_value)."""
    row = [memory_id, *map(record.__getitem__, FIELDS)]
    for position, name in _CONVERTED:
        row[position] = _column_value(name, row[position])
    return row


_CONVERTED = tuple((FIELDS.index(name) + 1, name) for name in ("tags", "metadata", "pinned"))


def _metadata_filter(metadata: Any) -> dict[str, Any] | None:
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InvalidInput(f"the metadata filter must be an object of key: value, not {type(metadata).__name__}")
    return dict(metadata or {}) or None


def _whole(value: Any, what: str) -> int:
    """A whole number ≥ 0 (an offset)."""
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInput(f"{what} must be a whole number") from None
    if number < 0 or isinstance(value, bool):
        raise InvalidInput(f"{what} must be a whole number, 0 or more, not {value!r}")
    return number


def _fraction(value: Any, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInput(f"{what} must be a number from 0 to 1, not {value!r}"[:200]) from None
    if isinstance(value, bool) or not 0.0 <= number <= 1.0:
        raise InvalidInput(f"{what} must be a number from 0 to 1, not {value!r}"[:200])
    return number


def _positive(value: Any, what: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInput(f"{what} must be a whole number") from None
    if number < 1 or number > 100_000:
        raise InvalidInput(f"{what} must be from 1 to 100000")
    return number


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Records of a JSONL file (gzipped when it ends in .gz); a bad line names its number."""
    opener = gzip.open if str(path).endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8-sig") as handle:  # type: ignore[operator]  # a BOM is no JSON
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InvalidInput(f"{path}:{number}: not valid JSON ({exc.msg})") from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from None


def write_jsonl(records: Iterable[Mapping[str, Any]], handle: io.TextIOBase) -> int:
    count = 0
    for record in records:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
    return count
