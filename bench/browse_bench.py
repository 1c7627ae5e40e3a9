#!/usr/bin/env python3
"""maxmem browse at 100k memories: the search page against the CLI's search, and the
overview page's load time, measured side by side in one run.

The brain is built the way bench/core_bench.py builds one (its generated notes and
e5-like vectors, stored through Brain.remember_many with the vectors handed out
precomputed), recorded as the local e5 model's vectors so that the server, the CLI
and this process all embed the questions with the real model (`--embedder local`).
Memories are spread over a year and the four categories, so the overview, timeline
and charts have something to count.

For each of core_bench's 20 questions, in turn:
- page: GET /maxmem/search?q=…&limit=10 from the running `maxmem browse` (a subprocess,
  warmed by one search first), the whole HTML answer, connection included;
- cli: `maxmem search Q -n 10 --json`, the command as a person runs it (a new process:
  Python start, Brain.open, the vector index loaded, the model loaded, the search);
- brain: Brain.search(Q, limit=10) in this process with the index already loaded, i.e.
  the search alone, the floor of any interface.
The page's target is < 2× the CLI's time; its ratio to the warm Brain.search is the
cost the web page adds on top of the search itself (HTTP, the Brain's process, HTML).

The overview: GET / (server time) and a full load in headless Chromium (Playwright's
goto until the load event), the first and then repeated; target < 1 s.

    python bench/browse_bench.py                  # 100,000 memories (a few minutes)
    python bench/browse_bench.py --n 5000         # quicker
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import core_bench

from maxmem import Brain, LocalEmbedder
from maxmem.clock import iso

CATEGORIES = ("daily", "daily", "conversation", "conversation", "conversation", "project", "core")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def build(path: Path, n: int) -> float:
    """A brain of `n` memories over the last year; returns the seconds it took."""
    rows = core_bench.texts(n)
    vectors = core_bench.e5_like(n, 384)
    embedder = core_bench.Precomputed(dict(zip(rows, vectors)), {}, 384)
    embedder.provider, embedder.model = LocalEmbedder.provider, LocalEmbedder.model  # type: ignore[misc]
    now = datetime.now(UTC)
    started = time.perf_counter()
    with Brain.open(path, embedder=embedder) as brain:
        for start in range(0, n, 10_000):
            brain.remember_many([
                {"content": text, "category": CATEGORIES[i % len(CATEGORIES)],
                 "created_at": iso(now - timedelta(minutes=(n - i) * 525_600 // n))}
                for i, text in enumerate(rows[start:start + 10_000], start=start)
            ], near=False)
    os.chmod(path, 0o600)
    return time.perf_counter() - started


class Server:
    def __init__(self, db: Path, home: Path) -> None:
        env = {**os.environ, "MAXMEM_HOME": str(home), "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "maxmem", "--db", str(db), "--embedder", "local", "browse", "--port", "0",
             "--read-only"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        ready, _, _ = select.select([self.process.stdout], [], [], 300)
        line = self.process.stdout.readline().strip() if ready else ""  # type: ignore[union-attr]
        if not line.startswith("http://"):
            self.process.kill()
            raise SystemExit(f"maxmem browse did not start: {self.process.stderr.read()[-2000:]}")  # type: ignore[union-attr]
        parts = urllib.parse.urlsplit(line)
        self.address = line  # with this run's token
        self.url = f"{parts.scheme}://{parts.netloc}/"
        self.token = urllib.parse.parse_qs(parts.query)["token"][0]
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 0

    def get(self, path: str) -> tuple[float, int, int]:
        """One GET on a new connection (uvicorn drops an idle one after 5 s), timed whole."""
        started = time.perf_counter()
        conn = http.client.HTTPConnection(self.host, self.port, timeout=300)
        conn.request("GET", path, headers={"Authorization": f"Bearer {self.token}"})
        response = conn.getresponse()
        body = response.read()
        conn.close()
        return time.perf_counter() - started, response.status, len(body)

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def cli_search(db: Path, home: Path, query: str) -> tuple[float, list[int]]:
    env = {**os.environ, "MAXMEM_HOME": str(home)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "maxmem", "--db", str(db), "--embedder", "local", "search",
                           query, "-n", "10", "--json"], capture_output=True, text=True, env=env, check=True)
    elapsed = time.perf_counter() - started
    return elapsed, [h["memory"]["id"] for h in json.loads(done.stdout)["hits"]]


def browser_loads(server: Server, repeats: int) -> list[float] | None:
    """Seconds to the load event of the overview in Chromium, first load first (after the
    browser has traded the token for its cookie on a static file, so the first load is
    still the overview's first)."""
    if not Path(CHROMIUM).exists():
        return None
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(server.address.replace("/?", "/-/static/app.css?"))
        page.wait_for_url(server.url + "-/static/app.css")
        for _ in range(repeats):
            started = time.perf_counter()
            response = page.goto(server.url, wait_until="load")
            times.append(time.perf_counter() - started)
            if response is None or response.status != 200:
                raise SystemExit(f"the overview did not load in Chromium: {response and response.status}")
        browser.close()
    return times


def ms(values: list[float]) -> str:
    return f"p50 {1e3 * statistics.median(values):.1f} ms, max {1e3 * max(values):.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000, help="memories in the brain")
    parser.add_argument("--queries", type=int, default=20, help="how many of core_bench's questions")
    parser.add_argument("--repeats", type=int, default=10, help="overview loads")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    queries = core_bench.QUESTIONS[: args.queries]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        os.chmod(tmp, 0o700)
        db, home = tmp / "brain.db", tmp / "home"
        seconds = build(db, args.n)
        print(f"built {args.n:,} memories in {seconds:.0f} s ({db.stat().st_size / 1e6:.0f} MB)", flush=True)
        server = Server(db, home)
        try:
            with Brain.open(db, embedder="local") as brain:
                brain.search(queries[0], track=False)  # the index and the model, loaded once
                server.get("/maxmem/search?" + urllib.parse.urlencode({"q": queries[0]}))  # likewise
                page, cli, warm, same = [], [], [], 0
                for query in queries:
                    t, status, _ = server.get("/maxmem/search?" + urllib.parse.urlencode({"q": query, "limit": 10}))
                    assert status == 200, status
                    page.append(t)
                    t, cli_ids = cli_search(db, home, query)
                    cli.append(t)
                    started = time.perf_counter()
                    hits = brain.search(query, limit=10, track=False)
                    warm.append(time.perf_counter() - started)
                    same += [h.memory.id for h in hits] == cli_ids
            overview = [server.get("/")[0] for _ in range(args.repeats)]
            pages = {name: server.get(path)[0] for name, path in (
                ("timeline", "/maxmem/timeline"), ("charts", "/maxmem/charts"), ("memory", "/maxmem/memory/1"),
                ("jobs (maxmem doctor)", "/maxmem/jobs"), ("Datasette memories table", "/brain/memories"))}
            loads = browser_loads(server, args.repeats)
        finally:
            server.close()
    result: dict[str, Any] = {
        "n": args.n, "queries": len(queries),
        "page_p50_ms": 1e3 * statistics.median(page), "cli_p50_ms": 1e3 * statistics.median(cli),
        "brain_p50_ms": 1e3 * statistics.median(warm),
        "page_over_cli": statistics.median(page) / statistics.median(cli),
        "page_over_brain": statistics.median(page) / statistics.median(warm),
        "same_top10_as_cli": same,
        "overview_http_p50_ms": 1e3 * statistics.median(overview), "overview_http_max_ms": 1e3 * max(overview),
        "overview_browser_ms": [1e3 * t for t in loads] if loads else None,
        "pages_ms": {k: 1e3 * v for k, v in pages.items()},
    }
    print(f"search, {len(queries)} questions at {args.n:,} memories:")
    print(f"  page  GET /maxmem/search       {ms(page)}")
    print(f"  cli   maxmem search (process)  {ms(cli)}")
    print(f"  brain Brain.search (warm)      {ms(warm)}")
    print(f"  page / cli   = {result['page_over_cli']:.2f}  (target < 2)")
    print(f"  page / brain = {result['page_over_brain']:.2f}  (what the web page adds to the search itself)")
    print(f"  same top 10 as the CLI: {same}/{len(queries)}")
    print(f"overview: GET / {ms(overview)}" + (
        f"; in Chromium first load {1e3 * loads[0]:.0f} ms, then {ms(loads[1:] or loads)}" if loads else
        "; (no /usr/bin/chromium: browser load not measured)") + "  (target < 1 s)")
    for name, value in pages.items():
        print(f"  {name}: {1e3 * value:.0f} ms")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
