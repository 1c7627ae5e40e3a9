"""Keyword search in scripts written without spaces (maxmem/search/spaced.py)."""

from __future__ import annotations

import json

import pytest
from conftest import database_at_version

from maxmem import Brain, FixedClock
from maxmem.memory import Filters
from maxmem.search import nlquery
from maxmem.search.hybrid import keyword_candidates
from maxmem.search.spaced import SPACED_CHARS, SPACED_RANGES, SPACED_TOKENIZER, spaced_query
from maxmem.store import migrations
from maxmem.sync.terms import Tokenizer

MEMORIES = {
    "zh": "我们决定把发票存放在Hetzner的服务器上",
    "ja": "請求書はHetznerのサーバーに保存することにした",
    "ko": "청구서는 Hetzner 서버에 보관하기로 했다",
    "th": "ข้อมูลลูกค้าเก็บไว้ในฐานข้อมูล",
    "en": "The invoices are kept on the Hetzner server",
}


def keyword(brain: Brain, query: str) -> list[str]:
    return [hit.memory.content for hit in brain.search(query, mode="keyword")]


@pytest.fixture
def brain(tmp_path):
    with Brain.open(tmp_path / "b.db", embedder="none") as brain:
        for text in MEMORIES.values():
            brain.remember(text, category="core")
        yield brain


@pytest.mark.parametrize(("query", "lang"), [("发票", "zh"), ("服务器", "zh"), ("サーバー", "ja"), ("請求書", "ja"),
                                             ("서버", "ko"), ("보관", "ko"), ("ฐานข้อมูล", "th")])
def test_a_word_inside_a_run_of_characters_is_found(brain, query, lang):
    assert keyword(brain, query)[0] == MEMORIES[lang]


def test_a_pair_split_by_other_text_is_not_a_match(brain):
    brain.remember("发票 Hetzner 的", category="core")
    assert "发票 Hetzner 的" not in keyword(brain, "票的")
    assert "发票 Hetzner 的" in keyword(brain, "发票")


def test_an_english_query_is_unaffected(brain):
    assert spaced_query("invoices server") is None
    assert keyword(brain, "invoices") == [MEMORIES["en"]]
    assert brain.db.scalar("SELECT count(*) FROM memories_spaced") == 4  # the English memory has no row


def test_an_edit_and_a_forget_keep_the_index_in_step(brain):
    zh = brain.search("发票", mode="keyword")[0].memory
    brain.db.execute("UPDATE memories SET content = ? WHERE id = ?", ("我们把合同放在保险柜里", zh.id))
    assert MEMORIES["zh"] not in keyword(brain, "发票")
    assert keyword(brain, "合同")[0] == "我们把合同放在保险柜里"
    brain.db.execute("UPDATE memories SET content = ? WHERE id = ?", ("now in English only", zh.id))
    assert keyword(brain, "合同") == []
    ja = brain.search("サーバー", mode="keyword")[0].memory
    brain.forget(ja.uid)
    assert keyword(brain, "サーバー") == []
    assert brain.db.scalar("SELECT count(*) FROM memories_spaced WHERE rowid = ?", (ja.id,)) == 0


@pytest.mark.parametrize("hostile", ['"发票', '发票" OR "x', "发票 NEAR(", "发* AND -", "'; DROP TABLE memories; --",
                                     "\"\" \"", "发票) OR (", "^发票"])
def test_hostile_queries_are_quoted(brain, hostile):
    brain.search(hostile, mode="keyword")  # no FTS5 syntax error
    candidates = keyword_candidates(brain.db, hostile, Filters(), 10)
    assert all(isinstance(i, int) for i in candidates)


def test_the_migration_backfills_an_existing_brain(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    stop = [name for name, _ in migrations.MIGRATIONS].index("0012_spaced_index")
    with database_at_version(path, monkeypatch, stop) as db:
        with db.atomic():
            for n, text in enumerate(MEMORIES.values()):
                db.execute("INSERT INTO memories (uid, category, content, content_hash, created_at, updated_at) "
                           "VALUES (?, 'core', ?, ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
                           (f"u{n}", text, f"h{n}"))
    with Brain.open(path, embedder="none") as brain:
        assert brain.db.scalar("SELECT count(*) FROM memories_spaced") == 4
        assert keyword(brain, "发票")[0] == MEMORIES["zh"]
        assert keyword(brain, "서버")[0] == MEMORIES["ko"]


def test_the_search_ranges_agree_with_the_migration():
    assert SPACED_RANGES == migrations.SPACED_RANGES
    assert SPACED_CHARS == migrations.SPACED_CHARS


def test_the_tokenizer_is_the_one_of_the_index(brain):
    sql = brain.db.scalar("SELECT sql FROM sqlite_master WHERE name = 'memories_spaced'")
    name, *args = SPACED_TOKENIZER
    quoted = args[-1].replace("'", "''")
    assert f"tokenize = '{name} {' '.join(args[:-1])} ''{quoted}'''" in sql


# Texts where memories_spaced's SQL does what a reader might not expect: punctuation of
# those blocks (no token), characters beyond the Basic Multilingual Plane, other text
# before and after a run (a '0'), text that starts with other text and ends with a script
# character (a leading '0' too), more than SPACED_CHARS characters.
TRICKY = ["請求書はHetznerのサーバー・保存", "Hetzner 서버", ".서", "—票—", "é서é", "서  버.", "デ・ザ", "a𠀀b",
          "𠀀 start 서", "ข้อมูล๏ลูกค้า ๚ end", "x" * (SPACED_CHARS - 3) + "가나다", "가" * (SPACED_CHARS + 5)]


def test_the_push_sees_the_tokens_the_index_holds(tmp_path):
    # What the PostgreSQL push sends of a memory (sync/terms.Tokenizer.spaced) is what
    # memories_spaced holds of it, token for token: its length and, column by column,
    # every token and pair of neighbouring tokens (read back through fts5vocab).
    with Brain.open(tmp_path / "b.db", embedder="none") as brain:
        for n, text in enumerate([*TRICKY, *MEMORIES.values()]):
            m = brain.remember(text, title=TRICKY[n % len(TRICKY)] if n % 3 == 0 else None,
                               tags=["태그"] if n % 2 else [], category="core")
            brain.db.execute("UPDATE memories SET context = ? WHERE id = ?", (TRICKY[(n * 5) % len(TRICKY)], m.id))
        brain.db.execute("CREATE VIRTUAL TABLE temp.spaced_instances USING fts5vocab(main, memories_spaced, instance)")
        held: dict[int, dict[int, dict[int, str]]] = {}
        for term, doc, col, offset in brain.db.execute("SELECT term, doc, col, offset FROM temp.spaced_instances"):
            held.setdefault(doc, {}).setdefault(["own", "context"].index(col), {})[offset] = term
        tokenizer = Tokenizer(brain.db)
        rows = brain.db.rows("SELECT id, title, content, tags, context FROM memories")
        for row in rows:
            sent = tokenizer.spaced(row["title"], row["content"], row["tags"], row["context"])
            columns = held.get(row["id"], {})
            expected: dict[str, list[int]] = {}
            for column, tokens in columns.items():
                ordered = [tokens[i] for i in sorted(tokens)]
                keys = [t for t in ordered if t != "0"] + [f"{a} {b}" for a, b in zip(ordered, ordered[1:])
                                                          if "0" not in (a, b)]
                for key in keys:
                    expected.setdefault(key, [0, 0])[column] += 1
            assert sent.length == sum(len(t) for t in columns.values()), row["id"]
            assert json.loads(sent.counts) == expected, row["id"]
        assert brain.db.scalar("SELECT count(*) FROM memories_spaced") == len(held) == len(rows)


def test_the_query_explanation_shows_and_runs_both_keyword_indexes(brain):
    steps = nlquery.explain(nlquery.interpret("发票 Hetzner", FixedClock("2026-12-01T00:00:00Z")))
    keyword = [(what, sql, params) for what, sql, params in steps if what.startswith("keyword candidates")]
    assert [what.split(", ")[1] for what, _, _ in keyword] == ["memories_fts)", "memories_spaced)"]
    found = {row[0] for _, sql, params in keyword for row in brain.db.execute(sql, params)}
    assert len(found) >= 2


def test_a_forgotten_memory_leaves_no_token_in_the_index(tmp_path):
    with Brain.open(tmp_path / "b.db", embedder="none") as brain:
        kept = brain.remember("我们把合同放在保险柜里", category="core")
        gone = brain.remember("秘密计划：鹦鹉", category="core")
        brain.forget(gone.uid)
        brain.db.execute("CREATE VIRTUAL TABLE temp.spaced_terms USING fts5vocab(main, memories_spaced, row)")
        terms = {row[0] for row in brain.db.execute("SELECT term FROM temp.spaced_terms")}
    assert terms - {"0"} == set(kept.content)  # "0": where other text stood
    assert not terms & set("秘密计划鹦鹉")


def test_relevance_asks_the_index_which_pairs_a_memory_holds(tmp_path):
    # The relevance evidence asks memories_spaced itself, as search does: the index
    # drops the scripts' own punctuation (a katakana middle dot joins "タ" and "ベ") and
    # keeps the first SPACED_CHARS characters of a column (a pair after them is in the
    # text, not in the index, and search never finds the memory by it).
    from maxmem.search import relevance

    with Brain.open(tmp_path / "b.db", embedder="none") as brain:
        dotted = brain.remember("データ・ベースの移行は金曜日", category="core")
        late = brain.remember("x" * (SPACED_CHARS + 50) + " 发票存放", category="core")
        terms = relevance.evidence_terms("データベース 发票")
        held = relevance.matched_terms(brain.db, terms, [dotted.id, late.id])
        found = {h.memory.id for h in brain.search("タベ", mode="keyword", track=False, min_relevance=0)}
        late_found = brain.search("发票", mode="keyword", track=False, min_relevance=0)
    assert "タベ" in held[dotted.id] and found == {dotted.id}
    assert "发票" not in held[late.id] and late_found == []
