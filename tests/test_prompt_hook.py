"""`maxmem hook user-prompt`: the memories relevant to each prompt, fenced, within budget,
never twice in a session; and nothing, exit 0 and one log line, whatever goes wrong.

The logic tests use the deterministic bag-of-words embedder; the command's tests run the
installed `maxmem` under `env -i HOME=…` (cron's environment) on a brain.db embedded with
the real local model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import timedelta, timezone
from pathlib import Path

import apsw
import pytest

from maxmem import Brain
from maxmem.errors import ConfigError
from maxmem.hooks.recall import PREFACE, RecallSettings, has_substance, query_of, recall
from maxmem.hooks.shown import add_shown, forget_old, shown_ids
from maxmem.hooks.warm import stop_servers
from maxmem.memory import estimate_tokens

MAXMEM = Path(sys.executable).parent / "maxmem"
NO_SUBSTANCE = ["yes", "go on", "run the tests", "ok, do it", "thanks!", "/clear", "Continue.", "lgtm", "  ", "y",
                "commit and push", "please retry", "sounds good, go ahead", "42"]
SUBSTANCE = ["what did we decide about the database?", "which port does staging use", "remind me of the NAS layout",
             "fix the flaky invoice test", "Wie heißt der Server?", "run the migration on staging"]


@pytest.mark.parametrize("prompt", NO_SUBSTANCE)
def test_prompts_without_substance_recall_nothing(prompt):
    assert not has_substance(prompt)


@pytest.mark.parametrize("prompt", SUBSTANCE)
def test_questions_and_requests_with_a_topic_have_substance(prompt):
    assert has_substance(prompt)


def test_a_long_prompt_is_searched_by_its_start_and_its_end():
    prompt = "Here is the log:\n" + "x" * 50_000 + "\nwhy does the staging deploy fail?"
    query = query_of(prompt)
    assert len(query) < 2100 and query.startswith("Here is the log") and query.endswith("fail?")


def seeded(brain: Brain) -> dict[str, int]:
    ids = {
        "db": brain.remember("We decided to use PostgreSQL 16 with pgvector for the shared memory server.",
                             category="project").id,
        "port": brain.remember("Staging Postgres listens on port 5433 on host db2.", category="core").id,
        "tabs": brain.remember("The user prefers tabs over spaces in Go code.", category="core").id,
        "mine": brain.remember("user: which database server for the shared memory?\nassistant: PostgreSQL.",
                               category="conversation", session_id="this-session").id,
    }
    for n in range(30):
        brain.remember(f"Unrelated note {n}: the garden needs watering on day {n} of the month.")
    return ids


def test_recall_prints_the_relevant_memory_fenced_with_its_id_date_and_category(brain):
    ids = seeded(brain)
    found = recall(brain, "which database server did we decide on for the shared memory?",
                   session_id="this-session", settings=RecallSettings(max_memories=1), min_relevance=0.0)
    assert found.ids == (ids["db"],)
    assert found.text.startswith(PREFACE) and "```markdown\n" in found.text
    assert f"[#{ids['db']} · 2026-11-30 · project]" in found.text
    assert found.tokens == estimate_tokens(found.text) <= 400


def test_nothing_is_shown_twice_and_the_sessions_own_exchanges_are_left_out(brain):
    ids = seeded(brain)
    prompt = "which database server for the shared memory?"
    first = recall(brain, prompt, session_id="this-session", min_relevance=0.0)
    assert ids["mine"] not in first.ids and ids["db"] in first.ids
    second = recall(brain, prompt, session_id="this-session", shown=first.ids, min_relevance=0.0)
    assert not set(second.ids) & set(first.ids)


def test_every_block_keeps_to_its_budget_whatever_the_memories_hold(brain):
    for n in range(5):
        brain.remember(f"database note {n}: " + "``` fence breaker " * 200 + "é€😀" * 100, category="core")
    for budget in (80, 120, 400, 1000):
        found = recall(brain, "database note", settings=RecallSettings(budget_tokens=budget), min_relevance=0.0)
        assert found.memories and estimate_tokens(found.text) <= budget, budget
        fence = found.text.split("\n")[1].removesuffix("markdown")
        assert len(fence) > 3 and found.text.rstrip().endswith(fence)  # no memory closes the fence


def test_a_secret_in_the_prompt_is_redacted_before_it_is_searched(brain, hash_embedder):
    seeded(brain)
    searched: list[str] = []
    real = brain.search
    brain.search = lambda query, **kw: searched.append(query) or real(query, **kw)  # type: ignore[method-assign]
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8" * 3
    recall(brain, f"why does the database reject OPENAI_API_KEY={key} today?",
           min_relevance=0.0)
    assert searched and key not in searched[0] and "database" in searched[0]


def test_dates_are_in_the_zone_given(brain):
    seeded(brain)
    far = timezone(timedelta(hours=14))  # Kiritimati: 12:00 UTC is already tomorrow
    found = recall(brain, "staging postgres port", tz=far, min_relevance=0.0)
    assert "2026-12-01" in found.text


def test_recall_settings_refuse_bad_values_with_the_key_named():
    for section, key in (({"max_memories": 0}, "max_memories"), ({"budget_tokens": "lots"}, "budget_tokens"),
                         ({"max_memorie": 3}, "max_memorie")):
        with pytest.raises(ConfigError, match=key):
            RecallSettings.from_table(section)


def test_shown_lists_survive_garbage_and_are_forgotten_after_a_week(tmp_path):
    add_shown(tmp_path, "s1", [3, 4])
    add_shown(tmp_path, "s1", [4, 5])
    assert shown_ids(tmp_path, "s1") == {3, 4, 5} and shown_ids(tmp_path, "s2") == frozenset()
    (path,) = (tmp_path / "shown").glob("*.json")
    path.write_bytes(b"\x00\xff not json")
    assert shown_ids(tmp_path, "s1") == frozenset()
    add_shown(tmp_path, "s1", [9])
    assert shown_ids(tmp_path, "s1") == {9}
    old = time.time() - 8 * 86400
    os.utime(path, (old, old))
    assert forget_old(tmp_path / "shown") == 1 and shown_ids(tmp_path, "s1") == frozenset()


# -- the command, as the harness runs it -----------------------------------------------

needs_cli = pytest.mark.skipif(not MAXMEM.is_file(), reason="the maxmem entry point is not installed")


@pytest.fixture(scope="module")
def local_brain(tmp_path_factory, local_embedder) -> Path:
    path = tmp_path_factory.mktemp("prompt-hook") / "brain.db"
    with Brain.open(path, embedder=local_embedder) as brain:
        brain.remember("We decided to use PostgreSQL 16 with pgvector for the shared memory server, not Qdrant.",
                       category="project")
        brain.remember("Staging Postgres listens on port 5433 on host db2.", category="core")
        brain.remember("The kids want a red bicycle with a bell for the birthday.", category="daily")
    return path


def run_hook(home: Path, db: Path, stdin: bytes, *args: str) -> tuple[subprocess.CompletedProcess[bytes], float]:
    """The hook as a harness runs it; with a budget no busy machine reaches unless the test
    gives one (what the hook does is tested here; how fast, in bench/start_bench.py)."""
    budget = [] if "--budget" in args else ["--budget", "60"]
    started = time.monotonic()
    done = subprocess.run([str(MAXMEM), "--db", str(db), "hook", "user-prompt", *args, *budget], input=stdin,
                          env={"HOME": str(home)}, capture_output=True, timeout=120)
    return done, time.monotonic() - started


def log_lines(home: Path) -> list[str]:
    path = home / ".local" / "state" / "maxmem" / "hook.log"
    return path.read_text().splitlines() if path.exists() else []


@needs_cli
def test_the_hook_under_env_i_adds_the_memory_once_per_session(tmp_path, local_brain):
    home = tmp_path / "home"
    home.mkdir()
    payload = json.dumps({"session_id": "s-1", "prompt": "what did we decide about the shared memory database?",
                          "hook_event_name": "UserPromptSubmit", "cwd": "/home/u/proj"}).encode()
    done, _ = run_hook(home, local_brain, payload, "--harness", "claude")  # as older wiring spells it
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit" and "PostgreSQL 16 with pgvector" in out["additionalContext"]
    again, _ = run_hook(home, local_brain, payload, "--harness", "claude-code")
    assert again.returncode == 0 and again.stdout == b""
    plain, _ = run_hook(home, local_brain, payload.replace(b"s-1", b"s-2"), "--harness", "openclaw")
    assert plain.stdout.decode().startswith(PREFACE)
    assert [line.split(" ", 2)[1] for line in log_lines(home)] == ["ok", "ok", "ok"]
    assert [line.split(" ")[5].rstrip(":") for line in log_lines(home)] == ["claude-code", "claude-code", "openclaw"]


@needs_cli
def test_a_steering_prompt_adds_nothing(tmp_path, local_brain):
    """(Whether an off-topic question adds nothing is the relevance gate's to decide, and
    in a brain of three memories it favours showing the closest: tests/test_relevance.py.)"""
    home = tmp_path / "home"
    home.mkdir()
    for prompt in ("run the tests", "yes", "ok, go ahead and commit", "/compact"):
        done, _ = run_hook(home, local_brain, json.dumps({"session_id": "s", "prompt": prompt}).encode())
        assert done.returncode == 0 and done.stdout == b"", prompt


def held_exclusively(db: Path) -> apsw.Connection:
    connection = apsw.Connection(str(db))
    connection.execute("PRAGMA locking_mode=EXCLUSIVE")
    connection.execute("BEGIN EXCLUSIVE")
    return connection


@needs_cli
def test_bad_input_prints_nothing_exits_0_within_budget_and_logs_one_line(tmp_path, local_brain):
    home = tmp_path / "home"
    (home / ".config" / "maxmem").mkdir(parents=True)
    (home / ".config" / "maxmem" / "config.toml").write_text("[recall]\nwarm_minutes = 0\n")  # no server
    question = "what did we decide about the shared memory database? "
    cases = [
        ("a 1 MB prompt", json.dumps({"session_id": "big", "prompt": question + "x" * 1_000_000}).encode(), None),
        ("binary bytes", bytes(range(256)) * 64, None),
        ("empty stdin", b"", None),
        ("malformed JSON", b'{"prompt": "what did we decide', None),
        ("JSON not an object", b'["prompt"]', None),
        ("a missing brain.db", json.dumps({"prompt": question}).encode(), tmp_path / "nowhere" / "brain.db"),
    ]
    for name, stdin, db in cases:
        done, _ = run_hook(home, db or local_brain, stdin, "--budget", "3")
        assert done.returncode == 0, (name, done.stderr)
        if name != "a 1 MB prompt":
            assert done.stdout == b"", name
    assert not (tmp_path / "nowhere").exists()  # a hook creates no brain.db
    assert len(log_lines(home)) == len(cases)

    locked = tmp_path / "locked.db"
    source, copy = apsw.Connection(str(local_brain)), apsw.Connection(str(locked))
    with copy.backup("main", source, "main") as backup:
        backup.step()
    source.close()
    copy.close()
    lock = held_exclusively(locked)
    try:
        done, _ = run_hook(home, locked, json.dumps({"session_id": "lock", "prompt": question}).encode(),
                           "--budget", "3")
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert done.returncode == 0 and done.stdout == b""
    assert "FAIL hook user-prompt" in log_lines(home)[-1]
    assert len(log_lines(home)) == len(cases) + 1


@needs_cli
def test_a_bad_recall_setting_is_one_log_line_not_an_error(tmp_path, local_brain):
    home = tmp_path / "home"
    (home / ".config" / "maxmem").mkdir(parents=True)
    (home / ".config" / "maxmem" / "config.toml").write_text("[recall]\nmax_memories = 0\n")
    done, _ = run_hook(home, local_brain, json.dumps({"prompt": "which port does staging use?"}).encode())
    assert done.returncode == 0 and done.stdout == b""
    (line,) = log_lines(home)
    assert "FAIL" in line and "max_memories" in line


def wait_for(predicate, seconds: float = 90.0) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.2)
    return False


@needs_cli
def test_later_prompts_are_answered_warm_and_a_stale_server_steps_aside(tmp_path, local_brain):
    """The first prompt works alone and starts the recall server; the next is answered by
    it, with the same output; a changed config makes it leave (the hook then works alone)."""
    home = tmp_path / "home"
    config = home / ".config" / "maxmem" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[recall]\nwarm_minutes = 5\n")
    state = home / ".local" / "state" / "maxmem"
    ask = {"prompt": "what did we decide about the shared memory database?"}
    try:
        first, _ = run_hook(home, local_brain, json.dumps({**ask, "session_id": "a"}).encode())
        outputs = []

        def answered_warm() -> bool:
            done, _ = run_hook(home, local_brain, json.dumps({**ask, "session_id": f"b{len(outputs)}"}).encode())
            outputs.append(done.stdout)
            return "(warm," in log_lines(home)[-1]

        assert wait_for(answered_warm), log_lines(home)
        assert set(outputs) == {first.stdout} and first.stdout != b""
        assert "(warm," not in log_lines(home)[0]
        ask_again = json.dumps({**ask, "session_id": f"b{len(outputs) - 1}"}).encode()
        repeat, _ = run_hook(home, local_brain, ask_again)
        assert repeat.stdout == b""  # shown once per session, warm or not

        config.write_text("[recall]\nwarm_minutes = 5\nmax_memories = 2\n")
        third, _ = run_hook(home, local_brain, json.dumps({**ask, "session_id": "c"}).encode())
        assert third.returncode == 0 and b"PostgreSQL 16" in third.stdout
        assert "(warm," not in log_lines(home)[-1]
        assert wait_for(answered_warm), "no fresh server after the config changed"
    finally:
        assert stop_servers(state) == 1
    assert wait_for(lambda: stop_servers(state) == 0, 30)  # gone: nobody holds its lock


@needs_cli
def test_setup_wires_the_prompt_hook_and_uninstall_stops_its_server(tmp_path, local_brain):
    """The command setup writes runs under env -i and answers warm; --uninstall takes the
    hook out and stops the recall server it started."""
    from agent_layout import claude_home

    home = tmp_path / "home"
    claude_home(home)
    env = {"HOME": str(home)}
    setup = subprocess.run([str(MAXMEM), "--db", str(local_brain), "setup", "claude-code", "--no-mcp"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert setup.returncode == 0, setup.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    (command,) = [h["command"] for g in settings["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    assert "hook user-prompt --harness claude-code" in command
    state = home / ".local" / "state" / "maxmem"
    count = []

    def answered_warm() -> bool:
        payload = json.dumps({"session_id": f"w{len(count)}", "prompt": "which port does staging postgres use?"})
        count.append(subprocess.run(["/bin/sh", "-c", command], env=env, input=payload, capture_output=True,
                                    text=True, timeout=60).stdout)
        return "(warm," in log_lines(home)[-1]

    try:
        assert wait_for(answered_warm), log_lines(home)
        # The warm answer has the memory; a cold one may have stopped at its budget on a busy machine.
        assert "5433" in count[-1] and all("5433" in out for out in count if out)
        undone = subprocess.run([str(MAXMEM), "--db", str(local_brain), "setup", "claude-code", "--uninstall"],
                                env=env, capture_output=True, text=True, timeout=120)
        assert undone.returncode == 0 and "stopped 1 recall server" in undone.stdout, undone.stdout
        assert "UserPromptSubmit" not in (home / ".claude" / "settings.json").read_text()
        assert wait_for(lambda: stop_servers(state) == 0, 30)
    finally:
        stop_servers(state)
