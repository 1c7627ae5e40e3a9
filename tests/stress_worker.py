"""One process of the concurrency and crash tests (and bench/concurrency_bench.py).

    python tests/stress_worker.py ROLE DB SECONDS LOG [--seed N] [--embed-url URL]

Runs ROLE against brain.db at DB for SECONDS, appending one JSON line per event to
LOG (flushed at once, so a killed process leaves what it acknowledged):
  {"op": "remember", "uid": ..., "wait": s}   a write the caller saw succeed
  {"op": "forget", "uid": ...}                a delete the caller saw succeed
  {"op": "search", "hits": n, "wait": s}
  {"op": "error", "type": ..., "msg": ...}    a MaxmemError a user would have seen
Anything else escaping is a crash: the traceback goes to stderr and the exit code is 1.

Roles:
  agent      remember one memory, then search, in a loop (the agent's own process)
  writer     remember_many batches of 20 (a bulk job)
  capture    append lines to a JSONL transcript and run the capture job on it
  retention  store back-dated daily memories, then run retention (archive + delete)
  sync       push to a PostgreSQL that is down: must fail cleanly every time
  searcher   search only
  embedder   embed_pending in a loop (backfills memories stored without vectors)
  forgetter  remember then forget its own memories
  probe      a one-row write every 20 ms: how long others hold the write lock
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conftest import HashEmbedder  # noqa: E402

from maxmem import Brain, Config, MaxmemError  # noqa: E402

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray").split()


class Log:
    def __init__(self, path: str, role: str) -> None:
        self.handle = open(path, "a", encoding="utf-8")
        self.role = role

    def write(self, **event: object) -> None:
        event["role"] = self.role
        event["t"] = round(time.time(), 4)
        self.handle.write(json.dumps(event) + "\n")
        self.handle.flush()


def sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def open_brain(db: str, args: argparse.Namespace, embedder: object = "hash") -> Brain:
    if args.embed_url:
        config = Config(embedder="openai", openai_base_url=args.embed_url, openai_api_key="sk-test-key",
                        openai_model="e5-test", embed_timeout=5.0, embed_max_retries=1)
        return Brain.open(db, embedder="openai", config=config)
    return Brain.open(db, embedder=HashEmbedder() if embedder == "hash" else embedder)


def timed(log: Log, op: str, fn, **extra: object):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    try:
        result = fn()
    except MaxmemError as exc:
        log.write(op="error", during=op, type=type(exc).__name__, msg=str(exc),
                  wait=time.perf_counter() - started)
        return None
    return result, time.perf_counter() - started


def agent(brain: Brain, log: Log, rng: random.Random, end: float) -> None:
    n = 0
    while time.time() < end:
        n += 1
        text = f"agent {os.getpid()} note {n}: {sentence(rng)}"
        got = timed(log, "remember", lambda: brain.remember(text, category="daily", tags=["agent"]))
        if got:
            log.write(op="remember", uid=got[0].uid, wait=got[1])
        got = timed(log, "search", lambda: brain.search(sentence(rng, 3), limit=5))
        if got:
            log.write(op="search", hits=len(got[0]), wait=got[1])


def writer(brain: Brain, log: Log, rng: random.Random, end: float) -> None:
    n = 0
    while time.time() < end:
        items = []
        for _ in range(20):
            n += 1
            items.append({"content": f"writer {os.getpid()} item {n}: {sentence(rng, 30)}",
                          "category": "project", "metadata": {"n": n}})
        got = timed(log, "remember", lambda: brain.remember_many(items))
        if got:
            for memory in got[0]:
                log.write(op="remember", uid=memory.uid, wait=got[1] / len(items))


def capture(brain: Brain, log: Log, rng: random.Random, end: float, folder: Path) -> None:
    from maxmem.capture import run_capture

    folder.mkdir(parents=True, exist_ok=True)
    transcript = folder / f"session-{os.getpid()}.jsonl"
    n = 0
    while time.time() < end:
        with open(transcript, "a", encoding="utf-8") as handle:
            for _ in range(rng.randint(2, 8)):
                n += 1
                role = "user" if n % 2 else "assistant"
                handle.write(json.dumps({"id": f"m{n}", "role": role, "content": f"turn {n}: {sentence(rng, 20)}",
                                         "timestamp": f"2026-11-30T10:{n // 60 % 60:02d}:{n % 60:02d}Z",
                                         "session_id": f"s{os.getpid()}"}) + "\n")
        got = timed(log, "capture", lambda: run_capture(brain, paths=[transcript], format="jsonl"))
        if got:
            log.write(op="capture", lines=n, wait=got[1], memories=got[0].to_dict().get("memories"))
        time.sleep(0.05)


def retention(brain: Brain, log: Log, rng: random.Random, end: float, folder: Path) -> None:
    from maxmem.retention.policy import load_policy
    from maxmem.retention.run import apply
    from maxmem.settings import RetentionSettings

    policy = load_policy(RetentionSettings(archive_dir=folder, batch_size=25))
    n = 0
    while time.time() < end:
        items = []
        for _ in range(30):
            n += 1
            items.append({"content": f"old {os.getpid()} {n}: {sentence(rng, 10)}", "category": "daily",
                          "created_at": "2020-01-01T00:00:00Z"})
        got = timed(log, "remember", lambda: brain.remember_many(items))
        if got:
            for memory in got[0]:
                log.write(op="expire", uid=memory.uid)
        got = timed(log, "retention", lambda: apply(brain, policy))
        if got:
            log.write(op="retention", deleted=got[0]["deleted_total"], wait=got[1])


def sync(brain: Brain, log: Log, rng: random.Random, end: float) -> None:
    from maxmem.sync.pgpush import push

    dsn = "postgresql://maxmem:s3cret-pw@127.0.0.1:9/maxmem?connect_timeout=2"
    while time.time() < end:
        got = timed(log, "sync", lambda: push(brain, dsn))
        if got:
            log.write(op="sync-unexpected-success")
        time.sleep(0.2)


def searcher(brain: Brain, log: Log, rng: random.Random, end: float) -> None:
    while time.time() < end:
        got = timed(log, "search", lambda: brain.search(sentence(rng, 4), limit=10))
        if got:
            log.write(op="search", hits=len(got[0]), wait=got[1])


def embedder(brain: Brain, log: Log, rng: random.Random, end: float) -> None:
    while time.time() < end:
        got = timed(log, "embed", lambda: brain.embed_pending(batch_size=50).embedded)
        if got:
            log.write(op="embed", done=got[0], wait=got[1])
        time.sleep(0.1)


def probe(brain: Brain, log: Log, rng: random.Random, end: float) -> None:
    """A tiny write every 20 ms: its wait is how long the others held the write lock."""
    n = 0
    while time.time() < end:
        n += 1
        started = time.perf_counter()
        try:
            with brain.db.atomic():
                brain.db.set_meta(f"probe:{os.getpid()}", str(n))
        except MaxmemError as exc:
            log.write(op="error", during="probe", type=type(exc).__name__, msg=str(exc))
            continue
        log.write(op="probe", wait=time.perf_counter() - started)
        time.sleep(0.02)


def forgetter(brain: Brain, log: Log, rng: random.Random, end: float) -> None:
    n = 0
    while time.time() < end:
        n += 1
        got = timed(log, "remember", lambda: brain.remember(f"forget me {os.getpid()} {n} {sentence(rng, 5)}"))
        if not got:
            continue
        log.write(op="remember", uid=got[0].uid, wait=got[1])
        if n % 2 == 0:
            uid = got[0].uid
            done = timed(log, "forget", lambda: brain.forget(uid))
            if done:
                log.write(op="forget", uid=uid, wait=done[1])


ROLES = {"agent": agent, "writer": writer, "searcher": searcher, "embedder": embedder,
         "forgetter": forgetter, "sync": sync, "probe": probe}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("role")
    parser.add_argument("db")
    parser.add_argument("seconds", type=float)
    parser.add_argument("log")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--embed-url")
    parser.add_argument("--folder", default=None, help="transcripts / archives folder")
    args = parser.parse_args()
    log = Log(args.log, args.role)
    rng = random.Random(args.seed or os.getpid())
    folder = Path(args.folder or Path(args.db).parent / f"{args.role}-files")
    try:
        brain = open_brain(args.db, args)
    except MaxmemError as exc:
        log.write(op="error", during="open", type=type(exc).__name__, msg=str(exc))
        return 0
    end = time.time() + args.seconds
    try:
        with brain:
            if args.role == "capture":
                capture(brain, log, rng, end, folder)
            elif args.role == "retention":
                retention(brain, log, rng, end, folder)
            else:
                ROLES[args.role](brain, log, rng, end)
    except Exception:
        traceback.print_exc()
        log.write(op="crash", msg=traceback.format_exc().splitlines()[-1])
        return 1
    log.write(op="done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
