"""Retention: policy, calendar-day cutoffs across DST, dry run, archive + delete, reclaim, CLI."""

from __future__ import annotations

import gzip
import json
import os
import stat
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from maxmem import Brain, Config, FixedClock
from maxmem.archive import read as read_archive
from maxmem.cli import cli
from maxmem.clock import parse_since
from maxmem.config import zone
from maxmem.embeddings import text_hash
from maxmem.errors import ConfigError, InvalidInput
from maxmem.retention.archives import PENDING, check_archives, pending, repair_archives
from maxmem.retention.policy import cutoff, load_policy
from maxmem.retention.report import plan_lines, summary
from maxmem.retention.run import apply, run_lock
from maxmem.retention.stats import growth, plan
from maxmem.store.records import embed_text

NY = zone("America/New_York")


def _policy(**retention):
    return load_policy(Config.from_tables({"retention": retention}).retention)


# -- policy ---------------------------------------------------------------------------

def test_default_policy():
    policy = load_policy(None)
    assert dict(policy.days) == {"core": None, "daily": 90, "conversation": 30, "project": None}
    assert policy.archive_days == 730 and str(policy.timezone) == "America/New_York"


def test_policy_from_config():
    policy = _policy(daily="12w", conversation=45, project="2y", core="forever", archive_days="36h",
                     timezone="UTC", batch_size=10, vacuum_share=0.5)
    assert dict(policy.days) == {"core": None, "daily": 84, "conversation": 45, "project": 730}
    assert policy.archive_days == pytest.approx(1.5) and policy.batch_size == 10


@pytest.mark.parametrize("section, fragment", [
    ({"daily": "banana"}, "duration"),
    ({"daily": -3}, "more than 0"),
    ({"daily": "0d"}, "more than 0"),
    ({"daily": True}, "duration"),
    ({"weekly": 7}, "unknown setting"),
    ({"timezone": "Mars/Olympus"}, "time zone"),
    ({"batch_size": 0}, "batch_size"),
    ({"vacuum_share": 2}, "vacuum_share"),
    ({"batch_size": "many"}, "whole number"),
    ({"daily": float("inf")}, "at most 36525 days"),
    ({"daily": float("nan")}, "at most 36525 days"),
    ({"daily": "99999999999d"}, "at most 36525 days"),
    ({"archive_days": 1e400}, "at most 36525 days"),
])
def test_bad_policy_is_a_config_error(section, fragment):
    with pytest.raises(ConfigError) as err:
        _policy(**section)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_parse_since():
    now = datetime.fromisoformat("2026-11-30T12:00:00+00:00")
    assert parse_since("1d", now) == now - timedelta(days=1)
    assert parse_since("12h", now) == now - timedelta(hours=12)
    assert parse_since("2026-11-01", now).isoformat() == "2026-11-01T00:00:00+00:00"
    with pytest.raises(InvalidInput):
        parse_since("yesterdayish", now)


# -- calendar days across daylight saving time (America/New_York) -----------------------

def _utc(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_cutoff_on_the_spring_forward_day():
    # 2026-03-08: clocks jump 02:00 EST -> 03:00 EDT. The 03:00 run is 07:00Z.
    now = _utc("2026-03-08T07:00:00Z")
    assert cutoff(30, now, NY) == _utc("2026-02-06T05:00:00Z")  # local midnight, EST
    assert cutoff(1, now, NY) == _utc("2026-03-07T05:00:00Z")
    # One day later the same run (now EDT) moves the cutoff by exactly one local day.
    assert cutoff(1, now + timedelta(days=1), NY) == _utc("2026-03-08T05:00:00Z")


def test_cutoff_on_the_fall_back_day():
    # 2026-11-01: 02:00 EDT -> 01:00 EST; 01:30 happens twice (05:30Z and 06:30Z).
    first, second = _utc("2026-11-01T05:30:00Z"), _utc("2026-11-01T06:30:00Z")
    assert cutoff(30, first, NY) == cutoff(30, second, NY) == _utc("2026-10-02T04:00:00Z")
    assert cutoff(90, _utc("2026-11-01T08:00:00Z"), NY) == _utc("2026-08-03T04:00:00Z")


def test_fractional_days_count_exact_hours():
    now = _utc("2026-03-08T07:00:00Z")
    assert cutoff(1.5, now, NY) == now - timedelta(hours=36)
    assert cutoff(None, now, NY) is None


def test_a_run_on_the_dst_day_keeps_what_is_inside_the_window(tmp_path, hash_embedder):
    clock = FixedClock("2026-03-08T07:00:00Z")  # 03:00 EDT, the nightly run
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=clock) as b:
        gone = b.remember("said on the 5th of February, late evening", category="conversation",
                          created_at="2026-02-06T04:59:59Z")  # 23:59:59 EST on Feb 5
        kept = b.remember("said just after midnight on the 6th", category="conversation",
                          created_at="2026-02-06T05:00:00Z")  # 00:00 EST on Feb 6
        report = apply(b, _policy(conversation=30))
        assert report["deleted"]["conversation"] == 1
        assert [m.id for m in b.list(category="conversation")] == [kept.id]
        assert gone.id not in [m.id for m in b.list()]


# -- dry run ----------------------------------------------------------------------------

@pytest.fixture
def aged(tmp_path, hash_embedder):
    clock = FixedClock("2026-11-30T08:00:00Z")  # 03:00 in New York
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=clock) as b:
        ids = {
            "old_daily": b.remember("old daily note about tomatoes", category="daily",
                                    created_at="2026-06-01T12:00:00Z").id,
            "new_daily": b.remember("fresh daily note about basil", category="daily",
                                    created_at="2026-11-20T12:00:00Z").id,
            "old_chat": b.remember("user: what port does staging use\nassistant: 5433", category="conversation",
                                   created_at="2026-10-01T12:00:00Z").id,
            "pinned": b.remember("pinned daily note about the boiler", category="daily", pinned=True,
                                 created_at="2026-01-01T12:00:00Z").id,
            "trigger_daily": b.remember("a decision filed as daily", category="daily", source="trigger",
                                        created_at="2026-01-02T12:00:00Z").id,
            "trigger_meta": b.remember("a lesson filed as conversation", category="conversation",
                                       metadata={"trigger": "lesson"}, created_at="2026-01-03T12:00:00Z").id,
            "old_core": b.remember("ancient core fact", category="core", created_at="2020-01-01T00:00:00Z").id,
        }
        b.ids = ids
        yield b


def test_plan_counts_and_lists_without_changing_anything(aged):
    before = aged.stats()["memories"]
    result = plan(aged)
    assert result["expired"] == 2
    daily, chat = result["categories"]["daily"], result["categories"]["conversation"]
    assert (daily["count"], daily["expired"], daily["protected"]) == (4, 1, 2)
    assert (chat["expired"], chat["protected"]) == (1, 1)
    assert daily["cutoff"] == "2026-09-01T04:00:00.000Z"
    assert result["categories"]["core"]["cutoff"] is None
    assert [o["id"] for o in result["oldest"]] == [aged.ids["old_daily"], aged.ids["old_chat"]]
    assert daily["expired_bytes"] > 0
    assert aged.stats()["memories"] == before


def test_apply_archives_then_deletes_everywhere(aged, tmp_path):
    old_daily = aged.get(aged.ids["old_daily"])
    old_chat_uid = aged.get(aged.ids["old_chat"]).uid
    report = apply(aged)
    assert report["deleted"] == {"core": 0, "daily": 1, "conversation": 1, "project": 0}
    assert report["archived"] == 2
    archive = report["archive"]
    assert os.path.dirname(archive) == str(tmp_path)
    assert stat.S_IMODE(os.stat(archive).st_mode) == 0o600
    with gzip.open(archive, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    assert [r["uid"] for r in records] == [old_daily.uid, old_chat_uid]
    assert records[0]["content"] == "old daily note about tomatoes"
    remaining = {m.id for m in aged.list(limit=100)}
    assert aged.ids["old_daily"] not in remaining and aged.ids["old_chat"] not in remaining
    assert {aged.ids[k] for k in ("new_daily", "pinned", "trigger_daily", "trigger_meta", "old_core")} <= remaining
    # keyword index, vectors and sign bits follow the row
    assert aged.search("tomatoes", mode="keyword") == []
    assert aged.db.scalar("SELECT count(*) FROM memories_vec WHERE rowid = ?", (old_daily.id,)) == 0
    assert aged.db.scalar("SELECT count(*) FROM vector_codes WHERE id = ?", (old_daily.id,)) == 0
    # the change log records the delete and keeps no copy of the expired content
    versions = aged.history(old_daily.uid)
    assert [v["op"] for v in versions] == ["delete"]
    assert versions[0]["memory"]["archive"] == os.path.basename(archive)
    assert aged.history(old_daily.id) == versions  # by the id it had, too
    assert "tomatoes" not in json.dumps([r["data"] for r in aged.db.rows("SELECT data FROM changes")])
    # nor does the embeddings cache keep a vector of it (forget copies it there first)
    assert aged.db.scalar("SELECT count(*) FROM embeddings_cache WHERE text_hash = ?",
                          (text_hash(embed_text(old_daily.title, old_daily.content)),)) == 0
    assert "deleted 2 memories (daily 1, conversation 1)" in summary(report)


def test_the_archive_restores_with_maxmem_import(aged, tmp_path):
    report = apply(aged)
    restored_db = tmp_path / "restored.db"
    result = CliRunner().invoke(cli, ["--db", str(restored_db), "--embedder", "none", "import",
                                      report["archive"], "--json"])
    assert result.exit_code == 0, result.output
    with Brain.open(restored_db, embedder="none") as b:
        contents = sorted(m.content for m in b.list(limit=10))
    assert contents == ["old daily note about tomatoes", "user: what port does staging use\nassistant: 5433"]


def test_second_run_does_nothing_and_writes_no_archive(aged, tmp_path):
    apply(aged)
    files = sorted(p.name for p in tmp_path.iterdir())
    report = apply(aged)
    assert report["deleted_total"] == 0 and report["archive"] is None
    assert sorted(p.name for p in tmp_path.iterdir()) == files


def test_batches_are_separate_transactions_each_with_its_archive(tmp_path, hash_embedder):
    clock = FixedClock("2026-11-30T08:00:00Z")
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=clock) as b:
        b.remember_many([{"content": f"old note {i}", "category": "daily" if i % 2 else "conversation",
                          "created_at": "2026-01-01T00:00:00Z"} for i in range(7)])
        report = apply(b, _policy(batch_size=3))
        assert report["deleted"] == {"core": 0, "daily": 3, "conversation": 4, "project": 0}
        assert report["archived"] == 7
        names = sorted(p.name for p in tmp_path.glob("brain.retention-*.jsonl.gz"))
        assert names == ["brain.retention-20261130T080000Z-2.jsonl.gz", "brain.retention-20261130T080000Z-3.jsonl.gz",
                         "brain.retention-20261130T080000Z.jsonl.gz"]
        assert report["archives"] == [str(tmp_path / n) for n in (names[2], names[0], names[1])]
        sizes = [len(read_archive(p).records) for p in report["archives"]]
        assert sizes == [3, 3, 1]
        assert "archived 7 rows to 3 files" in summary(report)
        assert b.db.scalar("SELECT count(*) FROM changes WHERE op = 'delete'") == 7
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        assert b.db.scalar("SELECT count(*) FROM meta WHERE key LIKE 'retention_pending:%'") == 0


def test_turns_and_tool_calls_age_with_conversations(tmp_path, hash_embedder):
    clock = FixedClock("2026-11-30T08:00:00Z")
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=clock) as b:
        with b.db.atomic():
            b.db.execute("INSERT INTO sessions (id, format) VALUES ('s1', 'jsonl')")
            for n, when in enumerate(["2026-09-01T00:00:00.000Z", "2026-11-29T00:00:00.000Z"], start=1):
                b.db.execute(
                    "INSERT INTO turns (id, session_id, seq, key, fingerprint, role, text, created_at) "
                    "VALUES (?, 's1', ?, ?, ?, 'assistant', ?, ?)", (n, n, f"k{n}", f"f{n}", f"turn {n}", when))
                b.db.execute("INSERT INTO tool_calls (session_id, call_id, turn_id, name, started_at) "
                             "VALUES ('s1', ?, ?, 'bash', ?)", (f"c{n}", n, when))
            b.db.execute("INSERT INTO tool_calls (session_id, call_id, turn_id, name, started_at) "
                         "VALUES ('s1', 'orphan', NULL, 'bash', '2026-08-01T00:00:00.000Z')")
        assert plan(b)["transcripts"] == {"turns": 1, "tool_calls": 2}
        report = apply(b)
        assert report["transcripts"] == {"turns": 1, "tool_calls": 2}
        assert [r["id"] for r in b.db.rows("SELECT id FROM turns")] == [2]
        assert [r["call_id"] for r in b.db.rows("SELECT call_id FROM tool_calls")] == ["c2"]
        with gzip.open(report["archive"], "rt") as handle:
            tables = sorted(json.loads(line)["_table"] for line in handle)
        assert tables == ["tool_calls", "tool_calls", "turns"]
        assert "1 turns and 2 tool calls" in summary(report)
    # The archive of such a run still imports: the transcript lines are skipped.
    with gzip.open(report["archive"], "at", encoding="utf-8") as handle:
        handle.write(json.dumps({"content": "an archived memory", "category": "daily"}) + "\n")
    with Brain.open(tmp_path / "restored.db", embedder="none") as restored:
        from maxmem.jsonl import read_jsonl

        counts = restored.import_records(read_jsonl(report["archive"]))
        assert (counts["added"], counts["skipped"]) == (1, 3)


# -- interrupted runs ---------------------------------------------------------------

def _old_notes(b, n=7):
    b.remember_many([{"content": f"old note {i}", "category": "daily", "created_at": "2026-01-01T00:00:00Z"}
                     for i in range(n)])


def _archived_uids(folder):
    return [r["uid"] for p in sorted(folder.glob("brain.retention-*.jsonl.gz")) for r in read_archive(p).records]


class Killed(BaseException):
    """Stands for SIGKILL at one chosen point (tests/test_retention_kill.py kills for real)."""


def test_a_run_stopped_after_the_rename_is_finished_without_a_second_copy(tmp_path, hash_embedder, monkeypatch):
    from maxmem import archive as archive_module

    clock = FixedClock("2026-11-30T08:00:00Z")
    real_write = archive_module.write
    calls = []

    def write_then_die(path, records, replace=False, key=None):
        real_write(path, records, replace, key)
        calls.append(path)
        if len(calls) == 2:
            raise Killed  # the second batch's archive is in place, its rows not yet deleted

    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=clock) as b:
        _old_notes(b)
        monkeypatch.setattr(archive_module, "write", write_then_die)
        with pytest.raises(Killed):
            apply(b, _policy(batch_size=3))
        monkeypatch.setattr(archive_module, "write", real_write)
        assert b.stats()["memories"] == 4  # the first batch went; the second is in brain.db and in its archive
        assert pending(b.db) == [calls[1]]
        findings = check_archives(b)
        assert [f["ok"] for f in findings] == [False]
        assert "interrupted at" in findings[0]["detail"] and "after writing it" in findings[0]["detail"]
        assert "maxmem retain --apply" in findings[0]["detail"]
        assert "interrupted" in "\n".join(plan_lines(plan(b)))
        # meanwhile one of the archived memories changes: it must stay, and be archived as it is now
        changed_uid = b.db.scalar("SELECT uid FROM memories ORDER BY created_at, id LIMIT 1")
        b.update(changed_uid, content="old note, edited after the kill")
        report = apply(b, _policy(batch_size=3))
        assert report["resumed"]["archives"] == [str(calls[1])]
        assert (report["resumed"]["memories"], report["resumed"]["kept"]) == (2, 1)
        assert "finished an interrupted run" in summary(report)
        assert b.stats()["memories"] == 0 and pending(b.db) == []
        assert [f["ok"] for f in check_archives(b)] == [True]
    uids = _archived_uids(tmp_path)
    assert len(uids) == 8 and len(set(uids)) == 7  # the edited one twice: as archived, and as edited
    last = read_archive(report["archives"][-1]).records
    assert [r["content"] for r in last if r["uid"] == changed_uid] == ["old note, edited after the kill"]


def test_a_run_stopped_before_the_rename_leaves_the_rows(tmp_path, hash_embedder):
    from maxmem import archive as archive_module

    clock = FixedClock("2026-11-30T08:00:00Z")
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=clock) as b:
        _old_notes(b)
        # what SIGKILL leaves while the archive is being written: the journal entry and a temporary
        path = tmp_path / "brain.retention-20261129T080000Z.jsonl.gz"
        with b.db.atomic():
            b.db.set_meta(PENDING + path.name, str(path))
        archive_module.temporary(path).write_bytes(b"\x1f\x8b\x08 half an archive")
        stray = archive_module.temporary(tmp_path / "brain.retention-20261128T080000Z.jsonl.gz")
        stray.write_bytes(b"")
        details = [f["detail"] for f in check_archives(b)]
        assert len(details) == 2
        assert "before it was written whole (its rows are still in brain.db)" in details[0]
        assert str(stray) in details[1] and "holds nothing that is not in brain.db" in details[1]
        report = apply(b, _policy(batch_size=3))
        assert report["resumed"]["archives"] == [] and report["deleted_total"] == 7
        assert not archive_module.temporary(path).exists() and not path.exists()
        assert pending(b.db) == []
        assert [f["ok"] for f in check_archives(b)] == [False]  # the stray one, not journaled
        stray.unlink()
        assert [f["ok"] for f in check_archives(b)] == [True]
    assert sorted(_archived_uids(tmp_path)) == sorted(set(_archived_uids(tmp_path)))


def test_a_failed_archive_write_deletes_nothing_and_leaves_no_journal(tmp_path, hash_embedder, monkeypatch):
    from maxmem import archive as archive_module
    from maxmem.archive import ArchiveError
    from maxmem.errors import MaxmemError

    def full_disk(path, records, replace=False, key=None):
        raise ArchiveError(f"cannot write the archive {path}: No space left on device; nothing was deleted")

    clock = FixedClock("2026-11-30T08:00:00Z")
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=clock) as b:
        _old_notes(b)
        monkeypatch.setattr(archive_module, "write", full_disk)
        with pytest.raises(ArchiveError, match="No space left"):
            apply(b)
        assert b.stats()["memories"] == 7 and pending(b.db) == []
        assert "No space left" in b.db.get_meta("last_run:retention")
        blocker = tmp_path / "archives"
        blocker.write_text("a file where the archive folder should be")
        with pytest.raises(MaxmemError, match="cannot use .*archives as the archive folder"):
            apply(b, _policy(archive_dir=str(blocker)))


def test_one_run_at_a_time(tmp_path, hash_embedder):
    from maxmem.errors import MaxmemError

    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=FixedClock("2026-11-30T08:00:00Z")) as b:
        _old_notes(b)
        with run_lock(tmp_path, "brain"), pytest.raises(MaxmemError, match="another retention run"):
            apply(b)
        assert b.stats()["memories"] == 7
        assert apply(b)["deleted_total"] == 7


def test_doctor_findings_for_a_truncated_archive_until_it_is_repaired(aged, tmp_path):
    from test_archive import old_style_archive


    report = apply(aged)
    assert [f["ok"] for f in check_archives(aged)] == [True]
    assert "1 archive(s)" in check_archives(aged)[0]["detail"]
    old = tmp_path / "brain.retention-20260101T080000Z.jsonl.gz"
    records = [{"uid": f"u{i}", "content": f"an old archived memory {i}", "category": "daily"} for i in range(40)]
    old_style_archive(old, [records[:20], records[20:]])
    data = old.read_bytes()
    old.write_bytes(data[: len(data) - 30])
    findings = check_archives(aged)
    assert [f["ok"] for f in findings] == [False]
    assert str(old) in findings[0]["detail"] and "truncated" in findings[0]["detail"]
    assert f"maxmem import {old}" in findings[0]["detail"]
    repaired = repair_archives(aged)
    assert [r["path"] for r in repaired] == [str(old)] and 20 <= repaired[0]["lines"] < 40
    assert read_archive(old).complete and read_archive(old).records == records[: repaired[0]["lines"]]
    assert Path(repaired[0]["damaged_copy"]).read_bytes() == data[: len(data) - 30]
    assert [f["ok"] for f in check_archives(aged)] == [True]
    assert read_archive(report["archive"]).complete


def test_old_archives_are_pruned(aged, tmp_path):
    old = tmp_path / "brain.retention-20231101T080000Z.jsonl.gz"
    recent = tmp_path / "brain.retention-20260101T080000Z.jsonl.gz"
    other = tmp_path / "notes.retention-20200101T000000Z.jsonl.gz"
    for p in (old, recent, other):
        p.write_bytes(b"")
    assert plan(aged)["archives_to_prune"] == [str(old)]
    report = apply(aged)
    assert report["archives_pruned"] == [str(old)]
    assert not old.exists() and recent.exists() and other.exists()


def test_a_large_expiry_rebuilds_vectors_and_vacuums(tmp_path, hash_embedder):
    clock = FixedClock("2026-11-30T08:00:00Z")
    path = tmp_path / "brain.db"
    with Brain.open(path, embedder=hash_embedder, clock=clock) as b:
        b.remember_many([
            {"content": f"chunk {i} " + "filler words for size " * 30, "category": "conversation",
             "created_at": "2026-01-01T00:00:00Z" if i % 10 else "2026-11-29T00:00:00Z"}
            for i in range(600)
        ])
        slots = b.db.scalar("SELECT sum(size) FROM memories_vec_chunks")
        report = apply(b)
        assert report["deleted"]["conversation"] == 540 and report["vacuumed"]
        assert report["size_after"] < report["size_before"] / 2
        assert b.db.scalar("SELECT sum(size) FROM memories_vec_chunks") < slots
        assert b.db.scalar("SELECT count(*) FROM memories_vec") == 60
        hits = b.search("chunk 10 filler", mode="vector", limit=1)
        assert hits and hits[0].memory.content.startswith("chunk ")


def test_growth_per_month(aged):
    result = growth(aged, months=12)
    assert result["per_month"]["daily"]["2026-06"]["memories"] == 1
    assert result["totals"]["daily"]["memories"] == 4
    with pytest.raises(InvalidInput):
        growth(aged, months=0)


# -- CLI ------------------------------------------------------------------------------

def _seed(db):
    with Brain.open(db, embedder="none") as b:
        b.remember("a daily note from long ago", category="daily", created_at="2020-01-01T00:00:00Z")
        b.remember("a daily note from today", category="daily")


def test_cli_dry_run_apply_and_stats(tmp_path):
    db = tmp_path / "brain.db"
    _seed(db)
    runner = CliRunner()
    args = ["--db", str(db), "--embedder", "none"]
    out = runner.invoke(cli, [*args, "retain"])
    assert out.exit_code == 0, out.output
    assert "1 memories would go" in out.output and "a daily note from long ago" in out.output
    out = runner.invoke(cli, [*args, "retain", "--json"])
    assert json.loads(out.output)["categories"]["daily"]["expired"] == 1
    out = runner.invoke(cli, [*args, "retain", "--apply"])
    assert out.exit_code == 0 and out.output.startswith("retention: deleted 1 memories (daily 1)")
    archive = os.path.basename(out.output.split("archived 1 rows to ")[1].split()[0])
    out = runner.invoke(cli, [*args, "history", "1"])  # by the id it had
    assert out.exit_code == 0 and out.output.rstrip().endswith(f"deleted by retention, archived in {archive}")
    out = runner.invoke(cli, [*args, "retain", "--apply", "--json"])
    assert json.loads(out.output)["deleted_total"] == 0
    out = runner.invoke(cli, [*args, "retain", "--stats"])
    assert out.exit_code == 0 and "daily" in out.output
    out = runner.invoke(cli, [*args, "retain", "--stats", "--apply"])
    assert isinstance(out.exception, InvalidInput)


def test_cli_bad_retention_config_is_one_line(tmp_path, capsys):
    from maxmem.cli import main

    config = tmp_path / "config.toml"
    config.write_text(f'db_path = "{tmp_path / "b.db"}"\nembedder = "none"\n[retention]\ndaily = "soon"\n')
    with pytest.raises(SystemExit) as exit_info:
        main(["--config", str(config), "retain"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and "[retention] daily" in err


# -- the tick and the daemon's job ------------------------------------------------------

def test_the_tick_script_runs_retention(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    db = tmp_path / "brain.db"
    _seed(db)
    wrapper = tmp_path / "maxmem-bin"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{root}" exec "{sys.executable}" -m maxmem "$@"\n')
    wrapper.chmod(0o755)
    env_file = tmp_path / "env"
    env_file.write_text(f"MAXMEM_DB={db}\nMAXMEM_EMBEDDER=none\n")
    logs = tmp_path / "logs"
    env = {**os.environ, "HOME": str(tmp_path), "MAXMEM_BIN": str(wrapper), "MAXMEM_LOG_DIR": str(logs),
           "MAXMEM_ENV_FILE": str(env_file)}
    done = subprocess.run([str(root / "scripts" / "maxmem-jobs-cron")], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    log = (logs / "jobs.log").read_text()
    assert "retention: deleted 1 memories (daily 1)" in log and "jobs: exit 0" in log, log
    assert len(list(tmp_path.glob("brain.retention-*.jsonl.gz"))) == 1


def test_daemon_has_the_retention_job(tmp_path):
    import schedule

    from maxmem.jobs.daemon import default_jobs, entry, retention_job

    config = Config(db_path=tmp_path / "brain.db", embedder="none")
    _seed(config.db_path)
    job = retention_job(config)
    scheduled = entry(job.when, schedule.Scheduler())
    assert (str(scheduled.at_time), str(scheduled.at_time_zone)) == ("03:00:00", "America/New_York")
    assert job.run().startswith("retention: deleted 1 memories")
    assert "retention" in [j.name for j in default_jobs(config, {})]
    with pytest.raises(ConfigError, match=r"^\[retention\] schedule = '3am' must be a time of day like 03:00$"):
        Config.from_tables({"retention": {"schedule": "3am"}})
