"""Codex CLI: the MCP server and hooks in $CODEX_HOME/config.toml (default ~/.codex).

config.toml is the user's own TOML, often with comments, so it is edited with
tomlkit, which keeps comments, order and formatting (a tomllib load + tomli-w dump
would drop every comment); tomllib checks the file first. When $CODEX_HOME/hooks.json
exists the hooks go there instead: Codex warns when one layer has both.

  [mcp_servers.maxmem]  command + args (--db …), env_vars: the names Codex may pass on
                        (a stdio server only gets HOME, PATH, … otherwise), a 30 s
                        startup timeout (the local model can be slow to load)
  SessionStart          maxmem hook session-start --harness codex (additionalContext)
  PreCompact, Stop      maxmem hook pre-compact|stop --harness codex (capture; prints nothing:
                        Stop must print JSON or nothing)
  [features]            codex_hooks = true, unless the user set hooks/codex_hooks: older builds
                        need that name, newer ones accept it as an alias of `hooks`
No SessionEnd hook: Codex gives it 1 s (3 s at most). New hooks run only once the
user trusts them in /hooks; setup says so.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import AoT, Table

from .claude_code import (
    handler,
    hook_commands,
    is_ours,
    other_maxmem_commands,
    with_hooks,
    without_hooks,
)
from .files import Change, Plan, WiringError, json_change, load_json, read_bytes
from .install import Install, is_maxmem_command

NAME = "codex"
SERVER = "maxmem"
HARNESS = "codex"
MARK = "added by maxmem setup"
EVENTS = (("SessionStart", "session-start", 15, "startup|resume|clear|compact"),
          ("PreCompact", "pre-compact", 30, None), ("Stop", "stop", 30, None))
# Names forwarded from Codex's environment to `maxmem mcp` (values never written here).
ENV_VARS = ["OPENAI_API_KEY", "OPENAI_BASE_URL", "MAXMEM_OPENAI_API_KEY", "MAXMEM_OPENAI_BASE_URL",
            "MAXMEM_EMBEDDER", "MAXMEM_AGENT"]


def codex_home(ctx: Install) -> Path:
    return Path(ctx.env["CODEX_HOME"]).expanduser() if ctx.env.get("CODEX_HOME") else ctx.home / ".codex"


def detect(ctx: Install) -> str | None:
    folder = codex_home(ctx)
    return f"Codex ({ctx.tilde(folder)})" if folder.is_dir() else None


def server(ctx: Install) -> dict[str, Any]:
    argv = ctx.argv("mcp")
    return {"command": argv[0], "args": argv[1:], "env_vars": ENV_VARS, "startup_timeout_sec": 30}


def _wanted(ctx: Install) -> dict[str, tuple[str | None, dict[str, Any]]]:
    return {event: (matcher, handler(ctx, word, timeout, HARNESS)) for event, word, timeout, matcher in EVENTS}


def _parse(path: Path, data: bytes | None) -> tomlkit.TOMLDocument:
    text = (data or b"").decode("utf-8", "replace")
    try:
        tomllib.loads(text)
        return tomlkit.parse(text)
    except (tomllib.TOMLDecodeError, tomlkit.exceptions.ParseError) as exc:
        raise WiringError(f"{path} is not valid TOML ({exc}): fix it first; nothing was changed") from None


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def plan(ctx: Install, mcp: bool = True) -> Plan:
    result = Plan(NAME)
    path = codex_home(ctx) / "config.toml"
    before = read_bytes(path)
    doc = _parse(path, before)
    if mcp:
        _set_server(doc, server(ctx), result, ctx)
    hooks_json = codex_home(ctx) / "hooks.json"
    if hooks_json.exists():
        hooks_before = read_bytes(hooks_json)
        data = load_json(hooks_json, hooks_before)
        new = with_hooks(data, _wanted(ctx), HARNESS)
        result.add(json_change(hooks_json, hooks_before, data, new))
        result.notes.append(f"hooks go in {ctx.tilde(hooks_json)}, which exists (one hooks file per layer)")
        others = other_maxmem_commands(new, HARNESS)
    else:
        _set_hooks(doc, _wanted(ctx))
        others = other_maxmem_commands({"hooks": _plain(doc.get("hooks", {}))}, HARNESS)
    for command in others:
        result.notes.append(f"Codex also runs  {command}: it keeps running beside maxmem's hooks")
    _enable_hooks(doc, result)
    after = tomlkit.dumps(doc).encode("utf-8")
    result.add(Change(path, before, after if after != (before or b"") else before))
    result.steps.append("Start Codex and trust maxmem's hooks in  /hooks : Codex skips a new or changed "
                        "hook until you do, silently")
    return result


def _set_server(doc: tomlkit.TOMLDocument, wanted: dict[str, Any], result: Plan, ctx: Install) -> None:
    servers = doc.get("mcp_servers")
    current = _plain(servers.get(SERVER)) if isinstance(servers, Table) else None
    if current == wanted:
        return
    if current is not None and not is_maxmem_command([str(current.get("command", "")),
                                                      *map(str, current.get("args") or [])]):
        result.notes.append(f"[mcp_servers.{SERVER}] exists and does not run maxmem: left as it is")
        return
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc.add("mcp_servers", servers)
    table = tomlkit.table()
    for key, value in wanted.items():
        table.add(key, value)
    table.add(tomlkit.nl())
    if SERVER in servers:
        servers[SERVER] = table
    else:
        servers.add(SERVER, table)


def _set_hooks(doc: tomlkit.TOMLDocument, wanted: dict[str, tuple[str | None, dict[str, Any]]]) -> None:
    hooks = doc.get("hooks")
    for event, (matcher, entry) in wanted.items():
        groups = hooks.get(event) if isinstance(hooks, Table) else None
        plain = _plain(groups) if groups is not None else []
        found = [(g.get("matcher"), h) for g in plain for h in g.get("hooks", []) if is_ours(h, HARNESS)]
        if found == [(matcher, entry)]:
            continue
        if hooks is None:
            hooks = tomlkit.table(is_super_table=True)
            doc.add("hooks", hooks)
        if isinstance(groups, AoT):
            _drop_ours(groups)
        group = tomlkit.table()
        if matcher:
            group.add("matcher", matcher)
        handlers = tomlkit.aot()
        item = tomlkit.table()
        for key, value in entry.items():
            item.add(key, value)
        handlers.append(item)
        group.add("hooks", handlers)
        if isinstance(groups, AoT):
            groups.append(group)
        else:
            aot = tomlkit.aot()
            aot.append(group)
            hooks[event] = aot


def _drop_ours(groups: AoT) -> None:
    """Remove maxmem's handlers from an array of hook groups, and groups left empty by it."""
    for index in reversed(range(len(groups))):
        group = groups[index]
        handlers = group.get("hooks")
        if not isinstance(handlers, AoT):
            continue
        mine = [i for i in range(len(handlers)) if is_ours(_plain(handlers[i]), HARNESS)]
        if mine and len(mine) == len(handlers):
            del groups[index]
        else:
            for i in reversed(mine):
                del handlers[i]


def _enable_hooks(doc: tomlkit.TOMLDocument, result: Plan) -> None:
    features = doc.get("features")
    if isinstance(features, Table):
        for key in ("hooks", "codex_hooks"):
            if key in features:
                if _plain(features[key]) is False:
                    result.notes.append(f"[features] {key} = false in config.toml: Codex runs no hooks "
                                        "(maxmem's included) until you set it to true")
                return
    else:
        features = tomlkit.table()
        doc.add("features", features)
    flag = tomlkit.item(True)
    flag.comment(MARK)
    features.add("codex_hooks", flag)


def unplan(ctx: Install, **_: object) -> Plan:
    result = Plan(NAME)
    path = codex_home(ctx) / "config.toml"
    before = read_bytes(path)
    if before is not None:
        doc = _parse(path, before)
        servers = doc.get("mcp_servers")
        if isinstance(servers, Table) and SERVER in servers:
            current = _plain(servers[SERVER])
            if is_maxmem_command([str(current.get("command", "")), *map(str, current.get("args") or [])]):
                del servers[SERVER]
                if not servers:
                    del doc["mcp_servers"]
        hooks = doc.get("hooks")
        if isinstance(hooks, Table):
            for event in list(hooks.keys()):
                if isinstance(hooks[event], AoT):
                    _drop_ours(hooks[event])
                    if not len(hooks[event]):
                        del hooks[event]
            if not hooks:
                del doc["hooks"]
        features = doc.get("features")
        if isinstance(features, Table) and "codex_hooks" in features and MARK in _comment(features, "codex_hooks"):
            del features["codex_hooks"]
            if not features:
                del doc["features"]
        after = tomlkit.dumps(doc).encode("utf-8")
        result.add(Change(path, before, after if after != before else before))
    hooks_json = codex_home(ctx) / "hooks.json"
    hooks_before = read_bytes(hooks_json)
    if hooks_before is not None:
        data = load_json(hooks_json, hooks_before)
        result.add(json_change(hooks_json, hooks_before, data, without_hooks(data, HARNESS)))
    return result


def _comment(table: Table, key: str) -> str:
    """The comment after `key = value` in a tomlkit table ("" when none)."""
    trivia = getattr(table.item(key), "trivia", None)
    return str(getattr(trivia, "comment", "") or "")


def commands(ctx: Install) -> list[list[str]]:
    path = codex_home(ctx) / "config.toml"
    data = read_bytes(path)
    try:
        config = tomllib.loads((data or b"").decode("utf-8", "replace"))
    except tomllib.TOMLDecodeError:
        config = {}
    out = hook_commands({"hooks": config.get("hooks", {})}, HARNESS)
    hooks_json = codex_home(ctx) / "hooks.json"
    if hooks_json.exists():
        out += hook_commands(load_json(hooks_json, read_bytes(hooks_json)), HARNESS)
    entry = (config.get("mcp_servers") or {}).get(SERVER)
    if isinstance(entry, dict) and is_maxmem_command(
            [str(entry.get("command", "")), *map(str, entry.get("args") or [])]):
        out.append([str(entry["command"]), *map(str, entry.get("args") or [])])
    return out
