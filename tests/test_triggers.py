"""Trigger detection: the labelled set's precision/recall floors, guards, config."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from maxmem.errors import ConfigError
from maxmem.settings import TriggerSettings
from maxmem.triggers.detect import classify, detect, detect_triggers, mask, sentences
from maxmem.triggers.rules import TRIGGERS, load_rules

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "tests" / "data" / "triggers_labelled.jsonl"


def rules_from(table):
    """The rules of a [triggers] table, read as load_config reads it."""
    return load_rules(TriggerSettings.from_table(table))


def _bench():
    spec = importlib.util.spec_from_file_location("triggers_eval", ROOT / "bench" / "triggers_eval.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return _bench()


@pytest.fixture(scope="module")
def items(bench):
    return bench.load(LABELLED)


def test_labelled_set_is_large_and_balanced(items):
    assert len(items) >= 150
    for split in ("dev", "heldout"):
        part = [i for i in items if i["split"] == split]
        for trigger in TRIGGERS:
            assert sum(i["label"] == trigger for i in part) >= 10, (split, trigger)
        assert sum(i["label"] == "none" for i in part) >= 60, split
    assert len({i["text"] for i in items}) == len(items)
    assert {i["label"] for i in items} <= {*TRIGGERS, "none"}


# Floors are what was measured (bench/triggers_eval.py), rounded down a little so an
# honest small change does not break CI while a real regression does. The held-out
# split (145 sentences) was written after the rules and never tuned on: measured
# precision 0.953 and recall 0.884 overall; per trigger precision 0.889-1.000, recall
# 0.727-1.000. (An earlier held-out split whose errors were read is now part of dev.)
DEV_FLOORS = {"precision": 0.97, "recall": 0.97}
HELDOUT_FLOORS = {"precision": 0.93, "recall": 0.85}
HELDOUT_TRIGGER_FLOORS = {"precision": 0.85, "recall": 0.7}


def test_precision_and_recall_floors(bench, items):
    dev = bench.evaluate([i for i in items if i["split"] == "dev"])
    held = bench.evaluate([i for i in items if i["split"] == "heldout"])
    print()
    print(bench.table(dev, "dev"))
    print(bench.table(held, "heldout"))
    for key, floor in DEV_FLOORS.items():
        assert dev["rows"]["overall"][key] >= floor, (key, dev["rows"]["overall"])
    for key, floor in HELDOUT_FLOORS.items():
        assert held["rows"]["overall"][key] >= floor, (key, held["rows"]["overall"])
    for trigger in TRIGGERS:
        for key, floor in HELDOUT_TRIGGER_FLOORS.items():
            assert held["rows"][trigger][key] >= floor, (trigger, key, held["rows"][trigger])


@pytest.mark.parametrize(
    "text, trigger",
    [
        ("We decided to use PostgreSQL because we need JSONB.", "decision"),
        ("v1.4.0 is released and live on PyPI.", "milestone"),
        ("I prefer tabs over spaces.", "preference"),
        ("The deploy failed because the migration locked the table.", "failure"),
        ("Lesson learned: snapshot the database before migrating.", "lesson"),
        ("Remember that my passport expires in March.", "remember"),
    ],
)
def test_each_trigger_fires(text, trigger):
    assert classify(text)[0][0] == trigger


@pytest.mark.parametrize(
    "text",
    [
        "Should we decide on the database today?",
        "If we decide to use Kafka, we need more people.",
        "Maybe we decided too fast.",
        "My sister decided to move to Lisbon.",
        'He wrote: "We decided to use Postgres."',
        "> We decided to use Postgres.",
        "```\nwe decided to use postgres\n```",
        "Run `echo we decided to use postgres` now.",
        "According to the blog, they decided to drop Python 2.",
    ],
)
def test_guards_stop_chatter(text):
    assert classify(text) == []


def test_mask_keeps_length_and_blanks_code_and_quotes():
    text = 'Say "hi there" and run `rm -rf x`.\n```\ncode here\n```\nDone.'
    masked = mask(text)
    assert len(masked) == len(text)
    assert "hi there" not in masked and "rm -rf" not in masked and "code here" not in masked
    assert masked.count("\n") == text.count("\n")


def test_sentences_split_and_keep_original_text():
    parts = sentences("We shipped v2.0 today! Next time, I'll test on staging first.\n- Decision: use UUIDv7")
    assert [p[0] for p in parts] == [
        "We shipped v2.0 today!",
        "Next time, I'll test on staging first.",
        "Decision: use UUIDv7",
    ]


def test_roles_only_user_and_assistant_and_role_rules():
    turns = [
        {"id": 1, "role": "tool", "content": "We decided to use Postgres."},
        {"id": 2, "role": "system", "content": "Remember that you are helpful."},
        {"id": 3, "role": "assistant", "content": "Remember that my passport expires in March."},
        {"id": 4, "role": "user", "content": "Thanks. Remember that my passport expires in March.", "session_id": "s1"},
    ]
    found = detect_triggers(turns)
    assert [(d.trigger, d.source_turns, d.session_id) for d in found] == [("remember", (4,), "s1")]
    assert found[0].text == "Remember that my passport expires in March."
    assert found[0].turn_index == 3


def test_detect_accepts_objects_and_extends_bare_labels_with_context():
    class Turn:
        role = "user"
        content = "What broke: the nightly export. Why: the disk was full. Fix: log rotation."
        id = "t-9"

    [found] = detect_triggers([Turn()])
    assert found.trigger == "failure" and found.source_turns == ("t-9",)
    assert found.context.startswith("What broke: the nightly export. Why: the disk was full.")


def test_detect_on_empty_and_odd_input():
    assert detect("") == []
    assert detect_triggers([{"role": "user", "content": None}, {"role": "user", "content": ["blocks"]}]) == []
    assert classify("ok") == []
    assert classify("We decided " + "very " * 100 + "much.") == []  # a wall of text is not a sentence


def test_config_extends_excludes_and_replaces():
    extra = rules_from({"decision": {"patterns": [r"\bwe locked in\b"]}})
    assert classify("We locked in the vendor for 2027.", rules=extra)[0] == ("decision", "config-1")

    excluded = rules_from({"decision": {"exclude": [r"\bpizza\b"]}})
    assert classify("We decided to order pizza for the team offsite.", rules=excluded) == []

    replaced = rules_from({"decision": {"replace": True, "patterns": [r"\bbeschlossen\b"]}})
    assert classify("We decided to use Go.", rules=replaced) == []
    assert classify("Wir haben beschlossen, Go zu verwenden.", rules=replaced)[0][0] == "decision"

    only = rules_from({"enabled": ["failure"]})
    assert classify("We decided to use Go.", rules=only) == []

    guarded = rules_from({"guards": [r"\bjust kidding\b"]})
    assert classify("We decided to use Go, just kidding.", rules=guarded) == []

    assistant_prefs = rules_from({"preference": {"roles": ["assistant", "user"]}})
    assert classify("I prefer short answers.", role="assistant", rules=assistant_prefs)[0][0] == "preference"
    assert classify("I prefer short answers.", role="assistant") == []


@pytest.mark.parametrize(
    "section, fragment",
    [
        ({"decision": {"patterns": ["(unclosed"]}}, "invalid regular expression"),
        ({"decision": {"patterns": "not a list"}}, "list of strings"),
        ({"enabled": ["gossip"]}, "unknown trigger"),
        ({"nonsense": 1}, "unknown setting"),
        ({"decision": {"weight": 2}}, "unknown setting"),
        ({"decision": {"roles": ["tool"]}}, "not one of user, assistant"),
        ({"min_words": "few"}, "[triggers] min_words = 'few' must be a whole number"),
        ({"decision": "yes"}, "must be a table"),
    ],
)
def test_bad_config_is_one_line_config_error(section, fragment):
    with pytest.raises(ConfigError) as err:
        rules_from(section)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_labelled_file_is_valid_jsonl():
    for line in LABELLED.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        assert record["split"] in ("dev", "heldout")
        assert record["role"] in ("user", "assistant")
