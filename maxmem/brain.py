"""Brain: the public API over one brain.db, a thin façade over the floors below.

Every write goes down the floors once: store/records.py checks the input and takes
secrets out, curation.py decides whether it restates a stored memory, search/vectors.py
embeds (outside any transaction), store/rows.py writes the rows with their change log,
neighbour windows and vectors in one transaction. Reads go to search/hybrid.py (hybrid
search) and store/rows.py; store/usage.py records what searches return without writing
on the search path (nor the searches a `get` follows: store/fetched.py).

Embedding never happens inside a write transaction (a slow API must not hold the
write lock), and an embedding failure never loses a memory: the row is stored with
`embedded_at` NULL and `embed_pending()` backfills it later.
"""

from __future__ import annotations

import builtins
import functools
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import apsw
import numpy as np

from . import curation
from .capture.store import forget_turns
from .clock import Clock, iso
from .config import Config
from .embeddings import Embedder, identity, make_embedder, text_hash
from .errors import DatabaseError, EmbeddingError, InvalidInput, NotFound
from .memory import CATEGORIES, ORDERS, Filters, Hit, Memory, check_content
from .redact import Redactor
from .search import hybrid, relevance
from .search.fts import Tokenizer
from .search.vectors import VectorStore, held_hashes, stored_vectors
from .settings import CurationSettings, EmbedSettings
from .store import changes
from .store.db import Database, guarded
from .store.migrations import MIGRATIONS, migrate, schema_version
from .store.records import FIELDS, REMEMBER_ARGS, UPDATABLE, Checked, check_record, check_records, embed_text, item_of
from .store.rows import Rows
from .store.usage import Usage

log = logging.getLogger("maxmem")

ProgressFn = Callable[[int, int], None]
Action = Literal["added", "updated", "unchanged"]
UPDATABLE_FIELDS = ", ".join(sorted(UPDATABLE))
EMBED_BATCH = EmbedSettings.batch_size  # memories a batch of embed_pending embeds ([embed] batch_size)
# A budgeted run measures its rate on a first batch this small.
FIRST_BUDGETED_BATCH = 8
PENDING_SQL = "SELECT id, title, content FROM memories WHERE embedded_at IS NULL AND id > ? ORDER BY id LIMIT ?"


@dataclass(frozen=True)
class EmbedRun:
    """What `Brain.embed_pending` did: memories given a vector, memories still without
    one, whether it stopped at its time budget (the next run goes on), its seconds."""

    embedded: int
    pending: int
    stopped_by_budget: bool = False
    seconds: float = 0.0

    def summary(self) -> str:
        line = f"embed: {self.embedded} memories embedded in {self.seconds:.1f} s, {self.pending} still pending"
        if self.stopped_by_budget:
            line += " (stopped at its time budget: the next run goes on from there)"
        return line

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# What an item of a batch comes to: a stored memory ("memory", id) or an item of the
# batch ("item", index), added.
Target = tuple[Literal["memory", "item"], int]
# The nearest stored memories a new text is compared with, as `remember` does.
NEAR_CANDIDATES = 3


@dataclass(frozen=True)
class BatchPlan:
    """What `remember_many` will write: each item's target, in order, and the checked
    record of each target it writes (the items it adds, the memories it updates)."""

    targets: list[Target]
    records: dict[Target, dict[str, Any]]


@dataclass(frozen=True)
class Remembered:
    """What `Brain.remember_item` did: added a memory, updated the one the text restates,
    or found it already stored unchanged; with the similarity of a near-duplicate."""

    memory: Memory
    action: Action
    similarity: float | None = None


class Hits(list[Hit]):
    """Search results, best first, with how the search ran (`plan`: its note says
    when it was keyword-only and why)."""

    def __init__(self, hits: Iterable[Hit], plan: hybrid.SearchPlan) -> None:
        super().__init__(hits)
        self.plan = plan


class Brain:
    """One agent's long-term memory in one SQLite file."""

    def __init__(self, db: Database, config: Config, embedder: Embedder | None, clock: Clock) -> None:
        self.db = db
        self.config = config
        self.clock = clock
        self.warnings: list[str] = []  # what went wrong but lost nothing, for the caller to show
        # The rules of [redact] (docs/redact.md); `redacting` is None when
        # redact_on_remember is off. Memories, search queries on their way to an
        # embedder (VectorStore.embed_query) and scrub use them.
        self.redactor = Redactor.from_config(config)
        self.redacting = self.redactor if config.redact_on_remember else None
        self.vectors = VectorStore(db, embedder, self.warnings, self.redacting)
        self.rows = Rows(db, self.vectors, clock)
        self.usage = Usage()

    # -- opening ------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        embedder: str | Embedder | None = None,
        config: Config | None = None,
        clock: Clock | None = None,
        check_embedder: bool = True,
        create: bool = True,
    ) -> Brain:
        """Open (creating and migrating if needed) the brain.db at `path`.

        embedder: "auto" | "openai" | "local" | "none" | an Embedder; None = config.embedder.
        create=False: a brain.db that does not exist yet is an error, not created (for
        commands that only read).
        """
        config = config or Config()
        path = Path(path).expanduser() if path is not None else Path(config.db_path).expanduser()
        if not create and str(path) != ":memory:" and not path.exists():
            raise DatabaseError(f"no brain.db at {path} yet: run  maxmem init  (capture and remember create "
                                "it too), or check --db")
        clock = clock or Clock()
        db = Database(path, busy_timeout_ms=config.busy_timeout_ms, key=config.key)
        try:
            if db.read_only and schema_version(db) < len(MIGRATIONS):
                # An older schema the file cannot be upgraded to: read an upgraded copy.
                db = db.copy_in_memory(lambda copy: migrate(copy, clock))
            migrate(db, clock)
            chosen = make_embedder(embedder, config, recorded_provider=db.get_meta("embedder_provider"))
            brain = cls(db, config, chosen, clock)
            if check_embedder:
                brain.vectors.check_identity()
            return brain
        except BaseException:
            db.close()
            raise

    def __enter__(self) -> Brain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Write the recall counts searches kept in memory, then close brain.db."""
        try:
            self.flush_usage()
        finally:
            reader = self.__dict__.pop("_reader", None)
            if reader is not None:
                reader.close()
            self.db.close()

    @property
    def path(self) -> Path:
        return self.db.path

    @property
    def embedder(self) -> Embedder | None:
        return self.vectors.embedder

    def _check(self, item: Mapping[str, Any], now: str | None = None) -> dict[str, Any]:
        checked = check_record(item, now=now or iso(self.clock.now()), agent=self.config.agent,
                               redactor=self.redacting)
        self._note_redactions([checked])
        return checked.record

    def _note_redactions(self, checked: Sequence[Checked]) -> None:
        count = sum(c.redacted for c in checked)
        if count:
            self._warn(f"redacted {count} secret(s) before storing")
            log.info("redacted %d secret(s) before storing", count)  # and in .warnings

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    # -- writing ------------------------------------------------------------
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
        (see `remember_item`; `[curation] dedup = false` turns it off).
        """
        item = {k: v for k, v in locals().items() if k != "self" and v is not None}
        return self.remember_item(item).memory

    @guarded
    def remember_item(self, item: Mapping[str, Any], *, merge_exact: bool = False,
                      near: bool | None = None) -> Remembered:
        """Remember one memory given as a dict of its fields, deciding duplicates first.

        An exact copy of a memory of its category is that memory ("unchanged"), or, with
        `merge_exact`, folds its tags, metadata and importance into it ("updated" when
        that changes anything). A near-duplicate (same numbers, cosine ≥ the configured
        threshold; `near`: look for one, default `[curation] dedup`) updates the stored
        memory with the newer wording ("updated"). Otherwise it is "added".
        """
        record = self._check(item)
        now = iso(self.clock.now())
        exact = self.rows.find_exact(record["content_hash"], record["category"])
        if exact is not None:
            if not merge_exact or curation.adds_nothing(exact, record):
                return Remembered(exact, "unchanged")
            return Remembered(self._merge(exact, curation.merged_fields(exact, record, now)), "updated")
        config = self.config.curation
        embedded = True  # the text's vector is cached, or will be made by the insert
        if (config.dedup if near is None else near) and self.vectors.index() is not None:
            made = self.vectors.vectors_for([embed_text(record["title"], record["content"])])
            embedded = made.error is None  # a failure is not tried again for the insert
            found = self._near_duplicate(record, config, made.vectors[0])
            if found is not None:
                existing, similarity = found
                log.info("near-duplicate of #%d (similarity %.3f): updating it instead", existing.id, similarity)
                fields = curation.merged_fields(existing, record, now, similarity)
                return Remembered(self._merge(existing, fields), "updated", similarity)
        return Remembered(self._insert([record], embed=embedded)[0], "added")

    def _near_duplicate(self, record: Mapping[str, Any], config: CurationSettings,
                        vector: np.ndarray | None) -> tuple[Memory, float] | None:
        """The stored memory of the record's category that it restates, with its similarity."""
        if vector is None:
            return None
        for memory, similarity in self._nearest(vector, Filters(category=record["category"]), NEAR_CANDIDATES):
            if curation.is_near_duplicate(similarity, memory.content, record["content"],
                                          config.dedup_threshold, config.dedup_superset_threshold):
                return memory, similarity
        return None

    def _merge(self, existing: Memory, fields: Mapping[str, Any]) -> Memory:
        return self._change(existing, self._check({**item_of(existing), **fields}))

    @guarded
    def similar(
        self, content: str, title: str | None = None, limit: int = 5, filters: Filters | None = None,
        **fields: Any,
    ) -> list[tuple[Memory, float]]:
        """Stored memories closest to `content` (as it would be stored), with their cosine
        similarity, most similar first; filters as in search (superseded left out).
        Empty without an embedder."""
        limit = _positive(limit, "limit")
        chosen = Filters.of(filters, **fields)
        if self.vectors.index() is None:
            return []
        text = embed_text(title, check_content(content))
        if self.redacting is not None:  # "as it would be stored": the embedder never sees a secret
            text = self.redacting.redact(text)[0]
        vector = self.vectors.vectors_for([text]).vectors[0]
        return [] if vector is None else self._nearest(vector, chosen, limit)

    def _nearest(self, vector: np.ndarray, chosen: Filters, limit: int) -> builtins.list[tuple[Memory, float]]:
        best = hybrid.similar(self.db, self.vectors, vector, chosen, limit)
        memories = {m.id: m for m in self.rows.get_many([i for i, _ in best])}
        keep_superseded = not chosen.is_empty()  # the filters chose the statuses
        found = [(memories[i], float(s)) for i, s in best
                 if i in memories and (keep_superseded or memories[i].status != "superseded")]
        return found[:limit]

    @guarded
    def remember_many(self, items: Iterable[Mapping[str, Any]], *, embed: bool = True,
                      near: bool | None = None) -> list[Memory]:
        """Remember many memories in one transaction with batched embedding, by the rules
        of `remember`: an item whose content a memory of its category already holds (in
        brain.db or earlier in the batch) is that memory, and a near-duplicate of one (in
        brain.db or earlier in the batch; `near`: look for them, default `[curation]
        dedup`) updates it. Returns one Memory per item, in order: for a restatement, the
        memory it updated.

        embed=False never calls the embedder: texts found in the embeddings cache get
        their vector, the rest are stored pending for `embed_pending()`; an item without
        a vector is checked for exact copies only, as `remember` does when embedding
        fails. Jobs that store memories inside their own write transaction (capture)
        call `prefetch_vectors(items)` first, outside it, so no API call holds the lock.
        """
        checked = check_records(items, now=iso(self.clock.now()), agent=self.config.agent,
                                redactor=self.redacting)
        self._note_redactions(checked)
        records = [c.record for c in checked]
        config = self.config.curation
        if not records or not (config.dedup if near is None else near):
            return self._insert(records, embed, batch=True)
        texts = [embed_text(r["title"], r["content"]) for r in records]
        vectors, fresh = self._vectors_of(texts, embed, batch=True)
        plan = self._restatements(records, vectors, config.dedup_threshold, config.dedup_superset_threshold)
        return self._write_plan(records, texts, vectors, fresh, plan, embed)

    def _vectors_of(self, texts: Sequence[str], embed: bool,
                    batch: bool = False) -> tuple[list[np.ndarray | None], dict[str, np.ndarray]]:
        """Each text's vector (None: none yet) and those just embedded (for the cache)."""
        if not embed:
            return self.vectors.cached_only(texts), {}
        embedded = self.vectors.embed(texts, batch)
        return embedded.vectors, embedded.fresh

    def _insert(self, records: list[dict[str, Any]], embed: bool = True, batch: bool = False) -> list[Memory]:
        if not records:
            return []
        texts = [embed_text(r["title"], r["content"]) for r in records]
        vectors, fresh = self._vectors_of(texts, embed, batch)
        with self.db.atomic():
            inserted = self.rows.insert(records, vectors)
            held = held_hashes(inserted.fresh.values())
            self.vectors.cache({h: v for h, v in fresh.items() if h not in held})
        known = {m.id: m for m in self.rows.get_many([i for i in inserted.ids if i not in inserted.fresh])}
        return [inserted.fresh.get(i) or known[i] for i in inserted.ids]

    def _restatements(self, records: Sequence[dict[str, Any]], vectors: Sequence[np.ndarray | None],
                      threshold: float, superset_threshold: float) -> BatchPlan:
        """What each item of a batch comes to, met in order as `remember` would meet them:
        the memory or earlier item holding its text in its category already; a memory or
        earlier item it restates, which it updates; or itself, added ("item", its index)."""
        now = iso(self.clock.now())
        keys = [(r["content_hash"], r["category"]) for r in records]
        # Which target holds each text of a category now: brain.db's, then the batch's.
        holder: dict[tuple[str, str], Target] = {k: ("memory", i) for k, i in self.rows.existing_ids(keys).items()}
        with_vector = {i: v for i, v in enumerate(vectors) if v is not None}
        first: dict[tuple[str, str], int] = {}  # each new text's first item: its stored neighbours are looked up
        for i in with_vector:
            if keys[i] not in holder:
                first.setdefault(keys[i], i)
        nearest = self._stored_neighbours(records, {i: with_vector[i] for i in first.values()},
                                          min(threshold, superset_threshold))
        order = list(with_vector)
        earlier = curation.earlier_restatements(
            list(with_vector.values()),
            [(records[i]["category"], curation.numbers(records[i]["content"])) for i in order],
            min(threshold, superset_threshold))
        earlier_of = {order[k]: [(order[e], s) for e, s in found] for k, found in earlier.items()}
        plan = BatchPlan([], {})
        states: dict[Target, Memory] = {}  # each target as it stands so far
        by_text = {text_hash(embed_text(r["title"], r["content"])): v
                   for r, v in zip(records, vectors) if v is not None}
        for i, record in enumerate(records):
            if keys[i] in holder:
                plan.targets.append(holder[keys[i]])
                continue
            options: dict[Target, float] = {}
            for memory, similarity in nearest.get(first.get(keys[i], -1), []):
                states.setdefault(("memory", memory.id), memory)
                options[("memory", memory.id)] = similarity
            for j, similarity in earlier_of.get(i, []):
                target = plan.targets[j]
                options[target] = max(similarity, options.get(target, -1.0))
            for target in options.keys() & plan.records.keys():  # written in this batch: its text now
                now_vector = by_text.get(text_hash(embed_text(states[target].title, states[target].content)))
                if now_vector is not None:
                    options[target] = curation.cosine(with_vector[i], now_vector)
            found = next(((target, similarity) for target, similarity in
                          sorted(options.items(), key=lambda kv: -kv[1])[:NEAR_CANDIDATES]
                          if curation.is_near_duplicate(similarity, states[target].content,
                                                        record["content"], threshold, superset_threshold)),
                         None)
            if found is None:
                target, merged = ("item", i), record
            else:
                target, similarity = found
                state = states[target]
                merged = self._check({**item_of(state), **curation.merged_fields(state, record, now, similarity)}, now)
                if holder.get((state.content_hash, state.category)) == target:
                    del holder[(state.content_hash, state.category)]
                log.info("near-duplicate (similarity %.3f) in a batch: updating %s instead", similarity,
                         f"#{target[1]}" if target[0] == "memory" else f"item {target[1] + 1}")
            plan.targets.append(target)
            plan.records[target] = merged
            states[target] = Memory(id=0 if target[0] == "item" else target[1], **{k: merged[k] for k in FIELDS})
            holder[(merged["content_hash"], merged["category"])] = target
        return plan

    def _stored_neighbours(self, records: Sequence[Mapping[str, Any]], wanted: Mapping[int, np.ndarray],
                           at_least: float) -> dict[int, builtins.list[tuple[Memory, float]]]:
        """For each wanted item (index -> its vector), the stored memories of its category
        nearest to it (as `remember` looks for them) that may be `at_least` that similar,
        most similar first."""
        by_category: dict[str, builtins.list[int]] = {}
        for i in wanted:
            by_category.setdefault(records[i]["category"], []).append(i)
        found: dict[int, builtins.list[tuple[int, float]]] = {}
        for category, items in by_category.items():
            lists = hybrid.similar_many(self.db, self.vectors, [wanted[i] for i in items],
                                        Filters(category=category), NEAR_CANDIDATES, at_least)
            found.update(zip(items, lists))
        memories = {m.id: m for m in self.rows.get_many(sorted({m for pairs in found.values() for m, _ in pairs}))}
        return {i: [(memories[m], float(s)) for m, s in pairs if m in memories][:NEAR_CANDIDATES]
                for i, pairs in found.items()}

    def _write_plan(self, records: Sequence[dict[str, Any]], texts: Sequence[str],
                    vectors: Sequence[np.ndarray | None], fresh: dict[str, np.ndarray], plan: BatchPlan,
                    embed: bool) -> list[Memory]:
        """Add the items the plan adds and update the memories it updates, in one
        transaction; each item's Memory, in order."""
        own = {text_hash(t): v for t, v in zip(texts, vectors) if v is not None}
        added = [i for i, target in enumerate(plan.targets) if target == ("item", i)]
        new_records = [plan.records[("item", i)] for i in added]
        olds = {m.id: m for m in self.rows.get_many([t[1] for t in plan.records if t[0] == "memory"])}
        changes = [(old, *self._difference(old, plan.records[("memory", old.id)])) for old in olds.values()]
        wanted = [embed_text(r["title"], r["content"]) for r in new_records] + [t for *_, t in changes if t]
        missing = list(dict.fromkeys(t for t in wanted if text_hash(t) not in own))
        if missing:
            more, fresher = self._vectors_of(missing, embed, batch=True)
            own.update({text_hash(t): v for t, v in zip(missing, more) if v is not None})
            fresh = {**fresh, **fresher}
        with self.db.atomic():
            inserted = self.rows.insert(new_records, [own.get(text_hash(embed_text(r["title"], r["content"])))
                                                      for r in new_records])
            held = held_hashes(inserted.fresh.values())
            self.vectors.cache({h: v for h, v in fresh.items() if h not in held})
            for old, changed, text in changes:
                if changed:
                    vector = own.get(text_hash(text)) if text else None
                    self.rows.change(old, self._stamped(changed, text, vector), vector, text is not None)
        ids = dict(zip(added, inserted.ids))
        wanted_ids = [ids[t[1]] if t[0] == "item" else t[1] for t in plan.targets]
        final = {**{m.id: m for m in self.rows.get_many([i for i in dict.fromkeys(wanted_ids)
                                                          if i not in inserted.fresh])}, **inserted.fresh}
        return [final[i] for i in wanted_ids]

    def prefetch_vectors(self, items: Iterable[Mapping[str, Any]]) -> int:
        """Embed, into the cache, the texts that remember_many(items) will store.

        Call it outside any transaction. Returns how many texts are still without a
        vector (embedding failed, or there is no embedder); 0 when all are cached.
        """
        items = list(items)
        if self.embedder is None:
            return len(items)
        now = iso(self.clock.now())
        records = [c.record for c in check_records(items, now=now, agent=self.config.agent,
                                                   redactor=self.redacting)]
        embedded = self.vectors.vectors_for([embed_text(r["title"], r["content"]) for r in records], batch=True)
        return sum(1 for v in embedded.vectors if v is None)

    @guarded
    def update(self, id_or_uid: int | str, **fields: Any) -> Memory:
        """Change some fields of a memory; new content or title is re-embedded."""
        unknown = set(fields) - UPDATABLE
        if unknown:
            raise InvalidInput(f"cannot update {', '.join(sorted(unknown))}: updatable fields are {UPDATABLE_FIELDS}")
        old = self.get(id_or_uid)
        return self._change(old, self._check({**item_of(old), **fields}))

    def _change(self, old: Memory, record: Mapping[str, Any]) -> Memory:
        """Write what differs between `old` and the checked `record`."""
        changed, text = self._difference(old, record)
        if not changed:
            return old
        vector = self.vectors.vectors_for([text]).vectors[0] if text is not None else None
        with self.db.atomic():
            self.rows.change(old, self._stamped(changed, text, vector), vector, text is not None)
        return self.get(old.id)

    @staticmethod
    def _difference(old: Memory, record: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
        """The fields of the checked `record` that differ from `old`, and its text to embed
        when that is new (None: the same text)."""
        changed = {k: record[k] for k in UPDATABLE | {"content_hash"} if record.get(k) != getattr(old, k)}
        text = embed_text(record["title"], record["content"])
        return changed, (text if changed and text != embed_text(old.title, old.content) else None)

    def _stamped(self, changed: dict[str, Any], text: str | None, vector: np.ndarray | None) -> dict[str, Any]:
        """`changed` with the time of the change, and of the new vector when re-embedded."""
        changed["updated_at"] = iso(self.clock.now())
        if text is not None:
            changed["embedded_at"] = changed["updated_at"] if vector is not None else None
        return changed

    @guarded
    def supersede(self, old: int | str, new: int | str) -> Memory:
        """Mark `old` superseded by `new` (linked both ways, one transaction); default
        search stops returning it. Returns old."""
        old_memory, new_memory = self.get(old), self.get(new)
        if old_memory.id == new_memory.id:
            raise InvalidInput("a memory cannot supersede itself: give two different ids")
        if new_memory.status == "superseded":
            raise InvalidInput(
                f"#{new_memory.id} is itself superseded (by {new_memory.superseded_by}): supersede with its successor"
            )
        if old_memory.status == "superseded" and old_memory.superseded_by not in (None, new_memory.uid):
            raise InvalidInput(f"#{old_memory.id} is already superseded by {old_memory.superseded_by}")
        supersedes = list(dict.fromkeys([*new_memory.metadata.get("supersedes", []), old_memory.uid]))
        with self.db.atomic():
            marked = self.update(old_memory.id, status="superseded", superseded_by=new_memory.uid,
                                 metadata={**old_memory.metadata, "superseded_at": iso(self.clock.now())})
            self.update(new_memory.id, metadata={**new_memory.metadata, "supersedes": supersedes})
        return marked

    def pin(self, id_or_uid: int | str, pinned: bool = True) -> Memory:
        """Pinned memories never expire and come first in the boot brief."""
        return self.update(id_or_uid, pinned=pinned)

    @guarded
    def forget(self, id_or_uid: int | str) -> Memory:
        """Delete a memory everywhere: row, keyword index, vectors, the cached vector of
        its text, the change log's copies, the captured transcript turns it was made of,
        and the freed bytes (see rows.Rows.delete); logged for sync."""
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
            self.rows.delete(list(memories))
            if raw_turns:
                self._forget_turns(memories)
        if not self.db.conn.in_transaction:  # a caller's transaction (retention) is still open
            self._truncate_wal()
        return len(memories)

    def _forget_turns(self, memories: Sequence[Memory]) -> None:
        """Blank the captured turns (and their tool calls) each memory was made of."""
        captured = [m for m in memories if m.source == "capture"
                    and isinstance(m.metadata.get("turn_range"), list) and len(m.metadata["turn_range"]) == 2]
        if not captured or not self.db.table_exists("turns"):
            return
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

    # -- reading ------------------------------------------------------------
    @guarded
    def get(self, id_or_uid: int | str, *, track: bool = False) -> Memory:
        """A memory by integer id or uid; NotFound if there is none.

        `track`: a fetch of yours (`maxmem get`, the MCP tool `get` and resource
        `memory://{id}`): a memory fetched within minutes of a search that returned it
        makes that search a question `maxmem tune` asks (store/fetched.py; written later, in a batch)."""
        row = None
        if isinstance(id_or_uid, bool):  # True is 1 to int(): never memory #1 by accident
            pass
        elif isinstance(id_or_uid, str) and not id_or_uid.isdigit():
            row = self.db.one("SELECT * FROM memories WHERE uid = ?", (id_or_uid,))
        else:
            try:
                row = self.db.one("SELECT * FROM memories WHERE id = ?", (int(id_or_uid),))
            except (TypeError, ValueError, OverflowError):
                row = None
        if row is None:
            raise NotFound(f"no memory {id_or_uid!r}: see  maxmem list  or  maxmem search")
        memory = self.usage.seen(Memory.from_row(row))
        if track:
            self.usage.fetches.got([memory.id], iso(self.clock.now()))
            if self.usage.due():
                self.flush_usage()
        return memory

    @guarded
    def get_many(self, ids: Sequence[int | str], *, track: bool = False) -> list[Memory]:
        """Memories by id or uid, in the order asked; NotFound names the first missing one
        (`track`: as `get`'s)."""
        return [self.get(i, track=track) for i in ids]

    @guarded
    def list(self, filters: Filters | None = None, *, limit: int = 50, offset: int = 0,
             order: str = "recent", **fields: Any) -> builtins.list[Memory]:
        """Memories matching the filters, newest first (or `order`: oldest, importance,
        updated). Superseded memories are listed too unless the filters say otherwise."""
        if order not in ORDERS:
            raise InvalidInput(f"order must be one of {', '.join(ORDERS)}")
        if filters is None:
            fields.setdefault("include_superseded", True)
        where, params = Filters.of(filters, **fields).sql
        rows = self.db.rows(
            f"SELECT m.* FROM memories m WHERE {where} ORDER BY {ORDERS[order]} LIMIT ? OFFSET ?",
            [*params, _positive(limit, "limit"), _whole(offset, "offset")],
        )
        return [self.usage.seen(Memory.from_row(r)) for r in rows]

    @guarded
    def search(self, query: str, limit: int = 10, filters: Filters | None = None, *, mode: str = "hybrid",
               explain: bool = False, track: bool = True, min_relevance: float | None = None,
               **fields: Any) -> Hits:
        """The best `limit` memories for `query` among those matching the filters.

        score = vector_weight × vector + keyword_weight × keyword (config; 0.7 / 0.3),
        each scaled to 0–1 over the candidates. mode "keyword" or "vector" ranks by one
        side only. With no embedder the search is keyword-only (see `Hits.plan.note`).
        Each hit also carries a `relevance` that means the same in every search
        (relevance.py); only hits reaching `min_relevance` (None: config.min_relevance,
        0: off) are returned, and when none of the best relevance.JUDGED_HITS do, nothing relevant
        was found and the result is empty (`Hits.plan.note`). Neither depends on `limit`.
        `track`: a search of yours (the prompt hook's recall and tune's are not): its hits
        count in the recall statistics, and its query is kept for minutes, redacted, for
        a `get` that fetches one of them (store/fetched.py); both written later, in a batch.
        """
        query = hybrid.checked_query(query)
        threshold = relevance.threshold(min_relevance, self.config.min_relevance)
        chosen = Filters.of(filters, **fields)
        limit = _positive(limit, "limit")
        # Ranked and judged to the same depth whatever `limit`: whether a search finds
        # something relevant, and which hits it lists, do not depend on how many are asked.
        depth = max(limit, relevance.JUDGED_HITS)
        index = self.vectors.index() if mode != "keyword" else None
        query_vector = self._query_vector(query, mode) if index is not None else None
        spare = self._spare() if query_vector is not None and hybrid.threaded(mode, index) else None
        # The query's term counts (relevance) are read on the spare connection while
        # the search's own stages run.
        terms = hybrid.beside(relevance.query_terms, spare, query, self.keyword_tokenizer) if spare else None
        try:
            scored, plan = hybrid.hybrid_search(
                self.db, query, query_vector, index, self.vectors.quantizer(), chosen, depth,
                self.config.vector_weight, self.config.keyword_weight, mode=mode, spare=spare,
                pool=hybrid.pool_size(self.config.search.candidates, depth),
                recency=hybrid.Recency(self.config.search.recency_weight, self.config.search.recency_half_life),
            )
        finally:
            counted = terms.result() if terms else None
        if index is None and mode == "hybrid":  # (an embedder that failed has said so in a warning)
            plan.note = "keyword-only search: " + (
                "no embedder configured (see maxmem doctor)" if self.embedder is None
                else "no memory has a vector yet (maxmem embed)")
        memories = {m.id: m for m in self.rows.get_many([s.id for s in scored])}
        mean = self.vectors.mean() if query_vector is not None else None
        usual = None if query_vector is None or mean is None else relevance.typical(query_vector, mean)
        found = self._evidence(query, scored, counted, usual, query_vector)
        # A vector search is judged on its cosines alone, which are calibrated for one
        # model only: with another, its hits carry no relevance and nothing is cut.
        judged = mode != "vector" or relevance.calibrated(self.embedder)
        ranked = [Hit(memories[s.id], s.score, s.vector_score, s.keyword_score,
                      {**hybrid.explain_rows([s])[0], "cover": round(found[s.id].cover, 4),
                       "unknown": round(found[s.id].unknown, 4),
                       "lift": _rounded(found[s.id].lift), "hub": _rounded(found[s.id].hub),
                       "off_topic": _rounded(found[s.id].off_topic),
                       "lead": _rounded(found[s.id].lead)} if explain else {},
                      relevance.relevance(found[s.id], mode) if judged else None)
                  for s in scored if s.id in memories]
        chosen_hits = relevance.verdict([h.relevance for h in ranked], judged, threshold, limit)
        plan.best_relevance, plan.min_relevance = chosen_hits.best, threshold
        if chosen_hits.notes:
            plan.note = "; ".join(filter(None, [plan.note, *chosen_hits.notes]))
        hits = Hits([ranked[i] for i in chosen_hits.listed], plan)
        if track and hits:
            at = iso(self.clock.now())
            self.usage.note([h.memory.id for h in hits], at)
            self.usage.fetches.searched(query, [h.memory.id for h in hits], at)
            if self.usage.due():
                self.flush_usage()
        return hits

    def flush_usage(self) -> bool:
        """Write the recall counts, searches and fetches kept in memory now (done every
        few seconds and at close anyway); False when another process holds the write lock."""
        return self.usage.flush(self.db, self.config.busy_timeout_ms, self._redacted, self.clock.now(),
                                self.config.retention.conversation)

    def _redacted(self, text: str) -> str:
        return self.redactor.redact(text)[0]

    def _evidence(self, query: str, scored: Sequence[hybrid.Scored], terms: relevance.QueryTerms | None,
                  usual: float | None, query_vector: np.ndarray | None) -> dict[int, relevance.Evidence]:
        """The relevance evidence of each scored memory (`usual`: the brain's typical
        cosine to the query). Cosines count only from the model the relevance was
        calibrated on (relevance.CALIBRATED_EMBEDDER); so do the memories' hubness, the
        query's closeness to the off-topic prompts and the best cosine's lead."""
        calibrated = relevance.calibrated(self.embedder)
        cosines = {s.id: s.cosine if calibrated else None for s in scored}
        ids = [i for i, c in cosines.items() if c is not None]
        bank = relevance.off_topic_bank(self.vectors, self.embedder) if ids and self.embedder is not None else None
        terms = terms or relevance.query_terms(self.db, query, self.keyword_tokenizer)
        matched = relevance.matched_terms(self.db, terms.weights, list(cosines), self.keyword_tokenizer)
        stored = stored_vectors(self.db, ids) if bank is not None else {}
        return relevance.judge(terms, matched, cosines, stored, bank, usual if calibrated else None, query_vector)

    def _spare(self) -> Database | None:
        """The second connection a big search reads on beside its keyword query (opened
        once), or None while a transaction is open here (it would not see its writes)."""
        if self.db.busy():
            return None
        return self._reader

    @functools.cached_property
    def _reader(self) -> Database | None:
        return self.db.reader()

    @functools.cached_property
    def keyword_tokenizer(self) -> Tokenizer:
        """brain.db's FTS5 tokenizer (read from the index's definition once)."""
        return Tokenizer(self.db)

    def _query_vector(self, query: str, mode: str) -> np.ndarray | None:
        try:
            return self.vectors.embed_query(hybrid.vector_query(query))
        except EmbeddingError as exc:
            self._warn(f"search fell back to keywords: {getattr(exc, 'failure', None) or exc}")
            if mode == "vector":
                raise
            return None

    @guarded
    def history(self, id_or_uid: int | str) -> builtins.list[dict[str, Any]]:
        """Every recorded version of a memory, oldest first, numbered 1, 2, 3, … with the
        fields each changed. Works for deleted memories too (by uid, or the id they had)."""
        try:
            uid = self.get(id_or_uid).uid
        except NotFound:
            text = str(id_or_uid).strip().lstrip("#")
            if not text.isdigit():
                uid = text
            else:
                found = changes.uid_of_id(self.db, int(text))
                if found is None:
                    raise NotFound(f"no memory #{text}, now or in the change log: see  maxmem list") from None
                uid = found
        try:
            return changes.history(self.db, uid)
        except NotFound:
            raise NotFound(f"no recorded history for {id_or_uid!r}: see  maxmem list") from None

    # -- embeddings upkeep --------------------------------------------------
    def pending_count(self) -> int:
        return int(self.db.scalar("SELECT count(*) FROM memories WHERE embedded_at IS NULL"))

    @guarded
    def embed_pending(self, max_seconds: float | None = None, batch_size: int = EMBED_BATCH,
                      progress: ProgressFn | None = None) -> EmbedRun:
        """Embed the memories stored without a vector, oldest first, `batch_size` at a
        time, each batch committed on its own; returns what it did (an `EmbedRun`).

        max_seconds: a time budget. A batch is not started when the time left is below
        what one memory took so far, and a batch is cut to what fits in the time left
        (the first batch of a budgeted run is small, to measure the rate): the run
        stops within about one memory's embedding time of its budget, with
        `stopped_by_budget`, and the next run goes on from there. Without it, every
        pending memory is embedded. An interrupted run keeps the batches it committed.
        progress(done, total) is called after each batch.
        """
        if self.embedder is None:
            raise EmbeddingError("no embedder configured: set one with  maxmem init --embedder local")
        batch_size = _positive(batch_size, "batch_size")
        if max_seconds is not None and (isinstance(max_seconds, bool) or not max_seconds > 0):
            raise InvalidInput(f"max_seconds must be a positive number of seconds, not {max_seconds!r}")
        started = time.monotonic()
        total, done, last_id, per_memory = self.pending_count(), 0, 0, None
        stopped = False
        while True:
            size = batch_size
            if max_seconds is not None:
                size = _fitting(batch_size, max_seconds - (time.monotonic() - started), per_memory)
                if size == 0:
                    stopped = True
                    break
            rows = self.db.rows(PENDING_SQL, (last_id, size))
            if not rows:
                break
            batch_started = time.monotonic()
            last_id = rows[-1]["id"]
            done += self._embed_rows(rows)
            per_memory = (time.monotonic() - batch_started) / len(rows)
            if progress:
                progress(min(done, total), total)
        pending = self.pending_count()
        stopped = stopped and pending > 0
        return EmbedRun(done, pending, stopped, time.monotonic() - started)

    def _embed_rows(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Vectors for these pending rows, and the cache, in one transaction; how many
        got one. Rows deleted or embedded by another process meanwhile are skipped."""
        embedded = self.vectors.embed([embed_text(r["title"], r["content"]) for r in rows], batch=True)
        if embedded.error:
            failure = embedded.error
            self.warnings[:] = [w for w in self.warnings if not w.startswith(failure)]  # the error now
            raise EmbeddingError(failure)
        ids = [r["id"] for r in rows]
        with self.db.atomic():
            self.vectors.cache(embedded.fresh)
            still = {row[0] for row in self.db.each_in(
                "SELECT id FROM memories WHERE embedded_at IS NULL AND id IN ({marks})", ids)}
            keep = {i: v for i, v in zip(ids, embedded.vectors) if i in still and v is not None}
            if keep:
                self.rows.mark_embedded(keep)
        return len(keep)

    @guarded
    def reindex(self, progress: ProgressFn | None = None, batch_size: int = EMBED_BATCH) -> int:
        """Re-embed every memory with the current embedder (after changing model)."""
        if self.embedder is None:
            raise EmbeddingError("no embedder configured: choose one with --embedder local|openai")
        dim = int(self.embedder.dim)
        with self.db.atomic():
            self.vectors.reset()
        log.info("reindex: %d-d vectors from %s", dim, identity(self.embedder))
        return self.embed_pending(batch_size=batch_size, progress=progress).embedded

    # -- import / export ----------------------------------------------------
    def export_records(self) -> Iterator[dict[str, Any]]:
        """Every memory as a dict of all its fields, oldest first (for JSONL export)."""
        last = 0
        while rows := self.db.rows("SELECT * FROM memories WHERE id > ? ORDER BY id LIMIT 500", (last,)):
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
        prepared = self._importable(records, counts)
        vectors = self.vectors.vectors_for([embed_text(r["title"], r["content"]) for r, _ in prepared],
                                           batch=True).vectors
        now = iso(self.clock.now())
        touched: set[int] = set()  # whose neighbour windows to bring up to date at the end
        with self.db.atomic():
            for (record, wanted_id), vector in zip(prepared, vectors):
                record["embedded_at"] = now if vector is not None else None
                old = self.db.one("SELECT * FROM memories WHERE uid = ?", (record["uid"],))
                if old is None:
                    taken = wanted_id is None or self.db.scalar("SELECT 1 FROM memories WHERE id = ?", (wanted_id,))
                    memory_id = self.rows.next_id() if taken or wanted_id is None else wanted_id
                    self.rows.add(memory_id, record, vector)
                    counts["added"] += 1
                elif _same(Memory.from_row(old), record):
                    counts["unchanged"] += 1
                    continue
                else:
                    memory_id = old["id"]
                    touched |= self.rows.replace(memory_id, record, vector)
                    counts["updated"] += 1
                touched.add(memory_id)
            if touched:
                self.rows.refresh(touched, logged=touched)
        return counts

    def _importable(self, records: Iterable[Mapping[str, Any]],
                    counts: dict[str, int]) -> builtins.list[tuple[dict[str, Any], int | None]]:
        """Each record checked, with the id it asks for (kept when free)."""
        prepared: builtins.list[tuple[dict[str, Any], int | None]] = []
        now = iso(self.clock.now())
        for number, raw in enumerate(records, start=1):
            if not isinstance(raw, Mapping):
                raise InvalidInput(f"line {number}: not a JSON object")
            if raw.get("_table") not in (None, "memories"):
                # A retention archive also keeps the captured turns and tool calls it
                # deleted (for reference); importing restores the memories.
                counts["skipped"] = counts.get("skipped", 0) + 1
                continue
            item = {k: v for k, v in raw.items() if k in REMEMBER_ARGS}
            try:
                record = self._check(item, now)
            except InvalidInput as exc:
                raise InvalidInput(f"line {number}: {exc}") from None
            wanted = raw.get("id")
            prepared.append((record, wanted if type(wanted) is int and 0 < wanted < 2**63 else None))
        return prepared

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
        return {
            "path": str(self.path),
            "memories": sum(per_category.values()),
            "categories": per_category,
            "pinned": int(self.db.scalar("SELECT count(*) FROM memories WHERE pinned = 1")),
            "pending_embeddings": self.pending_count() if self.embedder else 0,
            "unembedded": self.pending_count(),
            "embedder": identity(self.embedder) if self.embedder else "none (keyword-only search)",
            "vectors_from": self.db.get_meta("embedder"),
            "schema_version": schema_version(self.db),
            "schema_latest": len(MIGRATIONS),
            "size_bytes": size,
            "changes": int(self.db.scalar("SELECT coalesce(max(seq), 0) FROM changes")),
        }


def _same(memory: Memory, record: Mapping[str, Any]) -> bool:
    """Whether an imported record says exactly what the stored memory says."""
    current = memory.to_dict()
    return all(current.get(k) == record.get(k) for k in FIELDS if k != "embedded_at")


def _whole(value: Any, what: str) -> int:
    """A whole number ≥ 0 (an offset)."""
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInput(f"{what} must be a whole number") from None
    if number < 0 or isinstance(value, bool):
        raise InvalidInput(f"{what} must be a whole number, 0 or more, not {value!r}"[:200])
    if number >= 2**63:  # SQLite's integers end there
        raise InvalidInput(f"{what} must be below 2^63, not {str(value)[:40]}")
    return number


def _positive(value: Any, what: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInput(f"{what} must be a whole number") from None
    if number < 1 or number > 100_000:
        raise InvalidInput(f"{what} must be from 1 to 100000")
    return number


def _fitting(batch_size: int, left: float, per_memory: float | None) -> int:
    """How many memories the next batch of a budgeted embed_pending takes: what fits in
    the `left` seconds at the rate measured so far (0: stop), a small first batch."""
    if left <= 0:
        return 0
    if per_memory is None:
        return min(batch_size, FIRST_BUDGETED_BATCH)
    return min(batch_size, int(left / max(per_memory, 1e-6)))


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
