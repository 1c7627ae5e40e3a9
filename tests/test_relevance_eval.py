"""bench/relevance_eval.py on two tiny made-up conversations in LoCoMo's shape (no LoCoMo data)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import relevance_eval  # noqa: E402
from locomo_sample import sample  # noqa: E402


def conversation(sample_id: str) -> dict:
    return sample(sample_id, [
        {"question": "What is the name of Ada's cat?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
        {"question": "When did Ben start rowing?", "answer": "June 2023", "evidence": ["D2:1"], "category": 2},
        {"question": "Where does Pixel sleep?", "answer": "under the tomatoes", "evidence": ["D1:3"],
         "category": 1},
        {"question": "What did Ada say about rowing on the lake?", "adversarial_answer": "-",
         "evidence": ["D2:2"], "category": 5},
    ])


UNANSWERABLE = [
    {"category": "single-hop", "question": "Which violin teacher does Ada take lessons from?",
     "topic": ["violin", "teacher", "lesson"]},
    {"category": "temporal", "question": "When did Ben fly to Tokyo for his sister's wedding?",
     "topic": ["tokyo", "wedding", "sister", "fly"]},
]


def renamed(sample_id: str, a: str, b: str) -> dict:
    """The same conversation between two other people (so that a shared brain holds both)."""
    return json.loads(json.dumps(conversation(sample_id)).replace("Ada", a).replace("Ben", b))


def test_the_evaluation_runs_through_brain_search_and_splits_by_conversation(tmp_path, capsys):
    data, unanswerable = tmp_path / "tiny.json", tmp_path / "unanswerable.jsonl"
    people = {"conv-a": ("Ada", "Ben"), "conv-b": ("Cleo", "Dev"), "conv-c": ("Eve", "Finn"),
              "conv-d": ("Gus", "Hana")}
    data.write_text(json.dumps([renamed(c, *names) for c, names in people.items()]))
    unanswerable.write_text("".join(
        json.dumps({"conv": c, **json.loads(json.dumps(u).replace("Ada", a).replace("Ben", b))}) + "\n"
        for c, (a, b) in people.items() for u in UNANSWERABLE))
    out, cache = tmp_path / "result.json", tmp_path / "cache.sqlite"
    args = ["--data", str(data), "--unanswerable", str(unanswerable), "--calibration", "conv-a", "conv-b",
            "--cache", str(cache), "--json", str(out)]
    assert relevance_eval.main([*args, "--fit", "--crowded", "--cv"]) == 0
    printed = capsys.readouterr().out
    for words in ("calibration half (conv-a, conv-b)", "held-out half (conv-c, conv-d)",
                  "AUC of the top hit's relevance", "nothing relevant at", "LoCoMo R@10", "other thresholds",
                  "frontier: at most 1 point", "mode vector (cosine alone)",
                  "in one brain with the half's other conversations (10 memories)",
                  "in one brain with all the others (20 memories)", "WITH_COSINE = (",
                  "LARGEST_MEMORIES = 10", "DEFAULT_MIN_RELEVANCE = ", "of which the relevance evidence",
                  "cross-validated on the calibration half", "  conv-a: threshold ", "  pooled: AUC "):
        assert words in printed, words
    result = json.loads(out.read_text())
    for half in result["halves"].values():
        for figures in (half, half["shared"]):
            assert figures["n"] == {"answerable": 6, "unanswerable": 4, "adversarial": 2}
            assert 0.0 <= figures["auc"] <= 1.0
            # five (ten) memories per brain: with the threshold off every gold turn is in the top 10
            assert figures["r10"] == 100.0 and figures["r10_cut"] <= 100.0
            assert set(figures["empty"]) == {"answerable", "unanswerable", "adversarial"}
        assert half["memories"] == 5 and half["shared"]["memories"] == 10
    assert result["halves"]["held-out"]["crowded"]["n"]["answerable"] == 6
    assert result["halves"]["calibration"]["crowded"]["n"]["answerable"] == 0  # held-out questions only
    fitted = result["fit"]
    assert len(fitted["WITH_COSINE"]) == 5 and len(fitted["WITHOUT_COSINE"]) == 4
    assert fitted["CALIBRATED_MEMORIES"] == 5 and fitted["LARGEST_MEMORIES"] == 10
    assert 0.0 <= fitted["DEFAULT_MIN_RELEVANCE"] < 1.0
    # leave one calibration conversation out, fit on the other, judge it in its own brain
    cv = result["cv"]
    assert [f["conversation"] for f in cv["folds"]] == ["conv-a", "conv-b"]
    assert all(0.0 <= f["cut"] <= 100.0 and f["r10_change"] <= 0.0 for f in cv["folds"])
    assert 0.0 <= cv["auc"] <= 1.0 and cv["r10_change"] <= 0.0


def test_check_lists_the_turns_holding_a_topic_word(tmp_path, capsys):
    data, unanswerable = tmp_path / "tiny.json", tmp_path / "unanswerable.jsonl"
    data.write_text(json.dumps([conversation("conv-a")]))
    unanswerable.write_text(json.dumps({"conv": "conv-a", "category": "single-hop",
                                        "question": "Which garden centre does Ada buy seeds at?",
                                        "topic": ["garden", "seed"]}) + "\n")
    assert relevance_eval.main(["--data", str(data), "--unanswerable", str(unanswerable), "--check"]) == 0
    printed = capsys.readouterr().out
    assert "D1:2 'Ben: Lovely! Does Pixel like the garden?'" in printed
    assert "1 questions have topic words in their conversation" in printed
