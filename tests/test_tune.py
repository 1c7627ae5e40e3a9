"""`maxmem tune`: the personal benchmark read from a brain, the held-out decision, the
config written and taken back, doctor's recall check, and bad input."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import run_cli

from maxmem import Brain, Clock
from maxmem.capture import CaptureSettings, run_capture
from maxmem.config import Config, load_config
from maxmem.errors import DatabaseError, InvalidInput
from maxmem.tune import (
    CHECK_META,
    NothingToLearn,
    Outcome,
    Question,
    Settings,
    asked_questions,
    asking_part,
    benchmark,
    fallen,
    gated,
    model_questions,
    per_question,
    recall_check,
    record_check,
    reply_questions,
    revert_settings,
    split,
    tune,
    write_settings,
)

THINGS = ["pottery", "salsa", "chess", "guitar", "sailing", "climbing", "baking", "karate", "painting",
          "archery", "fencing", "yoga", "knitting", "surfing", "photography", "calligraphy", "origami",
          "woodworking", "beekeeping", "gardening", "juggling", "skating", "rowing", "tennis", "cycling",
          "diving", "skiing", "kayaking", "birdwatching", "astronomy"]
PLACES = ["Lisbon", "Oslo", "Denver", "Kyoto", "Nairobi", "Lima", "Dublin", "Hanoi", "Tbilisi", "Quebec"]


def conversation(count: int = 30) -> list[dict]:
    """One-turn conversation memories: a question, then its reply, in one session."""
    items = []
    for i, thing in enumerate(THINGS[:count]):
        place = PLACES[i % len(PLACES)]
        for who, text in (("Ana", f"How did your {thing} lessons in {place} go last month?"),
                          ("Ben", f"The {thing} teacher in {place} was patient, I finally got the basics "
                                  f"right after {i + 3} weeks.")):
            items.append({"content": f"{who}: {text}", "category": "conversation",
                          "session_id": "chat-1", "created_at": f"2026-01-{1 + i % 28:02d}T10:00:00Z"})
    return items


@pytest.fixture
def chat_brain(tmp_path: Path, local_embedder) -> Brain:
    with Brain.open(tmp_path / "brain.db", embedder=local_embedder) as brain:
        brain.remember_many(conversation(), near=False)
        yield brain


# -- the personal benchmark --------------------------------------------------------------

def test_replies_are_the_answers_of_the_turns_that_ask(brain):
    brain.remember_many(conversation(5) + [
        {"content": "Ana: ok?", "category": "conversation", "session_id": "chat-1"},  # asks about nothing
    ], near=False)
    questions = reply_questions(brain)
    assert len(questions) == 5
    by_query = {q.query: q for q in questions}
    q = by_query["How did your pottery lessons in Lisbon go last month?"]
    (gold,) = q.gold
    assert brain.get(gold).content.startswith("Ben: The pottery teacher in Lisbon")
    assert all(brain.get(s).content.startswith("Ana: How did your pottery") for s in q.skip)


def test_a_question_is_what_the_turn_asks_not_the_talk_around_it(brain):
    assert asking_part("Wow, Ana! That sounds hard. How did the pottery lessons in Lisbon go? "
                       "I never tried.") == "How did the pottery lessons in Lisbon go?"
    assert asking_part("Nice! Did you keep the bowls? And who taught you the glazing?\n[shares a photo]") == (
        "Did you keep the bowls? And who taught you the glazing?")
    assert asking_part("Great weekend, right?") is None  # asks about nothing in particular
    assert asking_part("We moved the staging database to host db2 on port 5433.") is None
    brain.remember_many([
        {"content": "Ana: Congrats on the new job, Ben! Your team sounds lovely. Which city is the office in? "
                    "I hope it is close.", "category": "conversation", "session_id": "s"},
        {"content": "Ben: It is in Porto, near the river.", "category": "conversation", "session_id": "s"},
    ], near=False)
    (q,) = reply_questions(brain)
    assert q.query == "Which city is the office in?"
    assert brain.get(min(q.gold)).content.startswith("Ben: It is in Porto")


def test_a_memory_holding_the_question_itself_is_never_its_answer(brain):
    question = "Which database did we pick for the billing ledger in the end?"
    brain.remember_many([
        {"content": f"Ana: {question}", "category": "conversation", "session_id": "s"},
        {"content": f"Ben: You asked '{question}' and it was PostgreSQL.", "category": "conversation",
         "session_id": "s"},
    ], near=False)
    assert reply_questions(brain) == []


def transcript(path: Path, pairs: int) -> Path:
    lines = []
    for i, thing in enumerate(THINGS[:pairs]):
        lines.append({"role": "user", "content": f"What should I pack for the {thing} weekend in "
                                                 f"{PLACES[i % len(PLACES)]}?", "id": f"u{i}"})
        lines.append({"role": "assistant", "id": f"a{i}", "content": (
            f"For {thing} bring sturdy shoes, a light jacket and water; the forecast for "
            f"{PLACES[i % len(PLACES)]} says mild weather. " * 3)})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_questions_asked_in_captured_conversations_expect_the_answers_memories(tmp_path, hash_embedder):
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=Clock()) as brain:
        path = transcript(tmp_path / "chat.jsonl", 8)
        run_capture(brain, paths=[path], format="jsonl",
                    settings=CaptureSettings(settle_seconds=0, chunk_tokens=40, overlap_tokens=0))
        with path.open("a", encoding="utf-8") as f:  # an answer a commit trigger keeps in core
            f.write(json.dumps({"role": "user", "id": "u-db",
                                "content": "Which database should we use for the billing ledger service?"}) + "\n")
            f.write(json.dumps({"role": "assistant", "id": "a-db", "content": (
                "We decided to use PostgreSQL for the billing ledger, because it handles the transactions "
                "well. " * 3)}) + "\n")
        run_capture(brain, paths=[path], format="jsonl",
                    settings=CaptureSettings(settle_seconds=0, chunk_tokens=40, overlap_tokens=0))
        questions = {q.query: q for q in asked_questions(brain)}
        assert len(questions) == 9
        ledger = questions.pop("Which database should we use for the billing ledger service?")
        assert {brain.get(i).category for i in ledger.gold} == {"conversation", "core"}
        for q in questions.values():
            assert q.gold, q
            for memory_id in q.gold:
                content = brain.get(memory_id).content
                assert "sturdy shoes" in content and q.query not in content


def test_benchmark_deduplicates_caps_and_splits_the_same_way_every_time(brain):
    # The same questions in another conversation, in other case and spacing, other replies.
    again = [{**item, "session_id": "chat-2", "content": item["content"] + " Truly." if "Ben:" in item["content"]
              else item["content"].replace("How did", "how  did")} for item in conversation(30)]
    brain.remember_many(conversation(30) + again, near=False)  # every question twice
    questions = benchmark(brain)
    assert len(questions) == 30
    assert all(len(q.gold) == 2 for q in questions)  # both replies expected
    assert len(benchmark(brain, cap=7)) == 7
    first, second = split(questions), split(list(reversed(questions)))
    assert {q.query for q in first[0]} == {q.query for q in second[0]}
    assert first[0] and first[1] and not {q.query for q in first[0]} & {q.query for q in first[1]}


def test_scores_count_ranks_and_the_gate():
    q = Question("where?", frozenset({5}))
    rows = per_question([q, q], [Outcome((1, 5, 9), 0.2), gated(Outcome((5,), 0.01), 0.05)])
    assert rows[0].tolist() == [0.0, 1.0, 1.0, 0.5, 0.0]
    assert rows[1].tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]  # the gate hid it: nothing found


def test_model_written_questions_through_an_openai_compatible_server(brain):
    import openai
    from chat_server import ChatServer

    brain.remember_many([{"content": "The office wifi password rotates every first Monday.",
                          "category": "project"},
                         {"content": "Dentist appointment moved to the 14th of March at nine.",
                          "category": "daily"}], near=False)
    questions = {"wifi": "How often does the wifi password at the office change?",
                 "Dentist": "The Dentist appointment moved to the 14th of March at nine."}  # quotes: dropped

    def reply(body: dict) -> str:
        note = body["messages"][-1]["content"]
        return next(v for k, v in questions.items() if k in note)

    with ChatServer(reply) as server:
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="sk-test", max_retries=0)
        found = model_questions(brain, client, "tiny-chat", count=5)
    assert [q.query for q in found] == [questions["wifi"]]
    assert brain.get(min(found[0].gold)).content.startswith("The office wifi")
    assert all(r.body["model"] == "tiny-chat" for r in server.requests)


# -- tuning --------------------------------------------------------------------------------

@pytest.fixture
def hash_chat_brain(brain) -> Brain:
    """The chat of `conversation()` with the unit tests' bag-of-words vectors (the CLI
    tests below run the real model)."""
    brain.remember_many(conversation(), near=False)
    return brain


def test_tune_measures_before_and_after_on_the_held_out_half(hash_chat_brain):
    result = tune(hash_chat_brain)
    assert result.questions == 30 and result.tuning + result.held_out == 30
    assert result.before == Settings.of(Config())
    assert result.scores_before.n == result.held_out
    assert 0.0 <= result.scores_before.r1 <= result.scores_before.r5 <= result.scores_before.r10 <= 1.0
    assert result.after in (result.before, result.best)
    if result.changed:
        assert result.difference > 2 * result.noise
    data = result.to_dict()
    assert set(data["scores"]["before"]) == {"n", "r1", "r5", "r10", "mrr", "nothing"}


def test_a_change_within_the_noise_is_not_kept(hash_chat_brain, monkeypatch):
    import maxmem.tune as tune_module

    monkeypatch.setattr(tune_module, "NOISE_SE", 1e9)  # no difference can beat this noise
    result = tune(hash_chat_brain)
    assert result.after == result.before and not result.changed


@pytest.mark.parametrize("decoys_dated, recency_found", [("2025-01-01T10:00:00Z", True),
                                                          ("2026-11-01T10:00:00Z", False)])
def test_tune_finds_recency_when_the_answers_are_the_newer_of_near_copies(tmp_path, hash_embedder, decoys_dated,
                                                                          recency_found):
    """Each reply has an older near copy elsewhere (only a number differs): no weight or
    pool tells them apart, recency does; with every memory of one date it cannot."""
    items = [{**item, "created_at": "2026-11-01T10:00:00Z"} for item in conversation()]
    decoys = [{"content": f"The {thing} teacher in {PLACES[i % len(PLACES)]} was patient, I finally got the "
                          f"basics right after {i + 40} weeks.", "category": "project", "created_at": decoys_dated}
              for i, thing in enumerate(THINGS)]
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder) as brain:
        brain.remember_many(items + decoys, near=False)
        result = tune(brain)
    assert (result.best.recency_weight > 0) == recency_found, result.best
    assert set(result.kept) <= set(result.best.differing(result.before))
    assert result.to_dict()["kept"] == result.kept


# -- bad input -----------------------------------------------------------------------------

def bad_brain(path: Path, kind: str, embedder) -> None:
    with Brain.open(path, embedder=embedder) as brain:
        if kind == "one memory":
            brain.remember("The boiler was serviced in October.")
        elif kind == "all pending":
            brain.remember_many(conversation(), embed=False, near=False)
        elif kind == "nothing to learn":
            brain.remember_many([{"content": f"Note {i}: the plant on shelf {i} needs water."} for i in range(30)],
                                near=False)


BAD_BRAINS = [
    ("empty", "holds no memories: nothing to tune"),
    ("one memory", "holds one memory: nothing to tune"),
    ("all pending", "all 60 memories are waiting for a vector: run  maxmem embed  first"),
    ("nothing to learn", "nothing to learn from: 0 questions with a known answer"),
]


@pytest.mark.parametrize("kind, message", BAD_BRAINS)
def test_a_brain_tune_cannot_learn_from_is_one_line_and_changes_nothing(tmp_path, local_embedder, maxmem_home,
                                                                          capsys, kind, message):
    path = tmp_path / "bad.db"
    bad_brain(path, kind, local_embedder)
    with Brain.open(path, embedder=local_embedder) as brain:  # the Python API
        with pytest.raises(NothingToLearn, match=re.escape(message)) as err:
            tune(brain)
        assert "\n" not in str(err.value)
    config = maxmem_home / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(CONFIG, encoding="utf-8")
    code, out, err_text = run_cli(["--db", str(path), "--embedder", "local", "tune", "--apply"], capsys)
    assert code == 1 and len(err_text.strip().splitlines()) == 1, err_text
    assert " ".join(message.split()) in err_text  # (the CLI prints runs of spaces as one)
    assert config.read_text(encoding="utf-8") == CONFIG
    assert not (maxmem_home / "tune-previous.json").exists()


def test_a_brain_built_by_another_model_is_refused_by_the_python_api(tmp_path, hash_embedder, local_embedder):
    path = tmp_path / "other.db"
    with Brain.open(path, embedder=hash_embedder) as brain:
        brain.remember_many(conversation(), near=False)
    with pytest.raises(DatabaseError, match="holds vectors from test:hash-bow.*run  maxmem reindex") as err:
        Brain.open(path, embedder=local_embedder)
    assert "\n" not in str(err.value)


def test_cli_refuses_a_brain_built_by_another_model_and_changes_nothing(tmp_path, hash_embedder, capsys,
                                                                        maxmem_home):
    path = tmp_path / "other.db"
    with Brain.open(path, embedder=hash_embedder) as brain:
        brain.remember_many(conversation(), near=False)
    config = maxmem_home / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("# mine\nvector_weight = 0.7\n", encoding="utf-8")
    code, out, err = run_cli(["--db", str(path), "--embedder", "local", "tune", "--apply"], capsys)
    assert code == 1 and "holds vectors from test:hash-bow" in err and len(err.strip().splitlines()) == 1
    assert config.read_text(encoding="utf-8") == "# mine\nvector_weight = 0.7\n"


# -- the config file -----------------------------------------------------------------------

CONFIG = """# my settings
embedder = "local"  # offline
min_relevance = 0.05

[retention]
# a month is plenty
conversation = "30d"
"""


def test_apply_keeps_comments_and_revert_takes_it_back(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    before = Settings.of(Config())
    write_settings(config, Settings(0.5, 0.5, 0.02, candidates=100, recency_weight=0.05), before)
    text = config.read_text(encoding="utf-8")
    assert "# my settings" in text and "# offline" in text and "# a month is plenty" in text
    import tomllib

    data = tomllib.loads(text)
    assert (data["vector_weight"], data["keyword_weight"], data["min_relevance"]) == (0.5, 0.5, 0.02)
    assert data["search"] == {"candidates": 100, "recency_weight": 0.05}  # only what changed
    assert data["retention"] == {"conversation": "30d"}  # the new keys went above the table
    loaded = load_config(env={}, path=config)  # what it wrote is read back as written
    assert Settings.of(loaded) == Settings(0.5, 0.5, 0.02, candidates=100, recency_weight=0.05)
    done = revert_settings(config)
    assert done["restored"] == {"vector_weight": None, "keyword_weight": None, "min_relevance": 0.05,
                                "search.candidates": None, "search.recency_weight": None}
    assert tomllib.loads(config.read_text(encoding="utf-8")) == tomllib.loads(CONFIG)
    with pytest.raises(Exception, match="nothing to revert"):
        revert_settings(config)


def test_apply_and_revert_write_through_a_symlinked_config_and_refuse_a_read_only_one(tmp_path):
    import tomllib

    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    kept = dotfiles / "maxmem.toml"
    kept.write_text(CONFIG, encoding="utf-8")
    config = tmp_path / "config.toml"
    config.symlink_to(kept)
    before = Settings.of(Config())
    write_settings(config, Settings(0.5, 0.5, 0.02, candidates=100, recency_weight=0.05), before)
    assert config.is_symlink() and "candidates = 100" in kept.read_text(encoding="utf-8")
    revert_settings(config)
    assert config.is_symlink() and tomllib.loads(kept.read_text(encoding="utf-8")) == tomllib.loads(CONFIG)

    kept.write_text(CONFIG, encoding="utf-8")
    kept.chmod(0o444)
    with pytest.raises(InvalidInput, match="read-only"):
        write_settings(config, Settings(0.5, 0.5, 0.02, candidates=100, recency_weight=0.05), before)
    assert kept.read_text(encoding="utf-8") == CONFIG and kept.stat().st_mode & 0o777 == 0o444


def test_apply_and_revert_set_an_inline_table_in_place(tmp_path):
    import tomllib

    config = tmp_path / "config.toml"
    written = 'search = { candidates = 50, recency_weight = 0.0 }  # inline\n'
    config.write_text(written, encoding="utf-8")
    before = Settings.of(load_config(env={}, path=config))
    write_settings(config, replace(before, candidates=100, recency_weight=0.05), before)
    assert tomllib.loads(config.read_text(encoding="utf-8")) == {"search": {"candidates": 100, "recency_weight": 0.05}}
    assert Settings.of(load_config(env={}, path=config)).candidates == 100
    revert_settings(config)
    assert tomllib.loads(config.read_text(encoding="utf-8")) == tomllib.loads(written)


@pytest.mark.parametrize("saved", ['{"search.candidates": "lots"}', '{"vector_weight": [1, {"a": null}]}',
                                   '{"min_relevance": true}', '{"keyword_weight": NaN}'])
def test_revert_refuses_saved_values_apply_never_writes(tmp_path, saved):
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    (tmp_path / "tune-previous.json").write_text(saved, encoding="utf-8")
    with pytest.raises(InvalidInput, match="is not what maxmem tune --apply wrote"):
        revert_settings(config)
    assert config.read_text(encoding="utf-8") == CONFIG


def test_cli_tune_json_apply_and_revert(chat_brain, capsys, maxmem_home, monkeypatch):
    import maxmem.tune as tune_module

    monkeypatch.setattr(tune_module, "NOISE_SE", 0.0)  # keep any gain, so that --apply writes
    config = maxmem_home / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(CONFIG, encoding="utf-8")
    code, out, err = run_cli(["--db", str(chat_brain.path), "--embedder", "local", "tune", "--json",
                              "--apply"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["questions"] == 30 and set(data["scores"]) == {"before", "best"}
    if data["changed"]:
        assert data["applied"]["written"] == data["after"]
        assert "# a month is plenty" in config.read_text(encoding="utf-8")
        code, out, err = run_cli(["tune", "--revert"], capsys)
        assert code == 0, err
    assert config.read_text(encoding="utf-8") == CONFIG


def test_cli_asks_a_model_and_says_one_line_when_it_cannot(chat_brain, capsys, maxmem_home, monkeypatch):
    import socket
    import zlib

    from chat_server import ChatServer

    args = ["--db", str(chat_brain.path), "--embedder", "local", "tune", "--json", "--ask-model", "tiny-chat",
            "--model-questions", "3"]

    def reply(body: dict) -> str:  # one question per note, none quoting it
        return f"Which of my notes is number {zlib.crc32(body['messages'][-1]['content'].encode())}?"

    with ChatServer(reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        code, out, err = run_cli(args, capsys)
        assert code == 0, err
        assert len(server.model_requests()) == 3
        assert json.loads(out)["sources"].get("model") == 3
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    code, out, err = run_cli(args, capsys)
    assert code == 1 and out == "", err
    assert err.startswith(f"maxmem: error: could not ask tiny-chat at http://127.0.0.1:{port}/v1 "), err
    assert err.count("\n") == 1 and "Traceback" not in err and "nothing was tuned" in err


def test_tune_killed_midway_leaves_the_config_as_it_was(chat_brain, maxmem_home):
    config = maxmem_home / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(CONFIG, encoding="utf-8")
    env = {**os.environ, "MAXMEM_HOME": str(maxmem_home)}
    proc = subprocess.Popen([sys.executable, "-m", "maxmem", "--db", str(chat_brain.path), "--embedder", "local",
                             "tune", "--apply"], env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert proc.stderr is not None
    for _ in range(2):
        line = proc.stderr.readline().decode()
    assert line.startswith("tune: weights 1/"), line  # it is tuning: now kill it
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert config.read_text(encoding="utf-8") == CONFIG
    assert not (maxmem_home / "tune-previous.json").exists()
    assert [p.name for p in maxmem_home.iterdir() if p.name.startswith(".")] == []  # no half-written file
    # A later run works, on the brain and the config the killed one left.
    done = subprocess.run([sys.executable, "-m", "maxmem", "--db", str(chat_brain.path), "--embedder", "local",
                           "tune", "--json"], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["questions"] == 30
    assert config.read_text(encoding="utf-8") == CONFIG  # (no --apply: nothing written)


# -- doctor's check ------------------------------------------------------------------------

def test_doctor_records_a_quick_run_once_a_day(hash_chat_brain):
    first = record_check(hash_chat_brain)
    assert first is not None and first["n"] == 30 and 0 <= first["r10"] <= 1
    assert record_check(hash_chat_brain) is None  # not again the same day
    check = recall_check(hash_chat_brain)
    assert check["level"] == "ok" and "R@10" in check["detail"]


def test_doctor_warns_when_recall_fell_by_more_than_the_noise(brain):
    def run(at: str, value: float) -> dict:
        return {"at": at, "n": 100, "r10": value, "mrr": value, "score": value, "se": 0.02}

    assert fallen([run("2026-11-01T00:00:00Z", 0.60), run("2026-11-02T00:00:00Z", 0.58)]) is None
    assert fallen([run("2026-11-01T00:00:00Z", 0.60), run("2026-11-02T00:00:00Z", 0.40)])
    brain.db.set_meta(CHECK_META, json.dumps([run("2026-11-29T13:00:00Z", 0.60),
                                              run("2026-11-30T11:00:00Z", 0.40)]))
    check = recall_check(brain)
    assert check["level"] == "warn" and "fell 20.0 points since 2026-11-29" in check["detail"]


def test_doctor_says_not_measured_on_a_brain_without_questions(brain):
    brain.remember("A single note.")
    check = recall_check(brain)
    assert check["ok"] and "not measured yet" in check["detail"]
    assert brain.db.get_meta(CHECK_META) is None


def test_doctor_report_carries_the_check(tmp_path, local_embedder, monkeypatch):
    import maxmem.tune as tune_module
    from maxmem.doctor import run_checks

    # The real model can be slow on a busy machine: a bound that cannot cut this short.
    monkeypatch.setattr(tune_module, "CHECK_QUESTIONS", 20)
    monkeypatch.setattr(tune_module, "CHECK_SECONDS", 3600.0)
    path = tmp_path / "doctor.db"
    with Brain.open(path, embedder=local_embedder) as brain:
        brain.remember_many(conversation(20), near=False)
    report = run_checks(Config(db_path=path, embedder="local"))
    names = [c["name"] for c in report["checks"]]
    assert "own recall" in names
    with Brain.open(path, embedder="local") as again:
        assert json.loads(again.db.get_meta(CHECK_META) or "[]")


def test_a_quick_run_with_no_time_left_measures_nothing(hash_chat_brain):
    from maxmem.tune import measure

    assert measure(hash_chat_brain, count=30, max_seconds=0.0) is None  # too few measured to say anything
