"""The agent commands through the real CLI entry point: output, --json, exit codes, errors."""

from __future__ import annotations

import io
import json
import sys

import pytest
from conftest import run_cli

from maxmem.memory import estimate_tokens


@pytest.fixture
def run(tmp_path, capsys, monkeypatch):
    """maxmem ARGS against a temp brain.db (keyword-only); returns (exit code, stdout, stderr)."""
    db = tmp_path / "brain.db"

    def invoke(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        return run_cli(["--db", str(db), "--embedder", "none", *args], capsys)

    return invoke


def test_observe_active_resolve_timeline(run):
    code, out, _ = run("observe", "project", "Build the memory", "-t", "maxmem", "--ongoing",
                       "--started", "2 days ago", "-i", "0.8", "--tag", "memory")
    assert code == 0 and out.startswith("observed #1 (project, ongoing, started ")
    code, out, _ = run("active", "--json")
    [work] = json.loads(out)
    assert work["memory"]["title"] == "maxmem" and 47.9 < work["hours_open"] < 48.2
    code, out, _ = run("active")
    assert "open 2.0 days" in out
    code, out, _ = run("resolve", "1", "--content", "shipped v1")
    assert code == 0 and out.strip() == "resolved #1 after 2.0 days"
    code, out, _ = run("active")
    assert out.strip() == "no open work"
    code, out, _ = run("timeline", "--days", "7")
    assert "started  #1 project: maxmem" in out and "resolved #1" in out and "(open 2.0 days)" in out


def test_work_commands_refuse_bad_input(run):
    code, _, err = run("observe", "task", "x", "--started", "a while ago")
    assert code == 2 and "too vague" in err and err.count("\n") == 1
    code, _, err = run("observe", "task", "x", "--started", "tomorrow")
    assert code == 2 and "future" in err
    code, _, err = run("observe", "Bad Kind", "x")
    assert code == 2 and "kind" in err
    code, _, err = run("resolve", "42")
    assert code == 1 and "no memory '42'" in err
    code, _, err = run("active", "--min-importance", "2")
    assert code == 2
    code, _, err = run("timeline", "--days", "0")
    assert code == 2
    code, out, _ = run("list", "--json")
    assert json.loads(out) == []


def test_ensure_observation_cli(run):
    code, out, _ = run("ensure-observation", "--from-task", "Fix the login bug in the acme-web repo",
                       "--location", "~/code/acme-web")
    assert code == 0 and out.strip() == "created observation #1 for project 'acme-web'"
    code, out, _ = run("ensure-observation", "--project", "Acme-Web", "--json")
    data = json.loads(out)
    assert data["created"] is False and data["memory"]["id"] == 1
    code, _, err = run("ensure-observation")
    assert code == 2 and "--project NAME or --from-task TEXT" in err
    code, _, err = run("ensure-observation", "--project", "a", "--from-task", "b")
    assert code == 2


CONTEXT_DOC = {
    "session_id": "s-1",
    "agent": "main",
    "exchanges": [{"user_message": "What port does staging use?",
                   "assistant_response": "Staging Postgres listens on 5433.",
                   "tool_calls": [{"name": "grep", "params": {"pattern": "port"},
                                   "result": "port=5433", "status": "ok"}]}],
    "observations": [{"type": "fact", "title": "Staging port", "content": "Staging Postgres is on 5433",
                      "importance": 0.9, "tags": ["staging"]}],
}


def test_save_context_from_stdin_and_file_then_the_brief(run, tmp_path):
    doc = json.dumps(CONTEXT_DOC)
    code, out, _ = run("save-context", stdin=doc)
    assert code == 0
    assert out.strip() == ("session s-1: stored 1 exchange(s) with 1 tool call(s) and 1 observation(s);"
                           " already saved: 0 exchange(s), 0 observation(s)")
    path = tmp_path / "ctx.json"
    path.write_text(doc)
    code, out, _ = run("save-context", "--file", str(path), "--json")
    report = json.loads(out)
    assert (report["exchanges_stored"], report["exchanges_already_saved"]) == (0, 1)
    code, out, _ = run("brief", "--session-id", "s-1")
    assert code == 0 and out.startswith("maxmem memory brief: ") and "```markdown\n# Memory brief" in out
    assert out.rstrip().endswith("```")
    assert "## Current session (s-1)" in out and "Staging Postgres listens on 5433" in out
    assert "Staging port" in out
    code, out, _ = run("brief", "--budget-tokens", "150", "--json")
    data = json.loads(out)
    assert data["tokens"] <= 150 and data["markdown"].startswith("# Memory brief")
    assert data["tokens"] == estimate_tokens(data["text"]) and data["markdown"].rstrip() in data["text"]


def test_save_context_errors(run, tmp_path):
    code, _, err = run("save-context", stdin="{not json")
    assert code == 2 and "not valid JSON" in err
    code, _, err = run("save-context", stdin=json.dumps({**CONTEXT_DOC, "exchanges": [{"user_message": 1}]}))
    assert code == 2 and "exchanges[0].user_message must be text" in err
    code, _, err = run("save-context", "--file", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err
    code, out, _ = run("list", "--json")
    assert json.loads(out) == []
    code, _, err = run("brief", "--budget-tokens", "5")
    assert code == 2 and "at least 100" in err


def test_query_runs_search_or_list_and_explains(run):
    run("remember", "We chose SQLite for the brain", "-c", "core", "-k", "decision", "-i", "0.9")
    run("remember", "Postgres is for sync only", "-c", "core", "-k", "decision", "-i", "0.2")
    run("observe", "project", "maxmem", "--ongoing", "-i", "0.8")
    code, out, _ = run("query", "decisions about sqlite")
    lines = out.splitlines()
    assert lines[0] == 'interpreted as: kind decision; text "sqlite"'
    assert "We chose SQLite" in lines[1] and len(lines) == 2
    code, out, _ = run("query", "high-importance unresolved projects from the last 7 days", "--json")
    data = json.loads(out)
    assert data["filters"]["status"] == ["ongoing", "active"]
    assert [r["memory"]["content"] for r in data["results"]] == ["maxmem"]
    code, out, _ = run("query", "low importance decisions")
    assert "Postgres is for sync only" in out and "SQLite" not in out
    code, out, _ = run("query", "oldest 1 decisions")
    assert out.splitlines()[1].endswith("We chose SQLite for the brain")
    code, out, _ = run("query", "decisions about sqlite", "--explain")
    assert "interpreted as: kind decision; text" in out and "MATCH ?" in out and "params:" in out
    code, out, _ = run("query", "critical tasks this month", "--explain", "--json")
    data = json.loads(out)
    assert data["sql"][0]["sql"].startswith("SELECT m.* FROM memories m WHERE")
    params = data["sql"][0]["params"]
    assert params[0] == "task" and 0.9 in params and params[-2:] == [20, 0]


def test_query_refusals_exit_2(run):
    for question in ("since 3/4", "a while ago", "resolved and unresolved", "next week", ""):
        code, out, err = run("query", question)
        assert code == 2, question
        assert err.startswith("maxmem: error: ") and err.count("\n") == 1 and out == ""


def test_markdown_export_and_import_round_trip(run, tmp_path):
    run("remember", "Prefers short answers", "-c", "core", "-k", "preference", "--tag", "style")
    run("remember", "Deployed v2 to production", "-c", "daily", "-t", "Deploy")
    workspace = tmp_path / "ws"
    code, _, err = run("export", "--format", "markdown", str(workspace))
    assert code == 0 and "exported 2 memories to 2 file(s)" in err
    memory_md = (workspace / "MEMORY.md").read_text()
    assert "## Preferences" in memory_md and "- Prefers short answers #style" in memory_md
    [daily] = (workspace / "memory").glob("*.md")
    assert "**Deploy** — Deployed v2 to production" in daily.read_text()

    # importing into the same brain: everything is already there
    code, out, _ = run("import", "--format", "markdown", str(workspace), "--json")
    files = json.loads(out)["files"]
    assert [(f["added"], f["existing"]) for f in files] == [(0, 1), (0, 1)]
    # a hand-written addition is imported once (exported files are read again each time)
    daily.write_text(daily.read_text() + "- 23:59 a new line by hand\n")
    code, out, _ = run("import", "--format", "markdown", str(workspace / "memory" / "*.md"))
    assert out.strip() == ("imported 1 file(s): 1 memories added, 0 updated, 1 already present,"
                           " 0 file(s) unchanged since their last import")
    code, out, _ = run("import", "--format", "markdown", str(workspace))
    assert "0 memories added, 0 updated, 3 already present" in out
    code, out, _ = run("list", "--json")
    assert sorted(m["content"] for m in json.loads(out)) == [
        "Deployed v2 to production", "Prefers short answers", "a new line by hand"]
    imported = run("list", "--json", "--meta", "markdown_file=MEMORY.md")
    assert json.loads(imported[1]) == []


def test_markdown_export_never_overwrites_a_foreign_memory_md(run, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "MEMORY.md").write_text("# My own notes\n- keep me\n")
    run("remember", "a core fact", "-c", "core")
    code, _, err = run("export", "--format", "markdown", str(workspace))
    assert code == 2 and "was not written by maxmem" in err
    assert (workspace / "MEMORY.md").read_text() == "# My own notes\n- keep me\n"
    code, _, err = run("export", "--format", "markdown", str(workspace), "--force")
    assert code == 0 and "a core fact" in (workspace / "MEMORY.md").read_text()


def test_markdown_backup_keeps_the_newest(run, tmp_path):
    backups = tmp_path / "backups"
    for old in ("2026-01-01", "2026-01-02", "2026-01-03"):
        (backups / old).mkdir(parents=True)
    run("remember", "a core fact", "-c", "core")
    code, _, err = run("export", "--format", "markdown", str(backups), "--keep", "2")
    assert code == 0
    kept = sorted(p.name for p in backups.iterdir())
    assert len(kept) == 2 and kept[0] == "2026-01-03"
    assert (backups / kept[1] / "MEMORY.md").exists()


def test_markdown_import_errors(run, tmp_path):
    code, _, err = run("import", "--format", "markdown", str(tmp_path / "nothing" / "*.md"))
    assert code == 2 and "no Markdown files match" in err
    bad = tmp_path / "MEMORY.md"
    bad.write_text("- tea <!-- maxmem uid=z importance=high -->\n")
    code, _, err = run("import", "--format", "markdown", str(bad))
    assert code == 2 and "line 1: importance=high is not a number" in err
    code, _, err = run("export", "--format", "markdown")
    assert code == 2 and "give the directory" in err
