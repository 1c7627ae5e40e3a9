"""Capture throughput and the cost of a no-op re-run.

    python bench/capture_bench.py [--lines 50000] [--files 100] [--repeat 5]

1. A generated 50,000-line OpenClaw transcript (user prompts, assistant replies with
   tool calls, tool results, a few secrets) is captured into a fresh brain.db with
   embedding excluded (embedder "none"), with and without the commit-trigger pass
   ([triggers] capture = false): wall and CPU time, turns per CPU-second, next to
   the time it takes only to split and json-parse the same file (the floor), and the
   CPU time of trigger detection alone over the stored turns (steadier than the
   difference of the two captures on a shared machine).
2. 100 unchanged (idle) transcripts are captured once, then captured again: the
   no-op re-run time (median of --repeat), per file, next to the first run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from types import MappingProxyType  # noqa: E402

from maxmem import Brain, Config  # noqa: E402
from maxmem.capture import CaptureSettings, run_capture  # noqa: E402
from maxmem.triggers import detect_triggers, load_rules  # noqa: E402

WORDS = ("port docker compose backup nas schedule invoice parser week date tide table json flag "
         "heating repair tuesday gift warranty reminder sunday review notes summary deploy server "
         "config token cache index query latency memory agent session branch commit test fix").split()


def transcript(lines: int, session: str, seed: int = 7) -> str:
    """An OpenClaw v3 transcript with `lines` lines: ~1/4 each user, assistant+call, result, reply."""
    rnd = random.Random(seed)
    out = [json.dumps({"type": "session", "version": 3, "id": session,
                       "timestamp": "2026-11-28T09:00:00.000Z", "cwd": "/home/user/work"})]
    i = 0
    parent = None
    while len(out) < lines:
        t = f"2026-11-28T{9 + (i // 3600) % 12:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"
        words = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(8, 60)))
        kind = i % 4
        entry_id = f"{i:08x}"
        if kind == 0:
            text = words + (" export API_TOKEN=tok_" + str(i) if i % 97 == 0 else "")
            message = {"role": "user", "content": text}
        elif kind == 1:
            message = {"role": "assistant", "model": "claude-sonnet-4-5", "provider": "anthropic",
                       "content": [{"type": "text", "text": words},
                                   {"type": "toolCall", "id": f"call{i}", "name": "bash",
                                    "arguments": {"command": f"docker ps --filter name={rnd.choice(WORDS)}"}}],
                       "usage": {"input": 100, "output": 40, "totalTokens": 140}}
        elif kind == 2:
            result = "\n".join(f"c{j} {rnd.choice(WORDS)} 0.0.0.0:{5000 + j}->80/tcp"
                               for j in range(rnd.randint(1, 30)))
            message = {"role": "toolResult", "toolCallId": f"call{i - 1}", "toolName": "bash",
                       "content": [{"type": "text", "text": result}], "isError": False}
        else:
            message = {"role": "assistant", "model": "claude-sonnet-4-5", "provider": "anthropic",
                       "content": [{"type": "text", "text": words}]}
        out.append(json.dumps({"type": "message", "id": entry_id, "parentId": parent, "timestamp": t,
                               "message": message}, ensure_ascii=False))
        parent = entry_id
        i += 1
    return "\n".join(out) + "\n"


def parse_floor(path: Path) -> float:
    started = time.perf_counter()
    with path.open("rb") as stream:
        for line in stream:
            json.loads(line)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=50_000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    settings = CaptureSettings(settle_seconds=0)

    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        big = tmp_path / "big.jsonl"
        big.write_text(transcript(args.lines, "bench-big"), encoding="utf-8")
        size_mb = big.stat().st_size / 1e6
        floor = min(parse_floor(big) for _ in range(3))
        print(f"1. capture of one {args.lines:,}-line transcript ({size_mb:.1f} MB), embedder none")
        print(f"   {'':24} {'wall s':>8} {'CPU s':>8} {'turns/CPU-s':>12} {'MB/CPU-s':>9}  x json floor (CPU)")
        variants = [("capture", Config()),
                    ("  without triggers", Config(sections=MappingProxyType({"triggers": {"capture": False}})))]
        for n, (label, config) in enumerate(variants):
            with Brain.open(tmp_path / f"big{n}.db", embedder="none", config=config) as brain:
                started, cpu = time.perf_counter(), time.process_time()
                report = run_capture(brain, paths=[big], format="openclaw", settings=settings)
                elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
                turns = brain.db.rows("SELECT role, text AS content FROM turns ORDER BY id")
            assert report.errors == 0, report.details
            print(f"   {label:24} {elapsed:8.2f} {cpu:8.2f} {report.new_turns / cpu:12,.0f} "
                  f"{size_mb / cpu:9.2f}  {cpu / floor:6.1f}x")
        print(f"   {'json parse only (floor)':24} {floor:8.2f} {floor:8.2f} {'':>12} {size_mb / floor:9.2f}")
        detect_cpu = time.process_time()
        detections = detect_triggers(turns, rules=load_rules(None))
        detect_cpu = time.process_time() - detect_cpu
        print(f"   {'trigger detection alone':24} {'':>8} {detect_cpu:8.2f}  over the {len(turns):,} stored turns, "
              f"{len(detections)} detections")
        print(f"   {report.new_turns:,} turns, {report.tool_calls:,} tool calls, {report.memories:,} memories, "
              f"{report.redactions} redactions; the machine is shared: CPU time is the steadier figure")

        folder = tmp_path / "many"
        folder.mkdir()
        past = time.time() - 3600  # idle files: nothing held back, skipped by stat alone
        for n in range(args.files):
            path = folder / f"s{n:03d}.jsonl"
            path.write_text(transcript(200, f"bench-{n:03d}", seed=n), encoding="utf-8")
            os.utime(path, (past, past))
        with Brain.open(tmp_path / "many.db", embedder="none") as brain:
            started = time.perf_counter()
            first = run_capture(brain, paths=[folder], format="openclaw", settings=settings)
            first_time = time.perf_counter() - started
            times = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                again = run_capture(brain, paths=[folder], format="openclaw", settings=settings)
                times.append(time.perf_counter() - started)
                assert again.new_turns == 0 and again.unchanged == args.files, again.summary()
        median = statistics.median(times)
        print(f"2. {args.files} unchanged transcripts (200 lines each)")
        print(f"   first run      {first_time:8.3f} s   ({first.new_turns:,} turns)")
        print(f"   no-op re-run   {median:8.3f} s   median of {args.repeat}, "
              f"{median / args.files * 1000:.2f} ms per file")
        print(f"   ratio first / no-op: {first_time / median:.0f}x")


if __name__ == "__main__":
    main()
