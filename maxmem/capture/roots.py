"""Where transcripts live, and which files in those places are live transcripts.

Default roots, from each agent's record in maxmem.agents (each replaced by the agent's
own variable when set, and by the `[capture]` table of the config file when that names
them):
  OpenClaw     $OPENCLAW_STATE_DIR or ~/.openclaw (+ legacy ~/.clawdbot, ~/.moltbot, ~/.moldbot)
               agents/<agentId>/agent/openclaw-agent.sqlite (2026.8.1 and later: openclaw_store)
               and agents/<agentId>/sessions/*.jsonl (older installs), topic files included
  Claude Code  each dir of $CLAUDE_CONFIG_DIR (comma-separated) or ~/.claude and ~/.config/claude
               projects/<cwd>/*.jsonl and projects/<cwd>/<session>/subagents/*.jsonl
  Codex        $CODEX_HOME or ~/.codex
               sessions/YYYY/MM/DD/rollout-*.jsonl and archived_sessions/rollout-*.jsonl

OpenClaw side files are not transcripts: `.lock`, `.bak.*`, checkpoints and trajectory
sidecars are never read; `*.jsonl.reset.*` / `*.jsonl.deleted.*` archives are read only
when they are a file capture already follows under its old name (a rotation), so
the lines written between the last run and the reset are not lost.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..agents import AGENTS, Agent
from ..errors import InvalidInput
from ..files import read_regular
from ..settings import CaptureSettings
from .model import FORMATS
from .openclaw_store import find_session, find_stores, is_store
from .readers import detect_format, named_as

log = logging.getLogger("maxmem")

_OPENCLAW_SIDE = re.compile(r"\.(?:checkpoint\.[^/]*|trajectory)\.jsonl$|\.jsonl\.lock$|\.bak(?:\.|$)")
_OPENCLAW_ARCHIVE = re.compile(r"\.jsonl\.(?:reset|deleted)\.[^/]+$")


@dataclass(frozen=True)
class Source:
    path: Path
    format: str
    archived: bool = False  # read only if it is a file capture already follows (renamed)
    session: str | None = None  # an OpenClaw store: only the session with this id or key


def agents_folders(settings: CaptureSettings, env: Mapping[str, str] | None = None,
                   home: Path | None = None) -> CaptureSettings:
    """`[capture]` with the folders it leaves to the agents (None) filled in: each agent's
    own variable in `env` (its record's `transcripts.env`: OPENCLAW_STATE_DIR,
    CLAUDE_CONFIG_DIR, CODEX_HOME), else its usual places under `home`. Folders the
    config names stay as they are."""
    env = env or {}
    home = home or Path("~").expanduser()
    filled: dict[str, Any] = {a.transcripts.setting: default_dirs(a, env, home) for a in AGENTS
              if getattr(settings, a.transcripts.setting) is None}
    return replace(settings, **filled)


def default_dirs(agent: Agent, env: Mapping[str, str], home: Path) -> tuple[Path, ...]:
    """The folders `agent` keeps its transcripts in: its variable's, else its usual ones."""
    where = agent.transcripts
    value = env.get(where.env, "")
    if value.strip():
        parts = value.split(where.separator) if where.separator else [value]
        return tuple(Path(p.strip()).expanduser() for p in parts if p.strip())
    return tuple(home / name for name in where.defaults)


def only_agent(settings: CaptureSettings, name: str) -> CaptureSettings:
    """`settings` with every other agent's folders left out (a hook captures its own agent's)."""
    others: dict[str, Any] = {a.transcripts.setting: () for a in AGENTS if a.name != name}
    return replace(settings, **others)


def describe_roots(settings: CaptureSettings) -> list[str]:
    """The folders `discover` looks in, as "agent: path" ("(missing)" after an absent one)."""
    out = []
    for agent in AGENTS:
        for root in getattr(settings, agent.transcripts.setting) or ():
            folder = root / agent.transcripts.look_in
            out.append(f"{agent.name}: {folder}" + ("" if folder.is_dir() else " (missing)"))
    return out


def discover(settings: CaptureSettings) -> list[Source]:
    """Every transcript under the configured roots (missing roots are fine)."""
    found: dict[Path, Source] = {}
    for agent in AGENTS:
        for root in getattr(settings, agent.transcripts.setting) or ():
            for source in FINDERS[agent.name](root):
                found.setdefault(source.path, source)
    return list(found.values())


def claude_code_sources(root: Path) -> Iterator[Source]:
    projects = root / "projects"
    yield from (Source(p, "claude-code") for p in _glob(projects, "*/*.jsonl"))
    yield from (Source(p, "claude-code") for p in _glob(projects, "*/*/subagents/*.jsonl"))


def codex_sources(root: Path) -> Iterator[Source]:
    yield from (Source(p, "codex") for p in _glob(root / "sessions", "*/*/*/rollout-*.jsonl"))
    yield from (Source(p, "codex") for p in _glob(root / "archived_sessions", "rollout-*.jsonl"))
    # Newer Codex builds may replace a rollout by a zstd-compressed copy; when both
    # exist the plain file is the live one.
    for pattern in ("sessions/*/*/*/rollout-*.jsonl.zst", "archived_sessions/rollout-*.jsonl.zst"):
        folder, _, glob = pattern.partition("/")
        yield from (Source(p, "codex") for p in _glob(root / folder, glob) if not p.with_suffix("").exists())


def openclaw_sources(root: Path) -> Iterator[Source]:
    yield from (Source(db, "openclaw") for db in find_stores(root))
    for sessions in _glob(root / "agents", "*/sessions"):
        for path in sorted(sessions.iterdir()):
            name = path.name
            if not path.is_file() or _OPENCLAW_SIDE.search(name):
                continue
            if name.endswith(".jsonl"):
                yield Source(path, "openclaw")
            elif _OPENCLAW_ARCHIVE.search(name):
                yield Source(path, "openclaw", archived=True)
        yield from _store_overrides(sessions)


SESSIONS_INDEX_BYTES = 64 << 20  # OpenClaw's sessions.json: any larger is not one


def _store_overrides(sessions: Path) -> Iterator[Source]:
    """Transcripts listed in sessions.json but kept outside the sessions folder (older stores)."""
    store = sessions / "sessions.json"
    try:
        entries = json.loads(read_regular(store, SESSIONS_INDEX_BYTES, "OpenClaw's sessions.json"))
    except (OSError, ValueError, InvalidInput):  # (a FIFO in its place is refused, never waited on)
        return
    if not isinstance(entries, dict):
        return
    for entry in entries.values():
        target = entry.get("sessionFile") if isinstance(entry, dict) else None
        if not isinstance(target, str) or not target.endswith(".jsonl"):
            continue
        path = Path(target).expanduser()
        path = path if path.is_absolute() else sessions / path
        if path.parent != sessions and path.is_file():
            yield Source(path, "openclaw")


def sessions_named(settings: CaptureSettings, agent: str, names: list[str | None]) -> list[Source]:
    """The sources holding the session a hook names (by id or key) in `agent`'s session
    stores ([] when the agent keeps none, or none holds it)."""
    lookup = SESSION_LOOKUPS.get(agent)
    if lookup is None:
        return []
    roots = getattr(settings, next(a for a in AGENTS if a.name == agent).transcripts.setting) or ()
    return [Source(db, agent, session=name) for db, name in lookup(roots, names)]


# Agents that keep sessions in a database, not a file a hook could name: a session by its id or key.
SESSION_LOOKUPS: dict[str, Callable[[Iterable[Path], Iterable[str | None]], list[tuple[Path, str]]]] = {
    "openclaw": find_session,
}

# Each agent's transcripts under one of its folders (the record names the folders).
FINDERS: dict[str, Callable[[Path], Iterator[Source]]] = {
    "claude-code": claude_code_sources,
    "codex": codex_sources,
    "openclaw": openclaw_sources,
}


def _glob(root: Path, pattern: str) -> list[Path]:
    try:
        return sorted(root.glob(pattern)) if root.is_dir() else []
    except OSError as exc:
        log.warning("capture: cannot list %s: %s", root, exc)
        return []


def sources_for_path(path: Path, fmt: str | None = None) -> list[Source]:
    """The transcripts at an explicit --path: a file, or every transcript in a folder."""
    if fmt is not None and fmt not in FORMATS:
        raise InvalidInput(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    path = Path(path).expanduser()
    if path.is_file() and is_store(path):
        return [Source(path, "openclaw")]
    if path.is_file():
        detected = fmt or detect_format(path)
        if detected is None:
            raise InvalidInput(f"{path}: cannot tell its format from its name: give --format "
                               f"({', '.join(FORMATS)})")
        return [Source(path, detected)]
    if not path.is_dir():
        raise InvalidInput(f"{path} " + ("does not exist" if not path.exists() else "is not a regular file")
                           + ": give a transcript file or a folder of them")
    out: list[Source] = []
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        name = file.name
        if is_store(file) and fmt in (None, "openclaw"):
            out.append(Source(file, "openclaw"))
            continue
        if _OPENCLAW_SIDE.search(name) or _OPENCLAW_ARCHIVE.search(name) or not named_as(name, fmt):
            continue
        detected = fmt or detect_format(file)
        if detected:
            out.append(Source(file, detected))
    return out
