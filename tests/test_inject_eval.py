"""bench/inject_eval.py: its pure functions, and one run on a tiny made-up conversation
in LoCoMo's shape. The checks on LoCoMo itself run when MAXMEM_LOCOMO names locomo10.json."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import inject_eval  # noqa: E402
import locomo  # noqa: E402
import relevance_eval  # noqa: E402
from locomo_sample import sample  # noqa: E402

from maxmem import Brain  # noqa: E402
from maxmem.memory import Memory  # noqa: E402

LOCOMO = os.environ.get("MAXMEM_LOCOMO")
needs_locomo = pytest.mark.skipif(not LOCOMO or not Path(LOCOMO).is_file(),
                                  reason="set MAXMEM_LOCOMO to the path of LoCoMo's locomo10.json")


def memory(number: int, **metadata: object) -> Memory:
    return Memory(id=number, uid=f"uid-{number}", category="conversation", kind="note", title=None,
                  content=f"turn {number}", tags=[], importance=0.5, status="active", started_at=None,
                  resolved_at=None, source="test", agent=None, session_id=None, metadata=dict(metadata),
                  content_hash=f"h{number}", pinned=False, superseded_by=None,
                  created_at="2023-05-08T13:56:00.000Z", updated_at="2023-05-08T13:56:00.000Z")


# -- evidence matching ---------------------------------------------------------------

def test_turn_ids_expand_memories_of_several_turns_in_order_once_each():
    shown = [memory(1, dia_id="D1:3"), memory(2, dia_ids=["D2:1", "D1:3", "D2:2"]), memory(3)]
    assert inject_eval.turn_ids(shown) == ["D1:3", "D2:1", "D2:2"]
    assert inject_eval.turn_ids([]) == []


def test_evidence_shown_tells_any_from_all():
    assert inject_eval.evidence_shown(["D1:1", "D4:2"], ["D4:2", "D9:9"]) == (True, False)
    assert inject_eval.evidence_shown(["D4:2", "D9:9", "D1:1"], ["D9:9", "D4:2"]) == (True, True)
    assert inject_eval.evidence_shown(["D1:1"], ["D4:2"]) == (False, False)
    assert inject_eval.evidence_shown([], ["D4:2"]) == (False, False)
    assert inject_eval.evidence_shown(["D4:2"], []) == (False, False)  # no evidence is never "all of it"


def test_whole_tells_a_memory_shown_in_full_from_one_cut_to_fit():
    full, cut = memory(1), memory(2)
    full.content, cut.content = "Ada: I adopted a grey\n cat called Pixel.", "Ben: I started rowing on Saturdays."
    block = "notes\n```\n- [#1] Ada: I adopted a grey cat called Pixel.\n- [#2] Ben: I started rowing on…\n```"
    assert inject_eval.whole([full, cut], block) == [full]
    assert inject_eval.whole([full], "") == []


# -- token figures -------------------------------------------------------------------

def test_token_stats_count_every_prompt_nearest_rank_p95():
    tokens = [0] * 10 + list(range(1, 91))  # 100 prompts: ten inject nothing
    stats = inject_eval.token_stats(tokens)
    assert stats == {"mean": sum(range(1, 91)) / 100, "p95": 85.0, "max": 90.0}
    assert inject_eval.token_stats([]) == {"mean": 0.0, "p95": 0.0, "max": 0.0}
    assert inject_eval.token_stats([7]) == {"mean": 7.0, "p95": 7.0, "max": 7.0}


def test_percentile_is_a_value_of_the_list():
    assert inject_eval.percentile([3, 1, 2], 50) == 2.0
    assert inject_eval.percentile([3, 1, 2], 100) == 3.0
    assert inject_eval.percentile([3, 1, 2], 0) == 1.0


# -- the coding prompts --------------------------------------------------------------

def test_the_coding_prompts_shipped_are_many_varied_and_labelled():
    coding = inject_eval.load_coding(inject_eval.CODING)
    texts = [p.text for p in coding]
    assert len(coding) >= 100 and len(set(texts)) == len(texts)
    assert all(p.kind == "coding" and not p.gold for p in coding)
    with_substance = [p for p in coding if p.substance]
    assert len(with_substance) >= 80 and len(coding) - len(with_substance) >= 20
    for example in ("add a test for the parser", "why does this segfault", "rename foo to bar in utils.py"):
        assert example in texts
    assert {"yes", "go on", "run the tests"} <= {p.text for p in coding if not p.substance}


@pytest.mark.parametrize("line", ['{"prompt": "x"}', '{"substance": true}', "not json",
                                  '{"prompt": "", "substance": true}', '{"prompt": "x", "substance": "yes"}',
                                  '["x", true]'])
def test_a_bad_coding_prompt_line_is_a_one_line_error_naming_it(tmp_path, line):
    path = tmp_path / "prompts.jsonl"
    path.write_text('{"prompt": "fine", "substance": true}\n\n' + line + "\n")
    with pytest.raises(SystemExit, match=r"prompts\.jsonl:3: not a prompt record"):
        inject_eval.load_coding(path)


def test_conversations_option_is_a_comma_list():
    assert inject_eval.chosen("conv-26, conv-41,") == ["conv-26", "conv-41"]
    assert inject_eval.chosen(None) is None
    assert inject_eval.chosen("all") is None
    with pytest.raises(SystemExit, match="--conversations"):
        inject_eval.chosen(" , ")


# -- the table -----------------------------------------------------------------------

def asked(kind: str, tokens: int, found: bool = False, substance: bool = True, r10: float = 1.0,
          r10_gated: float = 1.0, conv: str = "conv-x") -> inject_eval.Asked:
    prompt = inject_eval.Prompt(kind, f"{kind} {tokens} {found}", ("D1:1",) if kind == "answerable" else (),
                                substance, "single-hop" if kind == "answerable" else "")
    ranked = (r10, r10_gated) if kind == "answerable" else (None, None)
    return inject_eval.Asked(conv, prompt, (1,) if tokens else (), ["D1:1"] if found else [], tokens,
                             any_evidence=found, all_evidence=found, r10=ranked[0], r10_gated=ranked[1])


def test_figures_and_table_report_each_set_and_the_pool():
    rows = [asked("answerable", 120, True), asked("answerable", 300, False, r10=0.5, r10_gated=0.0),
            asked("answerable", 0, r10=0.5, r10_gated=0.5)]
    rows += [asked("unanswerable", 0), asked("unanswerable", 90), asked("adversarial", 0)]
    rows += [asked("coding", 0), asked("coding", 0), asked("coding", 0, substance=False), asked("coding", 50)]
    f = inject_eval.figures(rows)
    assert f["n"] == {"answerable": 3, "unanswerable": 2, "adversarial": 1, "coding": 4}
    assert f["evidence_any"] == pytest.approx(100 / 3) and f["answerable_silent"] == pytest.approx(100 / 3)
    assert f["r10"] == pytest.approx(200 / 3) and f["r10_gated"] == pytest.approx(50.0)
    assert f["tokens"]["answerable"] == {"mean": 140.0, "p95": 300.0, "max": 300.0}
    assert f["silent"] == {"unanswerable": 50.0, "adversarial": 100.0, "coding": 75.0,
                           "coding_substance": pytest.approx(200 / 3), "coding_no_substance": 100.0,
                           "pooled": pytest.approx(400 / 6)}  # unanswerable and coding
    table = inject_eval.table(f)
    assert table.splitlines()[0] == "| prompts | n | measured | target | met |"
    assert "| 3 | 33.3 % (all evidence: 33.3 %) | >= 65 % | no |" in table
    assert "| 3 | 140 / 300 / 300 | <= 400 | yes |" in table
    assert "| 3 | 50.0 (66.7) | >= 80 | no |" in table
    assert "| 2 | 50.0 % | >= 80 % | no |" in table
    assert "| 1 | 100.0 % | >= 80 % | yes |" in table
    assert "| 6 | 66.7 % | >= 80 % | no |" in table


def test_side_by_side_has_a_row_per_conversation_and_the_micro_average():
    rows = [asked("answerable", 100, True, conv="conv-41"), asked("unanswerable", 0, conv="conv-41"),
            asked("answerable", 100, False, r10=0.0, r10_gated=0.0, conv="conv-42"),
            asked("answerable", 100, True, r10=1.0, r10_gated=0.5, conv="conv-42"),
            asked("unanswerable", 80, conv="conv-42"), asked("adversarial", 80, conv="conv-42")]
    per = inject_eval.by_conversation(rows)
    assert list(per) == ["conv-41", "conv-42"]
    lines = inject_eval.side_by_side(per, inject_eval.figures(rows), fitted=("conv-42",)).splitlines()
    assert len(lines) == 5 and lines[0].startswith("| conversation | answerable | evidence in block |")
    assert lines[2] == "| conv-41 | 1 | 100.0 % | 100 | 100.0 | 100.0 | 1 | 100.0 % | 0 | - % | - % |"
    assert lines[3] == "| conv-42 * | 2 | 50.0 % | 100 | 50.0 | 25.0 | 1 | 0.0 % | 1 | 0.0 % | - % |"
    # every question counted once: 2 of 3 answerable, R@10 (1 + 0 + 1) / 3, gated (1 + 0 + 0.5) / 3
    assert lines[4] == "| **micro-average, 2** | 3 | 66.7 % | 100 | 66.7 | 50.0 | 2 | 50.0 % | 1 | 0.0 % | - % |"


def test_groups_are_the_held_out_and_tuning_conversations_and_both_together():
    held, tuned = asked("answerable", 100, True), asked("answerable", 0, conv="conv-30")
    assert list(inject_eval.groups([held])) == ["held-out"]
    assert list(inject_eval.groups([tuned])) == ["tuning"]
    both = inject_eval.groups([held, tuned])
    assert list(both) == ["held-out", "tuning", "all"]
    assert (both["held-out"]["evidence_any"], both["tuning"]["evidence_any"], both["all"]["evidence_any"]) \
        == (100.0, 0.0, 50.0)


# -- one run, on a tiny conversation -------------------------------------------------

def tiny(sample_id: str) -> dict:
    return sample(sample_id, [
        {"question": "What is the name of Ada's grey cat?", "answer": "Pixel", "evidence": ["D1:1"],
         "category": 4},
        {"question": "When did Ben start rowing on the river?", "answer": "June 2023", "evidence": ["D2:1"],
         "category": 2},
        {"question": "What did Ada say about rowing on the lake?", "adversarial_answer": "-",
         "evidence": ["D2:2"], "category": 5},
    ])


def test_a_run_asks_every_set_in_each_brain_and_prints_the_table(tmp_path, capsys):
    data, unanswerable, coding = tmp_path / "tiny.json", tmp_path / "unanswerable.jsonl", tmp_path / "coding.jsonl"
    data.write_text(json.dumps([tiny("conv-a"), tiny("conv-b")]))
    unanswerable.write_text(json.dumps({"conv": "conv-a", "category": "single-hop",
                                        "question": "Which violin teacher does Ada take lessons from?",
                                        "topic": ["violin"]}) + "\n")
    coding.write_text("".join(json.dumps(r) + "\n" for r in (
        {"prompt": "go on", "substance": False}, {"prompt": "add a test for the parser", "substance": True})))
    out = tmp_path / "result.json"
    assert inject_eval.main(["--data", str(data), "--conversations", "conv-a,conv-b", "--unanswerable",
                             str(unanswerable), "--coding", str(coding), "--cache", str(tmp_path / "cache.sqlite"),
                             "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "held-out (conv-a, conv-b)" in printed
    assert "| prompts | n | measured | target | met |" in printed
    assert "| conv-a | 2 |" in printed and "| conv-b | 2 |" in printed and "| **micro-average, 2** | 4 |" in printed
    result = json.loads(out.read_text())
    assert list(result["groups"]) == ["held-out"]  # neither is of the tuning pair
    assert list(result["conversations"]) == ["conv-a", "conv-b"]
    assert result["embedded"] > 0  # a fresh cache
    f = result["groups"]["held-out"]
    assert f["n"] == {"answerable": 4, "unanswerable": 1, "adversarial": 2, "coding": 4}
    # five memories: what the agent needs is found and injected, within the budget
    assert f["evidence_any"] == 100.0 and 0 < f["tokens"]["answerable"]["max"] <= 400
    assert f["r10"] == 100.0 and f["r10_gated"] <= f["r10"]
    assert f["silent"]["coding_no_substance"] == 100.0  # "go on" injects nothing
    for row in result["prompts"]:
        assert (row["tokens"] == 0) == (not row["ids"])
        if row["kind"] == "answerable":
            assert row["any_evidence"] == bool(set(row["gold"]) & set(row["turns"]))
            assert row["any_evidence"] >= row["whole_evidence"]
            assert 0.0 <= row["r10_gated"] <= row["r10"] <= 1.0
        else:
            assert row["r10"] is None and row["r10_gated"] is None


def test_the_gate_applied_to_ungated_hits_lists_what_the_gated_search_lists(tmp_path, local_embedder):
    conv = locomo.load(write(tmp_path, [tiny("conv-a")]))[0]
    questions = [q.text for q in conv.questions] + ["Which violin teacher does Ada take lessons from?",
                                                    "What did Ben say about his bicycle?", "go on"]
    with Brain.open(tmp_path / "brain.db", embedder=local_embedder) as brain:
        brain.remember_many(conv.items, near=False)
        for threshold in (brain.config.min_relevance, 0.3, 0.6, 0.0):
            for text in questions:
                ungated = list(brain.search(text, limit=inject_eval.LIMIT, track=False, min_relevance=0.0))
                through = brain.search(text, limit=inject_eval.LIMIT, track=False, min_relevance=threshold)
                assert [h.memory.id for h in inject_eval.gated(ungated, threshold)] == [h.memory.id for h in through]


def write(tmp_path: Path, samples: list) -> Path:
    path = tmp_path / "data.json"
    path.write_text(json.dumps(samples))
    return path


def test_runs_side_by_side_combine_into_the_figures_of_one_run(tmp_path, capsys):
    data, unanswerable, coding = tmp_path / "tiny.json", tmp_path / "unanswerable.jsonl", tmp_path / "coding.jsonl"
    data.write_text(json.dumps([tiny("conv-a"), tiny("conv-30")]))
    unanswerable.write_text(json.dumps({"conv": "conv-30", "category": "single-hop",
                                        "question": "Which violin teacher does Ada take lessons from?",
                                        "topic": ["violin"]}) + "\n")
    coding.write_text(json.dumps({"prompt": "add a test for the parser", "substance": True}) + "\n")
    common = ["--data", str(data), "--unanswerable", str(unanswerable), "--coding", str(coding),
              "--cache", str(tmp_path / "cache.sqlite")]
    for conv in ("conv-a", "conv-30", "conv-a,conv-30"):
        assert inject_eval.main([*common, "--conversations", conv, "--json", str(tmp_path / f"{conv}.json")]) == 0
    both = json.loads((tmp_path / "conv-a,conv-30.json").read_text())
    capsys.readouterr()
    assert inject_eval.main([*common, "--conversations", "all", "--json", str(tmp_path / "combined.json"),
                             "--combine", str(tmp_path / "conv-30.json"), str(tmp_path / "conv-a.json")]) == 0
    printed = capsys.readouterr().out
    assert "tuning (conv-30): LoCoMo's tuning pair, not a held-out figure" in printed
    again = json.loads((tmp_path / "combined.json").read_text())
    assert list(again["groups"]) == ["held-out", "tuning", "all"]
    assert list(again["conversations"]) == ["conv-a", "conv-30"]
    for name in ("held-out", "tuning", "all"):
        for key in ("n", "evidence_any", "r10", "r10_gated", "silent", "tokens"):
            assert again["groups"][name][key] == both["groups"][name][key]
    with pytest.raises(SystemExit, match="--combine: no run of conv-30"):
        inject_eval.main([*common, "--conversations", "all", "--combine", str(tmp_path / "conv-a.json")])
    with pytest.raises(SystemExit, match="--combine .*tiny.json: not the --json file"):
        inject_eval.main([*common, "--combine", str(data)])


def test_an_unknown_conversation_or_a_missing_file_is_a_one_line_error(tmp_path):
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([tiny("conv-a")]))
    with pytest.raises(SystemExit, match="no conversation conv-z"):
        inject_eval.main(["--data", str(data), "--conversations", "conv-z"])
    with pytest.raises(SystemExit, match="no such file: .*missing.json"):
        inject_eval.main(["--data", str(tmp_path / "missing.json")])


# -- LoCoMo itself -------------------------------------------------------------------

@needs_locomo
def test_the_held_out_eight_of_locomo_are_what_is_asked():
    conversations = [c for c in locomo.load(Path(LOCOMO or "")) if c.sample_id not in locomo.TUNING]
    assert [c.sample_id for c in conversations] == ["conv-41", "conv-42", "conv-43", "conv-44", "conv-47",
                                                    "conv-48", "conv-49", "conv-50"]
    unanswerable = relevance_eval.load_unanswerable(relevance_eval.UNANSWERABLE)
    coding = inject_eval.load_coding(inject_eval.CODING)
    asked = [p for c in conversations for p in inject_eval.prompts(c, unanswerable.get(c.sample_id, []), coding)]
    kinds = {k: sum(p.kind == k for p in asked) for k in inject_eval.SETS}
    assert kinds == {"answerable": 1305, "unanswerable": 268, "adversarial": 375, "coding": 8 * len(coding)}
    for conv in conversations:
        turns = {item["metadata"]["dia_id"] for item in conv.items}
        for p in inject_eval.prompts(conv, [], []):
            assert p.gold and set(p.gold) <= turns
