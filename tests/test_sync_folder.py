"""Folder sync between one's own machines, as users live it: two (or three) homes, each
with its config folder and brain.db, and one folder a sync tool shares between them.

The library tests drive `maxmem.sync.folder.sync` on real brains (apsw, sqlite-vec,
FTS5; a deterministic embedder where vectors matter); the end-to-end ones run the
installed `maxmem` under `env -i`, as cron does, and kill it with SIGKILL mid-run.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import apsw
import pytest
from conftest import HashEmbedder
from other_user import OtherUser

from maxmem import Brain, FixedClock
from maxmem.config import load_config
from maxmem.doctor import conflict_check, run_checks
from maxmem.retention.policy import load_policy
from maxmem.retention.run import apply as expire
from maxmem.store.conflicts import conflicts
from maxmem.sync import changefiles
from maxmem.sync import folder as folder_module
from maxmem.sync.folder import FolderSettings, machines_text, status, sync
from maxmem.sync.ledger import SYNCED

MAXMEM = Path(sys.executable).parent / "maxmem"
T0 = "2026-11-02T09:00:00Z"
SECRET_WORDS = "quokka-saffron-umbrella"  # in memories only: never in the folder's bytes


class Machine:
    """One machine: its config folder (MAXMEM_HOME: sync.key, sync.machine, config.toml)
    and its brain.db, syncing through `folder`."""

    def __init__(self, root: Path, name: str, folder: Path) -> None:
        self.home = root / name
        self.home.mkdir(parents=True, exist_ok=True)
        self.db = self.home / "brain.db"
        self.folder = folder

    def settings(self, vectors: bool = True) -> FolderSettings:
        return FolderSettings(self.folder, self.home / "sync.key", self.home / "sync.machine", vectors)

    def open(self, embedder: Any = "none", clock: Any = None) -> Brain:
        return Brain.open(self.db, embedder=embedder, clock=clock)

    def sync(self, embedder: Any = "none", key_file: Path | None = None, repack: bool | None = None,
             clock: Any = None, **kw: Any):
        with self.open(embedder, clock) as brain:
            return sync(brain, self.settings(**kw), key_file=key_file, repack=repack)

    def join(self, other: Machine, embedder: Any = "none"):
        return self.sync(embedder, key_file=other.home / "sync.key")

    def state(self) -> dict[str, tuple]:
        return state_of(self.db)


def state_of(db: Path) -> dict[str, tuple]:
    """Every memory's synced fields, by uid."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        columns = ", ".join(SYNCED)
        return {row[0]: tuple(row[1:]) for row in conn.execute(f"SELECT uid, {columns} FROM memories")}
    finally:
        conn.close()


def count_of(db: Path, sql: str) -> int:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def raw_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())


def folder_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def plaintexts(folder: Path, key_path: Path) -> str:
    """Every record of every file of the folder, decrypted, as one text."""
    key = changefiles.read_key(key_path)
    out = []
    for path in sorted(folder.rglob(f"*{changefiles.SUFFIX}")):
        out.append(repr(changefiles.unseal(key, path.read_bytes())[1].records))
    return "\n".join(out)


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    folder = tmp_path / "Sync" / "maxmem"
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
def pair(tmp_path: Path, shared: Path) -> tuple[Machine, Machine]:
    return Machine(tmp_path, "laptop", shared), Machine(tmp_path, "desktop", shared)


# -- what travels -----------------------------------------------------------------------

def test_adds_updates_supersessions_pins_travel_and_nothing_is_sent_back(pair):
    a, b = pair
    with a.open() as brain:
        old = brain.remember(f"the NAS backs up at 02:00 {SECRET_WORDS}", category="core", tags=["nas"])
        new = brain.remember("the NAS backs up at 03:30 since the move", category="core")
        brain.supersede(old.id, new.id)
        brain.pin(new.id)
        brain.remember("zigbee bridge restarted, lights back", category="daily", importance=0.8)
        brain.update(new.id, tags=["nas", "schedule"])
    first = a.sync()
    assert first.sent_files == 1 and first.sent_records == 3 and first.applied_files == 0
    joined = b.join(a)
    assert joined.applied_files == 1 and joined.added == 3 and joined.sent_files == 0
    assert b.state() == a.state()
    with b.open() as brain:
        assert brain.get(old.uid).status == "superseded" and brain.get(old.uid).superseded_by == new.uid
        assert brain.get(new.uid).pinned and brain.search("NAS backup")[0].memory.uid == new.uid
    # what arrived is not this machine's own: nothing goes back out, on either side
    assert b.sync().sent_files == 0 and a.sync().applied_files == 0
    with b.open() as brain:
        brain.update(new.uid, content="the NAS backs up at 04:00 now", importance=0.9)
    assert b.sync().sent_records == 1
    assert a.sync().updated == 1 and a.state() == b.state()
    assert a.sync().sent_files == 0 and b.sync().applied_files == 0
    assert SECRET_WORDS.encode() not in folder_bytes(a.folder)
    with a.open() as brain:
        rows = status(brain)
    assert len(rows) == 2 and [r.this_machine for r in rows].count(True) == 1


def test_concurrent_edits_resolve_the_same_on_both_sides_and_doctor_reports_them(pair):
    a, b = pair
    with a.open(clock=FixedClock(T0)) as brain:
        memory = brain.remember("the deploy script lives in ops/deploy.sh", category="project", tags=["ops"])
    a.sync()
    b.join(a)
    # both edit while apart: A the text (first) and the tags, B the text (a minute later) and pins it
    clock_a, clock_b = FixedClock(T0), FixedClock(T0)
    clock_a.advance(minutes=10)
    clock_b.advance(minutes=11)
    with a.open(clock=clock_a) as brain:
        brain.update(memory.uid, content="the deploy script moved to tools/deploy.sh", tags=["ops", "deploy"])
    with b.open(clock=clock_b) as brain:
        brain.update(memory.uid, content="the deploy script moved to scripts/deploy.py", pinned=True)
    for machine in (a, b, a, b):
        machine.sync()
    assert a.state() == b.state()
    with a.open() as brain:
        merged = brain.get(memory.uid)
        assert merged.content == "the deploy script moved to scripts/deploy.py"  # the later write
        assert merged.tags == ["ops", "deploy"] and merged.pinned  # each side's other field kept
        count, latest = conflicts(brain.db)
        assert count == 1 and latest[0]["field"] == "content" and latest[0]["uid"] == memory.uid
        line = conflict_check(brain.db)
    assert line is not None and line["level"] == "warn" and "1 concurrent edit" in line["detail"]
    with b.open() as brain:
        assert conflicts(brain.db)[0] == 1
    # a later edit that saw the other one is no conflict
    with a.open() as brain:
        brain.update(memory.uid, content="the deploy script is scripts/deploy.py, run from CI")
    a.sync()
    b.sync()
    with b.open() as brain:
        assert conflicts(brain.db)[0] == 1 and brain.get(memory.uid).content.endswith("run from CI")


def test_a_forget_travels_wins_over_an_edit_and_its_text_leaves_both_brains_and_the_folder(pair):
    a, b = pair
    text = f"my old bank PIN hint is {SECRET_WORDS}"
    with a.open() as brain:
        doomed = brain.remember(text, category="core")
        kept = brain.remember("the garage code is on the fridge", category="core")
    a.sync()
    b.join(a)
    with b.open() as brain:  # B edits it while A forgets it: the forget wins, wherever it lands
        brain.update(doomed.uid, content=f"my old bank PIN hint is {SECRET_WORDS} (changed)")
    with a.open() as brain:
        brain.forget(doomed.uid)
    for machine in (b, a, b, a):
        machine.sync()
    assert set(a.state()) == set(b.state()) == {kept.uid}
    for machine in (a, b):
        assert SECRET_WORDS.encode() not in raw_bytes(machine.db), machine.home
    assert SECRET_WORDS.encode() not in folder_bytes(a.folder)
    assert SECRET_WORDS not in plaintexts(a.folder, a.home / "sync.key")  # nor inside the sealed files
    assert "garage code" in plaintexts(a.folder, a.home / "sync.key")


def test_files_merge_in_any_order_any_number_of_times(tmp_path, shared):
    machines = [Machine(tmp_path, name, shared) for name in ("a", "b", "c")]
    a, b, c = machines
    rng = random.Random(7)
    with a.open(clock=FixedClock(T0)) as brain:
        uids = [brain.remember(f"fact {i}: the {w} is in the {p}",
                               category=rng.choice(["core", "project", "daily"])).uid
                for i, (w, p) in enumerate([("router", "attic"), ("spare key", "shed"), ("fuse box", "cellar"),
                                            ("tent", "loft"), ("drill", "garage"), ("passport", "desk")])]
    a.sync()
    b.join(a)
    c.join(a)
    for round_ in range(4):
        for machine in machines:
            clock = FixedClock(T0)
            clock.advance(minutes=round_ * 10 + machines.index(machine))
            with machine.open(clock=clock) as brain:
                uid = rng.choice([u for u in uids if u in machine.state()] or [None])
                if uid is not None:
                    brain.update(uid, importance=rng.choice([0.1, 0.5, 0.9]),
                                 content=f"{brain.get(uid).content} / note {round_}{machine.home.name}")
                if round_ == 2 and machine is b:
                    brain.forget(uids[0])
                uids.append(brain.remember(f"new fact {round_} from {machine.home.name}", category="daily").uid)
            machine.sync()
    for machine in machines * 2:
        machine.sync()
    assert a.state() == b.state() == c.state()
    files = sorted(p for p in shared.rglob(f"*{changefiles.SUFFIX}"))
    assert len(files) >= 10
    orders = []
    for seed in range(4):
        view = tmp_path / f"view{seed}"
        view.mkdir()
        d = Machine(tmp_path, f"d{seed}", view)
        shutil.copy(a.home / "sync.key", d.home / "sync.key")
        os.chmod(d.home / "sync.key", 0o600)
        order = files[:]
        random.Random(seed).shuffle(order)
        for path in order:  # the sync tool delivers one file at a time, in its own order
            target = view / path.relative_to(shared)
            target.parent.mkdir(exist_ok=True)
            shutil.copy2(path, target)
            d.sync()
        orders.append(d.state())
        before = d.state()
        assert d.sync().applied_files == 0  # each file is applied once
        conn = apsw.Connection(str(d.db))  # as if brain.db had forgotten applying them: all again
        conn.execute("DELETE FROM sync_files")
        conn.close()
        again = d.sync()
        assert again.applied_files >= len(files) and again.added == again.updated == again.forgotten == 0
        assert d.state() == before
    assert all(o == a.state() for o in orders)


def test_vectors_travel_with_the_same_embedder_else_the_embed_job_gives_them(tmp_path, shared):
    a, b, c = (Machine(tmp_path, n, shared) for n in ("a", "b", "c"))
    with a.open(HashEmbedder()) as brain:
        brain.remember_many([{"content": f"the {w} needs a new battery", "category": "project"}
                             for w in ("smoke alarm", "door sensor", "remote", "scale")])
        brain.remember("we talked about the alarm", category="conversation", session_id="s1")
    a.sync(HashEmbedder())
    same = HashEmbedder()
    with b.open(same) as brain:
        report = sync(brain, b.settings(), key_file=a.home / "sync.key")
        assert report.vectors == 5 and brain.pending_count() == 0 and same.calls == []
        assert brain.search("smoke alarm battery")[0].vector_score is not None
    other = HashEmbedder(dim=128)  # another model: the texts wait for the embed job here
    with c.open(other) as brain:
        report = sync(brain, c.settings(), key_file=a.home / "sync.key")
        assert report.vectors == 0 and brain.pending_count() == 5
        assert brain.embed_pending().embedded == 5 and brain.pending_count() == 0
    assert c.sync(HashEmbedder(dim=128)).sent_files == 0  # a vector made here is no change to send


# -- repack ---------------------------------------------------------------------------

def own_files(machine: Machine) -> list[Path]:
    return sorted((machine.folder / machine.settings().machine_path.read_text().strip()).glob(f"*{changefiles.SUFFIX}"))


def records_of(machine: Machine) -> list[dict[str, Any]]:
    key = changefiles.read_key(machine.home / "sync.key")
    return [r for path in own_files(machine) for r in changefiles.unseal(key, path.read_bytes())[1].records]


def test_repack_leaves_no_edited_away_text_and_every_receiver_gets_the_same_brain(tmp_path, pair):
    a, b = pair
    with a.open() as brain:
        uids = [brain.remember(f"the locker code is version-{i}-0 for shelf {i}", category="core").uid
                for i in range(12)]
        brain.remember("the bike is in the basement", category="project")
    a.sync()
    b.join(a)  # B applies A's first files, then every later one: a receiver of the old files
    for round_ in range(1, 4):
        with a.open() as brain:
            for i, uid in enumerate(uids[:8]):
                brain.update(uid, content=f"the locker code is version-{i}-{round_} for shelf {i}")
        a.sync(repack=False)  # (on its own it would repack at the second round)
        b.sync()
    with b.open() as brain:  # another machine's later write: A's files hold the text it replaced
        brain.update(uids[9], content="the locker code is version-9-b for shelf 9")
    b.sync()
    a.sync(repack=False)
    before = len(records_of(a))
    assert before == 13 + 3 * 8 and len(own_files(a)) == 4
    report = a.sync(repack=True)
    assert report.repack is not None and report.repack.files_before == 4
    assert report.repack.files_after == 1 and report.repack.records_after == 13
    assert report.repack.bytes_after < report.repack.bytes_before
    # the receiver of the old files applies the new one and nothing changes (it repacks its own)
    again = b.sync(repack=True)
    assert again.applied_files == 1 and again.added == again.updated == again.forgotten == 0
    assert again.repack is not None and b.state() == a.state()
    text = plaintexts(a.folder, a.home / "sync.key")
    for i in range(8):  # every version but the last is gone, from the decrypted records too
        for old in range(3):
            assert f"version-{i}-{old} " not in text
        assert f"version-{i}-3 " in text
    assert "version-9-0 " not in text and "version-9-b " in text and "version-8-0 " in text
    # a machine that never saw the old files gets the same brain from the new ones
    c = Machine(tmp_path, "phone", a.folder)
    joined = c.join(a)
    assert joined.added == 13 and c.state() == a.state()
    quiet = a.sync()  # B's new file changes nothing here; nothing is dead: no repack
    assert quiet.applied_files == 1 and quiet.added == quiet.updated == 0 and quiet.repack is None
    with a.open() as brain:
        lines = machines_text(status(brain))
    assert any("last repack" in line and "4 file(s)" in line and "into 1" in line for line in lines), lines


def test_repack_runs_on_its_own_when_more_than_half_of_the_records_are_dead(pair):
    a, b = pair
    with a.open() as brain:
        uids = [brain.remember(f"note {i}: the {i}th shelf holds jars", category="project").uid for i in range(10)]
    a.sync()
    b.join(a)
    for round_ in range(3):  # 10, then 14, 18, 22 records for 10 memories
        with a.open() as brain:
            for uid in uids[:4]:
                brain.update(uid, importance=0.1 * (round_ + 2))
        report = a.sync()
        assert (report.repack is None) == (round_ < 2), round_  # 12 of 22 dead: repacked
    assert len(records_of(a)) == 10 and len(own_files(a)) == 1
    assert b.sync().updated == 4 and b.state() == a.state()
    assert a.sync().repack is None  # nothing dead since
    with b.open() as brain:  # B rewrites 6 of A's 10: A's files hold the text they replaced
        for uid in uids[:6]:
            brain.update(uid, content=f"{brain.get(uid).content}, rewritten on the desktop")
    b.sync()
    assert "shelf holds jars'" in plaintexts(a.folder / a.settings().machine_path.read_text().strip(),
                                             a.home / "sync.key")
    report = a.sync()
    assert report.updated == 6 and report.repack is not None and report.repack.records_after == 10
    mine = plaintexts(a.folder / a.settings().machine_path.read_text().strip(), a.home / "sync.key")
    assert mine.count("rewritten on the desktop") == 6 and mine.count("shelf holds jars'") == 4
    assert a.sync().repack is None and b.sync().repack is None and a.state() == b.state()


def test_expired_memories_are_not_delivered_to_a_machine_that_joins_later(tmp_path, pair):
    a, b = pair
    clock = FixedClock(T0)
    with a.open(clock=clock) as brain:
        chats = [brain.remember(f"user: which port for staging {i}?\nassistant: 54{i:02d}", category="conversation",
                                session_id="s1").uid for i in range(8)]
        kept = brain.remember("staging runs on the small VM", category="core").uid
    a.sync()
    b.join(a)
    saved = tmp_path / "first-file.mxsync"
    shutil.copy2(own_files(a)[0], saved)
    later = FixedClock(T0)
    later.advance(days=40)
    with a.open(clock=later) as brain:  # A's retention expires them (30 days): B's has not run yet
        assert expire(brain, load_policy())["deleted"]["conversation"] == 8
    report = a.sync()  # 8 of 9 records are of memories expired here: repacked on its own
    assert report.repack is not None and report.repack.records_after == 1
    assert "staging 3" not in plaintexts(a.folder, a.home / "sync.key")
    assert len(b.state()) == 9 and b.sync().added == 0 and len(b.state()) == 9  # B expires by its own policy
    c = Machine(tmp_path, "phone", a.folder)
    assert c.join(a).added == 1 and set(c.state()) == {kept}
    # the old file delivered again (a late copy): what A expired stays expired on A
    shutil.copy2(saved, own_files(a)[0].with_name("00000001 (conflict 2).mxsync"))
    again = a.sync()
    assert again.applied_files == 1 and again.added == 0 and set(a.state()) == {kept}
    # a write made after the expiry (B pins one: retention keeps pinned memories) brings it back
    pin = FixedClock(T0)
    pin.advance(days=41)
    with b.open(clock=pin) as brain:
        brain.pin(chats[0])
    b.sync()  # A's clock reads the pin's day too: a write of a day ahead of it would wait
    assert a.sync(clock=pin).added == 1 and set(a.state()) == {kept, chats[0]}
    assert a.state()[chats[0]] == b.state()[chats[0]]


def test_old_files_deleted_before_or_after_the_new_ones_arrive_change_nothing(tmp_path, pair):
    """Each receiver has its own copy of the folder, which its sync tool fills in its own
    order: the repack's deletions before its new files, or after."""
    a, _ = pair
    with a.open() as brain:
        uids = [brain.remember(f"the {w} is kept in the hall cupboard", category="core").uid
                for w in ("torch", "ladder", "fuse", "umbrella")]
        for round_ in range(3):
            a.sync()
            brain.update(uids[round_], content=f"the {round_} thing moved to the garage")
            if round_ == 1:
                brain.forget(uids[3])
    a.sync()
    machine = a.settings().machine_path.read_text().strip()
    views = {}
    for name in ("early", "late"):
        view = tmp_path / f"view-{name}" / machine
        shutil.copytree(a.folder / machine, view)
        views[name] = Machine(tmp_path, name, view.parent)
        views[name].join(a)
    old = {p.name for p in own_files(a)}
    assert a.sync(repack=True).repack is not None
    new = {p.name for p in own_files(a)}
    assert not old & new
    early, late = views["early"], views["late"]
    for name in old:  # the deletions arrive first: nothing to apply, nothing lost
        (early.folder / machine / name).unlink()
    quiet = early.sync()
    assert quiet.applied_files == 0 and quiet.failures == [] and early.state() == a.state()
    for view in (early, late):  # the new files arrive (beside the old ones, at the late receiver)
        for name in new:
            shutil.copy2(a.folder / machine / name, view.folder / machine / name)
        done = view.sync()
        assert done.applied_files == len(new) and done.added == done.updated == done.forgotten == 0
        assert view.state() == a.state()
    for name in old:
        (late.folder / machine / name).unlink()
    assert late.sync().applied_files == 0 and late.state() == a.state()
    with late.open() as brain:  # the files that left the folder leave the receiver's count
        [row] = [r for r in status(brain) if not r.this_machine]
    assert row.files == len(new)


def test_a_repack_killed_before_its_commit_leaves_a_valid_folder(tmp_path, pair):
    """The state a kill leaves after the new files are renamed into place and before
    brain.db records them: both sets in the folder, brain.db as before the repack
    (copied back), some old files already deleted."""
    a, b = pair
    with a.open() as brain:
        uids = [brain.remember(f"the spare {w} is in the red box", category="core").uid
                for w in ("fuse", "bulb", "key", "cable", "battery")]
    a.sync()
    for round_ in range(2):
        with a.open() as brain:
            brain.update(uids[round_], content=f"the spare {round_} went to the shed")
        a.sync()
    b.join(a)
    old = own_files(a)
    kept = {p: p.read_bytes() for p in old}
    shutil.copy2(a.db, tmp_path / "before.db")
    assert a.sync(repack=True).repack is not None
    new = own_files(a)
    for path in old[1:]:  # the first old file was deleted before the kill, the others not
        path.write_bytes(kept[path])
    shutil.copy2(tmp_path / "before.db", a.db)
    for suffix in ("-wal", "-shm"):
        Path(f"{a.db}{suffix}").unlink(missing_ok=True)
    assert set(own_files(a)) == set(old[1:]) | set(new)
    fresh = Machine(tmp_path, "fresh", a.folder)
    fresh.join(a)  # a receiver that reads both sets
    assert fresh.state() == a.state()
    done = a.sync()  # the next run merges its unrecorded new files (a no-op) and repacks again
    assert done.applied_files == len(new) and done.added == done.updated == 0
    assert done.repack is not None and len(own_files(a)) == 1
    for machine in (b, fresh):
        machine.sync()
        assert machine.state() == a.state()
    assert len(records_of(a)) == 5


# -- files a sync tool delivers -----------------------------------------------------------

def test_a_half_delivered_file_is_skipped_until_it_is_whole(pair):
    a, b = pair
    with a.open() as brain:
        brain.remember("the boiler was serviced in October", category="core")
    a.sync()
    [path] = list(a.folder.rglob(f"*{changefiles.SUFFIX}"))
    whole = path.read_bytes()
    for cut in (10, changefiles.HEADER.size + 5, len(whole) - 1):
        path.write_bytes(whole[:cut])
        report = b.join(a)
        assert report.applied_files == 0 and report.failures == [] and b.state() == {}
        assert any("still delivering" in s or "less than a header" in s for s in report.skipped), report.skipped
    path.write_bytes(whole)
    assert b.sync().added == 1 and b.state() == a.state()


def test_conflict_copies_are_merged_never_applied_twice(tmp_path, pair):
    a, b = pair
    with a.open() as brain:
        brain.remember("the wifi password is on the router's label", category="core")
    a.sync()
    mine = next(p for p in a.folder.iterdir() if p.is_dir())
    shutil.copy2(mine / "00000001.mxsync", mine / "00000001 (conflict 2).mxsync")  # an identical copy
    first = b.join(a)
    assert first.applied_files == 2 and first.copies == 1 and first.added == 1 and len(b.state()) == 1
    # a clone of the laptop (its brain.db and config folder copied) writes its own file 2
    clone = Machine(tmp_path, "clone", tmp_path / "clone-view")
    (tmp_path / "clone-view").mkdir()
    for name in ("brain.db", "sync.key", "sync.machine"):
        shutil.copy2(a.home / name, clone.home / name)
    shutil.copytree(mine, tmp_path / "clone-view" / mine.name)
    with clone.open() as brain:
        brain.remember("the clone's note: the gate code changed", category="core")
    clone.sync()
    with a.open() as brain:
        brain.remember("the laptop's note: the printer is on the shelf", category="core")
    a.sync()
    theirs = tmp_path / "clone-view" / mine.name / "00000002.mxsync"
    shutil.copy2(theirs, mine / "00000002.sync-conflict-20261205-101010-ABCDEFG.mxsync")
    merged = b.sync()
    assert merged.copies == 1 and merged.added == 2
    texts = {v[SYNCED.index("content")] for v in b.state().values()}
    assert {"the clone's note: the gate code changed", "the laptop's note: the printer is on the shelf"} <= texts
    assert b.sync().applied_files == 0 and len(b.state()) == 3


# -- bad input ----------------------------------------------------------------------------

def test_a_wrong_key_applies_nothing(tmp_path, pair):
    a, b = pair
    with a.open() as brain:
        brain.remember("the car is due for its inspection in May", category="core")
    a.sync()
    with b.open() as brain:
        brain.remember("a note of the desktop's own", category="daily")
    changefiles.make_key(b.home / "sync.key")  # a key of its own, not the folder's
    with pytest.raises(changefiles.SyncKeyError) as raised:
        b.sync()
    message = str(raised.value)
    assert "\n" not in message and "sealed with another key" in message and "--key-file" in message
    assert len(b.state()) == 1 and count_of(b.db, "SELECT count(*) FROM sync_files") == 0
    assert not any((b.folder / d).is_dir() and any((b.folder / d).iterdir()) for d in os.listdir(b.folder)
                   if d != a.settings().machine_path.read_text().strip())
    assert len(b.join(a).notes) == 0 and len(b.state()) == 2  # with the folder's key it joins


def test_loose_key_foreign_files_and_a_newer_format(pair):
    a, b = pair
    with a.open() as brain:
        brain.remember("the plumber's number is in the shared contacts", category="core")
    a.sync()
    key = a.home / "sync.key"
    os.chmod(key, 0o644)
    with pytest.raises(changefiles.SyncKeyError, match=r"readable by others \(mode 0644\).*chmod 600"):
        a.sync()
    os.chmod(key, 0o600)
    (a.folder / "notes.txt").write_text("not maxmem's")
    (a.folder / "photos").mkdir()
    machine = a.settings().machine_path.read_text().strip()
    (a.folder / machine / "readme.md").write_text("hello")
    newer = a.folder / machine / "00000099.mxsync"
    newer.write_bytes(changefiles.PREAMBLE.pack(changefiles.MAGIC, changefiles.FORMAT + 1) + os.urandom(200))
    report = b.join(a)
    assert report.added == 1 and sorted(report.foreign) == [f"{machine}/readme.md", "notes.txt", "photos"]
    assert any("not maxmem's" in line for line in report.lines())
    [failure] = report.failures
    assert "newer maxmem (format 2" in failure and "upgrade maxmem" in failure and "\n" not in failure
    assert (a.folder / "notes.txt").read_text() == "not maxmem's"  # nothing of the user's touched


def test_names_with_line_breaks_fifos_and_huge_files_in_the_folder_are_one_line_each(pair):
    """Whoever can write the shared folder may leave a file whose name holds a line break
    (it must not print a line of its own that reads as maxmem's), a named pipe named as a
    change file (never waited on) or a huge sparse one (refused unread)."""
    a, b = pair
    with a.open() as brain:
        brain.remember("the boiler service is due in March", category="core")
    a.sync()
    machine = machine_id(a)
    (a.folder / "notes\nmaxmem: error: forged").write_text("x")
    os.mkfifo(a.folder / machine / "00000050.mxsync")
    with open(a.folder / machine / "00000051.mxsync", "wb") as handle:
        handle.truncate(8 << 30)
    previous = signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the run waited on the FIFO"))
    signal.alarm(120)
    try:
        report = b.join(a)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert report.added == 1
    lines = report.lines()
    assert lines and all("\n" not in line for line in lines), lines
    assert any("notes\\x0amaxmem: error: forged" in line for line in lines), lines


def test_a_brain_db_copied_to_a_second_machine_syncs_under_its_own_id(pair):
    a, b = pair
    with a.open() as brain:
        brain.remember("the heat pump filter is changed every spring", category="core")
    a.sync()
    shutil.copy2(a.db, b.db)  # the user copied brain.db, not the config folder
    report = b.join(a)
    assert any("copied here from another machine" in n for n in report.notes)
    assert b.settings().machine_path.read_text() != a.settings().machine_path.read_text()
    assert report.added == 0 and b.state() == a.state()
    with b.open() as brain:
        brain.remember("a note written on the second machine", category="daily")
    b.sync()
    assert a.sync().added == 1 and a.state() == b.state() and len(a.state()) == 2


def machine_id(machine: Machine) -> str:
    return machine.settings().machine_path.read_text().strip()


def contents(machine: Machine) -> list[str]:
    return sorted(v[SYNCED.index("content")] for v in machine.state().values())


def test_a_whole_config_folder_copied_is_found_by_a_conflict_copy_and_both_copies_take_new_ids(tmp_path, pair):
    a, _ = pair
    with a.open() as brain:
        brain.remember("the shared drive is mounted at /mnt/share", category="core")
    a.sync()
    b = Machine(tmp_path, "restored", a.folder)
    shutil.copytree(a.home, b.home, dirs_exist_ok=True)  # the whole config folder, brain.db included
    old = machine_id(a)
    for machine, text in ((a, "the laptop's battery was replaced"), (b, "the new laptop has 32 GB")):
        with machine.open() as brain:
            brain.remember(text, category="core")
    a.sync()
    mine = a.folder / old
    # the sync tool keeps both files numbered 2: A's under another name, B's as written
    (mine / "00000002.mxsync").rename(mine / "00000002 (conflict 2).mxsync")
    first = b.sync()
    assert first.sent_files == 1 and first.applied_files == 1 and not first.notes  # A's file 2 merged, as yet no twin
    assert (mine / "00000002.mxsync").exists() and machine_id(b) == old
    found_b = b.sync()  # B wrote a file 2; the folder holds another one with other bytes
    found_a = a.sync()  # A's file 2 holds other bytes than A wrote
    for machine, report, held in ((a, found_a, 2), (b, found_b, 3)):
        line = f"another machine writes as {old} (a copy of this machine's config folder?): " \
               f"this machine now syncs as {machine_id(machine)}"
        assert report.notes == [line] and report.machine == machine_id(machine) != old
        assert report.sent_files == 1 and report.sent_records == held  # all it holds, under its new id
    assert machine_id(a) != machine_id(b)
    for machine in (a, b, a, b):
        again = machine.sync()
        assert not again.notes and again.added == again.updated == 0 and again.sent_files == 0
    c = Machine(tmp_path, "phone", a.folder)
    c.join(a)
    expected = ["the laptop's battery was replaced", "the new laptop has 32 GB",
                "the shared drive is mounted at /mnt/share"]
    for machine in (a, b, c):
        assert contents(machine) == expected, machine.home
    assert a.state() == b.state() == c.state()
    with a.open() as brain:
        lines = machines_text(status(brain))
    assert any(f"this machine synced as {old} until" in line and "wrote as it too" in line for line in lines), lines
    # the new id was written to brain.db before the config folder: a run killed between
    # the two finds the old id there and goes on under the new one
    new = machine_id(b)
    b.settings().machine_path.write_text(old + "\n")
    resumed = b.sync()
    assert machine_id(b) == new and not resumed.notes and resumed.sent_files == 0


def test_a_brain_db_restored_from_a_backup_keeps_its_id_and_merges_its_later_files(tmp_path, pair):
    a, b = pair
    with a.open() as brain:
        brain.remember("the router's admin page is at 192.168.1.1", category="core")
    a.sync()
    shutil.copy2(a.db, tmp_path / "backup.db")
    for text in ("the printer needs toner", "the NAS has a new disk"):
        with a.open() as brain:
            brain.remember(text, category="core")
        a.sync()
    old = machine_id(a)
    shutil.copy2(tmp_path / "backup.db", a.db)  # brain.db restored from last week's backup
    for suffix in ("-wal", "-shm"):
        Path(f"{a.db}{suffix}").unlink(missing_ok=True)
    with a.open() as brain:
        brain.remember("written after the restore", category="core")
    report = a.sync()
    assert not report.notes and report.machine == machine_id(a) == old
    assert report.applied_files == 2 and report.added == 2 and report.sent_files == 1
    assert sorted(p.name for p in a.folder.joinpath(old).iterdir()) == [f"0000000{n}.mxsync" for n in (1, 2, 3, 4)]
    assert not a.sync().notes and machine_id(a) == old
    b.join(a)
    assert len(b.state()) == 4 and b.state() == a.state()


# -- the installed command, as cron runs it -------------------------------------------------

needs_maxmem = pytest.mark.skipif(not MAXMEM.is_file(), reason="the maxmem entry point is not installed")


def maxmem(home: Path, *args: str, user: OtherUser | None = None) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "MAXMEM_HOME": str(home / "maxmem")}
    if user is not None:
        return user.run(["--embedder", "none", *args], env, timeout=300)
    return subprocess.run([str(MAXMEM), "--embedder", "none", *args], env=env, capture_output=True, text=True,
                          timeout=300)


@needs_maxmem
def test_two_homes_with_the_installed_command(tmp_path, shared):
    laptop, desktop = tmp_path / "laptop", tmp_path / "desktop"
    assert maxmem(laptop, "remember", "-c", "core", f"we chose Syncthing for the notes {SECRET_WORDS}").returncode == 0
    first = maxmem(laptop, "sync", "folder", str(shared))
    assert first.returncode == 0 and "sent 1 file(s) (1 changes)" in first.stdout, first.stderr
    assert f'dir = "{shared}"' in (laptop / "maxmem" / "config.toml").read_text()
    key = laptop / "maxmem" / "sync.key"
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    early = maxmem(desktop, "sync", "folder", str(shared))  # joining without the key: told how
    assert early.returncode == 1 and len(early.stderr.strip().splitlines()) == 1
    assert "--key-file" in early.stderr and not (desktop / "maxmem" / "sync.key").exists()
    copied = tmp_path / "usb" / "sync.key"
    copied.parent.mkdir()
    shutil.copy2(key, copied)
    joined = maxmem(desktop, "sync", "folder", str(shared), "--key-file", str(copied))
    assert joined.returncode == 0 and "1 added" in joined.stdout, joined.stderr
    assert "Syncthing" in maxmem(desktop, "list").stdout
    assert maxmem(desktop, "remember", "-c", "core", "the desktop's GPU is an RTX 4070").returncode == 0
    assert maxmem(desktop, "sync", "folder").returncode == 0  # the recorded folder
    tick = maxmem(laptop, "daemon", "--once", "--if-due")  # synced minutes ago: not due yet
    assert tick.returncode == 0 and "RTX 4070" not in maxmem(laptop, "list").stdout, tick.stderr
    tick = maxmem(laptop, "daemon", "--once", "--job", "sync-folder")  # the tick's job, run now
    assert tick.returncode == 0, tick.stderr
    assert "RTX 4070" in maxmem(laptop, "list").stdout
    assert "sync-folder" in maxmem(laptop, "jobs").stdout
    forgot = maxmem(laptop, "forget", "1")
    assert forgot.returncode == 0, forgot.stderr
    assert maxmem(laptop, "sync", "folder").returncode == 0
    assert maxmem(desktop, "sync", "folder").returncode == 0
    assert "Syncthing" not in maxmem(desktop, "list").stdout
    for home in (laptop, desktop):
        assert SECRET_WORDS.encode() not in raw_bytes(home / "maxmem" / "brain.db")
    assert SECRET_WORDS.encode() not in folder_bytes(shared)
    shown = maxmem(desktop, "sync", "status")
    assert shown.returncode == 0 and shown.stdout.count("folder: ") == 2, shown.stdout
    assert "folder: this machine" in shown.stdout and "last file #" in shown.stdout
    doctor = maxmem(desktop, "doctor").stdout
    assert "last sync-folder: ok" in doctor and "sync conflicts" in doctor


@needs_maxmem
def test_a_whole_home_copied_to_a_new_laptop_is_found_and_nothing_is_lost(tmp_path, shared):
    old_laptop, new_laptop, phone = tmp_path / "old-laptop", tmp_path / "new-laptop", tmp_path / "phone"
    assert maxmem(old_laptop, "remember", "-c", "core", "the VPN config is in the password manager").returncode == 0
    assert maxmem(old_laptop, "sync", "folder", str(shared)).returncode == 0
    shutil.copytree(old_laptop, new_laptop)  # the new laptop restored from the old one's backup: the whole home
    old = (old_laptop / "maxmem" / "sync.machine").read_text().strip()
    assert maxmem(old_laptop, "remember", "-c", "core", "the old laptop goes to the kids").returncode == 0
    assert maxmem(new_laptop, "remember", "-c", "core", "the new laptop's dock is USB-C").returncode == 0
    assert maxmem(old_laptop, "sync", "folder").returncode == 0
    # the new laptop writes its file 2 before the old laptop's arrives; the sync tool keeps the later one
    written = shared / old / "00000002.mxsync"
    aside = tmp_path / "old-laptops-file-2"
    written.rename(aside)
    assert maxmem(new_laptop, "sync", "folder").returncode == 0 and written.exists()
    aside.unlink()
    found = maxmem(old_laptop, "sync", "folder")
    assert found.returncode == 0, found.stderr
    new = (old_laptop / "maxmem" / "sync.machine").read_text().strip()
    assert new != old and (f"another machine writes as {old} (a copy of this machine's config folder?): this "
                           f"machine now syncs as {new}") in found.stdout + found.stderr
    assert "1 added" in found.stdout  # the new laptop's file 2, applied as another machine's
    # repacked before the new laptop read its file: it still carries what it wrote as the old id
    repacked = maxmem(old_laptop, "sync", "folder", "--repack")
    assert repacked.returncode == 0 and "repacked this machine's 1 file(s)" in repacked.stdout, repacked.stderr
    for home in (new_laptop, old_laptop, new_laptop):
        done = maxmem(home, "sync", "folder")
        assert done.returncode == 0 and "syncs as" not in done.stdout + done.stderr, done.stderr
    assert (new_laptop / "maxmem" / "sync.machine").read_text().strip() == old  # its files were not replaced
    key = tmp_path / "sync.key"
    shutil.copy2(old_laptop / "maxmem" / "sync.key", key)
    assert maxmem(phone, "sync", "folder", str(shared), "--key-file", str(key)).returncode == 0
    for home in (old_laptop, new_laptop, phone):
        db = home / "maxmem" / "brain.db"
        assert count_of(db, "SELECT count(*) FROM memories") == 3, home
        assert count_of(db, "SELECT count(DISTINCT content) FROM memories") == 3
        listed = maxmem(home, "list").stdout
        assert all(text in listed for text in ("VPN config", "goes to the kids", "dock is USB-C")), (home, listed)
    shown = maxmem(old_laptop, "sync", "status")
    assert f"this machine synced as {old} until" in shown.stdout, shown.stdout


@needs_maxmem
def test_bad_input_is_one_line_each_with_the_installed_command(tmp_path, shared, other_user):
    home = tmp_path / "home"
    assert maxmem(home, "remember", "a memory that must survive every bad input").returncode == 0
    cases = []
    loose = tmp_path / "loose.key"
    changefiles.make_key(loose)
    os.chmod(loose, 0o644)
    cases.append(("a loose key file", maxmem(home, "sync", "folder", str(shared), "--key-file", str(loose)),
                  "readable by others"))
    cases.append(("not a folder", maxmem(home, "sync", "folder", str(tmp_path / "nowhere")), "is not a folder"))
    cases.append(("no folder", maxmem(home, "sync", "folder"), "no sync folder"))
    for what, done, expected in cases:
        assert done.returncode in (1, 2), what
        assert len(done.stderr.strip().splitlines()) == 1 and expected in done.stderr, (what, done.stderr)
    if other_user.uid is not None:
        # the shared folder is root's, the other user's home its own
        place = Path(tempfile.mkdtemp(prefix="maxmem-share-"))
        try:
            os.chmod(place, 0o755)
            (place / "share").mkdir(mode=0o755)
            other = place / "nobody"
            other.mkdir()
            other_user.own(other)
            done = maxmem(other, "sync", "folder", str(place / "share"), user=other_user)
            assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr
            assert "is not writable (Permission denied)" in done.stderr
        finally:
            shutil.rmtree(place)
    assert "must survive" in maxmem(home, "list").stdout


@needs_maxmem
@pytest.mark.slow
def test_kill_9_while_sending_and_while_applying_then_both_machines_converge(tmp_path, shared):
    """The sending machine and the receiving one are each killed at random moments of
    their runs, again and again, between new writes; half the runs repack their files
    too (--repack), and are killed in the later half of a run, where it repacks. Then
    both run to the end, and a machine that joins afterwards gets the same brain."""
    laptop, desktop = tmp_path / "laptop", tmp_path / "desktop"
    rng = random.Random(2026)
    with Brain.open(laptop / "maxmem" / "brain.db", embedder="none") as brain:
        brain.remember_many([{"content": f"laptop memory {i}: " + " ".join(rng.choice(WORDS) for _ in range(30)),
                              "category": rng.choice(["core", "daily", "project"])} for i in range(4000)])
    with Brain.open(desktop / "maxmem" / "brain.db", embedder="none") as brain:
        brain.remember_many([{"content": f"desktop memory {i}: " + " ".join(rng.choice(WORDS) for _ in range(30)),
                              "category": "daily"} for i in range(1500)])
    assert maxmem(laptop, "sync", "folder", str(shared)).returncode == 0  # makes the key
    shutil.copy2(laptop / "maxmem" / "sync.key", tmp_path / "sync.key")
    kills, took = 0, {(home, repack): 1.5 for home in (laptop, desktop) for repack in (False, True)}
    for attempt in range(16):
        home = laptop if attempt % 2 == 0 else desktop
        other = desktop if home is laptop else laptop
        with Brain.open(other / "maxmem" / "brain.db", embedder="none") as brain:  # new writes meanwhile
            brain.remember_many([{"content": f"{other.name} round {attempt} note {j} "
                                  + " ".join(rng.choice(WORDS) for _ in range(20))} for j in range(ROUND)])
            some = brain.list(limit=5, order="oldest", offset=attempt * 5)
            for memory in some:
                brain.update(memory.id, importance=round(rng.random(), 2))
            if attempt == 6:
                brain.forget(some[0].id)
        repack = attempt % 4 >= 2
        args = ["sync", "folder", str(shared)] + (["--key-file", str(tmp_path / "sync.key")]
                                                   if home is desktop else []) + (["--repack"] if repack else [])
        process = subprocess.Popen([str(MAXMEM), "--embedder", "none", *args],
                                   env={"HOME": str(home), "MAXMEM_HOME": str(home / "maxmem")},
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started = time.monotonic()
        length = max(0.3, took[home, repack])  # past the imports, within a run's length
        time.sleep(rng.uniform(max(0.25, length / 2) if repack else 0.25, length))
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            kills += 1
        else:
            took[home, repack] = time.monotonic() - started
        process.wait()
        for side in (laptop, desktop):
            db = side / "maxmem" / "brain.db"
            if db.exists():
                conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
                assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
                conn.close()
    assert kills >= 5, f"only {kills} runs were killed mid-way: the brains are too small for this machine"
    for run, home in enumerate((laptop, desktop, laptop, desktop)):
        args = ["sync", "folder", str(shared)] + (["--key-file", str(tmp_path / "sync.key")] if home is desktop else [])
        done = maxmem(home, *args, *(["--repack"] if run == 1 else []))
        assert done.returncode == 0, done.stderr
    assert "folder: last repack" in maxmem(desktop, "sync", "status").stdout
    a, b = state_of(laptop / "maxmem" / "brain.db"), state_of(desktop / "maxmem" / "brain.db")
    assert a == b
    assert len(a) == 4000 + 1500 + 16 * ROUND - 1
    assert count_of(laptop / "maxmem" / "brain.db", "SELECT count(DISTINCT content) FROM memories") == len(a)
    assert not [p for p in shared.rglob(".*.tmp")]  # temporaries of killed writes are gone
    phone = tmp_path / "phone"
    assert maxmem(phone, "sync", "folder", str(shared), "--key-file", str(tmp_path / "sync.key")).returncode == 0
    assert state_of(phone / "maxmem" / "brain.db") == a


ROUND = 600  # memories written on the other machine before each killed run
WORDS = ("backup disk router zigbee lights garden invoice python sqlite folder laptop desktop decision lesson "
         "printer kitchen boiler passport ticket train meeting budget garage battery").split()


class Killed(BaseException):
    """A run stopped dead: nothing after the point it is raised at runs."""


def test_a_run_killed_between_rewriting_its_own_file_and_recording_it_is_no_twin(pair, monkeypatch):
    """A forget rewrites this machine's file in place (the forgotten text leaves the
    folder). Killed right after the new bytes replaced the file and before brain.db
    recorded them, the next run finds the file its own: same id, no twin line, the text
    gone, and the other machine converges."""
    a, b = pair
    with a.open() as brain:
        doomed = brain.remember(f"the safe's combination hint is {SECRET_WORDS}", category="core")
        kept = brain.remember("the spare tyre is under the boot floor", category="core")
    a.sync()
    b.join(a)
    before = machine_id(a)
    with a.open() as brain:
        brain.forget(doomed.uid)
    real_write = folder_module.write_durable

    def write_then_die(path: Path, data: bytes) -> os.stat_result:
        in_place = path.exists() and path.parent.name == before  # an own file rewritten, not a new one
        info = real_write(path, data)
        if in_place:
            raise Killed
        return info

    monkeypatch.setattr(folder_module, "write_durable", write_then_die)
    with pytest.raises(Killed):
        a.sync()
    monkeypatch.setattr(folder_module, "write_durable", real_write)
    assert SECRET_WORDS not in plaintexts(a.folder, a.home / "sync.key")  # the kill came after the rewrite
    report = a.sync()
    assert machine_id(a) == before
    assert not [note for note in report.notes if "another machine writes as" in note], report.notes
    b.sync()
    assert set(a.state()) == set(b.state()) == {kept.uid}
    assert not [note for note in a.sync().notes if "another machine writes as" in note]


# -- hostile files: sealed with the real key, by a machine that holds it --------------

STRANGER = "5eed5eed5eed5eed"


def record(uid: str, content: str, at: str = T0, **fields: Any) -> dict[str, Any]:
    """A record as a machine writes it, stamped at `at` by STRANGER."""
    values = {name: None for name in SYNCED}
    values.update(category="core", kind="note", content=content, tags=[], importance=0.5, status="active",
                  source="manual", metadata={}, pinned=False, created_at=at, updated_at=at)
    values.update(fields)
    ms = int(FixedClock(at).now().timestamp() * 1000)
    return {"u": uid, "f": values, "s": {"*": [f"{ms << 16:016x}{STRANGER}", None]}}


def plant(machine: Machine, number: int, records: list[dict[str, Any]]) -> Path:
    """A file of STRANGER's in the folder, sealed with the folder's real key."""
    key = changefiles.read_key(machine.home / "sync.key")
    path = machine.folder / STRANGER / f"{number:08d}{changefiles.SUFFIX}"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(changefiles.seal(key, STRANGER, number, changefiles.Payload(records)))
    return path


def doctor_line(machine: Machine, name: str) -> dict[str, Any]:
    config = load_config(env={"MAXMEM_HOME": str(machine.home), "MAXMEM_DB": str(machine.db)})
    return next(c for c in run_checks(config, embedder="none")["checks"] if c["name"] == name)


@pytest.mark.parametrize("bad", [
    {"u": "bad-stamps", "f": {"content": "x"}, "s": []},
    {"u": "bad-fields", "f": [], "s": {"*": ["0" * 32, None]}},
    {"u": "bad-stamp-text", "f": {"content": "x"}, "s": {"*": ["not a stamp", None]}},
    {"u": "bad-field-name", "f": {"content": "x", "owner": "root"}, "s": {"*": ["0" * 32, None]}},
    {"u": ["not", "a", "uid"], "x": "0" * 32},
    {"u": "deep", **{k: v for k, v in record("deep", "deep").items() if k != "u"}},
])
def test_a_bad_record_is_quarantined_with_one_line_and_the_rest_of_its_file_applied(pair, bad):
    a, b = pair
    with a.open() as brain:
        brain.remember("the laptop's own note", category="core")
    a.sync()
    if bad["u"] == "deep":
        nested: Any = "bottom"
        for _ in range(200):
            nested = {"n": nested}
        bad["f"]["metadata"] = {"n": nested}
    good = record("good-record-1", "the router's admin page moved to port 8443")
    path = plant(a, 1, [bad, good])
    for run in range(2):  # never a traceback, on every run; named once
        report = b.join(a) if run == 0 else b.sync()
        lines = report.lines()
        assert all("\n" not in line for line in lines)
        if run == 0:
            [line] = report.quarantined
            assert line.startswith(f"{STRANGER}/{path.name}: quarantined (1 record(s) left out, the rest applied)")
            assert not report.failures
        else:
            assert not report.quarantined and report.applied_files == 0
    assert "good-record-1" in b.state()
    with b.open() as brain:
        text = "\n".join(machines_text(status(brain)))
    assert f"folder: quarantined {STRANGER}/{path.name}: 1 record(s) left out" in text
    check = doctor_line(b, "sync quarantine")
    assert check["level"] == "warn" and path.name in check["detail"]
    path.unlink()  # the file leaves the folder: so does its quarantine
    b.sync()
    assert doctor_line(b, "sync quarantine")["level"] == "ok"


def test_a_damaged_or_oversized_file_is_quarantined_whole_and_reexamined_when_it_changes(pair, monkeypatch):
    a, b = pair
    with a.open() as brain:
        brain.remember("the laptop's own note", category="core")
    a.sync()
    # a small file whose records would unpack to far more than a reader allows
    monkeypatch.setattr(changefiles, "MAX_JSON_BYTES", 1024 * 1024)
    bomb = {"records": [], "pad": " " * (64 * 1024 * 1024)}
    packed = changefiles.zlib.compress(changefiles.json.dumps(bomb).encode(), 9)
    key = changefiles.read_key(a.home / "sync.key")
    plaintext = changefiles.struct.pack(">I", len(packed)) + packed
    nonce = os.urandom(12)
    header = changefiles.HEADER.pack(changefiles.MAGIC, changefiles.FORMAT, bytes.fromhex(STRANGER), 1,
                                     changefiles.key_id(key), nonce, len(plaintext) + 16)
    path = a.folder / STRANGER / f"{1:08d}{changefiles.SUFFIX}"
    path.parent.mkdir()
    path.write_bytes(header + changefiles.AESGCM(key).encrypt(nonce, plaintext, header))
    assert path.stat().st_size < 200_000
    report = b.join(a)
    [line] = report.quarantined
    assert "nothing of it applied" in line and "more than 1 MiB" in line and "\n" not in line
    assert report.added == 1 and not report.failures  # the laptop's file applied all the same
    assert b.sync().quarantined == []  # not read again while it is the same file
    plant(a, 1, [record("after-fix", "the file was written again, whole")])
    again = b.sync()
    assert again.added == 1 and not again.quarantined
    assert doctor_line(b, "sync quarantine")["level"] == "ok"


def test_a_stamp_at_the_end_of_time_is_refused_and_the_clock_keeps_working(pair):
    a, b = pair
    with a.open() as brain:
        mine = brain.remember("the desk lamp is on the smart plug", category="core")
    a.sync()
    b.join(a)
    plant(a, 1, [{"u": mine.uid, "x": "f" * 32},
                 {**record("far-ahead", "from the far future"), "s": {"*": ["ffffffffffff0000" + STRANGER, None]}}])
    report = a.sync()
    assert len(report.pending) == 1 and "ahead of this machine's clock" in report.pending[0]
    assert report.forgotten == 0 and "far-ahead" not in a.state()
    with a.open() as brain:
        clock = int(brain.db.get_meta("sync_clock"))
        assert clock >> 16 < 2 ** 47  # not dragged to the end of the range
        brain.update(mine.uid, content="the desk lamp is on the second smart plug")
    a.sync()
    b.sync()
    assert b.state()[mine.uid][SYNCED.index("content")] == "the desk lamp is on the second smart plug"


def test_a_clock_an_older_version_let_run_to_the_end_is_mended_and_its_writes_reach_the_others(pair):
    a, b = pair
    with a.open() as brain:
        lamp = brain.remember("the desk lamp is on the smart plug", category="core")
        gone = brain.remember("the old router sits in the hall cupboard", category="core")
    a.sync()
    b.join(a)
    end = "ffffffffffff0000"  # what an older maxmem let a stamp at the end of time do to this machine
    with a.open() as brain:
        db = brain.db
        db.set_meta("sync_clock", str(int(end, 16)))
        stamps = {"*": [end + machine_id(a), None]}
        db.execute("UPDATE sync_memories SET stamps = ? WHERE uid = ?", (json.dumps(stamps), lamp.uid))
        brain.update(gone.uid, content="the old router sits in the attic")
    stuck = a.sync()
    assert any("days ahead" in line and "set back to now" in line for line in stuck.notes)
    assert a.sync().notes == []  # mended once
    with a.open() as brain:
        assert int(brain.db.get_meta("sync_clock")) >> 16 < 2 ** 47
        brain.update(lamp.uid, content="the desk lamp is on the second smart plug")
    a.sync()
    report = b.sync()
    assert not report.pending and not report.quarantined
    state = b.state()
    assert state[lamp.uid][SYNCED.index("content")] == "the desk lamp is on the second smart plug"
    assert state[gone.uid][SYNCED.index("content")] == "the old router sits in the attic"


def test_a_record_from_a_machine_a_year_ahead_waits_and_merges_when_its_date_comes(pair):
    a, b = pair
    with a.open() as brain:
        brain.remember("the laptop's own note", category="core")
    a.sync()
    now = FixedClock(time.time())  # the laptop's note was written by the real clock
    ahead = (now.now() + timedelta(days=365)).strftime("%Y-%m-%dT%H:%M:%SZ")
    path = plant(a, 1, [record("from-a-fast-clock", "written where the clock runs a year fast", at=ahead),
                        record("on-time", "written on time")])

    def run_at(clock: FixedClock, join: bool = False):
        with b.open(clock=clock) as brain:
            return sync(brain, b.settings(), key_file=a.home / "sync.key" if join else None)

    first = run_at(now, join=True)
    [line] = first.pending
    assert line.startswith(f"{STRANGER}/{path.name}: 1 record(s) pending: from-a-fast-clock: stamped {ahead[:10]}")
    assert "on-time" in b.state() and "from-a-fast-clock" not in b.state()
    with b.open() as brain:
        assert any("pending" in text for text in machines_text(status(brain)))
    now.advance(days=100)
    assert run_at(now).pending and "from-a-fast-clock" not in b.state()  # tried again, still ahead
    now.advance(days=300)
    late = run_at(now)
    assert late.added == 1 and not late.pending and "from-a-fast-clock" in b.state()
    assert run_at(now).applied_files == 0  # applied: not merged again


def test_files_are_cut_below_what_a_reader_accepts_and_a_file_of_brackets_is_refused_unparsed(pair, monkeypatch):
    brackets = "[{" * 40_000  # code or JSON in a memory: every bracket is counted
    records = [record(f"b-{i}", brackets) for i in range(10)]
    cuts = folder_module.chunks(records)
    assert len(cuts) > 1 and cuts[0][0] == 0 and cuts[-1][1] == len(records)
    for start, end in cuts:
        payload = changefiles.encode(changefiles.Payload(records[start:end]))
        assert len(changefiles.decode(payload).records) == end - start  # each one reads back
    a, b = pair
    with a.open() as brain:
        brain.remember("the laptop's own note", category="core")
    a.sync()
    monkeypatch.setattr(changefiles, "MAX_CONTAINERS", 1000)
    plant(a, 1, [record("nested", "x", metadata={"a": [[1]] * 2000})])
    report = b.join(a)
    [line] = report.quarantined
    assert "more than 1,000 lists and objects: refused unparsed" in line and report.added == 1


def test_a_vector_of_nan_infinity_or_zeros_is_not_stored_and_scores_stay_numbers(tmp_path, shared):
    """A file sealed with the real key may carry any float16: one NaN vector stored made
    every score of every search NaN (its centre too), the brain's own memories included.
    Such vectors are dropped; their memories wait for the embed job."""
    import math

    import numpy as np

    a, b = Machine(tmp_path, "a", shared), Machine(tmp_path, "b", shared)
    embedder = HashEmbedder()
    with a.open(embedder) as brain:
        brain.remember("the laptop's note about the smoke alarm battery", category="core")
    a.sync(embedder)
    with a.open(embedder) as brain:
        identity = folder_module._embedder(brain, a.settings())
    records = [dict(record(f"bad-vector-{name}", f"the smoke alarm battery, {name}"), v=row)
               for row, name in enumerate(("nan", "infinity", "zeros"))]
    vectors = np.zeros((3, embedder.dim), dtype="<f2")
    vectors[0], vectors[1] = np.nan, np.inf
    key = changefiles.read_key(a.home / "sync.key")
    path = shared / STRANGER / f"{1:08d}{changefiles.SUFFIX}"
    path.parent.mkdir()
    path.write_bytes(changefiles.seal(key, STRANGER, 1, changefiles.Payload(records, identity, vectors)))
    with b.open(embedder) as brain:
        report = sync(brain, b.settings(), key_file=a.home / "sync.key")
        assert report.vectors == 1 and brain.pending_count() == 3  # the laptop's own vector only
        hits = brain.search("smoke alarm battery")
        assert len(hits) == 4 and all(math.isfinite(h.score) for h in hits), [h.score for h in hits]
        assert brain.embed_pending().embedded == 3
        assert all(math.isfinite(h.score) and h.vector_score is not None for h in brain.search("smoke alarm battery"))
