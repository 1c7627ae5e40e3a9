"""The Markdown round trip over a real brain.db: export, edit the files as a person
would (a text editor, Obsidian), import the folder again."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import run_cli

from maxmem import Brain, InvalidInput
from maxmem.markdown.export import MANIFEST, export_markdown
from maxmem.markdown.merge import import_markdown
from maxmem.work import observe


def fill(brain, clock):
    ids = {}
    ids["dark"] = brain.remember("Prefers dark mode in every editor", category="core", kind="preference",
                                 tags=["ui", "dark mode"], importance=0.9, pinned=True).id
    ids["sqlite"] = brain.remember("One file: WAL, FTS5 and sqlite-vec.\n\n```\nPRAGMA journal_mode=wal;\n```",
                                   category="core", kind="decision", title="Use SQLite", tags=["db"]).id
    ids["issue"] = brain.remember("The login bug is tracked as issue #12 #auth", category="core",
                                  kind="fact").id
    ids["pin"] = brain.remember("📌 is how the brief marks pinned memories", category="core", kind="fact").id
    ids["project"] = observe(brain, "project", "Build the memory system", title="maxmem", ongoing=True,
                             importance=0.8).id
    clock.advance(hours=-30)
    ids["laptop"] = brain.remember("Upgraded the laptop to 64 GB", category="daily", title="Laptop",
                                   tags=["hardware"]).id
    clock.advance(hours=30)
    ids["deploy"] = brain.remember("Deployed v2 of the billing service #release-2", category="daily",
                                   kind="milestone", importance=0.7).id
    ids["emoji"] = brain.remember("Größe & café — 日本語 🚀 notes", category="daily", tags=["ünï", "🚀"]).id
    return ids


def versions(brain, memory_id) -> list[int]:
    return [v["version"] for v in brain.history(memory_id)]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert text.count(old) == 1, (old, text)
    path.write_text(text.replace(old, new), "utf-8")


@pytest.fixture
def exported(brain, clock, tmp_path):
    ids = fill(brain, clock)
    export_markdown(brain, tmp_path / "ws")
    return ids, tmp_path / "ws"


def test_an_unedited_export_imports_as_no_change_at_all(brain, exported):
    ids, ws = exported
    before = {m.id: m.to_dict() for m in brain.list(limit=100)}
    changes = brain.stats()["changes"]
    for _ in range(2):
        report = import_markdown(brain, ws)
        assert (report.total("added"), report.total("updated"), report.conflicts) == (0, 0, [])
        assert report.total("existing") == len(before)
    assert {m.id: m.to_dict() for m in brain.list(limit=100)} == before
    assert brain.stats()["changes"] == changes, "no write at all"


def test_export_edit_memory_md_import_updates_the_memory(brain, clock, exported):
    """Export → edit MEMORY.md → import updates it; history v1, v2."""
    ids, ws = exported
    brain.update(ids["issue"], importance=0.6)  # other memories change meanwhile
    clock.advance(minutes=5)
    edit(ws / "MEMORY.md", "Prefers dark mode in every editor", "Prefers dark mode in every editor and terminal")
    report = import_markdown(brain, ws)
    assert report.total("updated") == 1 and not report.conflicts
    dark = brain.get(ids["dark"])
    assert dark.content == "Prefers dark mode in every editor and terminal"
    assert (dark.category, dark.kind, dark.pinned, dark.importance) == ("core", "preference", True, 0.9)
    assert dark.tags == ["ui", "dark mode"], "tags the file did not change keep their spelling"
    history = brain.history(ids["dark"])
    assert [v["version"] for v in history] == [1, 2] and "content" in history[1]["changed"]
    assert versions(brain, ids["issue"]) == [1, 2]
    again = import_markdown(brain, ws)
    assert again.total("updated") == 0 and versions(brain, ids["dark"]) == [1, 2]


def test_the_same_through_the_cli(tmp_path, capsys):
    db = tmp_path / "brain.db"
    ws = tmp_path / "ws"
    code, out, _ = run_cli(["--db", str(db), "--embedder", "none", "remember", "Prefers tea over coffee",
                            "--category", "core", "--kind", "preference"], capsys)
    assert code == 0
    assert run_cli(["--db", str(db), "--embedder", "none", "export", "--format", "markdown", str(ws)],
                   capsys)[0] == 0
    edit(ws / "MEMORY.md", "Prefers tea over coffee", "Prefers green tea over coffee")
    code, out, err = run_cli(["--db", str(db), "--embedder", "none", "import", "--format", "markdown", str(ws)],
                             capsys)
    assert code == 0, err
    assert "1 updated" in out
    code, out, _ = run_cli(["--db", str(db), "--embedder", "none", "history", "1"], capsys)
    assert re.findall(r"^v(\d+) ", out, re.M) == ["1", "2"]
    assert "changed content" in out and "Prefers green tea over coffee" in out


def test_each_editable_field(brain, exported):
    ids, ws = exported
    memory_md, yesterday = ws / "MEMORY.md", ws / "memory" / "2026-11-29.md"
    text = memory_md.read_text("utf-8")
    # tags: edit the hashtags; pin: take the 📌 off one, put it on another
    edit(memory_md, "#ui #dark-mode", "#ui #theme")
    edit(memory_md, "- 📌 Prefers dark mode", "- Prefers dark mode")
    edit(memory_md, "- **Use SQLite** — One file", "- 📌 **Use SQLite** — One file")
    # category and kind: move a bullet from Facts to Projects, as one moves a line
    fact = next(line for line in text.splitlines() if "login bug" in line)
    edit(memory_md, fact + "\n", "")
    edit(memory_md, "## Projects\n\n", "## Projects\n\n" + fact + "\n")
    # a daily note becomes core: moved from its day's file into MEMORY.md's Decisions
    laptop = next(line for line in yesterday.read_text("utf-8").splitlines() if "laptop" in line)
    edit(yesterday, laptop + "\n", "")
    edit(memory_md, "## Decisions\n\n", "## Decisions\n\n" + laptop.replace("- 06:00 ", "- ") + "\n")
    # importance and status in the comment
    edit(memory_md, "importance=0.8 status=ongoing", "importance=0.3 status=resolved")

    report = import_markdown(brain, ws)
    assert not report.conflicts and report.total("updated") == 5
    dark, sqlite = brain.get(ids["dark"]), brain.get(ids["sqlite"])
    assert dark.tags == ["ui", "theme"] and not dark.pinned
    assert sqlite.pinned and sqlite.title == "Use SQLite" and sqlite.content.endswith("```")
    issue = brain.get(ids["issue"])
    assert issue.category == "project" and issue.content == "The login bug is tracked as issue #12 #auth"
    laptop_memory = brain.get(ids["laptop"])
    assert (laptop_memory.category, laptop_memory.kind) == ("core", "decision")
    assert laptop_memory.tags == ["hardware"] and laptop_memory.title == "Laptop"
    project = brain.get(ids["project"])
    assert (project.importance, project.status) == (0.3, "resolved")
    assert [v["changed"] for v in brain.history(ids["dark"])][1] == ["metadata", "pinned", "tags"]


def test_a_change_in_both_places_is_a_conflict_and_brain_db_is_kept(brain, clock, exported, capsys):
    ids, ws = exported
    brain.update(ids["dark"], content="Prefers a light theme now")
    edit(ws / "MEMORY.md", "Prefers dark mode in every editor", "Prefers dark mode, high contrast")
    edit(ws / "MEMORY.md", "issue \\#12 \\#auth", "issue \\#12 \\#auth, fixed")  # as an editor shows it
    report = import_markdown(brain, ws)
    [conflict] = report.conflicts
    assert (conflict["id"], conflict["file"]) == (ids["dark"], "MEMORY.md") and conflict["line"] > 0
    assert "changed in brain.db and in the file" in conflict["reason"]
    assert brain.get(ids["dark"]).content == "Prefers a light theme now"
    assert brain.get(ids["issue"]).content == "The login bug is tracked as issue #12 #auth, fixed"
    assert report.total("updated") == 1
    code, out, _ = run_cli(["--db", str(brain.path), "--embedder", "none", "import", "--format", "markdown",
                            str(ws)], capsys)
    assert code == 1 and f"conflict: MEMORY.md line {conflict['line']}: #{ids['dark']}" in out


def test_changed_only_in_brain_db_stays(brain, exported):
    ids, ws = exported
    brain.update(ids["dark"], content="Prefers a light theme now", tags=["ui"])
    report = import_markdown(brain, ws)
    assert report.total("updated") == 0 and not report.conflicts
    assert brain.get(ids["dark"]).content == "Prefers a light theme now"


def test_edit_after_edit_and_back_again(brain, clock, exported):
    ids, ws = exported
    first, second = "Prefers dark mode in every editor", "Prefers dark mode, mostly"
    edit(ws / "MEMORY.md", first, second)
    assert import_markdown(brain, ws).total("updated") == 1
    clock.advance(minutes=1)
    edit(ws / "MEMORY.md", second, "Prefers dark mode, always")
    report = import_markdown(brain, ws)
    assert report.total("updated") == 1 and not report.conflicts, "its own import is no change in brain.db"
    clock.advance(minutes=1)
    edit(ws / "MEMORY.md", "Prefers dark mode, always", first)
    assert import_markdown(brain, ws).total("updated") == 1, "back to the exported text: still an edit"
    assert brain.get(ids["dark"]).content == first
    assert versions(brain, ids["dark"]) == [1, 2, 3, 4]
    # re-exported now, the folder and brain.db agree again
    export_markdown(brain, ws)
    assert import_markdown(brain, ws).total("updated") == 0


def test_new_bullets_are_added_once(brain, exported):
    ids, ws = exported
    edit(ws / "MEMORY.md", "## Decisions\n\n", "## Decisions\n\n- Keep one brain.db per agent #storage\n")
    report = import_markdown(brain, ws)
    assert report.total("added") == 1 and report.total("updated") == 0
    [new] = brain.list(tags=["storage"])
    assert (new.category, new.kind, new.content) == ("core", "decision", "Keep one brain.db per agent #storage")
    assert import_markdown(brain, ws).total("added") == 0


def test_delete_missing_forgets_what_was_removed(brain, clock, exported):
    ids, ws = exported
    manifest = json.loads((ws / MANIFEST).read_text("utf-8"))
    assert set(manifest["memories"]) == {m.uid for m in brain.list(limit=100)}
    issue = next(line for line in (ws / "MEMORY.md").read_text("utf-8").splitlines() if "login bug" in line)
    edit(ws / "MEMORY.md", issue + "\n", "")
    (ws / "memory" / "2026-11-29.md").unlink()  # the whole day
    kept = next(line for line in (ws / "MEMORY.md").read_text("utf-8").splitlines() if "📌 is how" in line)
    edit(ws / "MEMORY.md", kept + "\n", "")
    brain.update(ids["pin"], importance=0.95)  # removed from the file, changed in brain.db: kept

    without = import_markdown(brain, ws)
    assert without.forgotten == [] and brain.get(ids["issue"]), "only with delete_missing"
    report = import_markdown(brain, ws, delete_missing=True)
    assert sorted(report.forgotten) == sorted([ids["issue"], ids["laptop"]])
    [conflict] = report.conflicts
    assert conflict["id"] == ids["pin"] and "gone from the folder" in conflict["reason"]
    assert brain.get(ids["pin"]).importance == 0.95
    assert {m.id for m in brain.list(limit=100)} == set(ids.values()) - {ids["issue"], ids["laptop"]}
    with pytest.raises(InvalidInput, match="--delete-missing needs the folder a maxmem export wrote"):
        import_markdown(brain, ws / "MEMORY.md", delete_missing=True)


def test_a_memory_forgotten_since_the_export_is_not_brought_back(brain, exported):
    ids, ws = exported
    brain.forget(ids["dark"])
    report = import_markdown(brain, ws)
    assert report.total("added") == 0 and not report.conflicts
    assert all(m.content != "Prefers dark mode in every editor" for m in brain.list(limit=100))
    edit(ws / "MEMORY.md", "Prefers dark mode in every editor", "Prefers dark mode everywhere")
    [conflict] = import_markdown(brain, ws).conflicts
    assert "was forgotten in brain.db" in conflict["reason"]


def test_a_copied_bullet_is_reported(brain, exported):
    ids, ws = exported
    line = next(x for x in (ws / "MEMORY.md").read_text("utf-8").splitlines() if "login bug" in x)
    edit(ws / "MEMORY.md", line + "\n", line + "\n" + line.replace("login bug", "login bug (copy)") + "\n")
    report = import_markdown(brain, ws)
    [conflict] = report.conflicts
    assert "repeats the uid" in conflict["reason"]
    assert brain.get(ids["issue"]).content == "The login bug is tracked as issue #12 #auth"


def test_an_export_into_a_fresh_brain_then_back(brain, exported, tmp_path, hash_embedder, clock):
    """Exported from one brain, imported into another: created with their uids, and
    then the second brain round-trips the same folder."""
    ids, ws = exported
    with Brain.open(tmp_path / "other.db", embedder=hash_embedder, clock=clock) as other:
        report = import_markdown(other, ws)
        assert report.total("added") == len(ids) and not report.conflicts
        edit(ws / "MEMORY.md", "Prefers dark mode in every editor", "Prefers dark mode, other brain")
        assert import_markdown(other, ws).total("updated") == 1
        assert other.get(brain.get(ids["dark"]).uid).content == "Prefers dark mode, other brain"


HOSTILE = {  # content (and title) no file may hold raw, and text that reads like its escapes
    "osc": ("clipboard \x1b]52;c;aGk=\x07 and \x1b[2J cleared\r\nCR\rhere", "Title \x1b[31mred\x1b[0m"),
    "bidi": ("evil\u202egnp.exe and \u2066isolate\u2069, a line\u2028separator, C1 \x9b31m \x85 \x7f", None),
    "literal": ("printf '\\x1b[31m' and \\\\x1b and \\u202e stay text; C:\\x64\\bin", "\\x1b in a title"),
    "before": ("a backslash before ESC: \\\x1b[0m, two: \\\\\x1b, tab\tstays", None),
    "bold": ("** **", None),
    "pin": (" 📌 after a space", None),
    "bold text": ("**bold** then text", None),
    "controls": ("".join(chr(c) for c in (*range(1, 9), *range(11, 32))) + " all C0", None),
}


def test_control_characters_are_written_inert_and_read_back_as_they_were(brain, tmp_path, hash_embedder, clock):
    """No raw escape sequence, C0/C1 control (but newline and tab), DEL or bidi control lands
    in an exported file (an editor or `cat` would act on it); each is written as `\\x1b` /
    `\\u202e`, and the backslashes before text that reads like one are doubled, so the import
    gives back exactly what was stored: unchanged into the same brain, whole into a new one."""
    ids = {}
    for name, (content, title) in HOSTILE.items():
        for category in ("core", "daily"):
            ids[name, category] = brain.remember(content, title=title, category=category, kind="fact",
                                                 tags=["ok", "bad\x1b[2Jtag"]).id
    ws = tmp_path / "ws"
    export_markdown(brain, ws)
    for path in ws.rglob("*.md"):
        data = path.read_bytes()
        raw = re.findall(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]",
                         data)
        assert not raw, (path.name, raw[:5])
    assert "\\x1b]52;c;aGk=\\x07" in (ws / "MEMORY.md").read_text("utf-8")  # shown, escaped
    before = {m.id: m.to_dict() for m in brain.list(limit=100)}
    report = import_markdown(brain, ws)
    assert report.total("added") == report.total("updated") == 0 and not report.conflicts
    assert {m.id: m.to_dict() for m in brain.list(limit=100)} == before
    with Brain.open(tmp_path / "other.db", embedder=hash_embedder, clock=clock) as other:
        assert import_markdown(other, ws).total("added") == len(ids)
        for (name, _), memory_id in ids.items():
            mine, theirs = brain.get(memory_id), other.get(brain.get(memory_id).uid)
            assert theirs.content == mine.content, name  # a first space too (written \x20)
            assert theirs.title == mine.title, name
            assert theirs.tags == ["ok", "bad[2Jtag"], name  # a tag is a word: its controls are left out
