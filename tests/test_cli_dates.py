"""`list`/`search` --since and --until read English times as `query` does; `capture`
says where it looked."""

from __future__ import annotations

import json

from conftest import run_cli


def test_list_since_accepts_the_dates_query_understands(tmp_path, capsys):
    db = str(tmp_path / "b.db")
    base = ["--db", db, "--embedder", "none"]
    assert run_cli([*base, "remember", "old note", "--created-at", "2020-01-05T10:00:00Z"], capsys)[0] == 0
    assert run_cli([*base, "remember", "fresh note"], capsys)[0] == 0
    for since in ("yesterday", "3 days ago", "last friday", "2021-01-01"):
        code, out, err = run_cli([*base, "list", "--since", since], capsys)
        assert code == 0 and "fresh note" in out and "old note" not in out, (since, out, err)
    code, out, _ = run_cli([*base, "list", "--until", "2021-01-01", "--since", "2019"], capsys)
    assert code == 0 and "old note" in out and "fresh note" not in out
    code, out, err = run_cli([*base, "search", "note", "--since", "yesterday"], capsys)
    assert code == 0 and "fresh note" in out and "old note" not in out
    code, out, err = run_cli([*base, "list", "--since", "a while ago"], capsys)
    assert code == 2 and err.startswith("maxmem: error:") and err.count("\n") == 1


def test_capture_names_the_folders_it_looked_in(tmp_path, capsys, monkeypatch):
    for var, name in (("OPENCLAW_STATE_DIR", "oc"), ("CLAUDE_CONFIG_DIR", "cl"), ("CODEX_HOME", "cx")):
        monkeypatch.setenv(var, str(tmp_path / name))
    (tmp_path / "cl" / "projects").mkdir(parents=True)
    code, out, _ = run_cli(["--db", str(tmp_path / "b.db"), "--embedder", "none", "capture"], capsys)
    assert code == 0 and out.startswith("capture: 0 files")
    assert (f"looked in openclaw: {tmp_path / 'oc' / 'agents'} (missing), "
            f"claude-code: {tmp_path / 'cl' / 'projects'}, codex: {tmp_path / 'cx' / 'sessions'} (missing)") in out
    code, out, _ = run_cli(["--db", str(tmp_path / "b.db"), "--embedder", "none", "capture", "--json"], capsys)
    assert json.loads(out)["roots"][1] == f"claude-code: {tmp_path / 'cl' / 'projects'}"
