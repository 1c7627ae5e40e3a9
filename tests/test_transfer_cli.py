"""Small things a new user meets first, each through the command as a user runs it:
export into a folder that is not there, import --dry-run, imports saying their vectors
come later, history without versions that changed nothing, doctor after a forget, and
the first folder sync saying where its key is."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

from maxmem import Brain


def test_export_into_a_missing_folder_is_refused_in_one_line(tmp_path, capsys):
    db = str(tmp_path / "a.db")
    assert run_cli(["--db", db, "--embedder", "none", "remember", "one memory"], capsys)[0] == 0
    for fmt, dest in (("jsonl", tmp_path / "no" / "such" / "out.jsonl"), ("markdown", tmp_path / "nope" / "ws")):
        code, out, err = run_cli(["--db", db, "--embedder", "none", "export", "--format", fmt, str(dest)], capsys)
        assert code == 2 and err == (f"maxmem: error: {dest.parent}: no such folder: create it first "
                                     f"(mkdir -p {dest.parent})\n"), err
        assert not dest.parent.exists()
    code, _, err = run_cli(["--db", db, "--embedder", "none", "export", "--format", "markdown",
                            str(tmp_path / "ws")], capsys)
    assert code == 0 and f"{tmp_path / 'ws'} did not exist: created it" in err, err


def test_import_a_file_dry_run_counts_and_writes_nothing(tmp_path, capsys):
    source, target = str(tmp_path / "a.db"), tmp_path / "b.db"
    for text in ("the boiler is serviced in October", "the quince tree flowers in April"):
        run_cli(["--db", source, "--embedder", "none", "remember", text, "-c", "project"], capsys)
    export = tmp_path / "out.jsonl"
    assert run_cli(["--db", source, "--embedder", "none", "export", str(export)], capsys)[0] == 0
    code, out, _ = run_cli(["--db", str(target), "--embedder", "none", "import", str(export), "--dry-run"], capsys)
    assert code == 0 and out == f"would import {export}: 2 added, 0 updated, 0 unchanged\n", out
    assert not target.exists()  # a dry run creates no brain.db
    code, out, _ = run_cli(["--db", str(target), "--embedder", "none", "import", str(export)], capsys)
    assert code == 0 and out.startswith(f"imported {export}: 2 added"), out
    assert "have no vector (no embedder configured)" in out
    with Brain.open(target, embedder="none") as brain:
        brain.update(1, content="the boiler is serviced in November")
    code, out, _ = run_cli(["--db", str(target), "--embedder", "none", "import", str(export), "--dry-run",
                            "--json"], capsys)
    assert code == 0 and json.loads(out) == {"added": 0, "updated": 1, "unchanged": 1}, out
    with Brain.open(target, embedder="none") as brain:
        assert "November" in brain.get(1).content  # the dry run changed nothing


def test_an_import_says_its_vectors_come_later(tmp_path, capsys):
    export = tmp_path / "out.jsonl"
    with Brain.open(tmp_path / "a.db", embedder="none") as brain:
        brain.remember("the boiler is serviced in October")
    run_cli(["--db", str(tmp_path / "a.db"), "--embedder", "none", "export", str(export)], capsys)
    # The target brain's embedder is an endpoint that does not answer now: the memories wait for it.
    config = tmp_path / "config.toml"
    config.write_text('embedder = "openai"\nopenai_base_url = "http://127.0.0.1:9/v1"\nopenai_api_key = "sk-t"\n'
                      'openai_model = "e5"\nopenai_dimensions = 8\nembed_max_retries = 0\n'
                      'embed_batch_deadline = 2.0\n')
    code, out, err = run_cli(["--config", str(config), "--db", str(tmp_path / "b.db"), "import", str(export)],
                             capsys)
    assert code == 0, err
    assert "1 memories wait for a vector: the scheduled tick embeds them (or now:  maxmem embed )" in out, out


def test_history_leaves_out_writes_that_changed_nothing(tmp_path, hash_embedder):
    with Brain.open(tmp_path / "a.db", embedder="none") as brain:
        memory = brain.remember("the boiler is serviced in October", category="project")
    with Brain.open(tmp_path / "a.db", embedder=hash_embedder, check_embedder=False) as brain:
        brain.embed_pending()  # a vector added: no field a person changed
        brain.update(memory.id, content="the boiler is serviced in November")
        brain.update(memory.id, content="the boiler is serviced in November")  # the same text again
        versions = brain.history(memory.id)
    assert [v["version"] for v in versions] == [1, 2], versions
    assert versions[1]["changed"] == ["content", "content_hash"] or "content" in versions[1]["changed"]


def test_doctor_after_a_forget_shows_no_phantom_category(tmp_path, capsys):
    db = str(tmp_path / "a.db")
    run_cli(["--db", db, "--embedder", "none", "remember", "a note written by mistake", "-c", "daily"], capsys)
    run_cli(["--db", db, "--embedder", "none", "remember", "the boiler is serviced in October", "-c", "project"],
            capsys)
    assert run_cli(["--db", db, "--embedder", "none", "forget", "1"], capsys)[0] == 0
    _, out, _ = run_cli(["--db", db, "--embedder", "none", "doctor"], capsys)
    sizes = out[out.index("size: "):]
    assert " ? " not in sizes and "\n  ?" not in sizes, sizes
    assert "daily               0 memories" in sizes and "-1 in 7 days" in sizes, sizes
    _, out, _ = run_cli(["--db", db, "--embedder", "none", "doctor", "--json"], capsys)
    assert set(json.loads(out)["sizes"]["categories"]) == {"daily", "project"}


def test_the_first_folder_sync_says_where_its_key_is_and_who_needs_it(tmp_path, capsys, maxmem_home):
    share = tmp_path / "share"
    share.mkdir()
    db = str(tmp_path / "a.db")
    run_cli(["--db", db, "--embedder", "none", "remember", "the boiler is serviced in October"], capsys)
    code, _, err = run_cli(["--db", db, "--embedder", "none", "sync", "folder", str(share)], capsys)
    key = Path(maxmem_home) / "sync.key"
    assert code == 0 and key.exists(), err
    (line,) = [line for line in err.splitlines() if "made a new sync key" in line]
    assert f"made a new sync key: {key}. Your other machines need a copy of it" in line
    assert "--key-file COPY" in line
    code, _, err = run_cli(["--db", db, "--embedder", "none", "sync", "folder"], capsys)
    assert code == 0 and "made a new sync key" not in err
