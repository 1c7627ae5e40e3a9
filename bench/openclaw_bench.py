#!/usr/bin/env python3
"""What the OpenClaw plugin adds to a turn, measured in node, beside the in-process floor.

The plugin (maxmem/data/openclaw-plugin/index.js) is loaded by a small node driver
the way OpenClaw's Gateway holds it: one long-lived node process that calls its
`before_prompt_build` handler and its `memory_search` tool and times each call
(`performance.now()` around the awaited call). `openclaw/plugin-sdk/plugin-entry`
is a stub of one line there (definePluginEntry returns its argument, as OpenClaw's
does), so only node is needed, not OpenClaw. Timed side by side, in turns, on the
same brain.db and prompts:

- floor: `Brain.search` in this Python process, brain.db and the model already open;
- socket: the prompt hook asking the warm recall server over its Unix socket from
  node (the plugin's config names the socket, as `maxmem setup openclaw` writes it);
- command: the plugin starting `maxmem hook user-prompt` (whose short path asks the
  same warm server): what it does when it has no socket to ask;
- cold: the command with [recall] warm_minutes = 0: everything loaded per prompt
  (a session's first prompt, before the server is up);
- memory_search: the tool, which starts `maxmem search --json` on every call.

Brains of 1k and 10k memories, built as bench/hook_bench.py builds them (real vectors
for the notes the prompts ask about, e5-like synthetic ones for the filler).

    python bench/openclaw_bench.py                    # 1k and 10k, 10 prompts each
    python bench/openclaw_bench.py --sizes 1000 --prompts 5
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from hook_bench import build, home_with, pct, wait_for_server

from maxmem import Brain, LocalEmbedder
from maxmem.config import state_dir
from maxmem.hooks import warm
from maxmem.hooks.warm import socket_path, stop_servers

MAXMEM = Path(sys.executable).parent / "maxmem"
PLUGIN = ROOT / "maxmem" / "data" / "openclaw-plugin"
DRIVER = """
import { createInterface } from "node:readline";
const config = JSON.parse(process.argv[2]);
const hooks = {}, tools = {};
const api = {
  pluginConfig: config, logger: console,
  registerTool: (tool) => { tools[tool.name] = tool; },
  registerMemoryCapability: () => {},
  on: (name, handler) => { hooks[name] = handler; },
};
(await import("./plugin/index.js")).default.register(api);
for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line);
  const started = performance.now();
  let text = "";
  if (request.op === "prompt") {
    const ctx = { trigger: "user", sessionId: request.session, workspaceDir: "/tmp" };
    const result = await hooks.before_prompt_build({ prompt: request.text, messages: [] }, ctx);
    text = result?.prependContext ?? "";
  } else {
    const result = await tools.memory_search.execute("call", { query: request.text });
    text = result.details.results.length ? JSON.stringify(result.details.results[0]) : "";
  }
  process.stdout.write(JSON.stringify({ ms: performance.now() - started, chars: text.length }) + "\\n");
}
"""


class Driver:
    """One node process holding the plugin with `config`, under `env`."""

    def __init__(self, folder: Path, config: dict, env: dict[str, str]) -> None:
        self.child = subprocess.Popen([node(), str(folder / "driver.mjs"), json.dumps(config)], cwd=folder,
                                      env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def call(self, op: str, text: str, session: str) -> tuple[float, int]:
        assert self.child.stdin is not None and self.child.stdout is not None
        self.child.stdin.write(json.dumps({"op": op, "text": text, "session": session}) + "\n")
        self.child.stdin.flush()
        answer = json.loads(self.child.stdout.readline())
        return answer["ms"] / 1000, answer["chars"]

    def close(self) -> None:
        if self.child.stdin is not None:
            self.child.stdin.close()
        self.child.wait(timeout=30)


def node() -> str:
    found = shutil.which("node")
    if found is None:
        raise SystemExit("node is not installed: the plugin runs in node")
    return found


def driver_folder(tmp: Path) -> Path:
    """The plugin beside a one-line stub of the SDK entry it imports, and the driver."""
    folder = tmp / "driver"
    shutil.copytree(PLUGIN, folder / "plugin")
    sdk = folder / "node_modules" / "openclaw"
    (sdk / "plugin-sdk").mkdir(parents=True)
    exports = {"./plugin-sdk/plugin-entry": "./plugin-sdk/plugin-entry.js"}
    (sdk / "package.json").write_text(json.dumps({"name": "openclaw", "type": "module", "exports": exports}))
    (sdk / "plugin-sdk" / "plugin-entry.js").write_text("export const definePluginEntry = (entry) => entry;\n")
    (folder / "driver.mjs").write_text(DRIVER)
    return folder


def run_size(size: int, prompts_wanted: int, tmp: Path, real: LocalEmbedder, folder: Path) -> dict:
    db = tmp / f"brain-{size}.db"
    prompts = build(db, size, real)[:prompts_wanted]
    warm_env, cold_env = home_with(tmp / f"warm-{size}", 30), home_with(tmp / f"cold-{size}", 0)
    base = {"bin": [str(MAXMEM)], "db": str(db), "brief": False, "capture": False, "timeoutMs": 60000}
    state = state_dir(warm_env)
    socket = {"socket": str(socket_path(state, db, None, warm_env)), "stamp": warm.__file__,
              "log": str(state / "hook.log")}
    drivers = {"socket": Driver(folder, {**base, "warm": socket}, warm_env),
               "command": Driver(folder, base, warm_env), "cold": Driver(folder, base, cold_env)}
    drivers["command"].call("prompt", prompts[0], "start")  # starts the recall server
    wait_for_server(warm_env, db)
    times: dict[str, list[float]] = {k: [] for k in ("floor", "socket", "command", "cold", "memory_search")}
    printed = dict.fromkeys(("socket", "command", "cold"), 0)
    try:
        with Brain.open(db, embedder=real) as brain:
            brain.search("warm up", limit=1, track=False)
            for i, prompt in enumerate(prompts):
                for kind in times:  # in turns: the same load on each
                    if kind == "floor":
                        started = time.perf_counter()
                        brain.search(prompt, limit=6, track=False)
                        took = time.perf_counter() - started
                    elif kind == "memory_search":
                        took, _ = drivers["socket"].call("search", prompt, f"q{i}")
                    else:
                        took, chars = drivers[kind].call("prompt", prompt, f"{kind}{i}")
                        printed[kind] += chars > 0
                    times[kind].append(took)
    finally:
        for driver in drivers.values():
            driver.close()
        stop_servers(state)
    floor = statistics.median(times["floor"])
    return {"size": size, "prompts": len(prompts), "printed": printed,
            **{f"{k}_p50": statistics.median(v) for k, v in times.items()},
            **{f"{k}_p95": pct(v, 0.95) for k, v in times.items()},
            **{f"{k}_ratio": statistics.median(v) / floor for k, v in times.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--prompts", type=int, default=10)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not MAXMEM.is_file():
        raise SystemExit(f"no maxmem entry point beside {sys.executable}: pip install -e .")
    real = LocalEmbedder()
    results = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        folder = driver_folder(tmp)
        for size in (int(s) for s in args.sizes.split(",")):
            results.append(run_size(size, args.prompts, tmp, real, folder))
    kinds = ("floor", "socket", "command", "cold", "memory_search")
    print(f"the OpenClaw plugin's calls, timed in node, {os.cpu_count()} cores; seconds p50 / p95 (÷ floor p50)")
    print("| memories | " + " | ".join(kinds) + " |")
    print("|---:|" + "---:|" * len(kinds))
    for r in results:
        cells = [f"{r[k + '_p50']:.3f} / {r[k + '_p95']:.3f}" + ("" if k == "floor" else f" ({r[k + '_ratio']:.1f}×)")
                 for k in kinds]
        print(f"| {r['size']:,} | " + " | ".join(cells) + " |")
    for r in results:
        print(f"  {r['size']:,}: recall added memories for " + ", ".join(
            f"{r['printed'][k]}/{r['prompts']} prompts {k}" for k in ("socket", "command", "cold")))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
