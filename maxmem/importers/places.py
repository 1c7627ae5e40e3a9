"""Where each agent keeps what the importers read, found the way capture and setup find
the agents' folders (their variables, then the config's `[capture]` folders, then the
defaults):

  Claude Code  each dir of $CLAUDE_CONFIG_DIR, or ~/.claude and ~/.config/claude
  Codex        $CODEX_HOME or ~/.codex
  OpenClaw     the workspace in use: $OPENCLAW_WORKSPACE_DIR, openclaw.json's, or
               <state dir>/workspace (~/.openclaw/workspace)
  claude-mem   $CLAUDE_MEM_DATA_DIR, the CLAUDE_MEM_DATA_DIR of ~/.claude-mem/settings.json,
               else ~/.claude-mem; its database is claude-mem.db there
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..agents import Agent
from ..capture.roots import agents_folders
from ..config import Config
from ..errors import InvalidInput
from ..files import read_regular
from ..wiring.install import Install
from ..wiring.openclaw import workspace
from .common import is_dir

CLAUDE_MEM_DB = "claude-mem.db"


@dataclass(frozen=True)
class Places:
    """The folders and files of the agents on this machine (they may not exist)."""

    home: Path
    claude_dirs: tuple[Path, ...]
    codex_dirs: tuple[Path, ...]
    openclaw_workspace: Path
    claude_mem_db: Path

    @classmethod
    def from_config(cls, config: Config, env: Mapping[str, str]) -> Places:
        home = Path(env.get("HOME") or "/")
        roots = agents_folders(config.capture, env, home)
        return cls(home=home, claude_dirs=roots.claude_dirs or (), codex_dirs=roots.codex_dirs or (),
                   openclaw_workspace=workspace(Install.from_config(config, env, ())),
                   claude_mem_db=claude_mem_dir(env, home) / CLAUDE_MEM_DB)

    def shown(self, path: Path | str) -> str:
        """A path as the user reads it: ~ for the home folder."""
        text, home = str(path), str(self.home)
        return "~" + text[len(home):] if home not in ("", "/") and (text == home or text.startswith(home + "/")) \
            else text

    def present(self, agent: Agent, roots: tuple[Path, ...]) -> list[Path]:
        """The folders of `roots` that exist; none: InvalidInput saying how to give one."""
        found = [root for root in roots if is_dir(root)]
        if not found:
            raise InvalidInput(f"no {agent.title} folder at {', '.join(self.shown(r) for r in roots)}: give it, as "
                               f"in  maxmem import --from {agent.name} PATH  (or set {agent.transcripts.env})")
        return found


def claude_mem_dir(env: Mapping[str, str], home: Path) -> Path:
    """claude-mem's data folder, resolved as claude-mem resolves it (src/shared/paths.ts)."""
    if env.get("CLAUDE_MEM_DATA_DIR"):
        return expand(env["CLAUDE_MEM_DATA_DIR"], home)
    default = home / ".claude-mem"
    try:
        raw = json.loads(read_regular(default / "settings.json", 1 << 20).decode("utf-8-sig"))
    except (OSError, ValueError, InvalidInput):  # a FIFO is never waited on
        return default
    settings = raw.get("env", raw) if isinstance(raw, dict) else {}
    configured = settings.get("CLAUDE_MEM_DATA_DIR") if isinstance(settings, dict) else None
    return expand(configured, home) if isinstance(configured, str) and configured else default


def expand(text: str, home: Path) -> Path:
    """`~` and `~/…` against `home` (not the process's own HOME)."""
    if text == "~":
        return home
    if text.startswith("~/"):
        return home / text[2:]
    return Path(text)
