"""OpenClaw: maxmem as its memory plugin (the memory slot), and the maxmem skill.

OpenClaw's hooks are JavaScript inside its Gateway, not shell commands. So setup
installs a plugin of plain JavaScript (shipped in maxmem/data/openclaw-plugin) and
writes
  <state>/extensions/maxmem/           the plugin, copied (a copy outlives a pip or
                                       pipx upgrade that moves maxmem's files; setup
                                       again brings a newer one), its manifest naming
                                       maxmem's MCP server by absolute path
  <state>/openclaw.json                plugins.load.paths (the copy), plugins.slots.memory
                                       "maxmem" (memory-core gives up the slot), and
                                       plugins.entries.maxmem: enabled, the conversation
                                       access its prompt hook needs (without it OpenClaw
                                       skips the hook silently), and its config: the
                                       absolute maxmem argv (a Gateway's PATH may lack
                                       maxmem), brain.db, the warm recall server's socket,
                                       and dreaming off unless the user kept it on
  <workspace>/skills/maxmem/SKILL.md   the skill (metadata.openclaw as one-line JSON)
and imports the memory the user already gave OpenClaw (MEMORY.md, memory/*.md). The
plugin recalls before each prompt, puts the boot brief in the system prompt, answers
memory_search and memory_get, and captures after each turn. openclaw.json is JSON5: it
is edited in place (json5text), the user's comments and other settings kept. The hook
pack older versions wrote (<state>/hooks/maxmem) is removed: OpenClaw no longer names
a transcript file in its events.

The state dir is the one in use: $OPENCLAW_STATE_DIR, else ~/.openclaw-<profile> for
$OPENCLAW_PROFILE, else ~/.openclaw (or a legacy ~/.clawdbot / ~/.moltbot when only
that exists); the config file $OPENCLAW_CONFIG_PATH, else <state>/openclaw.json. The
workspace: $OPENCLAW_WORKSPACE_DIR, else openclaw.json's agents.entries.main.workspace /
agents.defaults.workspace / agent.workspace, else <state>/workspace (older profiles:
~/.openclaw/workspace-<profile>).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..agents import OPENCLAW
from ..hooks import warm
from . import json5text
from .files import Change, Plan, WiringError, package_data, read_bytes, which
from .install import Install

NAME = OPENCLAW.name
PLUGIN_ID = "maxmem"
PLUGIN_FILES = ("openclaw.plugin.json", "package.json", "index.js")
# The OpenClaw releases the plugin was run against (tests/test_openclaw_client.py).
# Older ones lack what it needs (the memory slot's kind in the manifest, before_prompt_build
# with currentUserMessage); newer ones may rename hooks again (2026.9 retired one).
TESTED = ((2026, 9, 6), (2026, 9, 6))
LEGACY = OPENCLAW.transcripts.defaults[1:]  # older names of ~/.openclaw
MARK = "Written by maxmem setup openclaw"
SLOT = ("plugins", "slots", "memory")
ENTRY = ("plugins", "entries", PLUGIN_ID)
LOAD_PATHS = ("plugins", "load", "paths")
ALLOW = ("plugins", "allow")  # when set, only the plugins it lists load
OLD_HOOK_ENTRY = ("hooks", "internal", "entries", PLUGIN_ID)
DREAMING_OFF = {"enabled": False}


def state_dir(ctx: Install, profile: str | None = None) -> Path:
    if ctx.env.get("OPENCLAW_STATE_DIR"):
        return Path(ctx.env["OPENCLAW_STATE_DIR"]).expanduser()
    profile = profile or ctx.env.get("OPENCLAW_PROFILE")
    if profile and profile != "default":
        return ctx.home / f".openclaw-{profile}"
    default = ctx.home / ".openclaw"
    if not default.exists():
        for name in LEGACY:
            if (ctx.home / name).is_dir():
                return ctx.home / name
    return default


def config_file(ctx: Install, profile: str | None = None) -> Path:
    if ctx.env.get("OPENCLAW_CONFIG_PATH"):
        return Path(ctx.env["OPENCLAW_CONFIG_PATH"]).expanduser()
    return state_dir(ctx, profile) / "openclaw.json"


def plugin_dir(ctx: Install, profile: str | None = None) -> Path:
    return state_dir(ctx, profile) / "extensions" / PLUGIN_ID


def workspace(ctx: Install, profile: str | None = None, notes: list[str] | None = None) -> Path:
    if ctx.env.get("OPENCLAW_WORKSPACE_DIR"):
        return Path(ctx.env["OPENCLAW_WORKSPACE_DIR"]).expanduser()
    state = state_dir(ctx, profile)
    configured = _configured_workspace(config_file(ctx, profile), notes if notes is not None else [])
    if configured:
        return Path(configured).expanduser()
    profile = profile or ctx.env.get("OPENCLAW_PROFILE")
    if profile and profile != "default" and not ctx.env.get("OPENCLAW_STATE_DIR"):
        older = ctx.home / ".openclaw" / f"workspace-{profile}"
        if older.is_dir() and not (state / "workspace").is_dir():
            return older
    return state / "workspace"


def _configured_workspace(config: Path, notes: list[str]) -> str | None:
    try:
        value = read_config(config)[1]
    except WiringError as exc:
        notes.append(f"{exc}; the workspace is the default one")
        return None
    for path in (("agents", "entries", "main", "workspace"), ("agents", "defaults", "workspace"),
                 ("agent", "workspace")):
        node = _get(value, path)
        if isinstance(node, str) and node.strip():
            return node
    return None


def read_config(path: Path) -> tuple[str | None, dict[str, Any]]:
    """openclaw.json's text (None: no file) and its data; WiringError when it is not JSON5."""
    data = read_bytes(path)
    if data is None:
        return None, {}
    try:
        text = data.decode("utf-8")
        value = json5text.load(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise WiringError(f"{path} is not valid JSON5 ({exc}): fix it first; nothing was changed") from None
    if not isinstance(value, dict):
        raise WiringError(f"{path} does not hold an object: fix it first; nothing was changed")
    return text, value


def _get(value: Any, path: Sequence[str]) -> Any:
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def detect(ctx: Install) -> str | None:
    state = state_dir(ctx)
    return f"OpenClaw ({ctx.tilde(state)})" if made_by_openclaw(state) else None


def made_by_openclaw(state: Path) -> bool:
    """Whether the state folder holds anything OpenClaw made. maxmem's default brain.db
    lives in <state>/workspace/memory, so `maxmem init` alone creates a folder that holds
    only that: not a sign that OpenClaw is installed."""
    if not state.is_dir():
        return False
    for entry in state.iterdir():
        if entry.name != "workspace" or not entry.is_dir():
            return True
        if any(inner.name != "memory" for inner in entry.iterdir()):
            return True
    return False


# -- what setup writes ------------------------------------------------------------------

def skill_text(ctx: Install) -> bytes:
    text = package_data("skill", "SKILL.md").decode("utf-8")
    head, sep, body = text.partition("\n---\n")
    note = (f"\n> On this machine maxmem is `{ctx.executable}` (written by `maxmem setup openclaw`): "
            "if the shell says `maxmem: command not found`, run that path instead.\n")
    return (head + sep + note + body).encode("utf-8")


def manifest(ctx: Install, mcp: bool) -> bytes:
    """The plugin's manifest, naming maxmem's MCP server (remember, commit, …) by absolute path."""
    value = json.loads(package_data("openclaw-plugin", "openclaw.plugin.json"))
    if mcp:
        argv = ctx.argv("mcp")
        value["mcpServers"] = {PLUGIN_ID: {"transport": "stdio", "command": argv[0], "args": argv[1:]}}
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def plugin_files(ctx: Install, profile: str | None = None, mcp: bool = True) -> dict[Path, bytes]:
    folder = plugin_dir(ctx, profile)
    out = {folder / name: package_data("openclaw-plugin", name) for name in PLUGIN_FILES}
    out[folder / "openclaw.plugin.json"] = manifest(ctx, mcp)
    return out


def old_hook_pack(ctx: Install, profile: str | None = None) -> tuple[Path, Path]:
    hooks = state_dir(ctx, profile) / "hooks" / "maxmem"
    return hooks / "HOOK.md", hooks / "handler.ts"


def plugin_config(ctx: Install) -> dict[str, Any]:
    """What the plugin runs: the absolute maxmem argv (with --config when there is a config
    file), brain.db, maxmem's state folder (the time of the last import of the workspace's
    memory files is kept there), and where the warm recall server listens (only when the
    maxmem written is this one: the socket's code stamp is this install's)."""
    extra = ["--config", str(ctx.config_path)] if ctx.config_path is not None else []
    config: dict[str, Any] = {"bin": [*ctx.maxmem, *extra], "db": str(ctx.db), "state": str(ctx.state)}
    socket = warm.socket_path(ctx.state, ctx.db, ctx.config_path, ctx.env)
    if socket is not None and _is_this_install(ctx):
        config["warm"] = {"socket": str(socket), "stamp": warm.__file__, "log": str(ctx.log("hook"))}
    return config


def _is_this_install(ctx: Install) -> bool:
    if ctx.maxmem[0] == sys.executable:
        return True
    return Path(ctx.executable).resolve().parent in (Path(sys.executable).parent,
                                                      Path(sys.executable).resolve().parent)


def configured(text: str | None, ctx: Install, folder: Path) -> str:
    """openclaw.json's text with maxmem in the memory slot (the rest as it was). In an
    entry the user already has, only setup's own keys are set: their recall, capture,
    timeoutMs and dreaming choices stay."""
    text = text if text is not None and text.strip() else "{}\n"
    value = json5text.load(text)
    text = json5text.append_item(text, LOAD_PATHS, str(folder))
    wanted = {"enabled": True, "hooks": {"allowConversationAccess": True},
              "config": {**plugin_config(ctx), "dreaming": DREAMING_OFF}}
    entry = _get(value, ENTRY)
    if not isinstance(entry, dict):
        text = json5text.set_path(text, ENTRY, wanted)
    else:
        text = json5text.set_path(text, (*ENTRY, "enabled"), True)
        text = json5text.set_path(text, (*ENTRY, "hooks", "allowConversationAccess"), True)
        for key, setting in plugin_config(ctx).items():
            text = json5text.set_path(text, (*ENTRY, "config", key), setting)
        if not isinstance(_get(entry, ("config", "dreaming")), dict):
            text = json5text.set_path(text, (*ENTRY, "config", "dreaming"), DREAMING_OFF)
    if isinstance(_get(value, ALLOW), list):
        text = json5text.append_item(text, ALLOW, PLUGIN_ID)
    text = json5text.set_path(text, SLOT, PLUGIN_ID)
    return json5text.remove_path(text, OLD_HOOK_ENTRY)


def unconfigured(text: str, folder: Path) -> str:
    """openclaw.json's text without maxmem: memory-core back in the slot (its default)."""
    value = json5text.load(text)
    if _get(value, SLOT) == PLUGIN_ID:
        text = json5text.remove_path(text, SLOT)
    text = json5text.remove_path(text, ENTRY)
    text = json5text.remove_item(text, LOAD_PATHS, str(folder))
    text = json5text.remove_item(text, ALLOW, PLUGIN_ID)
    return json5text.remove_path(text, OLD_HOOK_ENTRY)


def memory_files(space: Path) -> bool:
    """Whether the workspace holds memory the user gave OpenClaw (MEMORY.md, memory/*.md)."""
    return any((space / name).is_file() for name in ("MEMORY.md", "memory.md", "USER.md")) or any(
        (space / "memory").glob("*.md"))


def installed(ctx: Install, profile: str | None = None) -> bool:
    return made_by_openclaw(state_dir(ctx, profile)) or which("openclaw", ctx.env) is not None


def plan(ctx: Install, profile: str | None = None, skill_dir: Path | None = None, mcp: bool = True) -> Plan:
    if not installed(ctx, profile):
        raise WiringError(f"OpenClaw is not installed here (no {ctx.tilde(state_dir(ctx, profile))}, no openclaw "
                          "on PATH): install it (npm install -g openclaw), then run  maxmem setup openclaw")
    result = Plan(NAME)
    path = config_file(ctx, profile)
    text, _ = read_config(path)
    folder = plugin_dir(ctx, profile)
    space = skill_dir or workspace(ctx, profile, result.notes)
    wanted = {**plugin_files(ctx, profile, mcp), space / "skills" / "maxmem" / "SKILL.md": skill_text(ctx)}
    for file, data in wanted.items():
        result.add(Change(file, read_bytes(file), data, 0o644))
    result.changes.extend(_old_hook_pack_removed(ctx, profile))
    after = _edited(path, lambda: configured(text, ctx, folder))
    result.add(Change(path, text.encode("utf-8") if text is not None else None, after.encode("utf-8"), 0o600))
    dreaming = _get(json5text.load(after), (*ENTRY, "config", "dreaming", "enabled")) is True
    result.notes += [
        f"plugin: {ctx.tilde(folder)} (maxmem in the memory slot: memory-core's search steps aside)",
        f"skill: {ctx.tilde(space / 'skills' / 'maxmem' / 'SKILL.md')}",
        (f"dreaming (memory-core consolidating notes into MEMORY.md) stays on, as {ctx.tilde(path)} says"
         if dreaming else "dreaming (memory-core consolidating notes into MEMORY.md) is off: to keep it, set "
         f"plugins.entries.maxmem.config.dreaming.enabled to true in {ctx.tilde(path)}"),
    ]
    if memory_files(space):
        result.after_commands.append(ctx.argv("import", "--from", "openclaw", str(space)))
        result.notes.append(f"the memory in {ctx.tilde(space)} (MEMORY.md, memory/*.md) is imported now, and again "
                            "after a turn once it changed (only what is new is added)")
    result.steps.append("A running Gateway loads the plugin on its own; if it does not:  openclaw gateway restart")
    return result


def _edited(path: Path, edit: Callable[[], str]) -> str:
    """The edited text; WiringError when the file's shape does not allow the edit."""
    try:
        return edit()
    except ValueError as exc:
        raise WiringError(f"{path}: {exc}: fix it first; nothing was changed") from None


def _old_hook_pack_removed(ctx: Install, profile: str | None) -> list[Change]:
    out = []
    for file in old_hook_pack(ctx, profile):
        data = read_bytes(file)
        if data is not None and (MARK.encode() in data or b"maxmem setup openclaw" in data):
            out.append(Change(file, data, None))
    return out


def unplan(ctx: Install, profile: str | None = None, skill_dir: Path | None = None, mcp: bool = True) -> Plan:
    result = Plan(NAME)
    space = skill_dir or workspace(ctx, profile)
    for file in [*plugin_files(ctx, profile, mcp), space / "skills" / "maxmem" / "SKILL.md"]:
        data = read_bytes(file)
        if data is not None and (file.parent.name == PLUGIN_ID and file.parent.parent.name == "extensions"
                                 or b"maxmem setup openclaw" in data):
            result.add(Change(file, data, None))
    result.changes.extend(_old_hook_pack_removed(ctx, profile))
    path = config_file(ctx, profile)
    text, _ = read_config(path)
    if text is not None:
        after = _edited(path, lambda: unconfigured(text, plugin_dir(ctx, profile)))
        result.add(Change(path, text.encode("utf-8"), after.encode("utf-8")))
    result.notes.append("memory-core has the memory slot again (OpenClaw's default)")
    return result


def commands(ctx: Install) -> list[list[str]]:
    """The maxmem command the plugin runs, from openclaw.json (and the old hook pack's, if left)."""
    out: list[list[str]] = []
    _, value = read_config(config_file(ctx))
    config = _get(value, (*ENTRY, "config"))
    if isinstance(config, dict):
        bin_ = config.get("bin")
        argv = [bin_] if isinstance(bin_, str) else [str(a) for a in bin_] if isinstance(bin_, list) else ["maxmem"]
        out.append([*argv, *(["--db", str(config["db"])] if isinstance(config.get("db"), str) else [])])
    data = read_bytes(old_hook_pack(ctx)[1])
    found = re.search(r"^const MAXMEM = (\[.*\]);$", data.decode("utf-8", "replace"), re.MULTILINE) if data else None
    if found:
        try:
            out.append(list(json.loads(found.group(1))))
        except json.JSONDecodeError:
            pass
    return out


# -- doctor --------------------------------------------------------------------------------

def version(ctx: Install, value: dict[str, Any]) -> str | None:
    """The OpenClaw installed: the package.json of the `openclaw` on PATH (its --version
    takes seconds), else the version that last wrote openclaw.json."""
    program = which("openclaw", ctx.env)
    if program is not None:
        package = Path(os.path.realpath(program)).parent / "package.json"
        try:
            found = json.loads(package.read_text("utf-8")).get("version")
        except (OSError, ValueError, AttributeError):
            found = None
        if isinstance(found, str):
            return found
    touched = _get(value, ("meta", "lastTouchedVersion"))
    return touched if isinstance(touched, str) else None


def _release(text: str) -> tuple[int, ...] | None:
    found = re.match(r"v?(\d+)\.(\d+)\.(\d+)", text.strip())
    return tuple(int(part) for part in found.groups()) if found else None


def checks(ctx: Install) -> list[tuple[str, str]]:
    """(level, message) for OpenClaw wiring that would not work: maxmem not in the memory
    slot, the prompt hook without conversation access (OpenClaw skips it silently), the
    plugin copy missing or older than this maxmem's, the old hook pack left, an OpenClaw
    release the plugin was not tested with."""
    if not made_by_openclaw(state_dir(ctx)):
        return []
    path = config_file(ctx)
    try:
        _, value = read_config(path)
    except WiringError as exc:
        return [("warn", str(exc))]
    out: list[tuple[str, str]] = []
    if any(f.exists() for f in old_hook_pack(ctx)):
        out.append(("warn", f"OpenClaw: the hook pack in {ctx.tilde(old_hook_pack(ctx)[0].parent)} captures nothing "
                            "since OpenClaw keeps transcripts in SQLite: run  maxmem setup openclaw  to replace it "
                            "with the plugin"))
    entry = _get(value, ENTRY)
    if not isinstance(entry, dict):
        return out
    again = "run  maxmem setup openclaw"
    if entry.get("enabled") is False:
        out.append(("warn", f"OpenClaw: the maxmem plugin is disabled in {ctx.tilde(path)}: {again}"))
    denied = _get(value, ("plugins", "deny"))
    if isinstance(denied, list) and PLUGIN_ID in denied:
        out.append(("warn", f"OpenClaw: plugins.deny in {ctx.tilde(path)} lists maxmem, so it does not load"))
    slot = _get(value, SLOT)
    if slot != PLUGIN_ID:
        out.append(("warn", f"OpenClaw's memory slot is {slot or 'memory-core'!r}, not maxmem: no recall before "
                            f"prompts, memory_search is not maxmem's: {again}"))
    if _get(entry, ("hooks", "allowConversationAccess")) is not True:
        out.append(("warn", "OpenClaw skips the maxmem plugin's prompt hook without plugins.entries.maxmem.hooks."
                            f"allowConversationAccess: true (nothing recalled, nothing logged): {again}"))
    folder = plugin_dir(ctx)
    for name in ("index.js", "package.json"):
        if read_bytes(folder / name) != package_data("openclaw-plugin", name):
            out.append(("warn", f"OpenClaw: the maxmem plugin in {ctx.tilde(folder)} is missing or from another "
                                f"maxmem version: {again}"))
            break
    found = version(ctx, value)
    release = _release(found) if found else None
    if release is not None and not TESTED[0] <= release <= TESTED[1]:
        tested = ".".join(map(str, TESTED[0])) + ("" if TESTED[0] == TESTED[1] else
                                                  " to " + ".".join(map(str, TESTED[1])))
        out.append(("warn", f"OpenClaw {found} is installed; maxmem's plugin was tested with {tested}: if recall "
                            "stops, see  openclaw plugins inspect maxmem --runtime"))
    return out
