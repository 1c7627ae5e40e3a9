"""Precision and recall of trigger detection on the labelled sentences.

    python bench/triggers_eval.py            # dev and held-out tables
    python bench/triggers_eval.py --errors   # also list the dev mistakes (never tune on held-out)

Each labelled item is one short text (usually one sentence) with its role and its
trigger, or "none". The prediction is the best trigger the detector finds in it;
a prediction listed in the item's "alt" (a sentence that is honestly two things,
e.g. "remember that I prefer aisle seats") counts as correct.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from maxmem.triggers.detect import classify  # noqa: E402
from maxmem.triggers.rules import TRIGGERS  # noqa: E402

LABELLED = ROOT / "tests" / "data" / "triggers_labelled.jsonl"


def load(path: Path = LABELLED) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def predict(item: dict) -> str:
    found = classify(item["text"], role=item.get("role"))
    return found[0][0] if found else "none"


def evaluate(items: list[dict]) -> dict:
    """Per-trigger and overall (micro) precision/recall, plus the mistakes."""
    counts = {t: {"tp": 0, "fp": 0, "fn": 0, "support": 0} for t in TRIGGERS}
    mistakes = []
    for item in items:
        gold = item["label"]
        pred = predict(item)
        correct = pred == gold or pred in item.get("alt", ())
        if gold != "none":
            counts[gold]["support"] += 1
        if correct:
            if pred != "none":
                counts[pred]["tp"] += 1
            continue
        mistakes.append((item, pred))
        if pred != "none":
            counts[pred]["fp"] += 1
        if gold != "none":
            counts[gold]["fn"] += 1
    rows = {}
    total = {"tp": 0, "fp": 0, "fn": 0, "support": 0}
    for trigger, c in counts.items():
        rows[trigger] = _ratios(c)
        for key in total:
            total[key] += c[key]
    rows["overall"] = _ratios(total)
    negatives = [i for i in items if i["label"] == "none"]
    false_alarms = sum(1 for item, pred in mistakes if item["label"] == "none")
    return {"rows": rows, "mistakes": mistakes, "n": len(items), "negatives": len(negatives),
            "false_alarms": false_alarms}


def _ratios(c: dict) -> dict:
    predicted = c["tp"] + c["fp"]
    actual = c["tp"] + c["fn"]
    return {
        **c,
        "precision": c["tp"] / predicted if predicted else 1.0,
        "recall": c["tp"] / actual if actual else 1.0,
    }


def table(result: dict, title: str) -> str:
    lines = [
        f"{title}: {result['n']} items ({result['negatives']} negatives, "
        f"{result['false_alarms']} false alarms on them)",
        f"{'trigger':<11} {'support':>7} {'tp':>4} {'fp':>4} {'fn':>4} {'precision':>9} {'recall':>7}",
    ]
    for name, r in result["rows"].items():
        lines.append(
            f"{name:<11} {r['support']:>7} {r['tp']:>4} {r['fp']:>4} {r['fn']:>4} "
            f"{r['precision']:>9.3f} {r['recall']:>7.3f}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--errors", action="store_true", help="list the mistakes on the dev split")
    parser.add_argument("--path", type=Path, default=LABELLED)
    args = parser.parse_args()
    items = load(args.path)
    for split in ("dev", "heldout"):
        result = evaluate([i for i in items if i["split"] == split])
        print(table(result, split))
        print()
        if args.errors and split == "dev":
            for item, pred in result["mistakes"]:
                print(f"  gold={item['label']:<10} pred={pred:<10} [{item['role']}] {item['text']}")
            print()
    print(table(evaluate(items), "all"))


if __name__ == "__main__":
    main()
