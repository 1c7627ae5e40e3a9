"""Markdown rendering and parsing (no database): OpenClaw's MEMORY.md and memory/YYYY-MM-DD.md."""

from __future__ import annotations

from datetime import date, timedelta, timezone
from pathlib import Path

import pytest

from maxmem.errors import InvalidInput
from maxmem.markdown.parse import file_date, parse_markdown
from maxmem.markdown.render import render_daily, render_memory_md, render_workspace


def memory(uid, content, **fields):
    base = dict(uid=uid, content=content, category="core", kind="note", title=None, tags=[],
                importance=0.5, status="active", pinned=False,
                created_at="2026-11-01T10:00:00.000Z")
    base.update(fields)
    return base


MEMORIES = [
    memory("u1", "One file, WAL, FTS5 and sqlite-vec.\n\n- WAL mode\n```\nPRAGMA journal_mode=wal;\n```",
           kind="decision", title="Use SQLite", tags=["db", "storage"], importance=0.9,
           pinned=True),
    memory("u2", "Prefers dark mode; see issue #12", kind="preference"),
    memory("u3", "Build the memory", category="project", kind="project", title="maxmem",
           importance=0.8, status="ongoing"),
    memory("u4", "Deployed v2 #123", category="daily", title="Deploy", tags=["ops"],
           importance=None, status="resolved", created_at="2026-11-29T09:14:03.000Z"),
    memory("u5", "user: hi\nassistant: hello", category="conversation", kind="exchange",
           importance=0.3, created_at="2026-11-29T08:00:00.000Z"),
    memory("u6", "A late note", category="daily", created_at="2026-11-30T23:30:00.000Z"),
]

ROUND_TRIPPED = ("uid", "content", "category", "kind", "title", "tags", "importance", "status",
                 "pinned")


def comparable(m, default_kind):
    out = {}
    for key in ROUND_TRIPPED:
        value = m.get(key)
        if key == "tags":
            value = list(value or [])
        if key == "pinned":
            value = bool(value)
        if key == "status":
            value = value or "active"
        if key == "kind":
            value = value or default_kind
        out[key] = value
    return out


def test_export_then_parse_gives_back_the_same_memories():
    files = render_workspace(MEMORIES)
    assert [f.path for f in files] == ["MEMORY.md", "memory/2026-11-29.md", "memory/2026-11-30.md"]
    assert [f.count for f in files] == [3, 2, 1]
    parsed = {}
    for f in files:
        for m in parse_markdown(f.text, path=f.path):
            parsed[m["uid"]] = m
    for original in MEMORIES:
        back = parsed[original["uid"]]
        assert comparable(back, "note") == comparable(original, "note"), original["uid"]
    # daily files give the time to the minute, in the file's day
    assert parsed["u4"]["created_at"] == "2026-11-29T09:14:00.000Z"
    assert parsed["u6"]["created_at"] == "2026-11-30T23:30:00.000Z"


def test_memory_md_groups_by_kind_pinned_and_important_first():
    text = render_memory_md(
        [memory("a", "low", kind="decision", importance=0.2),
         memory("b", "high", kind="decision", importance=0.95),
         memory("c", "pinned", kind="decision", importance=0.1, pinned=True),
         memory("d", "likes tea", kind="preference"),
         memory("e", "ship it", category="project", kind="project")]
    )
    lines = text.splitlines()
    assert lines[0] == "# MEMORY.md — long-term memory"
    headings = [line for line in lines if line.startswith("## ")]
    assert headings == ["## Preferences", "## Decisions", "## Projects"]
    decisions = [line for line in lines if line.startswith("- ") and "kind" not in line
                 and ("low" in line or "high" in line or "pinned" in line)]
    assert [d.split(" <!--")[0] for d in decisions] == ["- 📌 pinned", "- high", "- low"]


def test_daily_file_is_a_timed_log_in_the_given_time_zone():
    est = timezone(timedelta(hours=-5))
    text = render_daily(date(2026, 11, 30), [memory("x", "late", category="daily",
                                                     created_at="2026-12-01T03:10:00.000Z")],
                        tz=est)
    assert text.splitlines()[0] == "# 2026-11-30"
    assert text.splitlines()[2].startswith("- 22:10 late <!-- maxmem uid=x")
    [back] = parse_markdown(text, path="memory/2026-11-30.md", tz=est)
    assert back["created_at"] == "2026-12-01T03:10:00.000Z"


def test_file_date():
    assert file_date("memory/2026-11-30.md") == date(2026, 11, 30)
    assert file_date("/ws/memory/2026-01-16-vendor-pitch.md") == date(2026, 1, 16)
    assert file_date("MEMORY.md") is None
    assert file_date("memory/2026-02-30.md") is None
    assert file_date("memory/notes.md") is None


HAND_WRITTEN = """---
description: Agent persistent memory
---

# MEMORY.md

## Identity

<!-- Agent-specific identity notes -->
- **Name:** Atlas
- **Timezone:** Europe/Paris

## Decisions
- moved the blog to Hugo #blog
  because Jekyll builds were slow
  - nested detail stays with its parent
* Use uv for Python

## Todo
- [ ] renew the domain
- [x] back up photos

A free paragraph
spanning two lines.

```
a fence: # not a heading
```
"""


def test_hand_written_memory_md():
    got = parse_markdown(HAND_WRITTEN, path="MEMORY.md")
    summary = [(m.get("title"), m["content"], m.get("kind"), m.get("status"), m.get("tags"),
                m["metadata"].get("section")) for m in got]
    assert summary == [
        ("Name", "Name: Atlas", None, None, None, "Identity"),
        ("Timezone", "Timezone: Europe/Paris", None, None, None, "Identity"),
        (None, "moved the blog to Hugo #blog\nbecause Jekyll builds were slow\n"
               "- nested detail stays with its parent", "decision", None, ["blog"], "Decisions"),
        (None, "Use uv for Python", "decision", None, None, "Decisions"),
        (None, "renew the domain", "task", "active", None, "Todo"),
        (None, "back up photos", "task", "resolved", None, "Todo"),
        (None, "A free paragraph\nspanning two lines.", "task", None, None, "Todo"),
        (None, "```\na fence: # not a heading\n```", "task", None, None, "Todo"),
    ]
    assert all(m["category"] == "core" and "created_at" not in m for m in got)
    assert got[0]["metadata"] == {"markdown_file": "MEMORY.md", "line": 10, "section": "Identity"}


def test_session_memory_hook_file():
    # the layout OpenClaw's bundled session-memory hook writes
    text = ("# Session: 2026-01-16 14:30:00 UTC\n\n"
            "- **Session Key**: agent:main:main\n- **Session ID**: abc123\n"
            "- 14:30 — talked about the vendor pitch\n- 25:99 is not a time\n")
    got = parse_markdown(text, path="memory/2026-01-16-vendor-pitch.md")
    assert [m["content"] for m in got] == [
        "Session Key: agent:main:main", "Session ID: abc123",
        "talked about the vendor pitch", "25:99 is not a time"]
    assert [m["created_at"][11:16] for m in got] == ["00:00", "00:00", "14:30", "00:00"]
    assert all(m["category"] == "daily" and m["created_at"].startswith("2026-01-16") for m in got)


def test_empty_and_placeholder_only_files_give_nothing():
    assert parse_markdown("", path="MEMORY.md") == []
    assert parse_markdown("# Agent Memory\n\n## Goals\n\n<!-- Current goals -->\n",
                          path="MEMORY.md") == []


def test_a_broken_maxmem_comment_names_file_and_line():
    text = "# MEMORY.md\n\n- tea <!-- maxmem uid=z importance=high -->\n"
    with pytest.raises(InvalidInput, match=r"MEMORY.md line 3: importance=high is not a number"):
        parse_markdown(text, path="MEMORY.md")


def test_content_that_looks_like_markdown_survives():
    tricky = memory("t", "# not a heading\n  indented code\n- a dash line\n\n2. numbered",
                    kind="fact", tags=["x"])
    text = render_memory_md([tricky])
    [back] = parse_markdown(text, path="MEMORY.md")
    assert back["content"] == tricky["content"]
    assert back["tags"] == ["x"]
    assert back["kind"] == "fact"


# --- over a Brain ---------------------------------------------------------------------

from maxmem import Brain  # noqa: E402
from maxmem.markdown.export import export_markdown  # noqa: E402
from maxmem.markdown.merge import import_markdown  # noqa: E402


def fill(brain, clock):
    brain.remember("Prefers short answers", category="core", kind="preference", tags=["style"],
                   importance=0.9, pinned=True)
    brain.remember("Build the memory", category="project", kind="project", title="maxmem",
                   status="ongoing", importance=0.8)
    clock.advance(hours=-30)
    brain.remember("Upgraded the laptop", category="daily", title="Laptop")
    clock.advance(hours=30)
    brain.remember("Deployed v2", category="daily", kind="milestone", importance=0.7)
    brain.remember("user: hi\nassistant: hello", category="conversation", kind="exchange")


def test_export_into_a_fresh_brain_keeps_uids_and_fields(brain, clock, tmp_path, hash_embedder):
    fill(brain, clock)
    report = export_markdown(brain, tmp_path / "ws")
    assert report.memories == 4, "conversations are left out by default"
    assert sorted(f["path"] for f in report.files) == [
        "MEMORY.md", "memory/2026-11-29.md", "memory/2026-11-30.md"]
    with Brain.open(tmp_path / "other.db", embedder=hash_embedder, clock=clock) as other:
        result = import_markdown(other, tmp_path / "ws")
        assert sum(f["added"] for f in result.files) == 4
        keep = ("uid", "category", "kind", "title", "content", "tags", "importance", "status",
                "pinned")
        mine = sorted(tuple(getattr(m, k) for k in keep) for m in brain.list(limit=100)
                       if m.category != "conversation")
        theirs = sorted(tuple(getattr(m, k) for k in keep) for m in other.list(limit=100))
        assert mine == theirs
        daily = other.list(category="daily", order="oldest")
        assert [m.created_at for m in daily] == ["2026-11-29T06:00:00.000Z", "2026-11-30T12:00:00.000Z"]
        assert all(m.source == "import" for m in other.list(limit=100))
        rows = other.db.rows("SELECT path, added, existing FROM markdown_imports")
        assert sorted((Path(r["path"]).name, r["added"], r["existing"]) for r in rows) == [
            ("2026-11-29.md", 1, 0), ("2026-11-30.md", 1, 0), ("MEMORY.md", 2, 0)]
        again = import_markdown(other, tmp_path / "ws")  # exported files are read again: a round trip
        assert (again.total("added"), again.total("updated"), again.total("existing")) == (0, 0, 4)
        assert other.db.scalar("SELECT count(*) FROM markdown_imports") == 3


def test_conversations_on_request(brain, clock, tmp_path):
    fill(brain, clock)
    report = export_markdown(brain, tmp_path / "ws", include_conversations=True)
    assert report.memories == 5
    text = (tmp_path / "ws" / "memory" / "2026-11-30.md").read_text()
    assert "- 12:00 user: hi <!-- maxmem" in text and "-->\n  assistant: hello\n" in text


def test_a_hand_written_file_imported_again_unchanged_is_skipped(brain, tmp_path):
    (tmp_path / "MEMORY.md").write_text(HAND_WRITTEN, "utf-8")
    first = import_markdown(brain, tmp_path / "MEMORY.md")
    assert first.total("added") == 8 and not first.files[0]["skipped"]
    assert import_markdown(brain, tmp_path / "MEMORY.md").files[0]["skipped"]


def test_import_of_a_broken_file_stores_nothing_from_it(brain, tmp_path):
    ws = tmp_path / "ws" / "memory"
    ws.mkdir(parents=True)
    (ws / "2026-11-01.md").write_text("- fine line\n- broken <!-- maxmem uid=x importance=lots -->\n")
    with pytest.raises(InvalidInput, match="2026-11-01.md line 2"):
        import_markdown(brain, tmp_path / "ws")
    assert brain.stats()["memories"] == 0
    assert brain.db.scalar("SELECT count(*) FROM markdown_imports") == 0


def test_export_refuses_a_file_as_directory(brain, tmp_path):
    target = tmp_path / "afile"
    target.write_text("x")
    with pytest.raises(InvalidInput, match="is a file"):
        export_markdown(brain, target)
