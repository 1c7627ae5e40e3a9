"""Searches followed by a `get`: the pair a question for `maxmem tune`, recorded off the
search path, redacted, bounded, pruned with the conversations; never the prompt hook's
recall."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

from maxmem import Brain
from maxmem.clock import FixedClock
from maxmem.hooks.recall import recall
from maxmem.retention.run import apply
from maxmem.scrub import scrub
from maxmem.settings import RecallSettings
from maxmem.store import fetched
from maxmem.tune import benchmark, fetched_questions, report_lines, tune

MAXMEM = Path(sys.executable).parent / "maxmem"
NOTES = [
    "The staging database listens on port 5433 on host db2 since the move.",
    "We decided to use PostgreSQL 16 with pgvector for the shared memory server.",
    "The user prefers tabs over spaces in Go code.",
    "Deployed the billing service on Friday after the load test passed.",
]


def seeded(db: Path) -> list[int]:
    with Brain.open(db, embedder="none") as brain:
        return [brain.remember(text, category="project").id for text in NOTES]


def cli(db: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = run_cli(["--db", str(db), "--embedder", "none", *args], capsys)
    assert code == 0, err
    return out


def questions_of(db: Path) -> list:
    with Brain.open(db, embedder="none") as brain:
        return fetched_questions(brain)


def test_a_cli_search_then_a_get_of_its_hit_is_a_question(tmp_path, capsys):
    db = tmp_path / "brain.db"
    ids = seeded(db)
    assert f"#{ids[0]}" in cli(db, capsys, "search", "staging database port")
    cli(db, capsys, "get", str(ids[0]))
    (question,) = questions_of(db)
    assert question.query == "staging database port" and question.gold == {ids[0]}
    assert question.source == "fetched"
    with Brain.open(db, embedder="none") as brain:
        assert [q.source for q in benchmark(brain)] == ["fetched"]
        # The recent search is kept minutes only; the pair stays.
        assert brain.db.scalar("SELECT count(*) FROM fetched") == 1


def test_a_get_without_a_search_before_it_or_of_a_memory_it_did_not_return_is_no_question(tmp_path, capsys):
    db = tmp_path / "brain.db"
    ids = seeded(db)
    before = db.read_bytes()
    cli(db, capsys, "get", str(ids[0]))
    assert db.read_bytes() == before, "a get that answers no search writes nothing"
    assert questions_of(db) == []
    assert f"#{ids[2]}" not in cli(db, capsys, "search", "staging database port")
    cli(db, capsys, "get", str(ids[2]))
    assert questions_of(db) == []


def test_a_search_and_a_get_in_one_process_each_get_of_its_hits_an_answer(tmp_path):
    clock = FixedClock("2026-11-30T12:00:00Z")
    with Brain.open(tmp_path / "brain.db", embedder="none", clock=clock) as brain:
        ids = [brain.remember(text, category="project").id for text in NOTES]
        hits = brain.search("PostgreSQL pgvector shared memory", min_relevance=0)
        assert hits[0].memory.id == ids[1]
        brain.get(ids[1])  # Brain.get is not a fetch of yours unless it says so (update, forget use it)
        clock.advance(minutes=2)
        brain.get_many([ids[1]], track=True)
        clock.advance(minutes=10)  # too late to answer the search
        brain.search("tabs or spaces in Go", min_relevance=0)
        clock.advance(minutes=6)
        brain.get(ids[2], track=True)
        assert brain.db.scalar("SELECT count(*) FROM fetched") == 0  # not written yet: on close or later
    (question,) = questions_of(tmp_path / "brain.db")
    assert (question.query, question.gold) == ("PostgreSQL pgvector shared memory", {ids[1]})


def test_the_prompt_hooks_recall_is_no_search_of_yours(tmp_path):
    db = tmp_path / "brain.db"
    ids = seeded(db)
    with Brain.open(db, embedder="none") as brain:
        found = recall(brain, "which port does the staging database listen on?", settings=RecallSettings(),
                       min_relevance=0.0)
        assert ids[0] in found.ids
        brain.get(ids[0], track=True)
        assert not brain.usage.fetches.searches
    assert questions_of(db) == []


@pytest.mark.skipif(not MAXMEM.is_file(), reason="the maxmem entry point is not installed")
def test_the_prompt_hook_run_as_a_harness_runs_it_records_no_search(tmp_path, capsys):
    db = tmp_path / "brain.db"
    ids = seeded(db)
    home = tmp_path / "home"
    (home / ".config" / "maxmem").mkdir(parents=True)
    (home / ".config" / "maxmem" / "config.toml").write_text('embedder = "none"\n[recall]\nwarm_minutes = 0\n')
    payload = json.dumps({"session_id": "s-1", "prompt": "which port does the staging database listen on?",
                          "hook_event_name": "UserPromptSubmit"}).encode()
    done = subprocess.run([str(MAXMEM), "--db", str(db), "hook", "user-prompt", "--budget", "60"], input=payload,
                          env={"HOME": str(home)}, capture_output=True, timeout=120)
    assert done.returncode == 0 and f"#{ids[0]}" in done.stdout.decode(), done
    cli(db, capsys, "get", str(ids[0]))
    assert questions_of(db) == []


def test_a_secret_in_the_query_is_redacted_before_it_is_written(tmp_path, capsys):
    db = tmp_path / "brain.db"
    ids = seeded(db)
    secret = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF"
    cli(db, capsys, "search", f"staging database port {secret}", "--min-relevance", "0")
    cli(db, capsys, "get", str(ids[0]))
    (question,) = questions_of(db)
    assert secret not in question.query and question.query.startswith("staging database port")
    assert secret.encode() not in db.read_bytes()


def test_pairs_expire_with_the_conversations_and_are_capped(tmp_path, monkeypatch):
    clock = FixedClock("2026-11-30T12:00:00Z")
    db = tmp_path / "brain.db"
    with Brain.open(db, embedder="none", clock=clock) as brain:
        ids = [brain.remember(text, category="project").id for text in NOTES]
        for words in ("staging database port", "PostgreSQL pgvector", "tabs spaces Go"):
            hits = brain.search(words, min_relevance=0)
            brain.get(hits[0].memory.id, track=True)
            assert brain.flush_usage()
            clock.advance(days=10)
        assert len(fetched.pairs(brain.db)) == 3
        clock.advance(days=2)  # the first pair is 32 days old, the second 22
        apply(brain)  # the retention run: [retention] conversation = 30 days
        assert [q for q, _ in fetched.pairs(brain.db)] == ["tabs spaces Go", "PostgreSQL pgvector"]
        assert brain.db.scalar("SELECT count(*) FROM recent_searches") == 0  # kept minutes only
        monkeypatch.setattr(fetched, "KEPT", 1)
        brain.search("billing service load test", min_relevance=0)
        brain.get(ids[3], track=True)
        assert brain.flush_usage()
        assert fetched.pairs(brain.db) == [("billing service load test", ids[3])]


def test_nothing_of_it_is_exported(tmp_path, capsys):
    db = tmp_path / "brain.db"
    ids = seeded(db)
    cli(db, capsys, "search", "staging database port")
    cli(db, capsys, "get", str(ids[0]))
    assert questions_of(db)
    out = cli(db, capsys, "export")
    assert "staging database port\"" not in out and "fetched" not in out


def test_forgetting_a_memory_forgets_the_searches_it_answered(tmp_path, capsys):
    db = tmp_path / "brain.db"
    ids = seeded(db)
    cli(db, capsys, "search", "staging database port")
    cli(db, capsys, "get", str(ids[0]))
    with Brain.open(db, embedder="none") as brain:
        assert len(fetched.pairs(brain.db)) == 1
        brain.forget(ids[0])
        assert brain.db.scalar("SELECT count(*) FROM fetched") == 0


def test_tune_counts_them_in_its_report(brain):
    hobbies = ["pottery", "salsa", "chess", "guitar", "sailing", "climbing", "baking", "karate", "painting",
               "archery", "fencing", "yoga", "knitting", "surfing", "photography", "calligraphy", "origami",
               "woodworking", "beekeeping", "gardening", "juggling", "skating", "rowing", "tennis", "cycling"]
    items = []
    for i, thing in enumerate(hobbies):
        items += [{"content": f"Ana: How did your {thing} lessons go last month?", "category": "conversation",
                   "session_id": "chat-1"},
                  {"content": f"Ben: The {thing} teacher was patient, I got the basics after {i + 3} weeks.",
                   "category": "conversation", "session_id": "chat-1"}]
    brain.remember_many(items, near=False)
    for thing in hobbies[:6]:
        hits = brain.search(f"{thing} teacher basics", min_relevance=0)
        brain.get(hits[0].memory.id, track=True)
    assert brain.flush_usage()
    questions = benchmark(brain)
    assert len(questions) == 31
    result = tune(brain, questions)
    assert result.sources == {"replies": 25, "fetched": 6}
    assert report_lines(result)[0].startswith("31 questions from this brain (6 fetched, 25 replies)")


def test_scrub_takes_a_secret_out_of_the_searches_kept(tmp_path, capsys):
    db = tmp_path / "brain.db"
    ids = seeded(db)
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    with Brain.open(db, embedder="none") as brain, brain.db.atomic():
        # As written by an older maxmem, before a rule for the key's shape existed.
        brain.db.execute("INSERT INTO fetched (at, query, memory_id) VALUES (?, ?, ?)",
                         ("2026-11-30T12:00:00.000Z", f"staging database {secret}", ids[0]))
    with Brain.open(db, embedder="none") as brain:
        dry = scrub(brain, dry_run=True, copies=False)
        assert dry.found == {"searches": {"github": 1}}
        scrub(brain, copies=False)
        (query, _), = fetched.pairs(brain.db)
        assert secret not in query and query.startswith("staging database [REDACTED")
    assert secret.encode() not in db.read_bytes()


def test_a_search_whose_words_sqlite_cannot_hold_is_searched_and_never_kept(tmp_path):
    db = tmp_path / "brain.db"
    ids = seeded(db)
    with Brain.open(db, embedder="none") as brain:
        hits = brain.search("staging database \ud800 port", track=True)
        assert ids[0] in [h.memory.id for h in hits]
        brain.search("staging database port", track=True)
        brain.get(ids[0], track=True)
    # Closing flushed without an error; only the clean search is a question.
    assert [q.query for q in questions_of(db)] == ["staging database port"]
