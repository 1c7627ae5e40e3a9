"""`maxmem import --from AGENT`: the memory Claude Code, OpenClaw, Codex and claude-mem
keep themselves, and any folder of notes, brought into brain.db.

Each agent's files are laid out in a temp HOME in their real formats (Claude Code's
transcripts with their `cwd`, its auto-memory files with front matter, OpenClaw's
workspace, Codex's rollouts and memories folder, a claude-mem database in the schema
claude-mem's own code creates). The end-to-end cases run the installed `maxmem` script
under `env -i HOME=…`."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from agent_layout import claude_conversation
from claude_mem_layout import CLAUDE_MEM_OLD_DDL, claude_mem_db, epoch_ms

from maxmem import Brain
from maxmem.importers import import_agent
from maxmem.importers.claude_code import encoded, on_disk
from maxmem.importers.common import day_instant

MAXMEM = Path(sys.executable).parent / "maxmem"
installed = pytest.mark.skipif(not MAXMEM.is_file(), reason="the maxmem entry point is not installed")
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS_KEY = "AKIAZ7Q3XK2M9PLW4RTE"


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# -- the agents' files ---------------------------------------------------------------


def claude_layout(home: Path) -> Path:
    """~/.claude: your CLAUDE.md (with a secret in it), one project known from its
    transcript, with CLAUDE.md, CLAUDE.local.md, a rules file and auto memory. Returns
    the project's folder."""
    write(home / ".claude" / "CLAUDE.md", f"""# CLAUDE.md

- Always answer in British English.
- I work on the payments team at Acme.
- Never push to main; prefer small pull requests.
- The deploy token is {GITHUB_TOKEN}, keep it handy.

## Tools

Use `rg` instead of grep.

```bash
alias gs='git status'
```
""")
    project = home / "code" / "shop"
    (project / ".git").mkdir(parents=True)
    write(project / "CLAUDE.md", """# Shop

Build with `make build`; the tests run with `make test`.

## Conventions
- Use pnpm, never npm.
- Money is stored in cents, as integers.
  - never as floats
""")
    write(project / "CLAUDE.local.md", "My sandbox is https://sandbox.shop.test/me.\n")
    write(project / ".claude" / "rules" / "api.md",
          "---\npaths: src/api/**\n---\n# API\n\n- Every handler validates its input.\n")
    folder = home / ".claude" / "projects" / encoded(str(project))
    claude_conversation(folder / "5f0c2a7e-1111-4222-8333-944455556666.jsonl", "5f0c2a7e-1111-4222-8333-944455556666",
                        ["how do we store money?", "In cents."], cwd=str(project))
    write(folder / "memory" / "MEMORY.md", """# Memory
- [Testing workflow](testing.md) — how the tests are run
- The staging database is read-only on Fridays.
""")
    write(folder / "memory" / "testing.md", """---
name: Testing workflow
description: how the user wants tests run
type: feedback
---
Run the full suite with `make test` before every commit, never a subset.
""")
    return project


def openclaw_layout(home: Path) -> Path:
    space = home / ".openclaw" / "workspace"
    write(home / ".openclaw" / "openclaw.json", json.dumps({"agents": {"defaults": {"workspace": str(space)}}}))
    write(space / "MEMORY.md", """# MEMORY.md

## Decisions
- We host the blog on the NAS, not on a VPS.

## Preferences
- Sam prefers short answers.

## Projects
- Tidewatch: a tide-table app for the harbour club.
""")
    write(space / "USER.md", "# USER.md\n\n- Name: Sam\n- Lives in Lisbon; works remotely.\n")
    write(space / "memory" / "2026-03-05.md", """# 2026-03-05

- Renewed the harbour club's domain for two years.
- Backup of the NAS failed at 03:00: disk full.
""")
    write(space / "memory" / "2026-03-06.md", "# 2026-03-06\n\n- Freed 200 GB on the NAS; the backup ran.\n")
    write(space / "memory" / "2026-03-05-standup.md", "# Session: 2026-03-05 09:00 UTC\n\nuser: hi\n")
    return space


def codex_layout(home: Path) -> Path:
    codex = home / ".codex"
    write(codex / "AGENTS.md", "# Global instructions\n\n- Always run the linters before you say done.\n")
    project = home / "code" / "tidewatch"
    (project / ".git").mkdir(parents=True)
    write(project / "AGENTS.md", "# Tidewatch\n\n- Tide heights are in metres, times in UTC.\n")
    meta = {"timestamp": "2026-11-28T09:00:00.012Z", "type": "session_meta",
            "payload": {"id": "01a22161-fe80-73c1-ae5f-4b2d9c07e816", "timestamp": "2026-11-28T09:00:00.004Z",
                        "cwd": str(project / "src"), "originator": "codex_cli_rs", "cli_version": "0.163.0",
                        "source": "cli", "base_instructions": {"text": "You are Codex."}}}
    write(codex / "sessions" / "2026" / "11" / "28" / "rollout-2026-11-28T10-00-00-01a22161.jsonl",
          json.dumps(meta) + "\n")
    write(codex / "memories" / "memory_summary.md", """## User Profile

Sam builds small apps for a harbour club and wants terse answers.

## General Tips
- Run `make check` first: it is faster than the full suite.

## What's in Memory
- tides: tide tables, harbour
  - desc: how Tidewatch computes tides
""")
    write(codex / "memories" / "MEMORY.md", f"""---
rollout_summary_files:
  - 2026-11-28T10-00-00-tides.md (success, cwd={project}, updated_at=2026-11-28T10:30:00Z)
description: tide computations in Tidewatch
keywords: tides, harmonics
---

- The harmonic constants live in data/constants.json.
- A failing tide test usually means the constants file is stale.

---
rollout_summary_files:
  - 2026-11-27T08-00-00-shell.md (cwd=/home/sam, updated_at=2026-11-27T08:10:00Z)
description: shell habits
keywords: zsh
---

- Sam's shell is zsh with vi keys.
""")
    return project


def home_env(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), "MAXMEM_HOME": str(home / ".maxmem"), **extra}


def maxmem(home: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """The installed maxmem, as cron or a hook runs it: env -i HOME=… (no PATH)."""
    return subprocess.run([str(MAXMEM), "--embedder", "none", *args], env=home_env(home, **extra),
                          capture_output=True, text=True, timeout=120)


def memories(brain: Brain) -> dict[str, dict]:
    return {m.uid: m.to_dict() for m in brain.list(limit=10_000)}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


# -- end to end, through the installed script ----------------------------------------


@installed
@pytest.mark.slow
def test_claude_code_end_to_end_idempotent_and_redacted(home):
    project = claude_layout(home)
    done = maxmem(home, "import", "--from", "claude-code")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("claude-code: 13 added, 0 updated, 0 unchanged, 1 skipped, from 6 file(s)"), \
        done.stdout
    assert "redacted 1 secret(s)" in done.stderr

    listed = json.loads(maxmem(home, "list", "--json", "--limit", "100").stdout)
    by_text = {m["content"]: m for m in listed}
    rule = by_text["Always answer in British English."]
    assert (rule["category"], rule["kind"]) == ("core", "preference")
    assert rule["source"] == "claude-code:~/.claude/CLAUDE.md:3"
    assert rule["metadata"]["imported_from"]["file"] == str(home / ".claude" / "CLAUDE.md")
    assert rule["metadata"]["imported_from"]["line"] == 3
    assert by_text["I work on the payments team at Acme."]["category"] == "core"
    fence = by_text["```bash\nalias gs='git status'\n```"]  # a fence stays whole, under its heading
    assert fence["title"] == "Tools"
    pnpm = by_text["Use pnpm, never npm."]
    assert (pnpm["category"], pnpm["kind"], pnpm["tags"]) == ("project", "preference", ["shop"])
    assert pnpm["title"] == "Shop › Conventions"
    assert by_text["Money is stored in cents, as integers.\n- never as floats"]["tags"] == ["shop"]
    assert by_text["Every handler validates its input."]["metadata"]["imported_from"]["file"] == \
        str(project / ".claude" / "rules" / "api.md")
    assert "My sandbox is https://sandbox.shop.test/me." in by_text
    tests = by_text["Run the full suite with `make test` before every commit, never a subset."]
    assert (tests["category"], tests["kind"], tests["title"]) == ("core", "preference", "Testing workflow")
    assert by_text["The staging database is read-only on Fridays."]["category"] == "project"
    assert not any("[Testing workflow](testing.md)" in text for text in by_text)  # an index line

    token = next(m for m in listed if "deploy token" in m["content"])
    assert GITHUB_TOKEN not in token["content"] and "[REDACTED:github]" in token["content"]
    db = home / ".maxmem" / "brain.db"
    for path in (db, Path(f"{db}-wal")):
        assert not path.exists() or GITHUB_TOKEN.encode() not in path.read_bytes()

    before = db.read_bytes(), Path(f"{db}-wal").read_bytes() if Path(f"{db}-wal").exists() else b""
    again = maxmem(home, "import", "--from", "claude-code")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("claude-code: 0 added, 0 updated, 13 unchanged, 1 skipped"), again.stdout
    after = db.read_bytes(), Path(f"{db}-wal").read_bytes() if Path(f"{db}-wal").exists() else b""
    assert after == before  # nothing changed, so nothing was written
    assert len(json.loads(maxmem(home, "list", "--json", "--limit", "100").stdout)) == 13


@installed
@pytest.mark.slow
def test_openclaws_untouched_user_template_is_left_out(home):
    openclaw_layout(home)
    template = ("# USER.md - User Model\n\n## Directives\n\nReplace the example below with a real directive and a "
                "real observation date before you save this file. Never leave a placeholder directive `active`.\n\n"
                "- Prefer ...\n")
    (home / ".openclaw" / "workspace" / "USER.md").write_text(template)
    done = maxmem(home, "import", "--from", "openclaw", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "USER.md: OpenClaw's USER.md template, not filled in yet" in done.stdout and "Prefer ..." not in done.stdout


def test_openclaw_daily_notes_keep_their_date_far_east_of_new_york(home):
    openclaw_layout(home)
    done = maxmem(home, "import", "--from", "openclaw", TZ="Pacific/Kiritimati")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("openclaw: 8 added, 0 updated, 0 unchanged, 0 skipped, from 4 file(s)"), done.stdout
    assert "left out: ~/.openclaw/workspace/memory/2026-03-05-standup.md" in done.stdout
    listed = json.loads(maxmem(home, "list", "--json", "-c", "daily", "--limit", "100").stdout)
    kiritimati = ZoneInfo("Pacific/Kiritimati")
    days = {}
    for memory in listed:
        at = datetime.fromisoformat(memory["created_at"].replace("Z", "+00:00"))
        assert at.date() == at.astimezone(kiritimati).date(), memory["created_at"]  # the same day both ways
        days[memory["content"]] = at.astimezone(kiritimati).date()
    assert days == {"Renewed the harbour club's domain for two years.": date(2026, 3, 5),
                    "Backup of the NAS failed at 03:00: disk full.": date(2026, 3, 5),
                    "Freed 200 GB on the NAS; the backup ran.": date(2026, 3, 6)}
    on_the_day = maxmem(home, "list", "-c", "daily", "--since", "2026-03-05", "--until", "2026-03-06",
                        TZ="Pacific/Kiritimati")
    assert on_the_day.stdout.count("\n") == 2 and "2026-03-05 daily/note" in on_the_day.stdout
    core = {m["content"]: m for m in json.loads(maxmem(home, "list", "--json", "-c", "core", "-c", "project").stdout)}
    assert core["We host the blog on the NAS, not on a VPS."]["kind"] == "decision"
    assert core["Sam prefers short answers."]["kind"] == "preference"
    assert core["Tidewatch: a tide-table app for the harbour club."]["category"] == "project"
    assert core["Name: Sam"]["kind"] == "fact"


@installed
@pytest.mark.slow
def test_setup_names_what_there_is_to_import(home):
    claude_layout(home)
    codex_layout(home)
    done = maxmem(home, "setup")
    assert done.returncode == 0, done.stderr
    assert "claude-code  ~/.claude: 13 notes in 6 file(s): maxmem import --from claude-code" in done.stdout
    assert "codex        ~/.codex: 7 notes in 4 file(s): maxmem import --from codex" in done.stdout
    assert "openclaw " not in done.stdout.split("to import", 1)[1]
    found = json.loads(maxmem(home, "setup", "--json").stdout)["imports"]
    assert [f["source"] for f in found] == ["claude-code", "codex"]
    assert not (home / ".maxmem" / "brain.db").exists()  # the survey writes nothing


# -- idempotence, edits, removals ----------------------------------------------------


def test_an_edited_line_updates_its_memory_and_nothing_else(brain, home):
    claude_layout(home)
    env = {"HOME": str(home)}
    first = import_agent(brain, "claude-code", env=env)
    assert first.totals()["added"] == 13
    before = memories(brain)
    changes = brain.db.scalar("SELECT max(seq) FROM changes")

    path = home / ".claude" / "CLAUDE.md"
    text = path.read_text()
    text = text.replace("- I work on the payments team at Acme.", "- I work on the risk team at Acme.")
    text = text.replace("## Tools\n", "## Tools\n\nA paragraph added above the others.\n")
    text = text.replace("- Always answer", "- Keep commit messages short.\n- Always answer")
    path.write_text(text)

    second = import_agent(brain, "claude-code", env=env)
    assert (second.totals()["added"], second.totals()["updated"], second.totals()["unchanged"]) == (2, 1, 12)
    after = memories(brain)
    edited = [uid for uid in before if before[uid] != after[uid]]
    assert len(edited) == 1
    memory = after[edited[0]]
    assert memory["content"] == "I work on the risk team at Acme."
    assert memory["metadata"]["imported_from"]["line"] == 5
    assert [v["memory"]["content"] for v in brain.history(memory["uid"])] == [
        "I work on the payments team at Acme.", "I work on the risk team at Acme."]
    assert {after[u]["content"] for u in set(after) - set(before)} == {
        "Keep commit messages short.", "A paragraph added above the others."}
    # one change-log entry per memory written: one update, two adds
    assert brain.db.scalar("SELECT max(seq) FROM changes") == changes + 3

    third = import_agent(brain, "claude-code", env=env)
    assert (third.totals()["added"], third.totals()["updated"]) == (0, 0)
    assert memories(brain) == after


def test_a_removed_line_is_reported_kept_and_known_when_it_comes_back(brain, home):
    openclaw_layout(home)
    env = {"HOME": str(home)}
    import_agent(brain, "openclaw", env=env)
    count = len(memories(brain))
    path = home / ".openclaw" / "workspace" / "MEMORY.md"
    original = path.read_text()
    path.write_text(original.replace("- Sam prefers short answers.\n", ""))

    report = import_agent(brain, "openclaw", env=env)
    assert report.totals()["gone"] == 1 and report.totals()["added"] == 0
    assert any(line.startswith("gone ") and "Sam prefers short answers." in line for line in report.lines())
    assert "1 no longer in their files (their memories are kept)" in report.summary()
    assert len(memories(brain)) == count  # kept
    assert import_agent(brain, "openclaw", env=env).totals()["gone"] == 0  # said once

    path.write_text(original)  # back again: the same memory, not a second one
    back = import_agent(brain, "openclaw", env=env)
    assert (back.totals()["added"], back.totals()["unchanged"]) == (0, 8)
    assert len(memories(brain)) == count


def test_a_forgotten_memory_is_not_brought_back_until_its_line_changes(brain, home):
    openclaw_layout(home)
    env = {"HOME": str(home)}
    import_agent(brain, "openclaw", env=env)
    target = next(m for m in brain.list(limit=100) if m.content == "Sam prefers short answers.")
    brain.forget(target.id)
    again = import_agent(brain, "openclaw", env=env)
    assert again.totals()["added"] == 0 and again.totals()["skipped"] == 1
    assert not any(m.content == "Sam prefers short answers." for m in brain.list(limit=100))
    path = home / ".openclaw" / "workspace" / "MEMORY.md"
    path.write_text(path.read_text().replace("Sam prefers short answers.", "Sam prefers very short answers."))
    assert import_agent(brain, "openclaw", env=env).totals()["added"] == 1
    # the record keeps hashes and places, never the text
    rows = brain.db.rows("SELECT * FROM agent_imports")
    assert rows and not any("short answers" in json.dumps(r) for r in rows)


def test_dry_run_writes_nothing_and_shows_what_would_change(tmp_path, home, capsys, monkeypatch):
    from conftest import run_cli

    openclaw_layout(home)
    monkeypatch.setenv("HOME", str(home))
    db = tmp_path / "b.db"
    code, out, err = run_cli(["--db", str(db), "--embedder", "none", "import", "--from", "openclaw", "--dry-run"],
                             capsys)
    assert code == 0, err
    assert not db.exists()  # no brain.db made for a dry run
    assert out.startswith("openclaw (dry run): would add 8, would update 0")
    assert "add    core/decision ~/.openclaw/workspace/MEMORY.md:4: We host the blog on the NAS" in out

    assert run_cli(["--db", str(db), "--embedder", "none", "import", "--from", "openclaw"], capsys)[0] == 0
    path = home / ".openclaw" / "workspace" / "memory" / "2026-03-06.md"
    path.write_text(path.read_text() + "- Ordered a second disk.\n")
    files = [db, Path(f"{db}-wal"), Path(f"{db}-shm")]
    before = [p.read_bytes() if p.exists() else None for p in files]
    code, out, err = run_cli(["--db", str(db), "--embedder", "none", "import", "--from", "openclaw", "--dry-run",
                              "--json"], capsys)
    assert code == 0, err
    plan = json.loads(out)
    assert (plan["added"], plan["unchanged"]) == (1, 8)
    assert [p.read_bytes() if p.exists() else None for p in files] == before


# -- each source ---------------------------------------------------------------------


def test_codex_agents_files_and_its_memories(brain, home):
    project = codex_layout(home)
    report = import_agent(brain, "codex", env={"HOME": str(home)})
    assert report.totals() == {"added": 7, "updated": 0, "unchanged": 0, "skipped": 1, "gone": 0}
    got = {m.content: m for m in brain.list(limit=100)}
    assert got["Always run the linters before you say done."].category == "core"
    tides = got["Tide heights are in metres, times in UTC."]
    assert (tides.category, tides.tags) == ("project", ["tidewatch"])
    assert tides.metadata["imported_from"]["file"] == str(project / "AGENTS.md")
    assert got["Sam builds small apps for a harbour club and wants terse answers."].kind == "fact"
    assert got["Run `make check` first: it is faster than the full suite."].kind == "lesson"
    constants = got["The harmonic constants live in data/constants.json."]
    assert (constants.category, constants.tags, constants.title) == (
        "project", ["tidewatch"], "tide computations in Tidewatch")
    assert got["Sam's shell is zsh with vi keys."].tags == ["sam"]
    assert not any("desc: how Tidewatch" in text for text in got)  # the index of the folder is left out


def test_claude_mem_observations_and_summaries(brain, home):
    claude_mem_db(home / ".claude-mem" / "claude-mem.db")
    report = import_agent(brain, "claude-mem", env={"HOME": str(home)})
    assert report.totals() == {"added": 3, "updated": 0, "unchanged": 0, "skipped": 1, "gone": 0}
    got = {m.title: m for m in brain.list(limit=100)}
    cents = got["Store money as integer cents"]
    assert (cents.category, cents.kind, cents.tags) == ("project", "decision", ["shop"])
    assert cents.content == ("Floats lost a cent on refunds; amounts are integer cents everywhere now.\n"
                             "- Refund totals matched after the change\n- Column type is BIGINT")
    assert cents.created_at == "2026-10-01T09:30:00.000Z"
    assert cents.source == "claude-mem:~/.claude-mem/claude-mem.db#observations/1"
    assert cents.metadata["imported_from"]["files_read"] == ["src/money.py"]
    assert cents.metadata["imported_from"]["subtitle"] == "Floats lost cents on refunds"
    assert cents.metadata["imported_from"]["concepts"] == ["trade-off"]
    assert got["Fix rounding in refunds"].tags == ["storefront"]  # merged into that project
    summary = got["Session: Fix refund totals"]
    assert (summary.category, summary.kind, summary.created_at[:10]) == ("daily", "summary", "2026-11-29")
    assert summary.content.startswith("Request: Fix refund totals\nInvestigated: The refund path\n")
    assert summary.metadata["imported_from"]["files_edited"] == ["src/money.py", "src/refund.py"]
    assert "Observer note" not in got
    again = import_agent(brain, "claude-mem", env={"HOME": str(home)})
    assert again.totals()["unchanged"] == 3 and again.totals()["added"] == 0


def test_claude_mem_database_of_the_first_schema(brain, tmp_path):
    path = tmp_path / "old" / "claude-mem.db"
    path.parent.mkdir()
    with sqlite3.connect(path) as db:
        db.executescript(CLAUDE_MEM_OLD_DDL)
        db.execute("INSERT INTO observations (sdk_session_id, project, text, type, created_at, created_at_epoch) "
                   "VALUES ('s1', 'shop', 'Refunds go through the ledger service.', 'discovery', "
                   "'2026-09-01T08:00:00.000Z', ?)", (epoch_ms("2026-09-01T08:00:00Z"),))
    report = import_agent(brain, "claude-mem", path, env={"HOME": str(tmp_path)})
    assert report.totals()["added"] == 1
    (memory,) = brain.list()
    assert (memory.content, memory.kind, memory.tags) == ("Refunds go through the ledger service.", "discovery",
                                                         ["shop"])
    assert memory.metadata["imported_from"]["session"] == "s1"


def test_markdown_folder_of_notes(brain, tmp_path):
    notes = tmp_path / "vault"
    write(notes / "Cooking.md", "# Cooking\n\nI always salt the pasta water.\n\nRisotto takes 18 minutes.\n")
    write(notes / "daily" / "2026-03-05.md", "- Called the plumber about the boiler.\n")
    write(notes / ".obsidian" / "workspace.md", "- not a note\n")
    write(notes / "export" / "MEMORY.md", "# MEMORY.md — long-term memory\n\n<!-- written by maxmem export at "
                                          "2026-11-01T00:00:00.000Z; maxmem import --format markdown reads it -->\n\n"
                                          "- x <!-- maxmem uid=abc kind=note rev=123 -->\n")
    report = import_agent(brain, "markdown", notes, env={"HOME": str(tmp_path)}, tz=ZoneInfo("Europe/Lisbon"))
    assert report.totals()["added"] == 3
    assert "left out: " in "\n".join(report.lines()) and "written by maxmem export" in "\n".join(report.lines())
    got = {m.content: m for m in brain.list(limit=100)}
    assert (got["I always salt the pasta water."].category, got["I always salt the pasta water."].kind) == (
        "core", "preference")
    assert (got["Risotto takes 18 minutes."].category, got["Risotto takes 18 minutes."].tags) == ("project", ["vault"])
    assert got["Called the plumber about the boiler."].category == "daily"
    assert got["Called the plumber about the boiler."].created_at[:10] == "2026-03-05"
    assert "expiring" in report.to_dict() and report.expiring == 1  # older than 90 days before the test clock
    # a file of the folder deleted: its items are gone (kept); another folder's are not this import's
    (notes / "Cooking.md").unlink()
    assert import_agent(brain, "markdown", notes, env={"HOME": str(tmp_path)}).totals()["gone"] == 2


def test_project_folder_without_transcripts_is_found_on_disk(tmp_path):
    project = tmp_path / "my-proj.v2" / "app"
    project.mkdir(parents=True)
    assert on_disk(encoded(str(project))) == project
    assert on_disk(encoded(str(tmp_path / "nowhere"))) is None


@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", "Pacific/Pago_Pago", "America/New_York", "Asia/Kolkata",
                                  "UTC", "Australia/Lord_Howe"])
def test_a_dated_note_is_on_its_day_in_the_users_zone_and_in_utc(zone):
    tz = ZoneInfo(zone)
    for day in (date(2026, 3, 5), date(2026, 3, 29), date(2026, 11, 1)):
        at = datetime.fromisoformat(day_instant(day, tz).replace("Z", "+00:00"))
        assert at.date() == day and at.astimezone(tz).date() == day


# -- bad input: one line each, nothing lost -----------------------------------------


@installed
@pytest.mark.slow
def test_bad_input_is_one_line_and_loses_nothing(home):
    openclaw_layout(home)
    assert maxmem(home, "import", "--from", "openclaw").returncode == 0
    db = home / ".maxmem" / "brain.db"
    count = len(json.loads(maxmem(home, "list", "--json", "--limit", "100").stdout))

    def one_line(done: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
        assert done.returncode == code, (done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("maxmem: error: "), done.stderr
        assert all(w in done.stderr for w in words), done.stderr

    one_line(maxmem(home, "import", "--from", "codex"), 2, "no Codex folder at ~/.codex")
    one_line(maxmem(home, "import", "--from", "markdown", str(home / "missing")), 2, "no such folder")
    one_line(maxmem(home, "import", "--from", "markdown"), 2, "needs the folder of notes")
    one_line(maxmem(home, "import", "--from", "gemini"), 2, "'gemini' is not one of")
    one_line(maxmem(home, "import", "--dry-run", "x.jsonl"), 2, "x.jsonl: no such file")
    write(home / ".claude-mem" / "claude-mem.db", "not a database at all, just text\n" * 200)
    one_line(maxmem(home, "import", "--from", "claude-mem"), 2, "is not a SQLite database")
    with sqlite3.connect(home / "other.db") as other:
        other.execute("CREATE TABLE observations (id INTEGER PRIMARY KEY, body TEXT)")
    one_line(maxmem(home, "import", "--from", "claude-mem", str(home / "other.db")), 2,
             "not a claude-mem database this maxmem knows")
    missing_db = home / ".maxmem-none"
    done = subprocess.run([str(MAXMEM), "--db", str(missing_db / "brain.db"), "import", "--from", "codex"],
                          env=home_env(home), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and not missing_db.exists()  # read first: no brain.db made for nothing
    assert len(json.loads(maxmem(home, "list", "--json", "--limit", "100").stdout)) == count
    assert db.exists()


@contextmanager
def private_tree() -> Iterator[Path]:
    """A folder outside pytest's (0700) temp dir, for a user for whom file modes count."""
    folder = Path(tempfile.mkdtemp(prefix="maxmem-import-"))
    os.chmod(folder, 0o755)
    try:
        yield folder
    finally:
        for path in [folder, *folder.rglob("*")]:
            if not path.is_symlink():
                path.chmod(0o755 if path.is_dir() else 0o644)
        shutil.rmtree(folder)


@pytest.mark.slow
def test_unreadable_and_non_utf8_files_are_reported_the_others_imported(other_user):
    with private_tree() as folder:
        home = folder / "home"
        notes = home / "notes"
        write(notes / "good.md", "- The boiler is serviced every October.\n")
        write(notes / "latin1.md", "- caf\u00e9 on the corner\n".encode("latin-1"))
        write(notes / "locked.md", "- a note nobody may read\n")
        other_user.own(home, *home.rglob("*"))
        (notes / "locked.md").chmod(0)

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return other_user.run(["--embedder", "none", *args], home_env(home), timeout=120, cwd="/")

        done = run("import", "--from", "markdown", str(notes))
        assert done.returncode == 1, (done.stdout, done.stderr)
        assert done.stdout.startswith("markdown: 1 added, 0 updated, 0 unchanged, 0 skipped, from 1 file(s); "
                                      "2 file(s) could not be read"), done.stdout
        assert done.stderr.splitlines() == [
            "maxmem: error: ~/notes/latin1.md: not UTF-8 (byte 0xe9 at offset 5): convert it first, e.g. with "
            "iconv -t UTF-8",
            "maxmem: error: ~/notes/locked.md: cannot read it: Permission denied"], done.stderr
        assert "The boiler is serviced every October." in run("list").stdout


def test_a_dry_run_shows_each_change_with_its_secrets_out(brain, home):
    claude_layout(home)
    report = import_agent(brain, "claude-code", env={"HOME": str(home)}, dry_run=True)
    shown = "\n".join(report.lines(show_steps=True))
    assert "add    core/note ~/.claude/CLAUDE.md:6: The deploy token is [REDACTED:github], keep it handy." in shown
    assert GITHUB_TOKEN not in shown and GITHUB_TOKEN not in json.dumps(report.to_dict())
    assert "skip   project/note" in shown and "an index line" in shown
    assert brain.list() == [] and brain.db.scalar("SELECT count(*) FROM agent_imports") == 0


def test_the_agents_own_variables_name_their_folders(brain, tmp_path):
    codex = tmp_path / "elsewhere" / "codex-home"
    write(codex / "AGENTS.md", "- Prefer ripgrep.\n")
    claude = tmp_path / "elsewhere" / "claude-config"
    write(claude / "CLAUDE.md", "- Prefer tabs.\n")
    write(claude / "projects" / "-nowhere-on-this-machine" / "memory" / "MEMORY.md",
          "- A note kept for a lost project.\n")
    env = {"HOME": str(tmp_path / "home"), "CODEX_HOME": str(codex), "CLAUDE_CONFIG_DIR": str(claude)}
    assert import_agent(brain, "codex", env=env).totals()["added"] == 1
    report = import_agent(brain, "claude-code", env=env)
    assert report.totals()["added"] == 2
    assert any("no transcript names its directory" in n for n in report.notes)
    lost = next(m for m in brain.list() if m.content == "A note kept for a lost project.")
    assert (lost.category, lost.tags) == ("project", ["nowhere-on-this-machine"])
