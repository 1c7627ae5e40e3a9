"""Claude Code: hooks in ~/.claude/settings.json, the MCP server in ~/.claude.json.

Hooks (user settings, merged by Claude Code with project and local ones):
  SessionStart  maxmem hook session-start  prints the boot brief as additionalContext
                (no matcher: startup, resume, clear, compact and fork all get it)
  UserPromptSubmit  maxmem hook user-prompt  the few memories relevant to the prompt, as
                additionalContext next to it (10 s timeout: the default 30 s would hold
                the prompt, and a timed-out hook's context is dropped anyway)
  PreCompact    maxmem hook pre-compact    captures the current session's transcript
  Stop          maxmem hook stop           the same after every answer
  SessionEnd    maxmem hook session-end    a last capture within SessionEnd's ~1.5 s
Every hook exits 0 (exit 2 on PreCompact would block compaction, on UserPromptSubmit
erase the prompt). The MCP server goes in ~/.claude.json's top-level `mcpServers`
(user scope, what `claude mcp add --scope user` writes). `CLAUDE_CONFIG_DIR` moves
both. settings.json's `permissions.allow` gets maxmem's read-only MCP tools, so a
headless `claude -p` (which cannot ask) may call them; tools that write still ask.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from ..agents import CLAUDE_CODE
from ..hooks import spellings
from .files import Plan, WiringError, json_change, load_json, read_bytes
from .hookjson import handler, hook_commands, object_of, other_maxmem_commands, with_hooks, without_hooks
from .install import Install, is_maxmem_command

NAME = CLAUDE_CODE.name
SERVER = "maxmem"
# event, maxmem's event word, timeout (s) for Claude Code
EVENTS = CLAUDE_CODE.hooks
# maxmem's MCP tools that only read (mcp.py marks them readOnlyHint): allowed without asking.
READ_ONLY_TOOLS = ("search", "get", "list", "query", "brief", "active", "timeline", "history", "stats")
ALLOWED = tuple(f"mcp__{SERVER}__{tool}" for tool in READ_ONLY_TOOLS)
# What an older maxmem allowed that no tool answers to now (`context` is `brief`):
# setup takes it out when it writes ALLOWED, and doctor mentions it until then.
OLDER_ALLOWED = (f"mcp__{SERVER}__context",)


def claude_dir(ctx: Install) -> Path:
    configured = [p.strip() for p in ctx.env.get("CLAUDE_CONFIG_DIR", "").split(",") if p.strip()]
    return Path(configured[0]).expanduser() if configured else ctx.home / ".claude"


def state_file(ctx: Install) -> Path:
    """~/.claude.json (inside CLAUDE_CONFIG_DIR when that is set)."""
    return claude_dir(ctx) / ".claude.json" if ctx.env.get("CLAUDE_CONFIG_DIR") else ctx.home / ".claude.json"


def detect(ctx: Install) -> str | None:
    folder = claude_dir(ctx)
    return f"Claude Code ({ctx.tilde(folder)})" if folder.is_dir() else None


def with_permissions(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` with maxmem's read-only MCP tools in permissions.allow (kept in place when
    there; the user's entries untouched)."""
    permissions = settings.get("permissions", {})
    if not isinstance(permissions, dict) or not isinstance(permissions.get("allow", []), list):
        raise WiringError('"permissions" or its "allow" is not what Claude Code reads: fix the file '
                          "first; nothing was changed")
    allow = permissions.get("allow", [])
    missing = [rule for rule in ALLOWED if rule not in allow]
    if not missing and not set(OLDER_ALLOWED) & set(allow):
        return settings
    out = copy.deepcopy(settings)
    out.setdefault("permissions", {})["allow"] = [rule for rule in allow if rule not in OLDER_ALLOWED] + missing
    return out


def without_permissions(settings: dict[str, Any]) -> dict[str, Any]:
    permissions = settings.get("permissions")
    if not isinstance(permissions, dict) or not isinstance(permissions.get("allow"), list):
        return settings
    out = copy.deepcopy(settings)
    kept = [rule for rule in permissions["allow"] if rule not in ALLOWED and rule not in OLDER_ALLOWED]
    if kept:
        out["permissions"]["allow"] = kept
    else:
        del out["permissions"]["allow"]
        if not out["permissions"]:
            del out["permissions"]
    return out


def server(ctx: Install) -> dict[str, Any]:
    argv = ctx.argv("mcp")
    return {"type": "stdio", "command": argv[0], "args": argv[1:], "env": {}}


def _is_our_server(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    return is_maxmem_command([str(entry.get("command", "")), *map(str, entry.get("args") or [])])


def plan(ctx: Install, mcp: bool = True) -> Plan:
    result = Plan(NAME)
    path = claude_dir(ctx) / "settings.json"
    before = read_bytes(path)
    settings = load_json(path, before)
    new = with_hooks(settings, {h.event: (None, handler(ctx, h.word, h.timeout, NAME)) for h in EVENTS},
                     NAME)
    if mcp:
        new = with_permissions(new)
    result.add(json_change(path, before, settings, new))
    for command in other_maxmem_commands(new, NAME):
        result.notes.append(f"{ctx.tilde(path)} also runs  {command}  (hand wiring from the docs?): "
                            "it keeps running beside maxmem's hooks; remove it if the hooks replace it")
    plugins = claude_dir(ctx) / "plugins"
    if plugins.is_dir() and any("maxmem" in p.name for p in plugins.rglob("*") if p.is_dir()):
        result.notes.append("a maxmem plugin is installed too: its hooks fire as well as these "
                            "(Claude Code runs both); disable one of them")
    if mcp:
        state = state_file(ctx)
        before_state = read_bytes(state)
        data = load_json(state, before_state)
        servers = object_of(data.get("mcpServers"))
        current = servers.get(SERVER)
        if current is not None and not _is_our_server(current):
            result.notes.append(f"{ctx.tilde(state)} already has an MCP server named {SERVER!r} that does not "
                                f"run maxmem ({json.dumps(current)[:120]}); left as it is")
        elif current != server(ctx):
            new_state = copy.deepcopy(data)
            new_state["mcpServers"] = {**servers, SERVER: server(ctx)}
            result.add(json_change(state, before_state, data, new_state))
        result.steps.append(f"Claude Code rewrites {ctx.tilde(state)} while it runs: quit it before "
                            "setup, or check afterwards with  claude mcp get maxmem  (else run  claude mcp "
                            f"add --scope user maxmem -- {ctx.shell('mcp')})")
    result.steps.append("In a folder Claude Code has not trusted yet, accept its trust dialog: until then "
                        "it runs no hooks there")
    return result


def unplan(ctx: Install, **_: object) -> Plan:
    result = Plan(NAME)
    path = claude_dir(ctx) / "settings.json"
    before = read_bytes(path)
    if before is not None:
        settings = load_json(path, before)
        result.add(json_change(path, before, settings, without_permissions(without_hooks(settings, NAME))))
    state = state_file(ctx)
    before_state = read_bytes(state)
    if before_state is not None:
        data = load_json(state, before_state)
        servers = data.get("mcpServers")
        if isinstance(servers, dict) and _is_our_server(servers.get(SERVER)):
            new = copy.deepcopy(data)
            del new["mcpServers"][SERVER]
            if not new["mcpServers"]:
                del new["mcpServers"]
            result.add(json_change(state, before_state, data, new))
    return result


def commands(ctx: Install) -> list[list[str]]:
    """Every maxmem argv the current wiring runs (for doctor: does the executable exist?)."""
    path = claude_dir(ctx) / "settings.json"
    out = hook_commands(load_json(path, read_bytes(path)), NAME)
    state = state_file(ctx)
    entry = object_of(load_json(state, read_bytes(state)).get("mcpServers")).get(SERVER)
    if isinstance(entry, dict) and _is_our_server(entry):
        out.append([str(entry["command"]), *map(str, entry.get("args") or [])])
    return out


MANAGED = (Path("/etc/claude-code/managed-settings.json"),
           Path("/Library/Application Support/ClaudeCode/managed-settings.json"))


def inactive(ctx: Install) -> list[tuple[str, str]]:
    """(level, message) for maxmem's Claude Code hooks that are written but will not run:
    `disableAllHooks` in the user, local or managed settings."""
    path = claude_dir(ctx) / "settings.json"
    if not hook_commands(load_json(path, read_bytes(path)), NAME):
        return []
    out = []
    for candidate in (path, claude_dir(ctx) / "settings.local.json", *MANAGED):
        try:
            settings = load_json(candidate, read_bytes(candidate))
        except WiringError:
            continue
        if settings.get("disableAllHooks") is True:
            out.append(("warn", f"{ctx.tilde(candidate)} sets disableAllHooks: Claude Code runs no hooks, "
                                "maxmem's included (no brief, no recall with each prompt, no capture)"))
    return out


def outdated(ctx: Install) -> list[tuple[str, str]]:
    """(level, message) for Claude Code wiring an older maxmem wrote: hooks that spell the
    harness `claude`, read-only tools allowed by their older names. The hooks still work
    as they are; `maxmem setup claude-code` rewrites both."""
    path = claude_dir(ctx) / "settings.json"
    settings = load_json(path, read_bytes(path))
    older = sorted({word for argv in hook_commands(settings, NAME) for word in argv} & (spellings(NAME) - {NAME}))
    allowed = object_of(settings.get("permissions")).get("allow")
    stale = [rule for rule in OLDER_ALLOWED if isinstance(allowed, list) and rule in allowed]
    out = []
    if older:
        out.append(("warn", f"{ctx.tilde(path)} runs maxmem's hooks as  --harness {older[0]}, an older spelling "
                            "(still understood): run  maxmem setup claude-code  to write  --harness claude-code"))
    if stale:
        out.append(("warn", f"{ctx.tilde(path)} allows {', '.join(stale)}, a tool maxmem no longer has: run  "
                            "maxmem setup claude-code  to allow its new name"))
    return out


def checks(ctx: Install) -> list[tuple[str, str]]:
    """(level, message) for doctor: Claude Code wiring that will not run, or that an older
    maxmem wrote."""
    return [*inactive(ctx), *outdated(ctx)]
