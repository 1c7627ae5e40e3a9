"""Where transcripts live, and which files in those places are live transcripts.

Default roots (each replaced by the agent's own variable when set, and by the
`[capture]` table of the config file when that names them):
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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import InvalidInput
from ..settings import CaptureSettings
from .model import FORMATS
from .openclaw_store import find_stores, is_store
from .readers import detect_format

log = logging.getLogger("maxmem")

_OPENCLAW_SIDE = re.compile(r"\.(?:checkpoint\.[^/]*|trajectory)\.jsonl$|\.jsonl\.lock$|\.bak(?:\.|$)")
_OPENCLAW_ARCHIVE = re.compile(r"\.jsonl\.(?:reset|deleted)\.[^/]+$")
_CONVERSATIONS = re.compile(r"^conversations.*\.json$", re.IGNORECASE)


@dataclass(frozen=True)
class Source:
    path: Path
    format: str
    archived: bool = False  # read only if it is a file capture already follows (renamed)
    session: str | None = None  # an OpenClaw store: only the session with this id or key


def agents_folders(settings: CaptureSettings, env: Mapping[str, str] | None = None,
                   home: Path | None = None) -> CaptureSettings:
    """`[capture]` with the folders it leaves to the agents (None) filled in: each agent's
    own variable in `env` (OPENCLAW_STATE_DIR, CLAUDE_CONFIG_DIR, CODEX_HOME), else its
    usual place under `home`. Folders the config names stay as they are."""
    env = env or {}
    home = home or Path("~").expanduser()
    return replace(
        settings,
        openclaw_dirs=default_openclaw_dirs(env, home) if settings.openclaw_dirs is None else settings.openclaw_dirs,
        claude_dirs=default_claude_dirs(env, home) if settings.claude_dirs is None else settings.claude_dirs,
        codex_dirs=default_codex_dirs(env, home) if settings.codex_dirs is None else settings.codex_dirs)


def default_openclaw_dirs(env: Mapping[str, str], home: Path) -> tuple[Path, ...]:
    if env.get("OPENCLAW_STATE_DIR"):
        return (Path(env["OPENCLAW_STATE_DIR"]).expanduser(),)
    return tuple(home / name for name in (".openclaw", ".clawdbot", ".moltbot", ".moldbot"))


def default_claude_dirs(env: Mapping[str, str], home: Path) -> tuple[Path, ...]:
    if env.get("CLAUDE_CONFIG_DIR"):
        return tuple(Path(p.strip()).expanduser() for p in env["CLAUDE_CONFIG_DIR"].split(",") if p.strip())
    return (home / ".claude", home / ".config" / "claude")


def default_codex_dirs(env: Mapping[str, str], home: Path) -> tuple[Path, ...]:
    if env.get("CODEX_HOME"):
        return (Path(env["CODEX_HOME"]).expanduser(),)
    return (home / ".codex",)


def describe_roots(settings: CaptureSettings) -> list[str]:
    """The folders `discover` looks in, as "agent: path" ("(missing)" after an absent one)."""
    out = []
    for agent, roots, sub in (("openclaw", settings.openclaw_dirs, "agents"),
                              ("claude-code", settings.claude_dirs, "projects"),
                              ("codex", settings.codex_dirs, "sessions")):
        for root in roots or ():
            folder = root / sub
            out.append(f"{agent}: {folder}" + ("" if folder.is_dir() else " (missing)"))
    return out


def discover(settings: CaptureSettings) -> list[Source]:
    """Every transcript under the configured roots (missing roots are fine)."""
    found: dict[Path, Source] = {}
    for source in _all(settings):
        found.setdefault(source.path, source)
    return list(found.values())


def _all(settings: CaptureSettings) -> Iterator[Source]:
    for root in settings.openclaw_dirs or ():
        yield from openclaw_sources(root)
    for root in settings.claude_dirs or ():
        projects = root / "projects"
        yield from (Source(p, "claude-code") for p in _glob(projects, "*/*.jsonl"))
        yield from (Source(p, "claude-code") for p in _glob(projects, "*/*/subagents/*.jsonl"))
    for root in settings.codex_dirs or ():
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


def _store_overrides(sessions: Path) -> Iterator[Source]:
    """Transcripts listed in sessions.json but kept outside the sessions folder (older stores)."""
    store = sessions / "sessions.json"
    try:
        entries = json.loads(store.read_text(encoding="utf-8"))
    except (OSError, ValueError):
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
        if _OPENCLAW_SIDE.search(name) or _OPENCLAW_ARCHIVE.search(name):
            continue
        if is_store(file) and fmt in (None, "openclaw"):
            out.append(Source(file, "openclaw"))
            continue
        if fmt in ("chatgpt",):
            wanted = name.endswith(".json")
        elif fmt == "markdown":
            wanted = name.endswith((".md", ".markdown"))
        elif fmt is not None:
            wanted = name.endswith((".jsonl", ".jsonl.zst"))
        else:
            wanted = name.endswith((".jsonl", ".jsonl.zst")) or bool(_CONVERSATIONS.match(name))
        if wanted:
            detected = fmt or detect_format(file)
            if detected:
                out.append(Source(file, detected))
    return out

