"""Stop words of the languages keyword search splits at spaces (maxmem/search/stopwords.py)."""

from __future__ import annotations

import pytest

from maxmem import Brain
from maxmem.search import hybrid
from maxmem.search.hybrid import keyword_terms
from maxmem.search.stopwords import ENGLISH, STOP_WORDS


@pytest.mark.parametrize(("question", "terms"), [
    ("where do we keep the invoices", ["keep", "invoices"]),
    ("wo liegen unsere Rechnungen", ["liegen", "rechnungen"]),
    ("wer kann uns reinlassen, wenn wir uns aussperren", ["reinlassen", "aussperren"]),
    ("où sont rangées les factures", ["rangées", "factures"]),
    ("combien va nous coûter l'appartement l'an prochain", ["va", "coûter", "appartement", "prochain"]),
    ("cuándo hablo con el estudio sobre el puesto", ["hablo", "estudio", "sobre", "puesto"]),
    ("Dónde están las facturas", ["facturas"]),
])
def test_a_questions_grammar_is_not_asked(question, terms):
    assert keyword_terms(question) == terms


def test_english_content_words_stay_in_an_english_question():
    assert keyword_terms("my son lost his hat in the bin") == ["son", "lost", "hat", "bin"]
    assert not STOP_WORDS & {"son", "hat", "bin", "man", "fast", "come", "sale", "comment", "os", "era"}
    assert ENGLISH < STOP_WORDS


@pytest.mark.parametrize(("question", "terms"), [
    ("what did grandpa say about the war", ["grandpa", "say", "war"]),
    ("how long to let the concrete cure before we pour the slab", ["long", "let", "concrete", "cure", "pour", "slab"]),
    ("which AI model is the default in the LA office", ["ai", "model", "default", "la", "office"]),
    ("why do the ES modules fail to load", ["es", "modules", "fail", "load"]),
    ("is the fox den near the creek", ["fox", "den", "near", "creek"]),
])
def test_another_languages_grammar_stays_in_an_english_question(question, terms):
    assert keyword_terms(question) == terms


def test_a_question_of_stop_words_only_is_asked_whole():
    assert keyword_terms("wo ist das") == ["wo", "ist", "das"]


def test_a_memory_sharing_only_grammar_with_a_question_is_not_found(tmp_path):
    with Brain.open(tmp_path / "b.db", embedder="none") as brain:
        brain.remember("Hugo tiene cita con el médico el lunes a las 19:15.", category="core")
        wanted = brain.remember("La entrevista de trabajo con la agencia es el miércoles.", category="core")
        brain.remember("Hugo hat am Montag um 8 Uhr einen Termin mit der Bank.", category="core")
        found = [hit.memory.uid for hit in brain.search("cuándo es la entrevista con el estudio", mode="keyword")]
        assert found == [wanted.uid]
        german = brain.search("wann ist der Termin mit dem Studio", mode="keyword")
        assert [hit.memory.content[:8] for hit in german] == ["Hugo hat"]


def test_a_question_in_german_french_or_spanish_weighs_its_keyword_side_less(brain):
    less = hybrid.OTHER_LANGUAGE_KEYWORD_SHARE
    assert hybrid.keyword_share("quand ai-je l'appel avec le studio pour le poste") == less
    assert hybrid.keyword_share("wann ist der Termin mit dem Studio") == less
    assert hybrid.keyword_share("when is the call with the studio about the job") == 1.0
    assert hybrid.keyword_share("is the war in LA more than a plus for us") == 1.0
    brain.remember_many([{"content": "L'entretien avec le studio a lieu mercredi."},
                         {"content": "The call with the studio is on Wednesday."}])
    share = hybrid.OTHER_LANGUAGE_KEYWORD_SHARE * brain.config.keyword_weight / (
        brain.config.vector_weight + brain.config.keyword_weight)
    french = brain.search("quand ai-je l'appel avec le studio", explain=True, min_relevance=0)
    assert french and all(h.explain["weights"] == [round(1 - share, 4), round(share, 4)] for h in french)
    english = brain.search("when is the call with the studio", explain=True, min_relevance=0)
    total = brain.config.vector_weight + brain.config.keyword_weight
    assert english and all(h.explain["weights"] == [round(brain.config.vector_weight / total, 4),
                                                    round(brain.config.keyword_weight / total, 4)] for h in english)
