"""Curation: near-duplicates (real local embedder), supersede, core budget and review, history."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from maxmem import Brain, Config, InvalidInput, NotFound
from maxmem.cli import cli
from maxmem.curation import is_near_duplicate
from maxmem.errors import ConfigError
from maxmem.review import core_budget, core_review


@pytest.fixture
def local_brain(tmp_path, local_embedder, clock):
    with Brain.open(tmp_path / "brain.db", embedder=local_embedder, clock=clock) as b:
        yield b


def _config(**curation) -> Config:
    return Config.from_tables({"curation": curation})


# -- near-duplicates on remember (real multilingual-e5-small) -------------------------

def test_restatement_updates_the_memory_instead_of_adding_one(local_brain):
    first = local_brain.remember("My passport expires in March 2027.", category="core", tags=["travel"])
    stored = local_brain.remember_item({"content": "Remember that my passport expires in March 2027.",
                                        "category": "core", "tags": ["documents"], "importance": 0.9})
    again = stored.memory
    assert again.id == first.id and stored.action == "updated"
    assert again.content == "Remember that my passport expires in March 2027."  # the newer, fuller wording
    assert again.tags == ["travel", "documents"] and again.importance == 0.9
    assert again.metadata["restated"] == 1 and again.metadata["restated_similarity"] >= 0.93
    assert local_brain.stats()["categories"]["core"] == 1
    versions = local_brain.history(first.id)
    assert [v["op"] for v in versions] == ["upsert", "upsert"]
    assert "content" in versions[1]["changed"]
    assert versions[0]["memory"]["content"] == "My passport expires in March 2027."


def test_related_but_different_facts_are_both_kept(local_brain):
    a = local_brain.remember("We decided to use PostgreSQL for the billing service.", category="core")
    b = local_brain.remember("We decided to use PostgreSQL for the analytics service.", category="core")
    c = local_brain.remember("We shipped version 2.0 to all customers today.", category="core")
    d = local_brain.remember("We shipped version 2.1 to all customers today.", category="core")
    assert len({a.id, b.id, c.id, d.id}) == 4


def test_near_duplicates_only_within_a_category(local_brain):
    a = local_brain.remember("My passport expires in March 2027.", category="core")
    b = local_brain.remember("Remember that my passport expires in March 2027.", category="daily")
    assert a.id != b.id


def test_a_shorter_restatement_keeps_the_fuller_text(local_brain):
    full = local_brain.remember("Please remember that the client's fiscal year ends in June.", category="core")
    short = local_brain.remember("Please remember that the client's fiscal year ends in June!", category="core")
    assert short.id == full.id and short.content == full.content


PASSPORT = {"content": "My passport expires in March 2027.", "category": "core", "tags": ["travel"]}
RESTATED = {"content": "Remember that my passport expires in March 2027.", "category": "core",
            "tags": ["documents"], "importance": 0.9}
KEPT = ("content", "category", "tags", "importance", "metadata", "pinned", "kind", "title")


def test_remember_many_updates_a_stored_near_duplicate_as_remember_does(tmp_path, local_embedder, clock):
    with Brain.open(tmp_path / "one.db", embedder=local_embedder, clock=clock) as one, \
         Brain.open(tmp_path / "many.db", embedder=local_embedder, clock=clock) as many:
        by_one = [one.remember(**PASSPORT), one.remember(**RESTATED)]
        by_many = [many.remember(**PASSPORT), *many.remember_many([RESTATED])]
        assert by_one[0].id == by_one[1].id and by_many[0].id == by_many[1].id
        assert [{k: getattr(m, k) for k in KEPT} for m in by_many] == [{k: getattr(m, k) for k in KEPT}
                                                                          for m in by_one]
        assert by_many[1].content == RESTATED["content"] and by_many[1].metadata["restated"] == 1
        assert many.stats()["categories"]["core"] == 1
        assert [v["op"] for v in many.history(by_many[0].id)] == ["upsert", "upsert"]  # the old wording kept
        assert many.history(by_many[0].id)[0]["memory"]["content"] == PASSPORT["content"]
        assert many.search("passport", limit=1)[0].memory.content == RESTATED["content"]  # re-embedded


def test_remember_many_folds_a_near_duplicate_of_an_earlier_item_into_it(tmp_path, local_embedder, clock):
    with Brain.open(tmp_path / "one.db", embedder=local_embedder, clock=clock) as one, \
         Brain.open(tmp_path / "many.db", embedder=local_embedder, clock=clock) as many:
        other = {"content": "We decided to use PostgreSQL for the billing service.", "category": "core"}
        by_one = [one.remember(**item).id for item in (PASSPORT, other, RESTATED, PASSPORT)]
        by_many = many.remember_many([PASSPORT, other, RESTATED, PASSPORT])
        assert [m.id for m in by_many] == [by_many[0].id, by_many[1].id, by_many[0].id, by_many[0].id]
        assert [{k: getattr(m, k) for k in KEPT} for m in by_many] == [{k: getattr(one.get(i), k) for k in KEPT}
                                                                          for i in by_one]
        assert by_many[0].metadata["restated"] == 2  # the last one restated the merged memory again
        assert many.stats()["categories"]["core"] == 2


def test_remember_many_keeps_related_but_different_facts_and_other_categories(local_brain):
    items = [{"content": "We decided to use PostgreSQL for the billing service.", "category": "core"},
             {"content": "We decided to use PostgreSQL for the analytics service.", "category": "core"},
             {"content": "We shipped version 2.0 to all customers today.", "category": "core"},
             {"content": "We shipped version 2.1 to all customers today.", "category": "core"},
             PASSPORT, {**RESTATED, "category": "daily"}]
    assert len({m.id for m in local_brain.remember_many(items)}) == 6


def test_remember_many_looks_only_where_asked_and_where_a_vector_is(tmp_path, local_embedder, clock):
    with Brain.open(tmp_path / "b.db", embedder=local_embedder, clock=clock) as b:
        assert len({m.id for m in b.remember_many([PASSPORT, RESTATED], near=False)}) == 2
    with Brain.open(tmp_path / "off.db", embedder=local_embedder, clock=clock, config=_config(dedup=False)) as b:
        assert len({m.id for m in b.remember_many([PASSPORT, RESTATED])}) == 2
    with Brain.open(tmp_path / "pending.db", embedder=local_embedder, clock=clock) as b:
        stored = b.remember(**PASSPORT)
        pending = b.remember_many([RESTATED], embed=False)[0]  # no vector yet: exact copies only
        assert pending.id != stored.id and pending.embedded_at is None
        b.prefetch_vectors([{**RESTATED, "content": RESTATED["content"] + "!"}])
        cached = b.remember_many([{**RESTATED, "content": RESTATED["content"] + "!"}], embed=False)[0]
        assert cached.id in (stored.id, pending.id)  # its cached vector found what it restates


def test_dedup_can_be_turned_off(tmp_path, local_embedder, clock):
    with Brain.open(tmp_path / "b.db", embedder=local_embedder, clock=clock, config=_config(dedup=False)) as b:
        x = b.remember("My passport expires in March 2027.", category="core")
        y = b.remember("Remember that my passport expires in March 2027.", category="core")
        assert x.id != y.id


def test_no_embedder_means_no_near_duplicate_check(tmp_path, clock):
    with Brain.open(tmp_path / "b.db", embedder="none", clock=clock) as b:
        x = b.remember("My passport expires in March 2027.", category="core")
        y = b.remember("Remember that my passport expires in March 2027.", category="core")
        assert x.id != y.id
        assert b.similar("passport") == []


def test_similar_returns_raw_cosine(local_brain):
    m = local_brain.remember("The wifi at the cabin is called Seeblick_5G.", category="core")
    [(found, similarity)] = local_brain.similar("The wifi at the cabin is called Seeblick_5G.", limit=1)
    assert found.id == m.id and similarity == pytest.approx(1.0, abs=1e-4)
    with pytest.raises(InvalidInput):
        local_brain.similar("x", limit=0)


@pytest.mark.parametrize("old, new, sim, expected", [
    ("We shipped 2.0", "We shipped 2.1", 0.999, False),          # numbers differ
    ("Tom leads on-call", "Tom leads on-call", 0.98, True),
    ("Tom leads on-call", "Remember: Tom leads on-call", 0.95, True),   # superset
    ("Tom leads on-call in May", "Tom leads on-call", 0.95, False),     # says less, below 0.98
    ("a b", "a b c", 0.92, False),
])
def test_near_duplicate_rule(old, new, sim, expected):
    assert is_near_duplicate(sim, old, new) is expected


@pytest.mark.parametrize("section, fragment", [
    ({"dedup_threshold": 1.5}, "(0, 1]"),
    ({"dedup_threshold": "high"}, "(0, 1]"),
    ({"dedup": "yes"}, "true or false"),
    ({"core_max_count": -1}, "whole number"),
    ({"colour": "blue"}, "unknown setting"),
])
def test_bad_curation_config(section, fragment):
    with pytest.raises(ConfigError) as err:
        _config(**section)
    assert fragment in str(err.value)


# -- supersede ------------------------------------------------------------------

def test_supersede_links_and_hides_the_old_memory(brain):
    old = brain.remember("The dentist appointment is on Tuesday", category="core")
    new = brain.remember("The dentist appointment moved to Thursday", category="core")
    marked = brain.supersede(old.id, new.uid)
    assert marked.status == "superseded" and marked.superseded_by == new.uid
    assert brain.get(new.id).metadata["supersedes"] == [old.uid]
    assert old.id not in [h.memory.id for h in brain.search("dentist appointment")]
    assert old.id in [h.memory.id for h in brain.search("dentist appointment", include_superseded=True)]
    brain.supersede(old.id, new.id)  # idempotent
    assert brain.get(new.id).metadata["supersedes"] == [old.uid]


def test_supersede_bad_inputs(brain):
    a = brain.remember("alpha fact", category="core")
    b = brain.remember("beta fact", category="core")
    c = brain.remember("gamma fact", category="core")
    with pytest.raises(InvalidInput, match="itself"):
        brain.supersede(a.id, a.id)
    with pytest.raises(NotFound):
        brain.supersede(a.id, 999)
    brain.supersede(a.id, b.id)
    with pytest.raises(InvalidInput, match="already superseded"):
        brain.supersede(a.id, c.id)
    with pytest.raises(InvalidInput, match="itself superseded"):
        brain.supersede(c.id, a.id)
    assert brain.get(c.id).status == "active", "a refused supersede changes nothing"


# -- core budget, review, recall tracking ------------------------------------------

def test_core_budget_warns_in_stats_and_doctor(tmp_path, hash_embedder):
    db = tmp_path / "brain.db"
    config = _config(core_max_count=2, core_max_tokens=10_000).with_(db_path=db)
    with Brain.open(db, embedder=hash_embedder, config=config) as b:
        for i in range(3):
            b.remember(f"core fact number {i}", category="core")
        budget = core_budget(b)
    assert budget["over"] and "3 core memories (budget 2)" in budget["warning"]
    (tmp_path / "config.toml").write_text(
        f'db_path = "{db}"\nembedder = "none"\n[curation]\ncore_max_count = 2\n', encoding="utf-8")
    runner = CliRunner()
    out = runner.invoke(cli, ["--config", str(tmp_path / "config.toml"), "stats"])
    assert out.exit_code == 0 and "core is over budget" in out.output
    doc = runner.invoke(cli, ["--config", str(tmp_path / "config.toml"), "doctor", "--json"])
    check = [c for c in json.loads(doc.output)["checks"] if c["name"] == "core budget"][0]
    assert doc.exit_code == 1 and not check["ok"]


def test_core_review_lists_candidates_by_use(local_brain, clock):
    a = local_brain.remember("The staging cluster is rebuilt every Sunday night.", category="core", importance=0.9)
    b = local_brain.remember_many([{"content": "Every Sunday night the staging cluster gets rebuilt.",
                                    "category": "core", "importance": 0.3}], near=False)[0]  # a pair to review
    c = local_brain.remember("I'm allergic to penicillin.", category="core", importance=0.8)
    d = local_brain.remember("Use pytest, not unittest.", category="core", importance=0.6)
    local_brain.supersede(d.id, c.id)
    clock.advance(days=40)
    hits = local_brain.search("penicillin allergy", limit=1)
    assert hits[0].memory.id == c.id
    recalled = local_brain.get(c.id)
    assert recalled.recall_count == 1 and recalled.last_recalled_at == "2027-01-09T12:00:00.000Z"
    review = core_review(local_brain, limit=5)
    assert [p["ids"] for p in review["near_duplicates"]] == [[a.id, b.id]]
    assert [m.id for m in review["superseded"]] == [d.id]
    assert c.id not in [m.id for m in review["never_recalled"]]
    assert {a.id, b.id} <= {m.id for m in review["never_recalled"]}
    assert review["lowest_importance"][0].id == b.id
    with pytest.raises(InvalidInput):
        core_review(local_brain, limit=0)
    with pytest.raises(InvalidInput):
        core_review(local_brain, threshold=2)


def test_search_without_tracking_does_not_count(brain):
    m = brain.remember("tracked fact about kites", category="core")
    brain.search("kites", track=False)
    assert brain.get(m.id).recall_count == 0
    brain.search("kites")
    assert brain.get(m.id).recall_count == 1


# -- history ----------------------------------------------------------------------

def test_history_of_a_deleted_memory_by_id_and_uid(brain):
    m = brain.remember("short-lived fact", category="daily")
    brain.update(m.id, importance=0.7)
    assert brain.history(m.id)[1]["changed"] == ["importance"]
    brain.forget(m.id)
    by_id = brain.history(m.id)
    assert [v["op"] for v in by_id] == ["upsert", "upsert", "delete"]
    # Forgetting keeps the versions' dates but no copy of the content.
    assert "short-lived fact" not in json.dumps(by_id)
    assert brain.history(m.uid) == by_id
    with pytest.raises(NotFound):
        brain.history(4242)
    with pytest.raises(NotFound):
        brain.history("no-such-uid")


# -- CLI ----------------------------------------------------------------------------

def _db_args(tmp_path):
    return ["--db", str(tmp_path / "cli.db"), "--embedder", "local"]


def test_cli_supersede_history_core_review(tmp_path):
    runner = CliRunner()
    args = _db_args(tmp_path)
    out = runner.invoke(cli, [*args, "remember", "-c", "core", "The dentist is on Tuesday", "--json"])
    old = json.loads(out.output)["id"]
    out = runner.invoke(cli, [*args, "remember", "-c", "core", "The dentist moved to Thursday at 9", "--json"])
    new = json.loads(out.output)["id"]
    out = runner.invoke(cli, [*args, "supersede", f"#{old}", str(new)])
    assert out.exit_code == 0, out.output
    assert f"#{old} superseded by #{new}" in out.output
    out = runner.invoke(cli, [*args, "history", str(old)])
    assert out.exit_code == 0 and "changed" in out.output and "superseded" in out.output
    out = runner.invoke(cli, [*args, "history", str(old), "--json"])
    assert [v["op"] for v in json.loads(out.output)] == ["upsert", "upsert"]
    out = runner.invoke(cli, [*args, "core", "review"])
    assert out.exit_code == 0 and "superseded (delete with" in out.output and f"#{old}" in out.output
    out = runner.invoke(cli, [*args, "core", "review", "--json", "-n", "3"])
    assert json.loads(out.output)["superseded"][0]["id"] == old


def test_cli_remember_says_when_it_updated_a_near_duplicate(tmp_path):
    runner = CliRunner()
    args = _db_args(tmp_path)
    out = runner.invoke(cli, [*args, "remember", "-c", "core", "My passport expires in March 2027."])
    assert out.output.startswith("remembered #1 ")
    out = runner.invoke(cli, [*args, "remember", "-c", "core", "Remember that my passport expires in March 2027."])
    assert out.exit_code == 0 and out.output.startswith("updated #1 ") and "maxmem history 1" in out.output
    out = runner.invoke(cli, [*args, "remember", "-c", "core", "The dentist is on Tuesday"])
    assert out.output.startswith("remembered #2 ")


def test_cli_history_text_of_a_forgotten_memory(tmp_path):
    runner = CliRunner()
    args = ["--db", str(tmp_path / "h.db"), "--embedder", "none"]
    runner.invoke(cli, [*args, "remember", "a secret said by mistake"])
    runner.invoke(cli, [*args, "update", "1", "-i", "0.8"])
    runner.invoke(cli, [*args, "forget", "1"])
    out = runner.invoke(cli, [*args, "history", "1"])
    lines = out.output.splitlines()
    assert out.exit_code == 0 and len(lines) == 3, out.output
    assert lines[0].endswith("created (erased when forgotten)")
    assert lines[1].endswith("changed (erased when forgotten)")
    assert lines[2].endswith("forgotten") and "secret" not in out.output


def test_cli_bad_inputs_are_one_line(tmp_path, capsys):
    from maxmem.cli import main

    args = _db_args(tmp_path)
    main([*args, "remember", "-c", "core", "only fact"])
    capsys.readouterr()
    for argv, code in (
        (["supersede", "1", "1"], 2),
        (["supersede", "1", "99"], 1),
        (["history", "77"], 1),
        (["core", "review", "-n", "0"], 2),
        (["core", "review", "--threshold", "3"], 2),
    ):
        with pytest.raises(SystemExit) as exit_info:
            main([*args, *argv])
        err = capsys.readouterr().err
        assert exit_info.value.code == code, (argv, err)
        assert err.startswith("maxmem: error:") and err.count("\n") == 1, err
