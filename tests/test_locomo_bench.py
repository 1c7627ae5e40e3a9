"""bench/locomo.py on a tiny made-up conversation in LoCoMo's shape, and on LoCoMo-10
itself when MAXMEM_LOCOMO names its locomo10.json (it is not shipped with maxmem)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import locomo  # noqa: E402
import locomo_sample  # noqa: E402


def sample(sample_id: str) -> dict:
    data = locomo_sample.sample(sample_id, [
        {"question": "What is the name of Ada's cat?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
        {"question": "When did Ben start rowing?", "answer": "June 2023", "evidence": ["D2:01"], "category": 2},
        {"question": "What pets and hobbies do Ada and Ben have?", "answer": "cat, rowing",
         "evidence": ["D1:1; D2:1"], "category": 1},
        {"question": "Where does the cat sleep?", "answer": "garden", "evidence": ["D:1:3"], "category": 3},
        {"question": "What did Ada say about skiing?", "adversarial_answer": "nothing",
         "evidence": ["D2:2"], "category": 5},
        {"question": "Unanswerable", "answer": "-", "evidence": ["D9:9", "D"], "category": 4},
    ])
    data.update(observation={}, session_summary={}, event_summary={})
    data["conversation"]["session_1"][2]["blip_caption"] = "a cat asleep under tomato plants"
    data["conversation"]["session_3_date_time"] = "9:00 am on 1 July, 2023"  # a date with no session behind it
    return data


def test_evidence_ids_are_normalised():
    valid = {"D8:6", "D9:17", "D30:5", "D11:26"}
    assert locomo.evidence(["D8:6; D9:17", "D30:05", "D:11:26", "D", "D99:1", "D8:6"], valid) == \
        ["D8:6", "D9:17", "D30:5", "D11:26"]


def test_a_memory_with_several_turns_expands_in_place_and_is_cut_at_k():
    def hit(**meta):
        return SimpleNamespace(memory=SimpleNamespace(metadata=meta))
    hits = [hit(dia_id="D1:1"), hit(dia_ids=["D1:2", "D1:1", "D1:3"]), hit(dia_id="D2:1")]
    assert locomo.hit_ids(hits, 3) == ["D1:1", "D1:2", "D1:3"]
    assert locomo.recall_row(["D1:1", "D1:2"], ["D1:2", "D5:5"]) == (0.5, 0.5, 0.5)


def test_load_follows_the_protocol(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([sample("conv-26")]))
    conv = locomo.load(path)[0]
    assert [i["metadata"]["dia_id"] for i in conv.items] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    third = conv.items[2]
    assert third["content"] == ("Ada: She sleeps under the tomato plants all day. "
                                "[shares a cat asleep under tomato plants]")
    assert third["created_at"] == "2023-05-08T13:56:00.000Z" and third["category"] == "conversation"
    assert third["metadata"] == {"dia_id": "D1:3", "session": 1} and third["session_id"] == "conv-26/session_1"
    assert [q.gold for q in conv.questions] == [["D1:1"], ["D2:1"], ["D1:1", "D2:1"], ["D1:3"], ["D2:2"]]
    with pytest.raises(SystemExit, match="no conversation conv-99"):
        locomo.load(path, ["conv-99"])


def test_the_benchmark_runs_end_to_end_through_brain(tmp_path, capsys):
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([sample("conv-26"), sample("conv-77")]))
    out, cache = tmp_path / "result.json", tmp_path / "cache.sqlite"
    assert locomo.main(["--data", str(data), "--json", str(out), "--cache", str(cache)]) == 0
    printed = capsys.readouterr().out
    for words in ("multi-hop", "temporal", "open-domain", "single-hop", "adversarial", "DRAGON",
                  "tuning pair", "the other eight", "query time, hybrid"):
        assert words in printed
    result = json.loads(out.read_text())
    assert result["memories"] == 10 and result["questions"] == 10
    assert set(result["results"]) == {"hybrid", "keyword", "vector", "gated"}
    assert "gated: the hybrid search through the brain's relevance gate" in printed
    for mode, groups in result["results"].items():
        assert groups["tuning"]["overall"]["n"] == 4 and groups["all"]["overall"]["n"] == 8
        assert groups["all"]["adversarial"]["n"] == 2
        # five memories per brain: everything is within the top 10, but what the gate cuts
        if mode != "gated":
            assert groups["all"]["overall"]["r10"] == 100.0
    assert 0 < result["results"]["gated"]["all"]["overall"]["r10"] <= 100.0
    assert result["embedded_this_run"] > 0
    # a second run embeds nothing: every text is in the cache
    assert locomo.main(["--data", str(data), "--json", str(out), "--cache", str(cache),
                        "--convs", "conv-77", "--modes", "hybrid"]) == 0
    again = json.loads(out.read_text())
    assert again["embedded_this_run"] == 0 and again["conversations"] == ["conv-77"]
    assert list(again["results"]) == ["hybrid", "gated"]
    assert "tuning pair" not in capsys.readouterr().out


def test_a_missing_data_file_is_a_one_line_error(tmp_path):
    with pytest.raises(SystemExit, match=r"--data .*nothing.json: no such file .*snap-research/LoCoMo"):
        locomo.load(tmp_path / "nothing.json")


def test_locomo10_itself_loads_as_the_benchmarks_count_it():
    """The figures in docs/benchmarks.md count 5,882 memories and 1,982 questions with
    evidence (1,536 of categories 1-4) in ten conversations."""
    path = os.environ.get("MAXMEM_LOCOMO")
    if not path:
        pytest.skip("MAXMEM_LOCOMO is not set (the path of LoCoMo-10's locomo10.json)")
    conversations = locomo.load(Path(path))
    assert len(conversations) == 10
    assert sum(len(c.items) for c in conversations) == 5882
    assert sum(len(c.questions) for c in conversations) == 1982
    assert sum(q.category in (1, 2, 3, 4) for c in conversations for q in c.questions) == 1536
