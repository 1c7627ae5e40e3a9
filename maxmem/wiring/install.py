"""What every target needs to know: which `maxmem` to run, with which brain.db and config.

Agents and schedulers start commands with little of the user's environment (cron:
no PATH entry for ~/.local/bin; Codex: a fixed allowlist; launchd and systemd: a
minimal PATH), so setup writes an absolute path to the `maxmem` that is running now,
and passes `--db` (and `--config`, when there is a config file) explicitly.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from ..config import Config, state_dir


def find_maxmem(argv0: str, executable: str,
                exists: Callable[[Path], bool] | None = None) -> tuple[str, ...]:
    """The command that starts this maxmem, as absolute argv.

    1. The entry point being run (sys.argv[0] named `maxmem`): for a venv, pipx
       (~/.local/bin/maxmem, a link into pipx's venv) and `uv tool` alike, the path the
       user's shell found. It is made absolute but not resolved, so a pipx or uv
       upgrade that moves the venv behind the link keeps the wiring valid (and a Codex
       hook's trust, which is tied to the command string).
    2. `maxmem` beside the interpreter (sys.executable's bin folder): `python -m maxmem`
       run from a venv that has the entry point.
    3. The interpreter itself with `-m maxmem`.
    """
    is_file = exists or (lambda p: p.is_file() and os.access(p, os.X_OK))
    first = Path(argv0)
    if first.name in ("maxmem", "maxmem.exe") and is_file(Path(os.path.abspath(first))):
        return (os.path.abspath(first),)
    beside = Path(executable).parent / "maxmem"
    if executable and is_file(beside):
        return (str(beside),)
    return (os.path.abspath(executable), "-m", "maxmem")


@dataclass(frozen=True)
class Install:
    """The facts every target plans from; built once by `maxmem setup`."""

    home: Path
    env: Mapping[str, str]
    maxmem: tuple[str, ...]  # absolute argv prefix
    db: Path
    config_path: Path | None  # passed with --config only when the file exists
    state: Path  # logs, locks, the setup manifest and backups
    platform: str = sys.platform
    now: datetime = field(default_factory=datetime.now)

    @classmethod
    def from_config(cls, config: Config, env: Mapping[str, str], maxmem: Sequence[str],
                    platform: str = sys.platform, now: datetime | None = None) -> Install:
        home = Path(env.get("HOME") or Path("~").expanduser())
        config_path = config.config_path if config.config_path and Path(config.config_path).is_file() else None
        return cls(home=home, env=dict(env), maxmem=tuple(maxmem),
                   db=Path(os.path.abspath(Path(config.db_path).expanduser())),
                   config_path=Path(os.path.abspath(config_path)) if config_path else None,
                   state=Path(os.path.abspath(state_dir(env))), platform=platform,
                   now=now or datetime.now())

    @property
    def executable(self) -> str:
        return self.maxmem[0]

    def globals(self) -> list[str]:
        """The global options every written command carries."""
        out = ["--db", str(self.db)]
        if self.config_path is not None:
            out += ["--config", str(self.config_path)]
        return out

    def argv(self, *args: str) -> list[str]:
        return [*self.maxmem, *self.globals(), *args]

    def shell(self, *args: str) -> str:
        """The command as one POSIX shell string (Claude Code and Codex run `sh -c`)."""
        return shlex.join(self.argv(*args))

    @property
    def env_file(self) -> Path:
        """The file the job scripts (and the systemd unit, launchd's wrapper) read secrets
        such as OPENAI_API_KEY from, chmod 600: the scripts' default, ~/.config/maxmem/env."""
        return self.home / ".config" / "maxmem" / "env"

    def log(self, name: str) -> Path:
        return self.state / f"{name}.log"

    def data_dir(self) -> Path:
        """Where setup keeps the job scripts it installs ($XDG_DATA_HOME/maxmem)."""
        base = self.env.get("XDG_DATA_HOME") or str(self.home / ".local" / "share")
        if self.platform == "darwin":
            base = str(self.home / "Library" / "Application Support")
        return Path(base) / "maxmem"

    def tilde(self, path: Path | str) -> str:
        """A path shown to the user, with ~ for the home folder."""
        text = str(path)
        home = str(self.home)
        return "~" + text[len(home):] if text == home or text.startswith(home + "/") else text


def is_maxmem_command(argv: Sequence[str]) -> bool:
    """Does this argv start maxmem (an absolute or bare `maxmem`, or `python -m maxmem`)?"""
    if not argv:
        return False
    if Path(argv[0]).name in ("maxmem", "maxmem.exe"):
        return True
    return len(argv) >= 3 and argv[1] == "-m" and argv[2] == "maxmem"


def split_command(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def strip_assignments(argv: list[str]) -> list[str]:
    """The argv without leading VAR=value words (`MAXMEM_BIN=… /path/script`)."""
    i = 0
    while i < len(argv) and "=" in argv[i] and not argv[i].startswith(("/", "-")) \
            and argv[i].split("=", 1)[0].isidentifier():
        i += 1
    return argv[i:]
