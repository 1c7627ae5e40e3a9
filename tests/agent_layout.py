"""A fake agent layout in a temp HOME, in the agents' real file formats.

`claude_transcript` writes a Claude Code session file (the line shapes of
tests/fixtures/transcripts/claude-code, one complete response per assistant turn),
each turn carrying a unique marker word so a test can search for every one.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = ("port docker compose backup nas schedule invoice parser week date tide table json flag "
         "heating repair tuesday gift warranty reminder sunday review notes summary deploy server "
         "config token cache index query latency memory agent session branch commit test fix").split()


def marker(i: int) -> str:
    """A word no other turn has (FTS5 tokenises it whole)."""
    return f"zq{i:05d}mark"


def claude_transcript(path: Path, session: str, target_bytes: int, cwd: str = "/home/user/proj",
                      seed: int = 5) -> list[str]:
    """Write a Claude Code transcript of about `target_bytes`; returns the turn markers."""
    rnd = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    markers: list[str] = []
    parent = None
    size = 0
    i = 0
    with open(path, "w", encoding="utf-8") as out:
        while size < target_bytes:
            minute = i // 2
            t = f"2026-11-28T{10 + minute // 60 % 12:02d}:{minute % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z"
            words = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(40, 160)))
            uid = f"{session[:8]}-{i:04x}-4000-8000-{i:012x}"
            base = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
                    "sessionId": session, "version": "2.1.150", "gitBranch": "main",
                    "uuid": uid, "timestamp": t}
            if i % 2 == 0:
                line = {**base, "type": "user",
                        "message": {"role": "user", "content": f"{marker(i)} {words}"}}
            else:
                line = {**base, "type": "assistant", "requestId": f"req_{i:08d}",
                        "message": {"model": "claude-sonnet-4-5-20250929", "id": f"msg_{i:08d}",
                                    "type": "message", "role": "assistant",
                                    "content": [{"type": "text", "text": f"{marker(i)} {words}"}],
                                    "stop_reason": "end_turn", "stop_sequence": None,
                                    "usage": {"input_tokens": 10, "output_tokens": 200}}}
            text = json.dumps(line, ensure_ascii=False) + "\n"
            out.write(text)
            size += len(text.encode("utf-8"))
            markers.append(marker(i))
            parent = uid
            i += 1
    return markers


def claude_conversation(path: Path, session: str, texts: list[str], cwd: str = "/home/user/proj",
                        after: int | None = None) -> None:
    """A short Claude Code transcript: `texts` alternate user, assistant. `after`: append
    them to a transcript of that many lines (claude_transcript's), on the next day."""
    path.parent.mkdir(parents=True, exist_ok=True)
    parent = None
    with open(path, "a" if after is not None else "w", encoding="utf-8") as out:
        for n, text in enumerate(texts):
            i = n if after is None else after + n
            uid = f"{session[:8]}-{i:04x}-4000-8000-{i:012x}"
            day = "28" if after is None else "29"
            base = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
                    "sessionId": session, "version": "2.1.150", "uuid": uid,
                    "timestamp": f"2026-11-{day}T10:{n:02d}:00.000Z"}
            if i % 2 == 0:
                line = {**base, "type": "user", "message": {"role": "user", "content": text}}
            else:
                line = {**base, "type": "assistant", "message": {
                    "model": "claude-sonnet-4-5-20250929", "id": f"msg_{i:08d}", "type": "message",
                    "role": "assistant", "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn", "stop_sequence": None}}
            out.write(json.dumps(line) + "\n")
            parent = uid


def claude_home(home: Path, session: str = "5f0c2a7e-1111-4222-8333-944455556666",
                target_bytes: int = 20_000, cwd: str = "/home/user/proj") -> tuple[Path, list[str]]:
    """~/.claude with settings.json (user content to keep) and one project transcript."""
    claude = home / ".claude"
    claude.mkdir(parents=True, exist_ok=True)
    (claude / "settings.json").write_text(json.dumps({
        "model": "opus", "permissions": {"allow": ["Bash(git status)"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
    }, indent=2) + "\n", encoding="utf-8")
    (home / ".claude.json").write_text(json.dumps({
        "numStartups": 12, "projects": {"/home/user/proj": {"allowedTools": []}},
        "mcpServers": {"other": {"type": "stdio", "command": "/usr/bin/other-mcp", "args": []}},
    }, indent=2) + "\n", encoding="utf-8")
    sanitized = cwd.replace("/", "-")
    path = claude / "projects" / sanitized / f"{session}.jsonl"
    return path, claude_transcript(path, session, target_bytes, cwd)


CODEX_CONFIG = '''# my Codex settings: keep these comments
model = "gpt-5.1-codex"   # the model I like
approval_policy = "on-request"

[features]
web_search = true

[mcp_servers.other]
command = "/usr/bin/other-mcp"
args = ["--flag"]

[projects."/home/user/proj"]
trust_level = "trusted"
'''


def codex_home(home: Path) -> Path:
    codex = home / ".codex"
    (codex / "sessions" / "2026" / "11" / "28").mkdir(parents=True, exist_ok=True)
    (codex / "config.toml").write_text(CODEX_CONFIG, encoding="utf-8")
    return codex


def openclaw_home(home: Path) -> Path:
    state = home / ".openclaw"
    (state / "agents" / "main" / "sessions").mkdir(parents=True, exist_ok=True)
    (state / "workspace").mkdir(parents=True, exist_ok=True)
    (state / "openclaw.json").write_text(json.dumps(
        {"agents": {"defaults": {"workspace": str(state / "workspace")}}}, indent=2) + "\n", encoding="utf-8")
    return state
