"""bench/multilingual_eval.py: its hard set (languages, halves, parallel filler, nothing the
redactor changes) and the keyword-search variants it compares."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import multilingual_eval as me  # noqa: E402

from maxmem import Brain  # noqa: E402
from maxmem.memory import Filters  # noqa: E402
from maxmem.redact import redact  # noqa: E402
from maxmem.search.hybrid import keyword_candidates, keyword_terms  # noqa: E402

HARD = json.loads(me.SETS["hard"].read_text(encoding="utf-8"))


def test_the_hard_set_asks_every_fact_in_every_language_twice():
    facts = HARD["facts"]
    assert len({f["id"] for f in facts}) == len(facts) == 36
    for f in facts:
        assert set(f["memory"]) == set(f["query"]) == set(me.LANGUAGES)
        assert all(len(me.questions(f, lang)) == 2 for lang in me.LANGUAGES)
        assert set(f["substring"]) == set(me.SPACELESS)
        assert all(word in f["memory"][lang] for lang, word in f["substring"].items())
    other = sum(len(me.questions(f, lang)) for f in facts for lang in me.LANGUAGES if lang != "en")
    assert other >= 150


def test_both_halves_cover_every_topic():
    halves = Counter((f["topic"], f["half"]) for f in HARD["facts"])
    topics = {f["topic"] for f in HARD["facts"]}
    assert all(halves[(topic, half)] == 3 for topic in topics for half in ("dev", "held-out"))


def test_the_redactor_leaves_every_memory_as_written():
    assert [m for f in HARD["facts"] for m in f["memory"].values() if redact(m)[1]] == []


def test_the_filler_is_parallel_in_the_seven_languages():
    filler = HARD["filler"]
    english = filler["en"]
    for lang in me.LANGUAGES:
        assert {k: len(v) for k, v in filler[lang]["slots"].items()} == {k: len(v) for k, v in english["slots"].items()}
        slots = [sorted(re.findall(r"\{(\w+)\}", t)) for t in filler[lang]["templates"]]
        assert slots == [sorted(re.findall(r"\{(\w+)\}", t)) for t in english["templates"]]
    texts = me.memories(HARD, "hard", 300)
    assert len(texts) == len(set(texts)) == 36 * 7 + 300 * 7


def test_the_variants_switch_what_keyword_search_asks(tmp_path):
    question = "cuándo hablo con el estudio sobre el puesto"
    with me.english_stop_words():
        assert "con" in keyword_terms(question)
    assert "con" not in keyword_terms(question)
    with Brain.open(tmp_path / "b.db", embedder="none") as brain:
        brain.remember("我们决定把发票存放在服务器上", category="core")
        with me.unicode61_english():
            assert keyword_candidates(brain.db, "发票", Filters(), 10) == {}
        assert len(keyword_candidates(brain.db, "发票", Filters(), 10)) == 1


def test_either_keeps_the_better_of_the_two_sides_per_question():
    results: me.Ranks = {("now", "vector", "ko", "dev"): [None, 12, 2, None],
                         ("now", "keyword", "ko", "dev"): [3, None, 7, None]}
    assert me.either(results, "now", "ko", ("dev",)) == [3, 12, 2, None]
    assert me.share(me.either(results, "now", "ko", ("dev",)), 10) == 50.0
