"""bench/redact_eval.py end to end at toy sizes, so the script behind the README's
redaction table cannot rot (its figures come from full runs, never from a test)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import redact_eval  # noqa: E402  (from bench/, put on sys.path above)


def test_the_benchmark_runs_and_reports_every_figure(tmp_path):
    out = tmp_path / "redact.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "redact_eval.py"), "--limit", "40", "--transcript-mb", "0.05",
         "--repeats", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "| dev recall |" in result.stdout and "| heldout precision |" in result.stdout
    assert "| shapes-heldout recall |" in result.stdout and "| ordinary FP lines / 1k negative lines |" in result.stdout
    assert "| shapes-unseen recall |" in result.stdout
    assert "| ordinary-unseen FP lines / 1k negative lines |" in result.stdout
    assert "| maxmem on bad input |" in result.stdout
    figures = json.loads(out.read_text())
    for system in ("maxmem", "detect-secrets"):
        assert figures[system]["throughput_mb_s"] > 0
        for split in ("dev", "heldout"):
            assert 0 <= figures[system][split]["recall"] <= 1
            assert figures[system][split]["negative_lines"] > 0
        assert 0 <= figures[system]["shapes-heldout"]["recall"] <= 1
        assert figures[system]["ordinary"]["negative_lines"] >= 40  # a few items hold two lines


def test_scoring_counts_partial_removal_as_a_miss_and_stray_spans_as_false_positives():
    items = [
        {"id": "a", "label": "secret", "shape": "x", "context": "c", "text": "key=SECRET1 ok", "spans": [[4, 11, "x"]]},
        {"id": "b", "label": "negative", "shape": "n", "context": "c", "text": "one\ntwo\nthree", "spans": []},
    ]
    perfect = redact_eval.score(items, [[(4, 11)], []])
    assert (perfect["recall"], perfect["precision"], perfect["fp_lines"]) == (1.0, 1.0, 0)
    partial = redact_eval.score(items, [[(4, 8), (12, 14)], [(4, 7)]])
    assert partial["recall"] == 0.0
    assert partial["precision"] == 1 / 3
    assert partial["fp_lines"] == 1 and partial["negative_lines"] == 3


def test_the_shape_corpus_fills_its_templates_and_marks_the_secrets():
    import secret_shapes

    for split in ("dev", "heldout"):
        items = secret_shapes.shape_items(split)
        assert len({i["shape"] for i in items}) == len(items) >= 60 or split == "dev"
        for item in items:
            assert item["spans"] and "{" not in "".join(item["text"][s:e] for s, e, _ in item["spans"])
            assert "⟦" not in item["text"] and "⏎" not in item["text"]
    assert secret_shapes.shape_items("heldout") == secret_shapes.shape_items("heldout")  # a fixed seed
    assert len(secret_shapes.ordinary_lines()) >= 1000


def test_the_unseen_split_loads_with_its_secrets_marked_and_its_ordinary_lines_clean():
    shapes = redact_eval.ROOT / "tests" / "data" / "secrets" / "shapes"
    for line in (shapes / "unseen.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            template = line.split("\t", 1)[1]
            opened, closed = template.count("⟦"), template.count("⟧")
            assert opened == closed >= 1, line
            assert "⟦" not in "".join(part.split("⟧")[0] for part in template.split("⟦")[1:]), line  # none nested
    for line in (shapes / "unseen_ordinary.txt").read_text(encoding="utf-8").splitlines():
        assert "⟦" not in line and "⟧" not in line, line

    secrets = redact_eval.load("shapes-unseen")
    assert len(secrets) >= 150 and len({i["shape"] for i in secrets}) == len(secrets)
    for item in secrets:
        assert item["label"] == "secret" and item["spans"], item["id"]
        assert "⟦" not in item["text"] and "⏎" not in item["text"]
        for start, end, _ in item["spans"]:
            assert 0 <= start < end <= len(item["text"]) and "{" not in item["text"][start:end], item["id"]
    ordinary = redact_eval.load("ordinary-unseen")
    assert len(ordinary) >= 400
    for item in ordinary:
        assert item["label"] == "negative" and item["spans"] == [], item["id"]
        assert "⟦" not in item["text"] and "⏎" not in item["text"]
        assert not re.search(r"\{(?:hex|HEX|alnum|b64|b64url|digits|upper|lower|lowernum|b58|uuid):?\d*\}",
                             item["text"]), item["text"]  # every filler filled
    texts = {i["text"] for i in ordinary}
    assert {"password: ${DB_PASSWORD}", "token: ${{ secrets.NPM_TOKEN }}"} <= texts  # other braces stay
    assert redact_eval.load("ordinary-unseen") == ordinary  # a fixed seed
    assert len(redact_eval.load("shapes-unseen", limit=10)) == 10


@pytest.mark.parametrize("split", ["blind", "blind3", "blind4", "blind5", "blind6", "blind7"])
def test_the_blind_split_loads_with_its_secrets_marked_and_its_ordinary_lines_clean(split):
    shapes = redact_eval.ROOT / "tests" / "data" / "secrets" / "shapes"
    for line in (shapes / f"{split}.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            shape, template = line.split("\t", 1)
            opened, closed = template.count("⟦"), template.count("⟧")
            assert shape and opened == closed >= 1, line
            assert "⟦" not in "".join(part.split("⟧")[0] for part in template.split("⟦")[1:]), line  # none nested
    for line in (shapes / f"{split}_ordinary.txt").read_text(encoding="utf-8").splitlines():
        assert "⟦" not in line and "⟧" not in line, line

    secrets = redact_eval.load(f"shapes-{split}")
    assert len(secrets) >= 200 and len({i["shape"] for i in secrets}) == len(secrets)
    for item in secrets:
        assert item["label"] == "secret" and item["spans"], item["id"]
        assert "⟦" not in item["text"] and "⏎" not in item["text"]
        for start, end, _ in item["spans"]:
            value = item["text"][start:end]
            assert 0 <= start < end <= len(item["text"]) and "{" not in value, item["id"]
            assert value == value.strip(), item["id"]  # exactly the value, no space around it
    ordinary = redact_eval.load(f"ordinary-{split}")
    assert len(ordinary) >= 400
    for item in ordinary:
        assert item["label"] == "negative" and item["spans"] == [], item["id"]
        assert "⟦" not in item["text"] and "⏎" not in item["text"]
        assert not re.search(r"\{(?:hex|HEX|alnum|b64|b64url|digits|upper|lower|lowernum|b58|uuid):?\d*\}",
                             item["text"]), item["text"]  # every filler filled
    texts = {i["text"] for i in ordinary}
    assert {"password: ${DB_PASSWORD}", "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}"} <= texts  # other braces stay
    assert redact_eval.load(f"shapes-{split}") == secrets and redact_eval.load(f"ordinary-{split}") == ordinary
    assert len(redact_eval.load(f"shapes-{split}", limit=10)) == 10


def test_the_blind_splits_up_to_blind5_are_development_data_and_blind6_and_blind7_only_scored():
    blind = {*redact_eval.BLIND_SPLITS, *redact_eval.BLIND3_SPLITS, *redact_eval.BLIND4_SPLITS,
             *redact_eval.BLIND5_SPLITS}
    never_read = {*redact_eval.BLIND6_SPLITS, *redact_eval.BLIND7_SPLITS}
    assert {*blind, *never_read} <= set(redact_eval.SHAPE_SPLITS)
    assert not blind & set(redact_eval.NEVER_READ)
    assert never_read == set(redact_eval.NEVER_READ)
    assert not blind & set(redact_eval.UNSEEN_SPLITS)


def test_the_table_puts_the_unseen_splits_beside_the_others():
    figures = {name: {split: {"recall": 0.5, "precision": 1.0, "fp_per_1k_lines": 2.0}
                      for split in ("dev", "shapes-unseen", "ordinary-unseen")}
               for name in ("maxmem", "maxmem HEAD~1", "detect-secrets")}
    rows = redact_eval.split_table(figures, list(figures), ["dev", "shapes-unseen", "ordinary-unseen"])
    assert rows[0] == "| | maxmem | maxmem HEAD~1 | detect-secrets |"
    assert "| shapes-unseen recall | 0.500 | 0.500 | 0.500 |" in rows
    assert "| shapes-unseen precision | 1.000 | 1.000 | 1.000 |" in rows
    assert "| ordinary-unseen FP lines / 1k negative lines | 2.0 | 2.0 | 2.0 |" in rows
    assert not any(r.startswith(("| ordinary-unseen recall", "| shapes-unseen FP")) for r in rows)
    assert "| dev FP lines / 1k negative lines | 2.0 | 2.0 | 2.0 |" in rows


def test_the_synthetic_transcript_has_the_size_asked_for_and_no_secret():
    text = redact_eval.synthetic_transcript(200_000, seed=3)
    assert 190_000 <= len(text.encode()) <= 200_000
    lines = text.splitlines()
    assert all(json.loads(line)["type"] in ("user", "assistant") for line in lines[:-1])
