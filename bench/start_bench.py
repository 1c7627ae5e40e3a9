#!/usr/bin/env python3
"""Start-up under load: the prompt hook's wall time and `maxmem mcp`'s first answers,
timed from outside, idle and under a CPU load this script makes itself, beside the
floor (`python -c pass`).

A harness starts both as new processes and waits with a timeout: Claude Code gives a
hook 10 s, Codex lets a session start after its MCP servers' grace (setup writes
`mcp_optional_startup_grace_ms`). So each is timed as the harness sees it, from the
fork to the answer:

- floor: `python -c pass` (the interpreter's own start);
- hook cold: `maxmem --db DB hook user-prompt` with [recall] warm_minutes = 0 (every
  prompt loads everything itself: a session's first prompt);
- hook warm: the same with the recall server running (every later prompt);
- mcp: `maxmem --db DB mcp` until its answers to `initialize` and `tools/list`
  (what a client needs before its first request can use maxmem's tools), after one
  start that keeps them, as `maxmem setup claude-code|codex` does;
- then, once: a Stop hook's capture until every memory it stored has its vector, with
  no scheduler (by the recall server; by a background `maxmem embed`).

Load: N busy processes (default: 8 on any number of cores), each a `while True` loop
that stops by itself after --max-load-seconds (so an interrupted run leaves nothing
behind), started before and stopped after each loaded round. The brain is the sample
(brain.db.sample), or --db PATH (copied first; the copy is what the hook reads).

    python bench/start_bench.py                           # idle and load 8, 10 runs each
    python bench/start_bench.py --runs 20 --load 8 --max-load-seconds 300
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from maxmem.hooks.warm import stop_servers  # noqa: E402

MAXMEM = Path(sys.executable).parent / "maxmem"
PROMPT = json.dumps({"session_id": "bench", "prompt": "which database did we pick for the shared memory?"})
BURN = "import sys, time\nend = time.monotonic() + float(sys.argv[1])\nwhile time.monotonic() < end:\n    pass\n"
HARNESS_TIMEOUT = {"hook": 10.0, "mcp": None}


def timed(argv: list[str], env: dict[str, str], stdin: str = "") -> float:
    started = time.perf_counter()
    subprocess.run(argv, input=stdin, env=env, capture_output=True, text=True, timeout=120, check=False)
    return time.perf_counter() - started


def mcp_first_answers(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from the start of `maxmem mcp` to its answer to tools/list (after initialize)."""
    started = time.perf_counter()
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=env, text=True)
    assert server.stdin is not None and server.stdout is not None

    def call(message: dict[str, object]) -> dict[str, object] | None:
        server.stdin.write(json.dumps(message) + "\n")  # type: ignore[union-attr]
        server.stdin.flush()  # type: ignore[union-attr]
        if "id" not in message:
            return None
        while True:
            line = server.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise RuntimeError("maxmem mcp closed its output")
            answer = json.loads(line)
            if answer.get("id") == message["id"]:
                return answer

    try:
        call({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
        call({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = call({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        took = time.perf_counter() - started
        assert tools and len(tools["result"]["tools"]) > 5, tools  # type: ignore[index]
        return took
    finally:
        server.stdin.close()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def capture_to_vectors(work: Path, warm_minutes: int) -> float:
    """Seconds from a Stop hook's start (a Claude Code transcript of ~20 kB) until every
    memory it stored has its vector, with no scheduler: the recall server (warm_minutes >
    0) or a background `maxmem embed` gives them."""
    sys.path.insert(0, str(ROOT / "tests"))
    from agent_layout import claude_home

    home = work / f"capture-{warm_minutes}"
    transcript, _ = claude_home(home, session="5f0c2a7e-1111-4222-8333-944455556666")
    (home / ".config" / "maxmem").mkdir(parents=True)
    (home / ".config" / "maxmem" / "config.toml").write_text(
        f'embedder = "local"\n[recall]\nwarm_minutes = {warm_minutes}\n')
    db = home / "brain.db"
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    subprocess.run([str(MAXMEM), "--db", str(db), "init"], env=env, capture_output=True, check=True)
    payload = json.dumps({"session_id": "5f0c2a7e-1111-4222-8333-944455556666", "transcript_path": str(transcript),
                          "hook_event_name": "Stop"})
    started = time.perf_counter()
    subprocess.run([str(MAXMEM), "--db", str(db), "hook", "stop"], input=payload, env=env, capture_output=True,
                   text=True, check=True)
    while time.perf_counter() - started < 600:
        done = subprocess.run([sys.executable, "-c", "import apsw,sys; print(*apsw.Connection(sys.argv[1]).execute("
                               "'SELECT count(*), count(embedded_at) FROM memories').fetchone())", str(db)],
                              capture_output=True, text=True, check=True)
        stored, embedded = map(int, done.stdout.split())
        if stored and stored == embedded:
            return time.perf_counter() - started
        time.sleep(0.5)
    return float("inf")


def load(processes: int, seconds: float) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", BURN, str(seconds)]) for _ in range(processes)]


def stop(burners: list[subprocess.Popen[bytes]]) -> None:
    for burner in burners:
        burner.terminate()
    for burner in burners:
        burner.wait()


def stats(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(values):5.2f} s  p99 {p99:5.2f} s  max {max(values):5.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--load", type=int, default=8, help="busy processes of the loaded rounds (0: idle only)")
    parser.add_argument("--max-load-seconds", type=float, default=240.0)
    parser.add_argument("--db", type=Path, default=ROOT / "brain.db.sample")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="maxmem-start-bench-"))
    try:
        run(args, work)
    finally:
        for folder in work.glob("*/.local/state/maxmem"):
            stop_servers(folder)  # the recall servers the warm rounds and the capture started
        shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, work: Path) -> None:
    db = work / "brain.db"
    shutil.copy(args.db, db)
    homes = {}
    for name, minutes in (("cold", 0), ("warm", 30)):
        config = work / name / ".config" / "maxmem" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(f"[recall]\nwarm_minutes = {minutes}\n")
        homes[name] = {"HOME": str(work / name), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    hook = [str(MAXMEM), "--db", str(db), "hook", "user-prompt"]
    timed(hook, homes["warm"], PROMPT)  # starts the recall server
    mcp_first_answers([str(MAXMEM), "--db", str(db), "mcp"], homes["cold"])  # as setup does: answers kept
    time.sleep(3.0)
    measures: dict[str, Callable[[], float]] = {
        "floor (python -c pass)": lambda: timed([sys.executable, "-c", "pass"], homes["cold"]),
        "prompt hook, cold": lambda: timed(hook, homes["cold"], PROMPT),
        "prompt hook, warm": lambda: timed(hook, homes["warm"], PROMPT),
        "mcp initialize + tools/list": lambda: mcp_first_answers([str(MAXMEM), "--db", str(db), "mcp"],
                                                                 homes["cold"]),
    }
    rounds = [("idle", 0)] + ([(f"load {args.load}", args.load)] if args.load else [])
    print(f"{os.cpu_count()} cores, {args.runs} runs each, brain {args.db.name}; "
          f"load: {args.load} busy processes")
    for label, processes in rounds:
        burners = load(processes, args.max_load_seconds)
        try:
            time.sleep(1.0 if processes else 0.0)
            results = {name: [measure() for _ in range(args.runs)] for name, measure in measures.items()}
        finally:
            stop(burners)
        floor = statistics.median(results["floor (python -c pass)"])
        print(f"\n{label} (load average now {os.getloadavg()[0]:.1f})")
        for name, values in results.items():
            ratio = statistics.median(values) / floor
            print(f"  {name:<30} {stats(values)}   {ratio:5.1f}x the floor")
        cold = sorted(results["prompt hook, cold"])[-1]
        print(f"  prompt hook cold p99 against Claude Code's 10 s timeout: {cold / 10.0:.0%} of it")
    print("\nstop hook to every memory it stored embedded, no scheduler (load as it is now):")
    for label, minutes in (("by the recall server", 30), ("by a background maxmem embed", 0)):
        print(f"  {label:<30} {capture_to_vectors(work, minutes):5.1f} s")


if __name__ == "__main__":
    main()
