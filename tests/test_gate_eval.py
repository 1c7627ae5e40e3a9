"""bench/gate_eval.py's data: the prompts it scores are not among the off-topic prompts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import gate_eval  # noqa: E402

from maxmem.search import relevance as rel  # noqa: E402


def normal(text: str) -> str:
    return " ".join(text.lower().rstrip("?？!. ").split())


def test_the_scored_prompts_are_held_out_from_the_off_topic_prompts():
    bank = {normal(p) for p in rel.off_topic_prompts()}
    coding = gate_eval.coding_prompts()
    unrelated = json.loads((ROOT / "bench" / "data" / "unrelated_queries.json").read_text())["queries"]
    assert len(coding) >= 100 and len(bank) == len(rel.off_topic_prompts())  # no prompt twice
    assert not bank & {normal(p) for p in [*coding, *unrelated]}
