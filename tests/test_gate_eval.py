"""bench/gate_eval.py's data: the prompts it scores are not among the off-topic prompts."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
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


def hit(cosine: float, off: float | None, hub: float | None = 0.80, memories: int = 5) -> dict:
    return {"content": "m", "cosine": cosine, "cover": 0.0, "unknown": 1.0, "lift": 0.05, "hub": hub,
            "off_topic": off, "memories": memories}


def test_a_search_counts_as_silent_only_when_no_hit_reaches_the_threshold():
    near = hit(0.90, 0.80)  # the query far closer to the memory than to the off-topic prompts
    far = hit(0.78, 0.88)  # a prompt nearer prompts about code than the memory
    assert rel.relevance(gate_eval.evidence(near)) >= 0.055 > rel.relevance(gate_eval.evidence(far))
    coding = {"kind": "coding", "rank": None, "hits": [far, far]}
    assert gate_eval.passed(coding, rel.relevance, 0.055) is True
    assert gate_eval.passed({**coding, "hits": [far, near]}, rel.relevance, 0.055) is False
    found = {"kind": "paraphrase", "rank": 1, "hits": [far, near]}
    assert gate_eval.passed(found, rel.relevance, 0.055) is True
    assert gate_eval.passed({**found, "rank": 3}, rel.relevance, 0.055) is None  # not in the top 3


def test_before_is_the_gate_without_the_query_check():
    far = gate_eval.evidence(hit(0.78, 0.88, hub=0.74))  # the query near prompts about code
    assert rel.relevance(far) == 0.0 < gate_eval.before(far)
    hub = gate_eval.evidence(hit(0.78, None, hub=0.79))  # a memory near any prompt: the route was silent
    assert gate_eval.before(hub) < gate_eval.before(replace(hub, hub=0.70))
