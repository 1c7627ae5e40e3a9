"""Relevance: evidence read from the real keyword index, and a calibrated scale."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from maxmem import Brain, InvalidInput
from maxmem.cli import cli
from maxmem.config import DEFAULT_MIN_RELEVANCE, Config, load_config
from maxmem.errors import ConfigError
from maxmem.search import relevance as rel

NOTES = [
    "We deploy the web app with Watchtower on the atlas server",
    "Ada adopted a grey cat called Pixel",
    "The atlas server has 64 GB of memory",
    "Lunch with Ben on Friday at the noodle bar",
]


@pytest.fixture
def filled(brain):
    ids = [brain.remember(text, category="daily").id for text in NOTES]
    return brain, ids


def test_idf_is_bm25s():
    assert rel.idf(100, 0) == pytest.approx(math.log(1 + 100.5 / 0.5))
    assert rel.idf(100, 100) < rel.idf(100, 10) < rel.idf(100, 1)


def test_query_terms_weigh_rare_words_and_count_unknown_ones(filled):
    brain, _ = filled
    terms = rel.query_terms(brain.db, "How do we deploy to atlas with kubernetes?")
    assert set(terms.weights) == {"deploy", "atlas", "kubernetes"}
    # "atlas" is in two memories, "deploy" in one, "kubernetes" in none
    assert terms.weights["kubernetes"] > terms.weights["deploy"] > terms.weights["atlas"]
    total = sum(terms.weights.values())
    assert terms.unknown == pytest.approx(terms.weights["kubernetes"] / total)
    assert terms.cover(["deploy", "atlas"]) == pytest.approx(1 - terms.unknown)
    assert rel.query_terms(brain.db, "deploy atlas").unknown == 0.0


def test_document_frequencies_are_the_match_counts(filled):
    """The vocabulary lookup counts what a MATCH of the quoted term counts, after edits
    and deletions, for stemmed words, diacritics, a date word, phrases and unknown words."""
    brain, ids = filled
    more = [brain.remember(text, category="daily").id for text in [
        "Deploying atlas again: the café_menu is served", "Le café de la gare", "cafe society",
        "deployed on the atlas", "the atlas atlas atlas", "¿qué?"]]
    brain.update(ids[2], content="The atlas server moved to the basement")
    brain.update(more[4], content="nothing left here")
    brain.forget(ids[3])
    brain.forget(more[0])
    brain.remember("Pixel sleeps on the atlas server", category="daily", tags=["cat", "atlas"])
    terms = ["deploy", "deploying", "atlas", "café", "cafe", "café_menu", "pixel", "cat", "noodle",
             "kubernetes", "_", "qué", "november", "2026", "served"]
    counts = rel.document_frequencies(brain.db, terms, brain.keyword_tokenizer)
    assert counts == {t: brain.db.scalar(rel.DF_SQL, ('"' + t.replace('"', '""') + '"',)) for t in terms}
    assert counts["atlas"] == 4 and counts["kubernetes"] == 0 and counts["noodle"] == 0


def test_matched_terms_read_the_index_with_its_stemmer(filled):
    brain, ids = filled
    found = rel.matched_terms(brain.db, ["deploying", "atlas", "cat"], ids)
    assert found[ids[0]] == {"deploying", "atlas"}  # porter: deploying ~ deploy
    assert found[ids[1]] == {"cat"} and found[ids[2]] == {"atlas"} and found[ids[3]] == set()
    assert rel.matched_terms(brain.db, ["atlas"], []) == {}


def test_evidence_of_each_hit(filled):
    brain, ids = filled
    found = rel.evidence(brain.db, "deploy on atlas", {ids[0]: 0.4, ids[3]: None})
    assert found[ids[0]] == rel.Evidence(0.4, pytest.approx(1.0), 0.0, memories=4)
    assert found[ids[3]].cosine is None and found[ids[3]].cover == 0.0


def test_relevance_is_a_probability_that_grows_with_the_evidence():
    weak, strong = rel.Evidence(0.1, 0.2, 0.0), rel.Evidence(0.5, 0.9, 0.0)
    assert 0.0 <= rel.relevance(weak) < rel.relevance(strong) <= 1.0
    unknown = rel.Evidence(0.1, 0.2, 0.7)
    assert rel.relevance(unknown) < rel.relevance(weak)
    # without a cosine the keyword evidence alone decides, on the same scale
    assert rel.relevance(rel.Evidence(None, 0.2, 0.7)) < rel.relevance(rel.Evidence(None, 0.9, 0.0))
    assert 0.0 < rel.relevance(rel.Evidence(5.0, 1.0, 0.0)) < 1.0  # a cosine out of range is clipped


def test_keyword_evidence_counts_less_in_a_small_brain_and_not_at_all_when_silent():
    assert rel.keyword_weight(rel.CALIBRATED_MEMORIES) == 1.0 == rel.keyword_weight(100_000)
    assert 0.0 < rel.keyword_weight(3) < rel.keyword_weight(100) < 1.0
    # A hit the vectors found though it shares no word with the query: the keywords
    # count against it fully in a brain the size of the calibration's, less in a small one.
    assert rel.relevance(rel.Evidence(0.86, 0.0, 0.8, memories=3)) > rel.relevance(
        rel.Evidence(0.86, 0.0, 0.8, memories=600))
    # No telling word of the query is known (KEYWORDS_SILENT): the cosine alone judges,
    # as it does every hit of a vector search, whatever the keywords say.
    by_cosine = rel.relevance(rel.Evidence(0.86, 0.0, 0.0), "vector")
    assert rel.relevance(rel.Evidence(0.86, 0.0, 1.0, memories=600)) == by_cosine
    assert rel.relevance(rel.Evidence(0.86, 1.0, 0.0), "vector") == by_cosine
    assert rel.relevance(rel.Evidence(0.80, 0.0, 0.0), "vector") < by_cosine


# -- through Brain.search and the CLI --------------------------------------------

def test_every_hit_carries_its_relevance(filled):
    brain, ids = filled
    hits = brain.search("deploy to atlas", explain=True, min_relevance=0)
    assert hits[0].memory.id == ids[0]
    assert all(0.0 <= h.relevance <= 1.0 for h in hits)
    assert hits[0].relevance == max(h.relevance for h in hits)
    assert hits[0].to_dict()["relevance"] == round(hits[0].relevance, 4)
    assert hits[0].explain["cover"] == 1.0 and hits[0].explain["unknown"] == 0.0
    assert hits.plan.best_relevance == hits[0].relevance and hits.plan.min_relevance == 0


def test_nothing_relevant_is_an_empty_result_with_a_note(filled):
    brain, _ = filled
    question = "what is the kubernetes cluster password?"  # no word of it in any memory
    assert brain.search(question, min_relevance=0)  # the least bad hits are still there...
    cut = brain.search(question)
    assert cut == []  # ...but below the default threshold
    plan = cut.plan
    assert plan.best_relevance < plan.min_relevance == brain.config.min_relevance > 0
    assert "nothing relevant" in plan.note
    assert brain.search("deploy to atlas")  # a question the brain can answer passes
    assert brain.search("deploy to atlas", min_relevance=1.0) == []
    for bad in (-0.1, 1.5, "high", True):
        with pytest.raises(InvalidInput, match="min_relevance must be a number from 0 to 1"):
            brain.search("atlas", min_relevance=bad)


def test_min_relevance_comes_from_the_config(tmp_path, monkeypatch):
    monkeypatch.setenv("MAXMEM_MIN_RELEVANCE", "0.5")
    assert load_config().min_relevance == 0.5
    monkeypatch.setenv("MAXMEM_MIN_RELEVANCE", "2")
    with pytest.raises(ConfigError, match="min_relevance must be from 0 to 1"):
        load_config()
    assert Config().min_relevance == DEFAULT_MIN_RELEVANCE


def test_a_paraphrase_the_vectors_find_is_not_vetoed_by_the_keywords(tmp_path, local_embedder):
    with Brain.open(tmp_path / "b.db", embedder=local_embedder) as b:
        b.remember_many([
            {"content": "We moved the family photos to the Synology NAS in the basement"},
            {"content": "Dinner reservation at 7pm on Friday"},
            {"content": "The kids' dentist appointment is next Tuesday"},
        ])
        hits = b.search("where are our pictures stored?")  # no word shared
        assert hits and hits[0].memory.content.startswith("We moved the family photos")
        # In a brain of three the gate favours showing the closest memory (the meaning
        # route): a question it cannot answer is kept too, but rates lower.
        unknown = b.search("what is the wifi password?", min_relevance=0).plan.best_relevance
        assert unknown is not None and hits.plan.best_relevance is not None
        assert unknown < hits.plan.best_relevance


def test_cli_says_nothing_relevant_and_exits_0(tmp_path):
    db = str(tmp_path / "b.db")
    run = CliRunner().invoke
    assert run(cli, ["--db", db, "--embedder", "none", "remember", "The NAS backup runs at 02:30"]).exit_code == 0
    r = run(cli, ["--db", db, "--embedder", "none", "search", "tax return deadline"])
    assert r.exit_code == 0 and r.stdout == "no memories found\n"  # not a single word matches
    question = ["search", "the tax return deadline before the backup"]
    r = run(cli, ["--db", db, "--embedder", "none", *question, "--min-relevance", "0.5"])
    assert r.exit_code == 0 and r.stdout.startswith("nothing relevant: the closest memory's relevance is")
    r = run(cli, ["--db", db, "--embedder", "none", *question, "--min-relevance", "0"])
    assert r.exit_code == 0 and "The NAS backup" in r.stdout
    r = run(cli, ["--db", db, "--embedder", "none", "search", "backup", "--min-relevance", "0.01", "--json"])
    assert json.loads(r.stdout)["hits"][0]["relevance"] > 0.01
    r = run(cli, ["--db", db, "--embedder", "none", "search", "when does the backup run?", "--explain"])
    assert "relevance" in r.stdout and "cover" in r.stdout


# Brains of three exchanges, as a hook stores them.
EXCHANGES = [("Where did we put the staging database?", "Staging Postgres now listens on port 5433 on db2."),
             ("And the invoices?", "Invoice PDFs are rendered nightly by the billing worker."),
             ("What did the kids want for the birthday?", "A red bicycle with a bell and a basket.")]


def exchange(question: str, answer: str) -> dict:
    return {"content": f"user: {question}\nassistant: {answer}", "category": "conversation"}


def test_in_a_brain_of_three_a_paraphrase_is_found_and_an_unrelated_question_is_not(tmp_path, local_embedder):
    with Brain.open(tmp_path / "b.db", embedder=local_embedder) as b:
        b.remember_many([exchange(q, a) for q, a in EXCHANGES])
        for query in ("present for a child's party", "gift for my daughter's birthday"):
            for mode in ("hybrid", "vector"):
                hits = b.search(query, mode=mode)
                assert hits and "bicycle" in hits[0].memory.content, (query, mode, hits.plan.note)
        # The default gate favours keeping answers: in a brain this small an unrelated
        # question is kept too (docs/relevance.md, the meaning route), but it rates lower.
        found = min(b.search(q, min_relevance=0).plan.best_relevance
                    for q in ("present for a child's party", "gift for my daughter's birthday"))
        for query in ("what is the wifi password?", "who won the football match on Saturday?"):
            assert b.search(query, min_relevance=0).plan.best_relevance < found, query


def test_relevance_does_not_depend_on_how_the_brain_was_filled(tmp_path, local_embedder):
    # One at a time, the quantizer's centre is the first two memories' mean; all at
    # once, the three's: the centred cosines differ, the relevance must not.
    relevances = []
    for n, one_by_one in enumerate((True, False)):
        with Brain.open(tmp_path / f"b{n}.db", embedder=local_embedder) as b:
            if one_by_one:
                for q, a in EXCHANGES:
                    b.remember_many([exchange(q, a)])
            else:
                b.remember_many([exchange(q, a) for q, a in EXCHANGES])
            hit = b.search("present for a child's party", explain=True, min_relevance=0)[0]
            relevances.append((hit.relevance, hit.explain["cosine"]))
    (first, centred_1), (second, centred_2) = relevances
    assert first == pytest.approx(second, abs=1e-4)
    assert abs(centred_1 - centred_2) > 0.05  # the ranking's centred cosine did move


def test_paraphrases_and_unrelated_questions_in_tiny_and_medium_brains(tmp_path, local_embedder):
    """bench/relevance_probe.py on part of its probe (12 memories with 24 paraphrases, 10
    unrelated queries, 60 filler memories): tiny brains of 3 memories, a medium one of 72.
    Figures measured with the calibration of this commit; a little slack for rounding."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import locomo
    import relevance_probe as rp

    probe = rp.load()
    part = tmp_path / "part.json"
    part.write_text(json.dumps({"pairs": [{"memory": m, "queries": q} for m, q in probe.pairs[:12]],
                                "unrelated": probe.unrelated[:10], "filler": probe.filler[:60]}))
    embedder = locomo.CachedEmbedder(local_embedder, tmp_path / "cache.sqlite")  # each text once
    try:
        asked = rp.run(rp.load(part), embedder, tmp_path)
    finally:
        embedder.close()
    got = rp.summarise(asked)
    # Brains this young favour silence (relevance.STANDOUT_MARGINS): nearly every unrelated
    # query is cut, and in the medium brain under half the paraphrases are found.
    measured = {"tiny hybrid": (21, 39), "tiny vector": (21, 39), "medium hybrid": (10, 9),
                "medium vector": (13, 9)}
    for key, (found, cut) in measured.items():
        assert got[key]["found"] >= found - 2 and got[key]["unrelated_cut"] >= cut - 1, (key, got[key])


def test_a_vector_search_with_an_uncalibrated_embedder_carries_no_relevance_and_is_not_cut(tmp_path, openai_config):
    # The OpenAI-compatible server on loopback (e5 behind it, but named "e5-test"): the
    # cosine terms were not fitted on this model, so a vector search cannot be judged.
    with Brain.open(tmp_path / "o.db", config=openai_config) as b:
        b.remember_many([exchange(q, a) for q, a in EXCHANGES])
        hits = b.search("what is the wifi password?", mode="vector")
        assert hits and all(h.relevance is None for h in hits)
        assert hits.plan.best_relevance is None and "min_relevance is not applied" in hits.plan.note
        # hybrid: the keyword fit judges (no word of it in any memory)
        assert b.search("what is the wifi password?") == []


# A memory and a question for it that shares no word with it (the shared-word check of
# bench/paraphrase_eval.py passes on it), and one the brain cannot answer.
VLAN = "IoT devices live on VLAN 20; the NAS sits on VLAN 10."
LAYOUT = "network layout for the smart home gadgets"
UNRELATED = "what is the capital of Peru?"


def paraphrase_brain(path: Path, embedder, memories: int) -> Brain:
    """A brain of `memories`: VLAN among the paraphrase set's other memories and the
    benchmark's filler (agent memories made from templates)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import paraphrase_eval as pe

    others = [p.memory for p in pe.load_set() if p.memory != VLAN][: memories // 2]
    texts = [VLAN, *others, *pe.filler(memories - 1 - len(others))]
    brain = Brain.open(path, embedder=embedder)
    brain.remember_many([{"content": t, "category": "daily"} for t in texts], near=False)  # the corpus as it is
    return brain


@pytest.mark.parametrize("memories", [16, 400])
def test_a_paraphrase_sharing_no_word_is_kept_and_an_unrelated_question_cut(tmp_path, local_embedder, memories):
    with paraphrase_brain(tmp_path / "b.db", local_embedder, memories) as b:
        assert b.db.scalar(rel.SIZE_SQL) == memories
        ranked = b.search(LAYOUT, explain=True, min_relevance=0)
        wanted = next(h for h in ranked[:3] if h.memory.content == VLAN)  # (the Wi-Fi note shares "network")
        assert wanted.explain["cover"] == 0.0 and wanted.explain["lift"] > 0
        hits = b.search(LAYOUT)  # the default gate
        assert VLAN in [h.memory.content for h in hits[:3]], hits.plan.note
        # An unrelated question rates well below it, and of bench/paraphrase_eval.py's forty
        # unrelated queries some are cut (measured: 2 of 40 at 16 memories, 8 at 400; the
        # default favours keeping answers, docs/relevance.md).
        assert b.search(UNRELATED, min_relevance=0).plan.best_relevance < hits.plan.best_relevance / 2
        queries = json.loads((Path(__file__).resolve().parent.parent / "bench" / "data" /
                              "unrelated_queries.json").read_text())["queries"]
        assert sum(not b.search(q) for q in queries) >= {16: 1, 400: 6}[memories]


def test_the_lift_is_the_cosine_less_the_brains_typical_cosine(tmp_path, local_embedder):
    with paraphrase_brain(tmp_path / "b.db", local_embedder, 16) as b:
        vectors = np.vstack(list(b.vectors.stored(r["id"] for r in b.db.rows("SELECT id FROM memories")).values()))
        query = b.vectors.embed_query(LAYOUT)
        mean = b.vectors.mean()
        assert rel.typical(query, mean) == pytest.approx(float((vectors @ query).mean()), abs=1e-3)
        hit = b.search(LAYOUT, explain=True, min_relevance=0)[0]
        assert hit.explain["lift"] == pytest.approx(hit.explain["similarity"] - float((vectors @ query).mean()),
                                                    abs=1e-3)


def test_the_lead_is_taken_over_the_ten_ranked_hits_whatever_the_limit(tmp_path, local_embedder):
    with paraphrase_brain(tmp_path / "b.db", local_embedder, 16) as b:
        ranked = b.search(LAYOUT, explain=True, min_relevance=0, limit=15)
        assert len(ranked) > 10
        expected = rel.lead(h.explain["similarity"] for h in ranked[:10])
        assert expected is not None and expected > 0
        assert all(h.explain["lead"] == pytest.approx(expected, abs=1e-4) for h in ranked)
        assert b.search(LAYOUT, explain=True, min_relevance=0, limit=3)[0].explain["lead"] == pytest.approx(
            expected, abs=1e-4)


def test_the_meaning_route_can_only_raise_a_relevance():
    # A hit matching none of the query's words, in a brain that knows them elsewhere:
    # the keyword fit alone puts it low, the meaning route judges it on its cosine and lift.
    silent = rel.Evidence(0.86, 0.0, 0.3, memories=5000)
    assert rel.standing(silent) is None and rel.relevance(silent) < DEFAULT_MIN_RELEVANCE
    standing = replace(silent, lift=0.1)
    assert rel.relevance(standing) == pytest.approx(1 / (1 + math.exp(-rel.standing(standing))))
    assert rel.relevance(standing) > rel.relevance(silent)
    # the keyword evidence still speaks for a hit the meaning route rates lower
    strong = rel.Evidence(0.86, 1.0, 0.0, memories=500)
    assert rel.relevance(replace(strong, lift=0.0)) == rel.relevance(strong) > 0.5
    for lift in (-0.05, 0.0, 0.05, 0.1):  # and in every mode
        for mode in ("hybrid", "vector"):
            assert rel.relevance(replace(silent, lift=lift), mode) >= rel.relevance(silent, mode)
    # a brain smaller or bigger than those measured is judged as the nearest measured size
    low, high = rel.STANDING_MEMORIES
    assert rel.standing(replace(standing, memories=2)) == rel.standing(replace(standing, memories=low))
    assert rel.standing(replace(standing, memories=10 * high)) == rel.standing(replace(standing, memories=high))


@pytest.mark.parametrize("count", [3, 40])  # read whole; from the in-RAM codes
def test_the_mean_of_the_stored_vectors_follows_every_write(brain, count):
    def exact() -> np.ndarray:
        ids = [r["id"] for r in brain.db.rows("SELECT id FROM memories")]
        return np.vstack(list(brain.vectors.stored(ids).values())).mean(axis=0)

    brain.remember_many([{"content": f"note {i} on the {['atlas', 'pixel', 'noodle'][i % 3]} topic"}
                         for i in range(count)])
    before = brain.vectors.mean()
    assert np.abs(before - exact()).max() < 0.01
    brain.remember("a brand new note about zebras and their stripes")
    after = brain.vectors.mean()
    assert np.abs(after - exact()).max() < 0.01 and np.abs(after - before).max() > 1e-4


def test_a_young_brain_injects_nothing_for_coding_prompts_and_its_fact_for_its_question(tmp_path, local_embedder):
    """Forty notes alike and one personal fact: prompts about code sit as close to the fact
    as prompts about code in general do (its hubness), so the meaning route does not speak
    for it; a question about it stands out and gets it. A fact stored without its vector
    yet is found by its words, ranked by what it has."""
    from maxmem.hooks.recall import recall

    with Brain.open(tmp_path / "young.db", embedder=local_embedder) as b:
        b.remember_many([{"content": "The garage door code was changed to 4471 after the break-in in October.",
                          "category": "core"}]
                        + [{"content": f"Watered the tomato plants on the balcony, day {n}.", "category": "daily"}
                           for n in range(1, 41)], near=False)
        for prompt in ("run the linter again and fix the import order in utils.py",
                       "how do I reverse a list in python?"):
            assert not recall(b, prompt).text, prompt
            assert not b.search(prompt)
        assert recall(b, "what is the code for the garage?").ids
        hit = b.search("what is the code for the garage?", explain=True)[0]
        assert hit.memory.content.startswith("The garage door code") and hit.explain["hub"] is not None
        assert hit.explain["off_topic"] is not None
        (late,) = b.remember_many([{"content": "Core decision: the laptop backup tool is restic, nightly to the NAS.",
                                    "category": "core"}], embed=False)
        assert late.id in [h.memory.id for h in b.search("laptop backup tool", min_relevance=0)[:3]]
        assert late.id in recall(b, "which laptop backup tool did we choose?").ids


def test_the_off_topic_prompts_are_embedded_once_and_kept_in_brain_db(brain, hash_embedder):
    prompts = rel.off_topic_prompts()
    assert len(prompts) >= 200 and all(p.strip() == p and p for p in prompts)
    first = brain.vectors.query_vectors(prompts)
    assert first is not None and first.shape == (len(prompts), hash_embedder.dim)
    before = brain.db.scalar("SELECT count(*) FROM embeddings_cache")
    assert before >= len(set(prompts))
    again = brain.vectors.query_vectors(prompts)
    assert np.allclose(first, again, atol=1e-3)
    assert brain.db.scalar("SELECT count(*) FROM embeddings_cache") == before


def test_hubness_is_the_mean_of_the_nearest_off_topic_cosines():
    bank = np.eye(12, 4, dtype=np.float32)[:12]
    bank[4:] = np.array([0.6, 0.8, 0, 0], dtype=np.float32)
    found = rel.hubness({7: np.array([1, 0, 0, 0], dtype=np.float32)}, bank)
    top = sorted(bank @ np.array([1, 0, 0, 0], dtype=np.float32))[-rel.HUB_NEIGHBOURS:]
    assert found[7] == pytest.approx(float(np.mean(top)))
    assert rel.hubness({7: np.ones(4, dtype=np.float32)}, None) == {}


def test_the_query_closeness_to_the_off_topic_prompts_is_the_mean_of_its_nearest():
    bank = np.zeros((6, 4), dtype=np.float32)
    bank[:, 0] = [0.9, 0.8, 0.7, 0.1, 0.0, -0.5]
    query = np.array([1, 0, 0, 0], dtype=np.float32)
    assert rel.off_topic(query, bank) == pytest.approx(np.mean([0.9, 0.8, 0.7][:rel.OFF_TOPIC_NEIGHBOURS]))
    assert rel.off_topic(query, None) is None and rel.off_topic(query, bank[:0]) is None


def test_a_hit_that_does_not_stand_out_from_the_off_topic_prompts_is_not_relevant():
    # a strong keyword match, its meaning standing out too: relevant
    found = rel.Evidence(0.86, 1.0, 0.0, 50, lift=0.08, hub=0.80, off_topic=0.80)
    assert found.standout == pytest.approx(0.12) and rel.relevance(found) > 0.5
    # the same hit for a query nearer prompts about code than this memory: nothing speaks for it
    coding = replace(found, hub=0.85, off_topic=0.90)
    assert coding.standout < rel.required_standout(50) and rel.relevance(coding) == 0.0
    # without the off-topic prompts' vectors (no hub, no closeness) the hit is judged as before
    assert rel.relevance(replace(coding, hub=None, off_topic=None)) > 0.5
    # the margin at the sizes it was chosen at, linear in log N between, held beyond them
    (low, at_low), (young, at_young), (high, at_high) = rel.STANDOUT_MARGINS
    assert rel.required_standout(1) == rel.required_standout(low) == pytest.approx(at_low)
    assert rel.required_standout(high) == rel.required_standout(100 * high) == pytest.approx(at_high)
    assert rel.required_standout(young) == pytest.approx(at_young)
    assert rel.required_standout(int((young * high) ** 0.5)) == pytest.approx((at_young + at_high) / 2, abs=1e-4)
    # a bigger grown brain asks more; a young brain of 50 favours silence and asks the most
    assert at_low < at_high < at_young


def test_a_young_brain_favours_silence():
    """A hit whose standout would pass in a brain of 5 or 500 memories is cut in one of 50."""
    found = rel.Evidence(0.84, 0.0, 1.0, 50, lift=0.09, hub=0.82, off_topic=0.85)
    assert found.standout == pytest.approx(0.01)
    assert rel.relevance(found) == 0.0
    assert rel.relevance(replace(found, memories=5)) > 0.0
    assert rel.relevance(replace(found, memories=500)) > 0.0


def test_the_local_models_vectors_of_the_off_topic_prompts_are_shipped_and_current():
    """scripts/make_offtopic_vectors.py writes them; edited prompts without a rerun are
    caught here (maxmem would embed them on a brain's first search instead)."""
    shipped = rel.shipped_vectors(f"{rel.CALIBRATED_EMBEDDER}:384")
    assert shipped is not None and shipped.shape == (len(rel.off_topic_prompts()), 384)
    assert np.allclose(np.linalg.norm(shipped, axis=1), 1.0, atol=1e-3)
    assert rel.shipped_vectors("openai:text-embedding-3-small:1536") is None


def test_the_lead_is_the_best_cosine_over_the_mean_of_its_next_rivals():
    cosines = [0.80, None, 0.90, 0.85, 0.84, 0.83, 0.82, 0.81, 0.10]
    rivals = [0.85, 0.84, 0.83, 0.82, 0.81][:rel.LEAD_RIVALS]
    assert rel.lead(cosines) == pytest.approx(0.90 - float(np.mean(rivals)))
    assert rel.lead([0.9, 0.7]) == pytest.approx(0.2)  # fewer rivals than LEAD_RIVALS: those there are
    assert rel.lead([0.9]) is None and rel.lead([None, 0.9]) is None and rel.lead([]) is None


def test_the_meaning_route_speaks_only_when_the_best_hit_leads_its_rivals():
    # no word of the query in the memory, its meaning standing out: the route keeps it
    found = rel.Evidence(0.86, 0.0, 0.5, 5000, lift=0.09, hub=0.80, off_topic=0.80)
    assert rel.relevance(found) > 0.3
    assert rel.relevance(replace(found, lead=rel.ROUTE_LEAD)) == rel.relevance(found)
    # among rivals as close as it: the route is silent, and the keyword fit finds nothing for it
    crowded = replace(found, lead=rel.ROUTE_LEAD / 2)
    assert rel.relevance(crowded) < 0.055
    # the keyword fits still speak for a hit that matches the query's words, however crowded
    assert rel.relevance(replace(crowded, cover=1.0, unknown=0.0)) > 0.5


def test_a_best_hit_that_leads_its_rivals_by_far_needs_less_standout():
    """What the search's best cosine leads by beyond LEAD_CREDIT makes up for standout, one for one."""
    assert rel.lead_credit(None) == 0.0 and rel.lead_credit(rel.LEAD_CREDIT) == 0.0
    assert rel.lead_credit(rel.LEAD_CREDIT + 0.02) == pytest.approx(0.02)
    # a hit 0.002 short of the young brain's margin, its meaning standing out: cut
    found = rel.Evidence(0.84, 0.0, 1.0, 50, lift=0.09, hub=0.82, off_topic=0.85, lead=rel.LEAD_CREDIT)
    assert found.standout == pytest.approx(rel.required_standout(50) - 0.002)
    assert rel.relevance(found) == 0.0
    # its search's best cosine leading by 0.001 more than LEAD_CREDIT: still 0.001 short
    assert rel.relevance(replace(found, lead=rel.LEAD_CREDIT + 0.001)) == 0.0
    # by 0.003 more: enough, and the meaning route keeps it
    assert rel.relevance(replace(found, lead=rel.LEAD_CREDIT + 0.003)) > 0.055
    # leads that large are not a search among thousands of memories (ROUTE_LEAD is the route's, far below)
    assert rel.ROUTE_LEAD < rel.LEAD_CREDIT
