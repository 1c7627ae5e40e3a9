"""bench/tune_eval.py's table: per brain, overall, and which settings were changed how
often; --merge prints one table of runs saved with --json."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import tune_eval  # noqa: E402

from maxmem.config import Config  # noqa: E402
from maxmem.tune import Settings  # noqa: E402

DEFAULT = Settings.of(Config()).__dict__


def result(name: str, tuned: dict, best: dict, default_rows: list, tuned_rows: list) -> dict:
    kept = [k for k, v in tuned.items() if v != DEFAULT[k]]
    return {"conversation": name, "memories": 10, "qa": len(default_rows), "default": DEFAULT, "tuned": tuned,
            "best": best, "tune": {"questions": 40, "kept": kept, "difference": 0.05, "noise": 0.01},
            "build_seconds": 0.0, "tune_seconds": 0.0,
            "rows": {"default": default_rows, "tuned": tuned_rows, "best": tuned_rows}}


def test_the_table_counts_the_settings_changed_and_merges_saved_runs(tmp_path, capsys):
    more = {**DEFAULT, "candidates": 100}
    runs = [result("conv-1", more, more, [[1.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [1.0, 0.5]]),
            result("conv-2", DEFAULT, {**DEFAULT, "recency_weight": 0.05}, [[1.0, 0.5]], [[1.0, 0.5]])]
    lines = tune_eval.report(runs)
    assert any(line.startswith("conv-1") and "+5.0 ± 1.0" in line and "candidates 100" in line for line in lines)
    assert any(line.startswith("conv-2") and line.endswith("(defaults)") for line in lines)
    overall = next(line for line in lines if line.startswith("overall")).split()
    assert overall[2:4] == ["66.7", "100.0"]  # micro-averaged over the three questions
    assert "kept by the held-out check, in how many of the 2 brains: candidates 1" in "\n".join(lines)
    assert "best on the tuning half, in how many of the 2 brains: candidates 1, recency_weight 1" in "\n".join(lines)
    for i, run in enumerate(runs):
        (tmp_path / f"{i}.json").write_text(json.dumps([run]), encoding="utf-8")
    assert tune_eval.main(["--merge", str(tmp_path / "0.json"), str(tmp_path / "1.json")]) == 0
    assert capsys.readouterr().out.splitlines() == lines
