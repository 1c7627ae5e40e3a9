"""bench/browse_bench.py end to end at a toy size, so the script behind the README's
browse figures cannot rot (its figures come from the full 100k run, never from a test)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_browse_benchmark_runs_and_reports_every_figure(tmp_path):
    out = tmp_path / "browse.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "browse_bench.py"), "--n", "1500", "--queries", "3",
         "--repeats", "2", "--json", str(out)],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "page / cli" in result.stdout and "overview: GET /" in result.stdout
    figures = json.loads(out.read_text())
    assert figures["same_top10_as_cli"] == 3
    for key in ("page_p50_ms", "cli_p50_ms", "brain_p50_ms", "overview_http_p50_ms"):
        assert figures[key] > 0
