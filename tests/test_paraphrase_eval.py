"""bench/paraphrase_eval.py: its set's shared-word check, the split, the filler, the brains it plans."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import paraphrase_eval as pe  # noqa: E402


def test_the_repository_set_passes_its_own_check():
    pairs = pe.load_set()
    assert len(pairs) >= 200 and pe.check_set(pairs) == []
    domains = Counter(p.domain for p in pairs)
    assert len(domains) >= 5 and min(domains.values()) >= 20
    held = [p for p in pairs if pe.held_out(p.id)]
    assert 0.4 < len(held) / len(pairs) < 0.6
    assert {p.domain for p in held} == set(domains)  # both halves cover every domain


def test_the_check_fails_on_a_shared_word_whatever_its_ending():
    stems = pe.content_words("The smart-home gadgets were stored upstairs")
    assert {"smart", "hom", "gadget", "stor", "upstair"} <= stems and "the" not in stems
    assert pe.stem("planned") == pe.stem("plan") and pe.stem("batteries") == pe.stem("battery")
    for question in ("where is my gadget?", "storing the smart plugs", "which HOMES", "a store"):
        pair = pe.Pair("x-01", "home", "The smart-home gadgets were stored upstairs", question)
        assert pe.check_set([pair]), question
    fine = pe.Pair("x-02", "home", "IoT devices live on VLAN 20; the NAS sits on VLAN 10.",
                   "network layout for the smart home gadgets")
    assert pe.shared_words(fine) == set() and pe.check_set([fine]) == []
    assert pe.check_set([fine, fine]) == ["x-02: used twice"]


def test_a_set_that_fails_the_check_stops_the_run(tmp_path, capsys):
    bad = tmp_path / "set.jsonl"
    bad.write_text(json.dumps({"id": "a-01", "domain": "home", "memory": "The boiler is serviced in March",
                               "question": "when is the boiler checked?"}) + "\n")
    assert pe.main(["--set", str(bad), "--sizes", "5"]) == 1
    assert "a-01: shares boiler" in capsys.readouterr().err


def test_a_record_that_is_not_one_is_named_by_line(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text('{"id": "a", "domain": "home", "memory": "m", "question": "q"}\n{"id": "b"}\n')
    with pytest.raises(SystemExit, match="set.jsonl:2: not a paraphrase record"):
        pe.load_set(path)


def test_filler_is_different_every_time_and_the_same_every_run():
    pool = pe.filler(10_000)
    assert len(pool) == len(set(pool)) == 10_000 and pool == pe.filler(10_000)
    assert not any("{" in text for text in pool)
    # a template naming a slot twice gets two different values
    spec = {"slots": {"who": ["Ada", "Ben"]}, "templates": ["{who} called {who}."]}
    assert sorted(pe.filler(2, spec)) == ["Ada called Ben.", "Ben called Ada."]
    with pytest.raises(SystemExit, match="fewer than 3 different memories"):
        pe.filler(3, spec)


def test_every_brain_has_its_size_and_every_pair_one_brain_a_size():
    pairs = pe.load_set()
    pool = pe.filler(9_999)
    plans = list(pe.plans(pairs, (5, 50, 500), pool))
    for size in (5, 50, 500):
        mine = [p for p in plans if p.size == size]
        assert all(len(p.pairs) + len(p.filler) == size for p in mine)
        held = Counter(pair.id for p in mine for pair in p.pairs)
        assert set(held) == {p.id for p in pairs} and set(held.values()) == {1}
        assert all(len(p.pairs) <= max(1, size // 2) for p in mine)
    assert len({p.pairs[0].domain for p in plans if p.size == 5}) > 1  # the domains are mixed
    with pytest.raises(SystemExit, match="needs 49 filler"):
        list(pe.plans(pairs[:1], (50,), pool[:10]))


def test_summary_counts_the_ranking_and_the_gate_per_size_for_one_half():
    asked = [pe.Asked("a", 5, "paraphrase", True, rank=1, kept=True),
             pe.Asked("b", 5, "paraphrase", True, rank=7, kept=False),
             pe.Asked("c", 5, "paraphrase", True, rank=None),
             pe.Asked("d", 50, "paraphrase", True, rank=2, kept=True),
             pe.Asked("e", 50, "paraphrase", False, rank=None),  # dev: not counted
             pe.Asked("u", 5, "unrelated", True, kept=False)]
    got = pe.summarise(asked)
    assert got["5"]["questions"] == 3 and got["5"]["top3"] == pytest.approx(100 / 3)
    assert got["5"]["top10"] == pytest.approx(200 / 3)
    assert got["5"]["kept_top3"] == 100.0 and got["5"]["kept_top10"] == 50.0 and got["5"]["lost"] == ["b"]
    assert got["5"]["unrelated_cut"] == 100.0 and got["50"]["unrelated"] == 0
    assert got["pooled"]["questions"] == 4 and got["pooled"]["kept_top10"] == pytest.approx(200 / 3)
    assert pe.summarise(asked, held=False)["pooled"]["questions"] == 1
