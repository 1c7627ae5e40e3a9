"""The literal prefilter never changes a detection: it is checked against the slow
reference (`Rules(prefilter=False)` tries every rule on every sentence) on generated
texts built from the rules' own strings, on the labelled set and the transcript
fixtures, and for generated user patterns."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from maxmem.settings import TriggerSettings
from maxmem.triggers.detect import classify, detect_triggers
from maxmem.triggers.prefilter import ASCII_FOLD, needed_literals
from maxmem.triggers.rules import default_rules, load_rules

ROOT = Path(__file__).resolve().parent.parent
LABELLED = [json.loads(line) for line in (ROOT / "tests" / "data" / "triggers_labelled.jsonl").read_text().splitlines()]
CONFIGS = [
    None,
    {"enabled": ["decision", "failure"], "min_words": 2, "max_words": 30},
    {"guards": [r"\bjust kidding\b"], "lesson": {"patterns": [r"\bwe locked in\b", r"(?:x|y)?\d+"], "roles": ["user"]},
     "remember": {"patterns": [r"(?i:bookmark)(?!s)|\bfile\s+this\b", r"(a)\1\b"], "replace": True}},
]
RULES = [load_rules(TriggerSettings.from_table(config) if config else None) for config in CONFIGS]
EXAMPLES = int(os.environ.get("MAXMEM_FUZZ_EXAMPLES", "300"))


def _reference(rules):
    return dataclasses.replace(rules, prefilter=False)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _fixture_texts():
    texts = [item["text"] for item in LABELLED]
    for path in sorted((ROOT / "tests" / "fixtures").rglob("*.json*")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                texts.extend(_strings(json.loads(line)))
            except ValueError:
                continue
    return texts


def _same_detections(turns, rules):
    fast = detect_triggers(turns, rules=rules)
    assert fast == detect_triggers(turns, rules=_reference(rules))
    return fast


@pytest.mark.parametrize("rules", RULES)
def test_fixture_texts_give_the_reference_detections(rules):
    texts = _fixture_texts()
    turns = [{"role": role, "content": text, "id": n} for n, text in enumerate(texts) for role in ("user", "assistant")]
    # Whole labelled sentences spliced into longer turns, so context and order count too.
    turns += [{"role": "user", "content": " ".join(texts[n : n + 4]), "id": n} for n in range(0, len(texts), 3)]
    assert len(_same_detections(turns, rules)) > 100  # not vacuous: hits, with their context and order


# --- generated texts ----------------------------------------------------------------

_KEYWORDS = sorted({lit for rules in RULES for lits in rules._literals.values() for lit in lits})
_WORDS = sorted({w for item in LABELLED for w in item["text"].split()})
_GLUE = [" ", " ", " ", ", ", ". ", "? ", "! ", ": ", " — ", "\n", "\n\n", "\n- ", "`", '"', "'", "’", "    "]
_ODD = {"i": ["\u0131", "\u0130"], "s": ["\u017f"], "k": ["\u212a"]}


@st.composite
def texts(draw):
    pieces = draw(st.lists(st.one_of(st.sampled_from(_KEYWORDS), st.sampled_from(_WORDS), st.sampled_from(_GLUE),
                                     st.text(max_size=6)), min_size=1, max_size=40))
    text = "".join(draw(st.sampled_from([p, p.upper(), p.title(), p + " "])) for p in pieces)
    # The letters that re.IGNORECASE matches to ASCII ones must not hide a keyword.
    swaps = draw(st.lists(st.integers(0, max(len(text) - 1, 0)), max_size=4))
    chars = list(text)
    for at in swaps:
        if chars and chars[at].lower() in _ODD:
            chars[at] = draw(st.sampled_from(_ODD[chars[at].lower()]))
    return "".join(chars)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(texts(), st.sampled_from(["user", "assistant", "tool"])), min_size=1, max_size=4),
       st.sampled_from(range(len(RULES))))
def test_generated_turns_give_the_reference_detections(turns, which):
    rules = RULES[which]
    _same_detections([{"role": role, "content": text, "id": n} for n, (text, role) in enumerate(turns)], rules)
    for text, role in turns:
        assert classify(text, role, rules) == classify(text, role, _reference(rules))


# --- generated patterns -------------------------------------------------------------

_ATOMS = ["we", "decided", "ab", "a", "b", "ki", "s", "K", r"\w", r"\s", ".", "[ab]", "[^a]", r"\d", r"\b",
          "^", "$", "—"]


def _patterns():
    def wrap(inner):
        return st.one_of(
            st.tuples(inner, inner).map("".join),
            st.tuples(inner, inner).map("|".join),
            st.tuples(st.sampled_from(["(?:", "(", "(?=", "(?!", "(?>", "(?-i:", "(?<!a)("]), inner)
            .map(lambda t: f"{t[0]}{t[1]})"),
            st.tuples(st.just("(?:"), inner,
                      st.sampled_from(["?", "*", "+", "{2}", "{0,2}", "{1,3}", "+?", "*+", "??"]))
            .map(lambda t: f"{t[0]}{t[1]}){t[2]}"),
            st.tuples(st.just("("), inner, st.just(r")\1")).map("".join),
        )

    return st.recursive(st.sampled_from(_ATOMS), wrap, max_leaves=8)


@settings(max_examples=2 * EXAMPLES, deadline=None)
@given(_patterns(), st.lists(st.text(alphabet="abdeiwcsKk\u0131\u0130\u017f\u212a .—\n", max_size=12),
                             min_size=1, max_size=6))
def test_a_pattern_is_tried_whenever_it_can_match(pattern, samples):
    try:
        regex = re.compile(pattern, re.IGNORECASE)
    except re.error:
        assume(False)
    rules = load_rules(TriggerSettings.from_table(
        {"enabled": ["decision"], "decision": {"patterns": [pattern], "replace": True}}))
    [(rule, _)] = rules._by_role["user"]
    for sample in samples + ["".join(samples), " ".join(samples)]:
        if regex.search(sample):
            assert rule in rules.candidates(sample, "user"), (pattern, sample, needed_literals(pattern, regex.flags))


def test_every_default_rule_has_a_prefilter_and_the_strings_are_right():
    assert all(needs for role in default_rules()._by_role.values() for _, needs in role)
    flags = re.IGNORECASE | re.UNICODE
    assert needed_literals(r"\bwe\s+(?:decided|agreed)\b", flags) == {"decided", "agreed"}
    assert needed_literals(r"licen[cs]e|degree", flags) == {"licen", "degree"}
    assert needed_literals(r"(?:foo)?bar", flags) == {"bar"}
    assert needed_literals(r"(?:foo)?\w+", flags) is None
    assert needed_literals(r"(?=decided)\w+", flags) is None
    assert needed_literals(r"(a|\d)", flags) is None


def test_ascii_fold_covers_every_letter_ignorecase_matches_to_ascii():
    ascii_char = re.compile("[\x00-\x7f]", re.IGNORECASE)
    odd = {chr(c) for c in range(128, sys.maxunicode + 1) if ascii_char.match(chr(c))}
    assert odd == {chr(c) for c in ASCII_FOLD}
    for char in odd:
        assert re.fullmatch(re.escape(char.translate(ASCII_FOLD)), char, re.IGNORECASE)


def test_letters_ignorecase_matches_to_ascii_letters_still_fire():
    text = "We dec\u0131ded to u\u017fe Postgres. I prefer \u212aotlin. Remember th\u0130s."
    assert classify(text) == classify(text, rules=_reference(default_rules())) == [
        ("remember", "remember-that"), ("decision", "we-decided"), ("preference", "i-prefer")]
