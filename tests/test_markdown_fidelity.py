"""The Markdown export keeps every memory whole: whatever text maxmem accepts comes back
byte for byte when the folder is imported into an empty brain.db (property tests over
real brain.db files), and a folder an older maxmem wrote imports as it always did."""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, timedelta, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from conftest import run_cli
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from maxmem import Brain, FixedClock, InvalidInput
from maxmem.clock import parse_time
from maxmem.markdown.export import ExportReport, export_markdown
from maxmem.markdown.merge import import_markdown
from maxmem.markdown.render import PARTIAL, render_workspace, tag_form

NOW = "2026-11-30T12:00:00Z"
# MAXMEM_FUZZ_EXAMPLES=2000 for a deeper run by hand.
SETTINGS = settings(max_examples=int(os.environ.get("MAXMEM_FUZZ_EXAMPLES", "100")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# Pieces that mean something to Markdown or to the export's own format.
FRAGMENTS = [
    " ", "  ", "\t", "\n", "\n\n", "\n\n\n", "\r\n", "\r", "[ ] ", "[x] ", "[X] ", "— ", "– ", "- ", "* ", "+ ",
    "#", "# ", "## Facts", "# 2026-11-30", "#tag", " #tag", "\\#", "> ", "1. ", "2) ", "`", "```", "```py", "~~~",
    "<!--", "-->", "<!-- note -->", "<!-- maxmem uid=x rev=abc -->", "<!-- written by maxmem export at X; -->",
    "📌", "📌 ", "**", "**T**", ":", "12:30 ", "12:30", "\\", "\\\\", "\\x1b", "\\x20", "\\x0a", "\\u2028",
    "\x1b", "\u2028", "\u2029", "\u200b", "\ufeff", "\xa0", "\u3000", "\x85", "\x0b", "\x1c", "---", "***", "|a|b|",
    "é", "日本", "🚀", "x" * 300,
]
TEXT = st.one_of(
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), min_size=1, max_size=12).map("".join),
    st.text(min_size=1),
)
CONTENT = TEXT.filter(lambda t: t.replace("\x00", "x").strip() != "")
TITLE = st.one_of(st.none(), TEXT.map(lambda t: t[:200]))
KIND = st.sampled_from(["note", "fact", "decision", "preference", "task", "lesson", "milestone", "bugfix"])
TAGS = st.lists(st.one_of(st.sampled_from(["ui", "dark mode", "#x", "a#b", "Ünï", "🚀", "c++", "<!--maxmem"]),
                          st.text(max_size=10)), max_size=3)
MEMORY = st.fixed_dictionaries({
    "content": CONTENT,
    "title": TITLE,
    "category": st.sampled_from(["core", "project", "daily", "conversation"]),
    "kind": KIND,
    "tags": TAGS,
    "importance": st.floats(0, 1),
    "status": st.sampled_from(["active", "ongoing", "resolved", "superseded"]),
    "pinned": st.booleans(),
    "minutes_ago": st.integers(0, 60 * 24 * 40),
    "seconds": st.integers(0, 59),
})


ZONES = st.sampled_from([UTC, ZoneInfo("Pacific/Kiritimati"), ZoneInfo("America/Los_Angeles")])


def plain(content: str, category: str) -> dict[str, Any]:
    return {"content": content, "title": None, "category": category, "kind": "note", "tags": [], "importance": 0.5,
            "status": "active", "pinned": False, "minutes_ago": 0, "seconds": 0}


def store(brain: Brain, memories: list[dict[str, Any]]) -> None:
    """Remember each memory that maxmem accepts, dated as given."""
    now = parse_time(NOW)
    for m in memories:
        at = now - timedelta(minutes=m["minutes_ago"], seconds=m["seconds"])
        fields = {k: v for k, v in m.items() if k not in ("minutes_ago", "seconds")}
        try:
            brain.remember(**fields, created_at=at)
        except InvalidInput:  # text maxmem does not accept (all <private>): not the export's
            continue


def tags_shown(tags: list[str]) -> list[str]:
    """A tag as the file holds it (docs/agents.md: a tag is a word, its spaces hyphens)."""
    return list(dict.fromkeys(t for t in map(tag_form, tags) if t))


def created_shown(memory: Any) -> str:
    """MEMORY.md keeps the time whole (`at=`); a daily bullet's `HH:MM` keeps the minute."""
    at = parse_time(memory.created_at)
    if memory.category in ("core", "project"):
        return str(at)
    return str(at.replace(second=0, microsecond=0))


def round_trip(memories: list[dict[str, Any]], tz: tzinfo = UTC) -> None:
    """Export the memories (in `tz`'s days), import them into an empty brain.db: each as it was."""
    clock = FixedClock(NOW)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with Brain.open(root / "a.db", embedder="none", clock=clock) as a:
            store(a, memories)
            stored = {m.uid: m for m in a.list(limit=100, status=None)}
            export_markdown(a, root / "ws", include_conversations=True, tz=tz)
            again = import_markdown(a, root / "ws", tz=tz)
            assert (again.total("added"), again.total("updated"), again.conflicts) == (0, 0, []), \
                "into the brain that wrote it: no change"
        with Brain.open(root / "b.db", embedder="none", clock=clock) as b:
            report = import_markdown(b, root / "ws", tz=tz)
            assert not report.conflicts
            back = {m.uid: m for m in b.list(limit=100, status=None)}
    assert set(back) == set(stored), "every memory comes back, none twice"
    for uid, mine in stored.items():
        theirs = back[uid]
        assert theirs.content == mine.content, "content, byte for byte"
        assert theirs.title == mine.title
        assert (theirs.category, theirs.kind, theirs.status, theirs.pinned) == \
            (mine.category, mine.kind, mine.status, mine.pinned)
        assert theirs.importance == mine.importance
        assert theirs.tags == tags_shown(mine.tags)
        assert created_shown(theirs) == created_shown(mine)


@SETTINGS
@given(memories=st.lists(MEMORY, min_size=1, max_size=3), tz=ZONES)
@example(memories=[plain("  indented, and trailing  ", "core")], tz=UTC)
@example(memories=[plain("[ ] not a task box", "core")], tz=UTC)
@example(memories=[plain("— not the separator", "daily")], tz=UTC)
@example(memories=[plain("a\n\n\nb\n```\nopen fence", "daily"), plain("next", "daily")], tz=UTC)
@example(memories=[{**plain("0", "core"), "title": "0", "importance": 0.8203125}], tz=UTC)
@example(memories=[plain("x\n```\n\n\ny", "core"), plain("next", "core")], tz=UTC)
@example(memories=[{**plain("text", "core"), "tags": ["<!--maxmem"]}], tz=UTC)
@example(memories=[{**plain("-", "daily"), "tags": ["ui"]}, {**plain("[ ]", "core"), "tags": ["ui"]}], tz=UTC)
@example(memories=[plain("a\n\x1c```\n\n\nb", "core"), plain("c\n \x85```\n\n\nd\n```", "project")], tz=UTC)
def test_every_memory_survives_export_then_import_into_an_empty_brain(memories, tz):
    round_trip(memories, tz)


@SETTINGS
@given(memories=st.lists(MEMORY, min_size=2, max_size=4))
def test_memories_saying_the_same_thing_in_other_categories_all_come_back(memories):
    """A core and a project memory (one file, MEMORY.md), a daily note and a conversation
    of the same day, with the same text: each its own memory again."""
    round_trip([{**m, "content": memories[0]["content"], "title": memories[0]["title"]} for m in memories])


def test_the_same_through_the_cli(tmp_path, capsys):
    """`maxmem export --format markdown` then `maxmem import --format markdown` into a new brain.db."""
    text = "  two spaces first\n\n\n[ ] three blank lines above\n```\nunclosed fence\n<!-- a comment -->\t"
    a, b, ws = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "ws"
    base = ["--embedder", "none"]
    assert run_cli(["--db", str(a), *base, "remember", text, "--category", "core"], capsys)[0] == 0
    assert run_cli(["--db", str(a), *base, "remember", "— a dash first", "--category", "daily"], capsys)[0] == 0
    assert run_cli(["--db", str(a), *base, "export", "--format", "markdown", str(ws)], capsys)[0] == 0
    code, out, err = run_cli(["--db", str(b), *base, "import", "--format", "markdown", str(ws)], capsys)
    assert code == 0, err
    with Brain.open(b, embedder="none") as brain:
        assert sorted(m.content for m in brain.list(limit=10)) == sorted([text, "— a dash first"])



# A folder as an earlier maxmem exported it (one bullet is the export's before that, with
# tags= and pinned=1 in its comment): its escapes only, and what it lost stays lost.
OLD_EXPORT = Path(__file__).parent / "fixtures" / "markdown_export_v1"
AT, YESTERDAY = "2026-11-30T12:00:00.000Z", "2026-11-29T{}:00.000Z"
OLD_READS_AS = [  # (uid, category, kind, title, content, tags, importance, status, pinned, created_at)
    ("01a252d4-a4ec-742a-b98e-6128c7d56c6e", "core", "fact", None, "📌 after a space", [], 0.5, "active", False,
     AT),
    ("01a252d4-a4f8-7bb4-9c62-dab381e0b75d", "core", "fact", None, "**bold** then text", [], 0.5, "active", False,
     AT),
    ("01a252d4-a501-721a-ac0d-f4a5d494e8e6", "core", "fact", None, "Laptop\nupgraded to 64 GB", [], 0.5, "active",
     False, AT),
    ("01a252d4-a511-7c56-a3d0-2a6e8839b077", "core", "decision", "Two lines here", "Use it", ["db", "dark-mode"],
     0.820312, "active", False, AT),
    ("01a252d4-a516-7ce4-8388-8e403fb97610", "core", "task", None, "buy milk", [], 0.5, "active", False, AT),
    ("01a252d4-a51e-735e-8145-ca9899b4836d", "core", "fact", None,
     "printf '\\x1b[31m' and ESC \x1b[0m, issue #12 #auth", [], 0.5, "active", False, AT),
    ("01a252d4-a526-7a7e-8caf-385d45dcf426", "project", "note", None, "a\n\n  b\n\n```\nc", [], 0.5, "active", True,
     AT),
    ("01a252d4-a532-77dd-87f5-976edcccd36c", "daily", "note", None, "dash first", [], 0.5, "active", False,
     YESTERDAY.format("09:30")),
    ("01a252d4-a53a-7ddf-aa73-6a1513676ece", "daily", "note", None, "<!-- hidden -->\nshown", [], 0.5, "resolved",
     False, YESTERDAY.format("10:00")),
    ("old-format-1", "core", "decision", None, "Keep one brain.db per agent #storage", ["storage", "db"], 0.7,
     "active", True, "2026-11-02T08:00:00.000Z"),
]


def test_a_folder_an_older_maxmem_exported_imports_as_it_always_did(tmp_path, clock):
    with Brain.open(tmp_path / "b.db", embedder="none", clock=clock) as brain:
        report = import_markdown(brain, OLD_EXPORT)
        assert (report.total("added"), report.conflicts) == (len(OLD_READS_AS), [])
        got = sorted((m.uid, m.category, m.kind, m.title, m.content, m.tags, m.importance, m.status, m.pinned,
                      m.created_at) for m in brain.list(limit=100, status=None))
    assert got == OLD_READS_AS


def test_the_export_says_in_one_line_when_tags_are_written_otherwise(tmp_path, capsys):
    """A tag is a word in the file: `dark mode` is written `#dark-mode` and reads back so in
    another brain.db. The export says how many memories that touches, in its one line."""
    db, ws = tmp_path / "a.db", tmp_path / "ws"
    base = ["--db", str(db), "--embedder", "none"]
    assert run_cli([*base, "remember", "Prefers dark mode", "--category", "core", "--tag", "ui,dark mode"],
                   capsys)[0] == 0
    assert run_cli([*base, "remember", "Plain tags only", "--category", "core", "--tag", "ui"], capsys)[0] == 0
    code, _, err = run_cli([*base, "export", "--format", "markdown", str(ws)], capsys)
    assert code == 0
    [line] = err.strip().splitlines()[-1:]
    assert "exported 2 memories" in line and "1 of them have tags written as words" in line, err
    with Brain.open(tmp_path / "b.db", embedder="none") as other:
        import_markdown(other, ws)
        assert sorted(m.tags for m in other.list(limit=10)) == [["ui"], ["ui", "dark-mode"]]
    assert run_cli([*base, "forget", "1"], capsys)[0] == 0
    code, _, err = run_cli([*base, "export", "--format", "markdown", str(ws)], capsys)
    assert "tags written" not in err, "nothing to say when every tag is a word already"


def test_a_bullet_that_would_not_read_back_whole_is_marked_and_the_export_says_so():
    """A safety net: no text maxmem stores is known to need it. Memories given as records
    that brain.db would refuse (an empty text under a title, a title with a first space) are written,
    marked `partial=1`, and the export's one line counts them."""
    records = [{"uid": f"u{i}", "category": "core", "kind": "note", "content": content, "title": title,
                "created_at": NOW, "importance": 0.5} for i, (content, title) in
               enumerate([("", "T"), ("text", " spaced title"), ("whole", "Title")])]
    [memory_md] = render_workspace(records)
    marked = [line for line in memory_md.text.splitlines() if PARTIAL in line]
    assert [line.split("uid=")[1].split()[0] for line in marked] == ["u0", "u1"]
    report = ExportReport("ws", [{"path": "MEMORY.md", "memories": 3}], partial=["u0", "u1"])
    assert "\n" not in report.describe() and "2 of them cannot be written so that they read back whole" in \
        report.describe()
