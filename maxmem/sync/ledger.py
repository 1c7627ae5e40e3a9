"""What folder sync knows of each memory, and how changes from other machines merge.

Every synced field of a memory carries the stamp (store/hlc.py) of its last write and
a hash of its value, in `sync_memories`; a forgotten memory keeps only its tombstone,
a memory retention expired here only the stamp of its expiry. Two operations keep that
ledger and brain.db together, each inside the caller's transaction:

- `absorb` reads this machine's change log past its cursor and stamps the fields that
  changed here (a field whose value matches what the ledger holds was not written
  here: it came from another machine, or nothing changed). What it returns is what
  this machine must send: the latest state of each memory written here, and the
  tombstones of the memories forgotten here. Expiry by retention stays local: each
  machine expires its own copy by its own policy, and a record of what a memory was
  when it expired here does not bring it back (a write made after the expiry does).
- `merge` applies records from another machine: for each field, the write with the
  later stamp wins (ties by the value's hash, the same everywhere), through the same
  write path as any other write (records.py checks and redacts, rows.py writes rows,
  change log, neighbour windows and vectors). A tombstone wins over every write of its
  memory, earlier or later, and forgets it as `maxmem forget` does.

`carried` says what this machine's own files must hold for the folder to give a
joining machine this brain: the memories it wrote that are still here, as they are now,
and its tombstones (sync/folder.py repacks its files to that).

A record is the whole synced state of one memory with the stamp of each field, so
records merge in any order, any number of times, to the same brain: the merge is a
per-field maximum. Each field's stamp also names the stamp it replaced; two writes of
one field that did not see each other are a conflict, recorded in `sync_conflicts`
(the value kept and the one dropped, by stamp) for `maxmem doctor`.

Every record is checked before anything of it is applied (`refusal`): its shape, its
stamps (32 hex digits, none far ahead of this machine's clock), its sizes. A record that
is not what this format holds is refused for good (sync/folder.py quarantines it); one
stamped or dated ahead of this machine's clock (a machine whose clock runs fast) is
refused for now, and its file is merged again on later runs until it is not ahead.

The cursor is moved past the change-log entries a merge writes, in the same
transaction, so what arrives from other machines is never sent back out as this
machine's own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np

from ..brain import Brain
from ..clock import iso, parse_time
from ..embeddings import normalise, text_hash
from ..errors import InvalidInput
from ..memory import UID, Memory
from ..search.vectors import by_reference
from ..store.db import Database
from ..store.hlc import COUNTER_BITS, Clock, ahead, clock_of, from_wall, stamp, valid, wall_ms
from ..store.records import FIELDS, MAX_AHEAD, check_record, embed_text, item_of

# The fields that travel, in the order of their hashes. The rest are this machine's
# own: its id, the content hash (derived), recall statistics, when it was embedded.
SYNCED = (
    "category", "kind", "title", "content", "tags", "importance", "status", "started_at",
    "resolved_at", "source", "agent", "session_id", "metadata", "pinned", "superseded_by",
    "created_at", "updated_at",
)
HASH_BYTES = 8
# Written with every change: two concurrent edits always differ there, and that is no
# conflict worth a word (the fields they changed are reported).
UNREPORTED = frozenset({"updated_at"})
CURSOR_KEY = "sync_absorbed"  # the change-log seq absorbed so far
CLOCK_KEY = "sync_clock"  # this machine's hybrid logical clock
BATCH = 1000
UNSTAMPED = "0" * 32
AHEAD_MS = int(MAX_AHEAD.total_seconds() * 1000)  # how far ahead of this machine's clock a stamp may be
MAX_DEPTH = 32  # how deeply a record's metadata may nest

KNOWN_SQL = "SELECT uid, stamps, hashes, forgotten FROM sync_memories WHERE uid IN ({marks})"
SAVE_SQL = """
INSERT INTO sync_memories (uid, stamps, hashes, forgotten) VALUES (?, ?, ?, ?)
ON CONFLICT (uid) DO UPDATE SET stamps = excluded.stamps, hashes = excluded.hashes,
                                forgotten = excluded.forgotten
"""
AHEAD_SQL = """
SELECT uid, stamps, hashes, forgotten FROM sync_memories
WHERE forgotten > ? OR EXISTS (SELECT 1 FROM json_each(stamps) WHERE json_extract(value, '$[0]') > ?)
"""
ANY_KNOWN_SQL = "SELECT 1 FROM sync_memories LIMIT 1"
CHANGES_SQL = "SELECT seq, uid, op, at, data FROM changes WHERE seq > ? ORDER BY seq LIMIT ?"
LAST_SEQ_SQL = "SELECT coalesce(max(seq), 0) FROM changes"
MEMORIES_SQL = "SELECT * FROM memories WHERE id > ? ORDER BY id LIMIT 500"
BY_UID_SQL = "SELECT * FROM memories WHERE uid IN ({marks})"
# Memories forgotten before this brain first synced: their tombstones travel too.
FORGOTTEN_SQL = """
SELECT uid, max(at) AS at FROM changes
WHERE op = 'delete' AND json_extract(data, '$.forgotten') AND uid NOT IN (SELECT uid FROM memories)
GROUP BY uid
"""
# And those retention expired: a record of what they were then does not bring them back.
EXPIRED_SQL = """
SELECT uid, max(at) AS at FROM changes
WHERE op = 'delete' AND json_extract(data, '$.expired') AND uid NOT IN (SELECT uid FROM memories)
GROUP BY uid
"""
# The memories here of which a machine made the last write of some field: its id ends
# that field's stamp, right before '",' (stamps are saved as compact JSON, each field's
# [stamp, the stamp it replaced]; a replaced stamp ends before '"]'). A machine that
# left an id (another machine wrote as it: sync/folder.py) carries what it wrote under
# each of its ids: {wrote} is one test per id, {ids} their marks.
WROTE = "instr(s.stamps, ? || '\",')"
CARRIED = """FROM sync_memories s JOIN memories m ON m.uid = s.uid
WHERE s.hashes IS NOT NULL AND ({wrote})"""
CARRIED_SQL = f"SELECT s.uid, s.stamps {CARRIED} ORDER BY m.id"
CARRIED_COUNT_SQL = f"""
SELECT count(*), coalesce(sum(latest > ? AND substr(latest, 17) NOT IN ({{ids}})), 0) FROM (
    SELECT (SELECT max(json_extract(value, '$[0]')) FROM json_each(s.stamps)) AS latest {CARRIED})
"""
OWN_TOMBSTONES_SQL = "SELECT uid, forgotten FROM sync_memories WHERE substr(forgotten, 17) IN ({ids}) ORDER BY uid"
TOMBSTONE_COUNT_SQL = "SELECT count(*) FROM sync_memories WHERE substr(forgotten, 17) IN ({ids})"
CONFLICT_SQL = "INSERT OR IGNORE INTO sync_conflicts (uid, field, kept, lost, at) VALUES (?, ?, ?, ?, ?)"


def field_hashes(values: Mapping[str, Any]) -> bytes:
    """8 bytes of a hash of each synced field's value, in SYNCED order."""
    return b"".join(_value_hash(values.get(f)) for f in SYNCED)


def _value_hash(value: Any) -> bytes:
    # Text (most fields) is hashed as it is; anything else as JSON with sorted keys. The
    # tag keeps the two apart ("null" the text is not None).
    if isinstance(value, str):
        raw = b"s" + value.encode("utf-8", "surrogatepass")
    else:
        raw = b"j" + json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(raw, digest_size=HASH_BYTES).digest()


def hash_at(hashes: bytes, index: int) -> bytes:
    return hashes[index * HASH_BYTES:(index + 1) * HASH_BYTES]


@dataclass
class Known:
    """The ledger's entry for one memory: each field's [stamp, the stamp it replaced]
    ("*" for the fields written together when it was made), its values' hashes; or the
    stamp of its tombstone; or, expired here, the stamp of its expiry as "*" alone."""

    stamps: dict[str, list[str | None]]
    hashes: bytes | None
    forgotten: str | None = None

    def stamp(self, name: str) -> tuple[str, str | None]:
        pair = self.stamps.get(name) or self.stamps["*"]
        return str(pair[0]), pair[1]

    def latest(self) -> str:
        return max(str(pair[0]) for pair in self.stamps.values())

    @property
    def expired(self) -> bool:
        return self.hashes is None and self.forgotten is None


def stamp_in(stamps: Mapping[str, Any], name: str) -> tuple[str, str | None]:
    pair = stamps.get(name) or stamps["*"]
    return str(pair[0]), (str(pair[1]) if pair[1] else None)


def load(db: Database, uids: Sequence[str]) -> dict[str, Known]:
    found = {}
    for uid, stamps, hashes, forgotten in db.each_in(KNOWN_SQL, list(uids)):
        found[uid] = Known(json.loads(stamps), hashes, forgotten)
    return found


def save(db: Database, known: Mapping[str, Known]) -> None:
    db.executemany(SAVE_SQL, [(uid, json.dumps(k.stamps, separators=(",", ":")), k.hashes, k.forgotten)
                              for uid, k in known.items()])


# -- this machine's writes ------------------------------------------------------------

@dataclass
class Outgoing:
    """What this machine has to send: the latest snapshot of each memory written here
    (with its ledger entry), and the tombstones of those forgotten here."""

    upserts: dict[str, tuple[dict[str, Any], Known]] = field(default_factory=dict)
    tombstones: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.upserts) + len(self.tombstones)

    def then(self, later: Outgoing) -> Outgoing:
        """This, with what `later` (absorbed after it) sends in its place."""
        upserts = {uid: item for uid, item in self.upserts.items() if uid not in later.tombstones}
        return Outgoing({**upserts, **later.upserts}, {**self.tombstones, **later.tombstones})


def absorb(db: Database, machine: str) -> Outgoing:
    """Stamp what was written here since the cursor (inside the caller's transaction)."""
    cursor = int(db.get_meta(CURSOR_KEY) or 0)
    clock = Clock(int(db.get_meta(CLOCK_KEY) or 0))
    out = Outgoing()
    if cursor == 0 and not db.scalar(ANY_KNOWN_SQL):
        cursor = _seed(db, machine, clock, out)
    while batch := db.rows(CHANGES_SQL, (cursor, BATCH)):
        known = load(db, list({row["uid"] for row in batch}))
        touched: dict[str, Known] = {}
        for row in batch:
            _absorb_entry(row, known, touched, clock, machine, out)
        save(db, touched)
        cursor = batch[-1]["seq"]
    db.set_meta(CURSOR_KEY, str(cursor))
    db.set_meta(CLOCK_KEY, str(clock.last))
    return out


def _absorb_entry(row: Mapping[str, Any], known: dict[str, Known], touched: dict[str, Known],
                  clock: Clock, machine: str, out: Outgoing) -> None:
    uid = row["uid"]
    data = json.loads(row["data"]) if row["data"] else None
    entry = touched[uid] if uid in touched else known.get(uid)
    if row["op"] == "delete":
        out.upserts.pop(uid, None)
        if isinstance(data, dict) and data.get("forgotten"):
            if entry is None or entry.forgotten is None:
                tomb = stamp(clock.tick(wall_ms(row["at"])), machine)
                touched[uid] = Known({}, None, tomb)
                out.tombstones[uid] = tomb
        else:  # expired: each machine's retention expires its own copy (and archives it)
            touched[uid] = Known({"*": [stamp(clock.tick(wall_ms(row["at"])), machine), None]}, None)
        return
    if not isinstance(data, dict) or (entry is not None and entry.forgotten):
        return  # a snapshot erased by a later forget; or a forgotten memory written again here
    hashes = field_hashes(data)
    if entry is not None and entry.hashes is not None:
        changed = [f for i, f in enumerate(SYNCED) if hash_at(hashes, i) != hash_at(entry.hashes, i)]
        if not changed:
            return  # no synced field changed here (a vector, a window; or what a merge wrote)
        now = stamp(clock.tick(wall_ms(row["at"])), machine)
        stamps = dict(entry.stamps)
        for name in changed:
            stamps[name] = [now, entry.stamp(name)[0]]
        entry = Known(stamps, hashes)
    else:
        entry = Known({"*": [stamp(clock.tick(wall_ms(row["at"])), machine), None]}, hashes)
    touched[uid] = entry
    out.upserts[uid] = (data, entry)


def mend(db: Database, machine: str, now_ms: int) -> tuple[Outgoing, str | None]:
    """A clock that an older maxmem let a stamp drag far ahead (one stamped at the end of
    the clock's range, or by a clock running far fast): every ledger stamp more than
    `AHEAD_MS` past `now_ms` is written again as this machine's write of now, the clock
    goes back to now, and what those stamps covered is sent again (inside the caller's
    transaction). Other machines refuse such stamps, so without this the writes they
    carry, and every later write here, would never reach them. Returns what to send and
    a line saying what was mended; nothing on a clock that is not ahead."""
    stored = int(db.get_meta(CLOCK_KEY) or 0)
    if (stored >> COUNTER_BITS) <= now_ms + AHEAD_MS:
        return Outgoing(), None
    limit = stamp(from_wall(now_ms + AHEAD_MS) | ((1 << COUNTER_BITS) - 1), "f" * 16)
    clock = Clock(from_wall(now_ms))
    out = Outgoing()
    mended: dict[str, Known] = {}
    for uid, stamps, hashes, forgotten in db.execute(AHEAD_SQL, (limit, limit)):
        entry = _restamped(Known(json.loads(stamps), hashes, forgotten), limit, stamp(clock.tick(now_ms), machine))
        mended[uid] = entry
        if entry.forgotten is not None:
            out.tombstones[uid] = entry.forgotten
    save(db, mended)
    for row in db.rows_in(BY_UID_SQL, [uid for uid, entry in mended.items() if entry.hashes is not None]):
        data = Memory.from_row(row).to_dict()
        out.upserts[data["uid"]] = (data, mended[data["uid"]])
    db.set_meta(CLOCK_KEY, str(clock.last))
    days = ((stored >> COUNTER_BITS) - now_ms) // 86_400_000
    return out, (f"this machine's sync clock was {days:,} days ahead (a stamp from a clock far in the future, "
                 f"seen by an older maxmem): set back to now, and the {len(mended)} memories stamped then "
                 "were sent again")


def _restamped(entry: Known, limit: str, now: str) -> Known:
    """`entry` with each stamp past `limit` replaced by `now` (replacing nothing: no
    machine that refused the old stamp holds it)."""
    stamps = {name: ([now, None] if str(pair[0]) > limit else pair) for name, pair in entry.stamps.items()}
    forgotten = now if entry.forgotten is not None and entry.forgotten > limit else entry.forgotten
    return Known(stamps, entry.hashes, forgotten)


def _seed(db: Database, machine: str, clock: Clock, out: Outgoing) -> int:
    """A brain's first sync: every memory as it is now, stamped at its last update, and
    the tombstones the change log keeps. Returns the change-log seq it covers."""
    last_seq = int(db.scalar(LAST_SEQ_SQL))
    last = 0
    while rows := db.rows(MEMORIES_SQL, (last,)):
        known: dict[str, Known] = {}
        for row in rows:
            data = Memory.from_row(row).to_dict()
            made = from_wall(wall_ms(data["updated_at"]))
            clock.see(made)
            entry = Known({"*": [stamp(made, machine), None]}, field_hashes(data))
            known[data["uid"]] = entry
            out.upserts[data["uid"]] = (data, entry)
        save(db, known)
        last = rows[-1]["id"]
    tombs: dict[str, Known] = {}
    for row in db.rows(FORGOTTEN_SQL):
        made = from_wall(wall_ms(row["at"]))
        clock.see(made)
        tombs[row["uid"]] = Known({}, None, stamp(made, machine))
        out.tombstones[row["uid"]] = stamp(made, machine)
    for row in db.rows(EXPIRED_SQL):
        made = from_wall(wall_ms(row["at"]))
        clock.see(made)
        tombs[row["uid"]] = Known({"*": [stamp(made, machine), None]}, None)
    save(db, tombs)
    return last_seq


def record_of(data: Mapping[str, Any], entry: Known) -> dict[str, Any]:
    """The record that carries a memory's synced state."""
    return {"u": data["uid"], "f": {f: data.get(f) for f in SYNCED}, "s": entry.stamps}


def tombstone_of(uid: str, tomb: str) -> dict[str, Any]:
    return {"u": uid, "x": tomb}


@dataclass
class Carried:
    """What this machine's own files must hold: the memories here of which it made the
    last write of some field (by uid, in memory order, with their stamps), and the
    tombstones of the memories forgotten here. A memory other machines have since
    changed in every field this one wrote is theirs to carry; one forgotten or expired
    here is nobody's to carry from here."""

    stamps: dict[str, dict[str, list[str | None]]] = field(default_factory=dict)
    tombstones: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.stamps) + len(self.tombstones)


def carried(db: Database, machines: Sequence[str]) -> Carried:
    """What this machine carries; `machines` are its ids, the current one first."""
    stamps = {uid: json.loads(text) for uid, text in db.execute(_for(CARRIED_SQL, machines), tuple(machines))}
    tombs = db.execute(_for(OWN_TOMBSTONES_SQL, machines), tuple(machines))
    return Carried(stamps, {uid: tomb for uid, tomb in tombs})


def carried_count(db: Database, machines: Sequence[str], since: int) -> tuple[int, int]:
    """How many records `carried` gives, and how many of its memories another machine
    wrote after this machine's clock was `since` (this machine's files, written before,
    hold them as they were)."""
    [(memories, stale)] = db.execute(_for(CARRIED_COUNT_SQL, machines),
                                     (stamp(since, "f" * 16), *machines, *machines))
    return int(memories) + int(db.scalar(_for(TOMBSTONE_COUNT_SQL, machines), tuple(machines))), int(stale)


def _for(sql: str, machines: Sequence[str]) -> str:
    """`sql` with one test and one mark per id of this machine."""
    return sql.format(wrote=" OR ".join([WROTE] * len(machines)), ids=", ".join("?" * len(machines)))


def carried_records(db: Database, live: Carried) -> list[tuple[dict[str, Any], int | None]]:
    """The records of what `live` holds, as brain.db has it now (each row's values under
    the ledger's stamps: absorb first), each with its memory's id; then the tombstones."""
    rows = sorted(db.rows_in(BY_UID_SQL, list(live.stamps)), key=lambda row: row["id"])
    out: list[tuple[dict[str, Any], int | None]] = []
    for row in rows:
        data = Memory.from_row(row).to_dict()
        out.append((record_of(data, Known(live.stamps[data["uid"]], None)), data["id"]))
    out += [(tombstone_of(uid, tomb), None) for uid, tomb in live.tombstones.items()]
    return out


# -- other machines' writes -----------------------------------------------------------

@dataclass
class Merged:
    """What merging one file's records did."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    forgotten: list[str] = field(default_factory=list)  # uids forgotten here now
    tombstones: list[str] = field(default_factory=list)  # every uid the records forget
    ignored: int = 0  # writes of a forgotten memory, or of one expired here after them
    rejected: list[str] = field(default_factory=list)  # records this maxmem cannot store, why
    pending: list[str] = field(default_factory=list)  # records ahead of this machine's clock, why
    conflicts: int = 0
    vectors: int = 0  # memories given the sender's vector (no embedding needed here)


@dataclass
class Incoming:
    """One record to merge, with its own vector when it travelled and can be used here."""

    record: dict[str, Any]
    vector: np.ndarray | None = None


def merge(brain: Brain, incoming: Sequence[Incoming], now: str) -> Merged:
    """Merge records from another machine into brain.db (inside the caller's
    transaction), then move the cursor past what it wrote there."""
    db = brain.db
    result = Merged()
    uids = list(dict.fromkeys(str(i.record.get("u")) for i in incoming))
    known = load(db, uids)
    current = {row["uid"]: Memory.from_row(row) for row in db.rows_in(BY_UID_SQL, uids)}
    clock = Clock(int(db.get_meta(CLOCK_KEY) or 0))
    touched: dict[str, Known] = {}
    new = New()
    doomed: dict[str, Memory] = {}
    now_ms = wall_ms(now)
    for item in incoming:
        record = item.record
        uid = str(record.get("u"))[:40]
        refused = refusal(record, now_ms)
        if refused is not None:
            (result.pending if refused.later else result.rejected).append(f"{uid}: {refused.reason}"[:200])
            continue
        if uid in new.records:  # the same memory twice in one file: store the first one now
            new.store(brain, current)
        try:
            _see(clock, record)
            if "x" in record:
                _tombstone(uid, str(record["x"]), known, current, doomed, touched, result)
            else:
                _upsert(brain, item, known, current, touched, new, result, now)
        except (InvalidInput, KeyError, TypeError, ValueError, IndexError, RecursionError) as exc:
            result.rejected.append(f"{uid}: {exc}"[:200])
    new.store(brain, current)
    save(db, touched)
    if doomed:
        brain.forget_many(list(doomed.values()))
        result.forgotten = list(doomed)
    db.set_meta(CLOCK_KEY, str(clock.last))
    db.set_meta(CURSOR_KEY, str(db.scalar(LAST_SEQ_SQL)))
    return result


@dataclass(frozen=True)
class Refusal:
    """Why a record is not merged; `later`: it is ahead of this machine's clock, and
    merges once it is not."""

    reason: str
    later: bool = False


def refusal(record: Any, now_ms: int) -> Refusal | None:
    """Why `record` cannot be merged now, or None: checked before any of it is applied."""
    if not isinstance(record, dict):
        return Refusal("not a record")
    if not isinstance(record.get("u"), str) or not UID.match(record["u"]):
        return Refusal("its uid is not a uid")
    if "x" in record:
        if not valid(record["x"]):
            return Refusal("its tombstone's stamp is not a stamp")
        return _ahead([record["x"]], now_ms)
    values, stamps = record.get("f"), record.get("s")
    if not isinstance(values, dict) or not set(values) <= set(SYNCED):
        return Refusal("its fields are not the synced fields")
    if not isinstance(stamps, dict) or "*" not in stamps or not set(stamps) <= {"*", *SYNCED}:
        return Refusal("its stamps are not one per synced field")
    for pair in stamps.values():
        if not (isinstance(pair, list) and len(pair) == 2 and valid(pair[0]) and (pair[1] is None or valid(pair[1]))):
            return Refusal("its stamps are not stamps")
    index = record.get("v")
    if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
        return Refusal("its vector's index is not a number")
    if _depth(values.get("metadata")) > MAX_DEPTH:
        return Refusal(f"its metadata nests deeper than {MAX_DEPTH} levels")
    return _ahead([pair[0] for pair in stamps.values()], now_ms) or _dated_ahead(values.get("created_at"), now_ms)


def _ahead(stamps: Sequence[str], now_ms: int) -> Refusal | None:
    latest = max(stamps)
    if not ahead(latest, now_ms, AHEAD_MS):
        return None
    return Refusal(f"stamped {_when(clock_of(latest) >> COUNTER_BITS)}, more than a day ahead of this machine's "
                   "clock (the clock of the machine that wrote it runs fast?): merged once it is not", later=True)


def _dated_ahead(created: Any, now_ms: int) -> Refusal | None:
    try:
        when = wall_ms(created) if isinstance(created, str) else None
    except (InvalidInput, ValueError, OverflowError):
        return None  # check_record refuses it with its reason
    if when is None or when <= now_ms + AHEAD_MS:
        return None
    return Refusal(f"created {created[:10]}, more than a day ahead of this machine's clock (the clock of the "
                   "machine that wrote it runs fast?): merged once it is not", later=True)


def _when(ms: int) -> str:
    try:
        return iso(parse_time("1970-01-01T00:00:00Z") + timedelta(milliseconds=ms))[:10]
    except OverflowError:
        return "after the year 9999"


def _depth(value: Any, limit: int = MAX_DEPTH + 1) -> int:
    """How deeply `value` nests (lists and objects), counted up to `limit`."""
    depth, level = 0, [value]
    while level and depth < limit:
        level = [v for item in level if isinstance(item, (dict, list))
                 for v in (item.values() if isinstance(item, dict) else item)]
        depth += 1 if level else 0
    return depth


@dataclass
class New:
    """Memories new to this brain, stored together: one insert, one pass over the
    neighbour windows and the vectors, as a bulk load does."""

    records: dict[str, tuple[dict[str, Any], np.ndarray | None]] = field(default_factory=dict)

    def store(self, brain: Brain, current: dict[str, Memory]) -> None:
        if not self.records:
            return
        existing = brain.rows.existing_ids([(r["content_hash"], r["category"]) for r, _ in self.records.values()])
        together: list[tuple[dict[str, Any], np.ndarray | None]] = []
        alone: list[tuple[dict[str, Any], np.ndarray | None]] = []
        seen: set[tuple[str, str]] = set()
        for record, own in self.records.values():
            # rows.insert keeps one memory per text and category; a text stored here
            # under another uid (or twice in this file) is added under its own uid.
            key = (record["content_hash"], record["category"])
            (alone if key in existing or key in seen else together).append((record, own))
            seen.add(key)
        if together:
            inserted = brain.rows.insert([r for r, _ in together], [v for _, v in together])
            current.update({m.uid: m for m in inserted.fresh.values()})
        ids = []
        for record, own in alone:
            memory_id = brain.rows.next_id()
            record["embedded_at"] = iso(brain.clock.now()) if own is not None else None
            brain.rows.add(memory_id, record, own)
            current[record["uid"]] = Memory(id=memory_id, **{k: record[k] for k in FIELDS})
            ids.append(memory_id)
        if ids:
            brain.rows.refresh(ids, logged=ids)
        self.records.clear()


def _see(clock: Clock, record: Mapping[str, Any]) -> None:
    stamps = [record["x"]] if "x" in record else [pair[0] for pair in record["s"].values()]
    for value in stamps:
        clock.see(clock_of(str(value)))


def _tombstone(uid: str, tomb: str, known: dict[str, Known], current: dict[str, Memory],
               doomed: dict[str, Memory], touched: dict[str, Known], result: Merged) -> None:
    result.tombstones.append(uid)
    entry = known.get(uid)
    if entry is not None and entry.forgotten is not None and entry.forgotten <= tomb:
        return
    known[uid] = touched[uid] = Known({}, None, tomb)
    if uid in current:
        doomed[uid] = current.pop(uid)


def _upsert(brain: Brain, item: Incoming, known: dict[str, Known], current: dict[str, Memory],
            touched: dict[str, Known], new: New, result: Merged, now: str) -> None:
    record = item.record
    uid, values, stamps = str(record["u"]), record["f"], record["s"]
    entry = known.get(uid)
    if entry is not None and entry.forgotten is not None:
        result.ignored += 1
        return
    memory = current.get(uid)
    if memory is None and entry is not None and entry.expired and \
            max(str(pair[0]) for pair in stamps.values()) <= entry.latest():
        result.ignored += 1  # what it was when it expired here (a file sent again, or repacked)
        return
    if memory is None:
        record = _new(brain, uid, values, item.vector, now, new, result)
        hashes = field_hashes(record) if any(record[f] != values.get(f) for f in SYNCED) else field_hashes(values)
        known[uid] = touched[uid] = Known(_normalised(stamps), hashes)
        result.added += 1
        return
    if entry is None or entry.hashes is None:  # not in the ledger: any stamp is later
        entry = Known({"*": [UNSTAMPED, None]}, field_hashes(memory.to_dict()))
    remote, hashes = field_hashes(values), entry.hashes or b""
    winners: dict[str, Any] = {}
    new_stamps = dict(entry.stamps)
    for index, name in enumerate(SYNCED):
        mine, my_parent = entry.stamp(name)
        theirs, their_parent = stamp_in(stamps, name)
        my_hash, their_hash = hash_at(hashes, index), hash_at(remote, index)
        if (theirs, their_hash) > (mine, my_hash):
            if their_hash != my_hash:
                winners[name] = values.get(name)
                if their_parent is not None and their_parent < mine:  # it never saw this value
                    _conflict(brain.db, uid, name, theirs, mine, now, result)
            new_stamps[name] = [theirs, their_parent]
        elif their_hash != my_hash and my_parent is not None and my_parent < theirs:
            _conflict(brain.db, uid, name, mine, theirs, now, result)  # this value never saw that one
    if new_stamps == entry.stamps and not winners:
        result.unchanged += 1
        return
    stored = _change(brain, memory, winners, item.vector, now, result) if winners else memory
    current[uid] = stored
    known[uid] = touched[uid] = Known(new_stamps, field_hashes(stored.to_dict()))
    if winners:
        result.updated += 1
    else:
        result.unchanged += 1


def _normalised(stamps: Mapping[str, Any]) -> dict[str, list[str | None]]:
    out = {str(k): [str(v[0]), str(v[1]) if v[1] else None] for k, v in stamps.items()}
    if "*" not in out:
        raise ValueError("a record without its stamps")
    return out


def _conflict(db: Database, uid: str, name: str, kept: str, lost: str, now: str, result: Merged) -> None:
    if name in UNREPORTED:
        return
    db.execute(CONFLICT_SQL, (uid, name, kept, lost, now))
    if db.conn.changes():
        result.conflicts += 1


def _usable(vector: np.ndarray | None, sent: Mapping[str, Any], record: Mapping[str, Any]) -> np.ndarray | None:
    """The sender's vector, when it is the vector of the text as stored here (redaction
    here may have changed it), of finite numbers and not all zero; else None (the embed
    job gives one)."""
    if vector is None or not np.isfinite(vector).all() or not vector.any():  # NaN poisons every score
        return None
    if embed_text(sent.get("title"), str(sent.get("content"))) != embed_text(record["title"], record["content"]):
        return None
    return normalise(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0]


def _new(brain: Brain, uid: str, values: Mapping[str, Any], vector: np.ndarray | None, now: str, new: New,
         result: Merged) -> dict[str, Any]:
    """The checked record of a memory new here, queued for `New.store`."""
    item = {f: values[f] for f in SYNCED if values.get(f) is not None}
    record = check_record({**item, "uid": uid}, now=now, agent=None, redactor=brain.redacting).record
    own = _usable(vector, values, record)
    if own is not None:
        _cache(brain, Memory(id=0, **{k: record[k] for k in FIELDS}), own)
        result.vectors += 1
    new.records[uid] = (record, own)
    return record


def _change(brain: Brain, memory: Memory, winners: Mapping[str, Any], vector: np.ndarray | None, now: str,
            result: Merged) -> Memory:
    record = check_record({**item_of(memory), **winners}, now=now, agent=None, redactor=brain.redacting).record
    changed = {k: record[k] for k in (*SYNCED, "content_hash") if record[k] != getattr(memory, k)}
    if not changed:
        return memory
    reembed = embed_text(record["title"], record["content"]) != embed_text(memory.title, memory.content)
    own = _usable(vector, {**item_of(memory), **winners}, record) if reembed else None
    if reembed:
        changed["embedded_at"] = now if own is not None else None
    updated = Memory(**{**memory.to_dict(), **changed})
    if own is not None:
        _cache(brain, updated, own)
        result.vectors += 1
    brain.rows.change(memory, changed, own, reembed)
    return updated


def _cache(brain: Brain, memory: Memory, vector: np.ndarray) -> None:
    """The own vector into the embeddings cache (unless the stored row will hold it), so
    that a neighbour's blend and a later write of the same text find it."""
    if brain.embedder is not None and not by_reference(memory):
        brain.vectors.cache({text_hash(embed_text(memory.title, memory.content)): vector})


def now_iso(brain: Brain) -> str:
    return iso(brain.clock.now())
