"""Garbage in: every input either works or fails with a one-line MaxmemError.

Property tests (hypothesis) over search queries, memory content, tags, metadata,
dates, filters and the JSONL / Markdown / save-context importers. After a refused
input nothing is half-written: the memories, the change log and the FTS index are
as they were.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from maxmem import Brain, MaxmemError
from maxmem.jsonl import read_jsonl

# MAXMEM_FUZZ_EXAMPLES=2000 for a deeper run by hand.
SETTINGS = settings(max_examples=int(os.environ.get("MAXMEM_FUZZ_EXAMPLES", "120")), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# Text of every kind: any code point including NUL and lone surrogates, FTS5 syntax.
FTS_SYNTAX = st.sampled_from(['"', '""', "*", "NEAR(", "NEAR(a b, 3)", "AND", "OR", "NOT", "^", ":", "col:",
                              "(", ")", "{title content}:x", "-", "+", "'", "\\", "%", "_", "\x00", "\ud800",
                              "\udfff", "\u202e", "💥", "ﬁ", "İ", "\u0301"])
ANY_TEXT = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(codec=None, categories=None)),
    st.lists(st.one_of(FTS_SYNTAX, st.text(max_size=5)), max_size=12).map(" ".join),
    st.binary(max_size=300).map(lambda b: b.decode("latin-1")),
    st.binary(max_size=300).map(lambda b: b.decode("utf-8", "surrogateescape")),
)
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)), max_leaves=8)
ANYTHING = st.one_of(JSON_VALUES, ANY_TEXT, st.binary(max_size=20), st.tuples(st.integers()),
                     st.just(float("nan")), st.just(float("inf")), st.just(2**70), st.just(-(2**64)))
TIMES = st.one_of(ANY_TEXT, st.integers(), st.floats(), st.datetimes(), st.dates(),
                  st.sampled_from(["2026-11-30", "0001-01-01", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00+05:00",
                                   "9999-12-31T23:59:59-05:00", "yesterday", "1e400", "-1", "2026-02-30",
                                   "T", "Z", "2026-11-30T25:00"]))


def snapshot(brain: Brain) -> tuple[int, int, int]:
    q = brain.db.scalar
    return (q("SELECT count(*) FROM memories"), q("SELECT coalesce(max(seq), 0) FROM changes"),
            q("SELECT count(*) FROM memories_fts"))


def one_line_error(exc: MaxmemError) -> None:
    message = str(exc)
    assert message and "\n" not in message and "\r" not in message, repr(message)
    assert len(message) < 1000, message[:200]


def attempt(brain: Brain, call, *args, **kwargs):  # type: ignore[no-untyped-def]
    """Run call; on MaxmemError check the message and that nothing was written."""
    before = snapshot(brain)
    try:
        return call(*args, **kwargs)
    except MaxmemError as exc:
        one_line_error(exc)
        assert snapshot(brain) == before, "a refused input left something written"
        return None


@pytest.fixture
def seeded(brain):
    brain.remember_many([{"content": f"seed memory {i} about kilo lima {i % 5}", "category": "project",
                          "tags": ["seed", f"t{i % 3}"], "metadata": {"n": i, "team": "core"}}
                         for i in range(30)])
    return brain


@SETTINGS
@given(query=ANY_TEXT)
@example(query="")
@example(query=" " * 50)
@example(query='" OR "" AND NEAR(x y) *')
@example(query="kilo " * 20_000)  # 100 KB
@example(query="\x00\ud800 kilo")
def test_search_never_fails_on_any_query(seeded, query):
    for mode in ("hybrid", "keyword"):
        hits = attempt(seeded, seeded.search, query, limit=5, mode=mode)
        assert hits is None or len(hits) <= 5


@SETTINGS
@given(content=ANY_TEXT, title=st.one_of(st.none(), ANY_TEXT), tags=st.one_of(st.none(), ANYTHING,
       st.lists(ANY_TEXT, max_size=5)), importance=st.one_of(st.just(0.5), ANYTHING))
@example(content="x" * 1_000_001, title=None, tags=None, importance=0.5)
@example(content="\x00" * 10, title="\ud800", tags=["\x00"], importance=0.5)
@example(content="ok", title=None, tags=["a" * 65], importance=0.5)
def test_remember_any_content_title_tags(brain, content, title, tags, importance):
    memory = attempt(brain, brain.remember, content, title=title, tags=tags, importance=importance)
    if memory is not None:
        stored = brain.get(memory.id)
        assert stored.content.strip() and "\x00" not in stored.content
        stored.content.encode("utf-8")  # storable and readable as UTF-8
        assert brain.search(stored.content[:200], limit=1) is not None


@SETTINGS
@given(metadata=st.one_of(ANYTHING, st.dictionaries(ANY_TEXT, ANYTHING, max_size=4),
                          st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True),
                                          ANYTHING, max_size=4)))
@example(metadata={"n": 2**70})
@example(metadata={"n": float("nan")})
@example(metadata={"a.b": 1})
@example(metadata={"x') OR 1=1 --": 1})
def test_remember_any_metadata(brain, metadata):
    memory = attempt(brain, brain.remember, "a memory with metadata", metadata=metadata)
    if memory is not None:
        assert brain.get(memory.id).metadata == memory.metadata
        json.dumps(memory.metadata, allow_nan=False)


@SETTINGS
@given(when=TIMES, which=st.sampled_from(["created_at", "started_at"]))
def test_remember_any_date(brain, when, which):
    memory = attempt(brain, brain.remember, f"a memory with {which} {when!r}"[:500], **{which: when})
    if memory is not None:
        stamp = getattr(brain.get(memory.id), which)
        assert len(stamp) == 24 and stamp.endswith("Z"), stamp  # fixed width: sorts as text


@SETTINGS
@given(since=st.one_of(st.none(), TIMES), until=st.one_of(st.none(), TIMES),
       tags=st.one_of(st.none(), st.lists(ANY_TEXT, max_size=3)),
       metadata=st.one_of(st.none(), st.dictionaries(ANY_TEXT, ANYTHING, max_size=2),
                          st.dictionaries(st.sampled_from(["n", "team"]), ANYTHING, max_size=2)),
       category=st.one_of(st.none(), ANYTHING), kind=st.one_of(st.none(), ANYTHING),
       min_importance=st.one_of(st.none(), ANYTHING), limit=st.one_of(st.just(10), ANYTHING))
@example(since=None, until=None, tags=None, metadata={"n": 2**70}, category=None, kind=None,
         min_importance=None, limit=10)
@example(since=None, until=None, tags=None, metadata=None, category=None, kind=None,
         min_importance=float("nan"), limit=10)
@example(since=None, until=None, tags=["\ud800"], metadata={"team": "\udfff\x00"}, category=None,
         kind="\ud800", min_importance=None, limit=10)
def test_search_and_list_with_any_filters(seeded, since, until, tags, metadata, category, kind,
                                          min_importance, limit):
    filters = dict(since=since, until=until, tags=tags, metadata=metadata, category=category, kind=kind,
                   min_importance=min_importance)
    attempt(seeded, seeded.search, "kilo lima", limit=limit, **filters)
    attempt(seeded, seeded.list, limit=limit, offset=limit, **filters)


LINES = st.one_of(
    ANY_TEXT.map(lambda t: t.replace("\n", " ")),
    st.dictionaries(st.sampled_from(["content", "category", "kind", "title", "tags", "importance", "metadata",
                                     "created_at", "uid", "id", "status", "pinned", "updated_at", "source"]),
                    ANYTHING, max_size=6).map(lambda d: json.dumps(d, default=repr)),
    st.fixed_dictionaries({"content": ANY_TEXT}, optional={"uid": ANY_TEXT, "id": ANYTHING,
                                                            "category": st.sampled_from(["core", "daily", "x"])})
    .map(lambda d: json.dumps(d, default=repr)),
)


@SETTINGS
@given(lines=st.lists(LINES, min_size=1, max_size=6))
def test_jsonl_import_of_any_lines(brain, tmp_path, lines):
    path = tmp_path / "import.jsonl"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    attempt(brain, lambda: brain.import_records(read_jsonl(path)))


@SETTINGS
@given(text=st.lists(st.one_of(ANY_TEXT, st.sampled_from(
    ["# Memory", "## Decisions", "- a bullet", "- 09:30 timed bullet", "```", "---", "<!-- maxmem:uid=x -->",
     "- [decision] tagged #tag", "  - nested", "title: x", "\ufeff"])), max_size=12).map("\n".join),
    name=st.sampled_from(["MEMORY.md", "2026-11-30.md", "notes.md"]))
def test_markdown_import_of_any_text(brain, tmp_path, text, name):
    from maxmem.markdown.merge import import_markdown

    folder = tmp_path / "md"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    attempt(brain, import_markdown, brain, path)


@SETTINGS
@given(document=st.one_of(ANYTHING, st.fixed_dictionaries(
    {"session_id": st.one_of(ANY_TEXT, ANYTHING)},
    optional={"agent": ANYTHING, "metadata": ANYTHING,
              "exchanges": st.one_of(ANYTHING, st.lists(st.fixed_dictionaries(
                  {}, optional={"user_message": st.one_of(ANY_TEXT, ANYTHING),
                                "assistant_response": st.one_of(ANY_TEXT, ANYTHING),
                                "timestamp": TIMES, "tool_calls": ANYTHING, "model": ANYTHING}), max_size=3)),
              "observations": st.one_of(ANYTHING, st.lists(st.fixed_dictionaries(
                  {}, optional={"type": ANYTHING, "content": st.one_of(ANY_TEXT, ANYTHING),
                                "title": ANYTHING, "tags": ANYTHING}), max_size=3))})))
def test_save_context_of_any_document(brain, document):
    from maxmem.compaction import save_context

    attempt(brain, save_context, brain, document)


def test_huge_inputs_fail_fast_with_one_line(brain):
    for call in (lambda: brain.remember("x" * 2_000_000),
                 lambda: brain.remember("ok", tags=["t"] * 10_000 + ["y" * 99]),
                 lambda: brain.remember("ok", title="t" * 10_000)):
        attempt(brain, call)
    hits = brain.search("word " * 25_000)  # 125 KB of query: answered, not refused
    assert hits == [] or hits


def test_identifiers_from_input_are_validated(brain):
    """Metadata keys reach SQL only as json paths built from validated identifiers."""
    brain.remember("guarded", metadata={"ok_key": 1})
    for key in ["a') OR 1=1 --", "a.b", "$", "a b", "", "1abc", "ключ", "a" * 65]:
        with pytest.raises(MaxmemError, match="not allowed"):
            brain.search("guarded", metadata={key: 1})
        with pytest.raises(MaxmemError, match="not allowed"):
            brain.remember("guarded again", metadata={key: 1})


def test_a_yes_no_field_takes_true_or_false_never_a_word(brain, tmp_path):
    for value in ("false", "no", 2, [], "0"):
        with pytest.raises(MaxmemError, match="pinned must be true or false"):
            brain.remember("pin me?", pinned=value)
        with pytest.raises(MaxmemError, match="pinned must be true or false"):
            brain.list(pinned=value)
    path = tmp_path / "in.jsonl"
    path.write_text('{"content": "from a file", "pinned": "false"}\n')
    with pytest.raises(MaxmemError, match="pinned must be true or false"):
        brain.import_records(read_jsonl(path))
    assert brain.stats()["memories"] == 0
    assert brain.remember("pinned", pinned=True).pinned and not brain.remember("not pinned", pinned=0).pinned


def test_ids_offsets_and_files_people_actually_pass(brain, tmp_path):
    first = brain.remember("the first memory")
    with pytest.raises(MaxmemError, match="no memory True"):
        brain.get(True)  # True is 1 to int(): it must not name memory #1
    with pytest.raises(MaxmemError, match="no memory"):
        brain.forget(True)
    assert brain.get(first.id).content == "the first memory"
    with pytest.raises(MaxmemError, match="offset must be a whole number, 0 or more"):
        brain.list(offset=-1)
    bom = tmp_path / "bom.jsonl"  # as some editors save it
    bom.write_bytes(b"\xef\xbb\xbf" + b'{"content": "from a file with a BOM"}\n')
    assert brain.import_records(read_jsonl(bom))["added"] == 1


def test_an_empty_file_becomes_a_private_brain_db(tmp_path):
    path = tmp_path / "empty.db"
    path.touch(mode=0o644)
    os.chmod(path, 0o644)
    Brain.open(path, embedder="none").close()
    assert (path.stat().st_mode & 0o777) == 0o600


def test_messages_name_what_is_wrong(brain, tmp_path, capsys):
    from conftest import run_cli

    memory = brain.remember("to be superseded")
    with pytest.raises(MaxmemError, match="superseded_by must be a uid \\(text\\), not int 999"):
        brain.update(memory.id, superseded_by=999)
    db = ["--db", str(tmp_path / "cli.db"), "--embedder", "none"]
    code, out, err = run_cli([*db, "import", str(tmp_path)], capsys)
    assert code == 2 and "a folder: give a JSONL file" in err
    code, out, err = run_cli([*db, "capture", "--path", "/dev/null"], capsys)
    assert code == 2 and "/dev/null is not a regular file" in err


def test_edges_get_one_line_errors_or_bounds(tmp_path, capsys):
    """Edges of input: each is a clear one-line error, never a traceback."""
    from conftest import run_cli

    db = ["--db", str(tmp_path / "e.db"), "--embedder", "none"]
    assert run_cli([*db, "remember", "a memory to list"], capsys)[0] == 0
    cases = [
        (["list", "--offset", "99999999999999999999"], "offset must be below 2^63"),
        (["list", "--min-importance", "inf"], "min_importance must be a number from 0 to 1"),
        (["search", "memory", "--min-importance", "nan"], "min_importance must be a number from 0 to 1"),
        (["brief", "--budget-tokens", "0"], "at least 100"),
        (["remember", "from the future", "--created-at", "3000-01-01"], "created_at 3000-01-01 is in the future"),
        (["remember", "x", "-k", "k" * 10_000], "is not allowed"),
    ]
    for args, fragment in cases:
        code, _, err = run_cli([*db, *args], capsys)
        assert code in (1, 2) and fragment in err, (args, err)
        assert err.count("\n") == 1 and "Traceback" not in err and len(err) < 600, err
