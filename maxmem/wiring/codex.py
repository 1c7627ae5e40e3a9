"""Codex CLI: the MCP server and hooks in $CODEX_HOME/config.toml (default ~/.codex).

config.toml is the user's own TOML, often with comments, so it is edited with
tomlkit, which keeps comments, order and formatting (a tomllib load + tomli-w dump
would drop every comment); tomllib checks the file first. When $CODEX_HOME/hooks.json
exists the hooks go there instead: Codex warns when one layer has both.

  [mcp_servers.maxmem]  command + args (--db …), env_vars: the names Codex may pass on
                        (a stdio server only gets HOME, PATH, … otherwise), a 30 s
                        startup timeout (the local model can be slow to load)
  SessionStart          maxmem hook session-start --harness codex (additionalContext)
  UserPromptSubmit      maxmem hook user-prompt --harness codex: the memories relevant to
                        the prompt (10 s)
  PreCompact, Stop      maxmem hook pre-compact|stop --harness codex (capture; prints nothing:
                        Stop must print JSON or nothing)
  [features]            the hooks flag under the name the installed Codex knows (its
                        `codex features list`): `hooks` (current builds, which call
                        `codex_hooks` deprecated), `codex_hooks` when that is the only one
                        it lists or it cannot list them (older builds), `hooks` when no
                        codex is on PATH. A flag the user set is left alone.
No SessionEnd hook: Codex gives it 1 s (3 s at most). New hooks run only once the
user trusts them in /hooks (Codex then records `[hooks.state."<key>"] trusted_hash`
in config.toml); setup says so, and `maxmem doctor` checks it.
"""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import AoT, Table

from ..agents import CODEX
from .files import Change, Plan, WiringError, json_change, load_json, read_bytes, which
from .hookjson import handler, hook_commands, is_ours, other_maxmem_commands, with_hooks, without_hooks
from .install import Install, is_maxmem_command

NAME = CODEX.name
SERVER = "maxmem"
HARNESS = CODEX.name
MARK = "added by maxmem setup"
EVENTS = CODEX.hooks
FLAGS = ("hooks", "codex_hooks")  # the current name first
# How long Codex waits for optional MCP servers before its first request (its default,
# 1000 ms, is shorter than `maxmem mcp` takes to answer `initialize` when it starts cold,
# 1.5-2.5 s measured: the first request then had no maxmem tool). A top-level key.
GRACE_KEY = "mcp_optional_startup_grace_ms"
GRACE_MS = 5000
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
    return {h.event: (h.matcher, handler(ctx, h.word, h.timeout, HARNESS)) for h in EVENTS}


def _parse(path: Path, data: bytes | None) -> tomlkit.TOMLDocument:
    text = (data or b"").decode("utf-8", "replace")
    try:
        tomllib.loads(text)
        return tomlkit.parse(text)
    except (tomllib.TOMLDecodeError, tomlkit.exceptions.ParseError) as exc:
        raise WiringError(f"{path} is not valid TOML ({exc}): fix it first; nothing was changed") from None


def hooks_flag(ctx: Install) -> str:
    """The name of the hooks feature flag the installed Codex knows (see the module doc)."""
    program = which("codex", ctx.env)
    if program is None:
        return "hooks"
    try:
        done = subprocess.run([program, "features", "list"], capture_output=True, text=True, timeout=20,
                              env=dict(ctx.env))
    except (OSError, subprocess.SubprocessError):
        return "codex_hooks"
    names = {line.split()[0] for line in done.stdout.splitlines() if line.strip()}
    if done.returncode != 0 or not names & set(FLAGS):
        return "codex_hooks"
    return "hooks" if "hooks" in names else "codex_hooks"


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def plan(ctx: Install, mcp: bool = True) -> Plan:
    result = Plan(NAME)
    path = codex_home(ctx) / "config.toml"
    before = read_bytes(path)
    doc = _parse(path, before)
    if mcp:
        _set_server(doc, server(ctx), result, ctx)
        _set_grace(doc, result)
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
    _enable_hooks(doc, result, hooks_flag(ctx))
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


def _set_grace(doc: tomlkit.TOMLDocument, result: Plan) -> None:
    if GRACE_KEY in doc:
        current = _plain(doc[GRACE_KEY])
        if isinstance(current, int) and 0 < current < GRACE_MS and MARK not in _comment(doc, GRACE_KEY):
            result.notes.append(f"{GRACE_KEY} = {current} in config.toml: Codex may start its first "
                                f"request before maxmem's tools are listed ({GRACE_MS} lets them in)")
        return
    value = tomlkit.item(GRACE_MS)
    value.comment(MARK)
    doc.add(GRACE_KEY, value)  # tomlkit puts a plain key before the first table


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


def _enable_hooks(doc: tomlkit.TOMLDocument, result: Plan, flag: str) -> None:
    features = doc.get("features")
    if isinstance(features, Table):
        ours = [key for key in FLAGS if key in features and MARK in _comment(features, key)]
        if ours == [flag]:
            return
        for key in ours:  # written by an older setup under the other name
            del features[key]
        for key in FLAGS:
            if key in features:
                if _plain(features[key]) is False:
                    result.notes.append(f"[features] {key} = false in config.toml: Codex runs no hooks "
                                        "(maxmem's included) until you set it to true")
                elif key != flag:
                    result.notes.append(f"[features] {key} is the name this Codex calls deprecated: "
                                        f"rename it {flag}")
                return
    else:
        features = tomlkit.table()
        doc.add("features", features)
    value = tomlkit.item(True)
    value.comment(MARK)
    features.add(flag, value)


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
        if GRACE_KEY in doc and MARK in _comment(doc, GRACE_KEY):
            del doc[GRACE_KEY]
        features = doc.get("features")
        if isinstance(features, Table):
            for key in FLAGS:
                if key in features and MARK in _comment(features, key):
                    del features[key]
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


def _comment(table: Table | tomlkit.TOMLDocument, key: str) -> str:
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


def _snake(event: str) -> str:
    """SessionStart -> session_start: the event's part of a [hooks.state] key."""
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(event))


def hook_keys(ctx: Install) -> dict[str, str]:
    """`[hooks.state]` key -> event, for every maxmem hook Codex would load. Codex keys a
    hook's trust by "<file>:<event>:<group index>:<handler index>"."""
    path = codex_home(ctx) / "config.toml"
    hooks_json = codex_home(ctx) / "hooks.json"
    config = _load(path)
    sources = [(path, config.get("hooks", {}))]
    if hooks_json.exists():
        sources.append((hooks_json, load_json(hooks_json, read_bytes(hooks_json)).get("hooks", {})))
    keys: dict[str, str] = {}
    for source, hooks in sources:
        if not isinstance(hooks, dict):
            continue
        for event, groups in hooks.items():
            if event == "state" or not isinstance(groups, list):
                continue
            for g, group in enumerate(groups):
                handlers = group.get("hooks") if isinstance(group, dict) else None
                for h, entry in enumerate(handlers if isinstance(handlers, list) else []):
                    if is_ours(entry, HARNESS):
                        keys[f"{source}:{_snake(event)}:{g}:{h}"] = event
    return keys


def _load(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads((read_bytes(path) or b"").decode("utf-8", "replace"))
    except tomllib.TOMLDecodeError:
        return {}


def features(ctx: Install) -> dict[str, bool] | None:
    """The installed Codex's feature flags as it resolves them (`codex features list`:
    name, stage, effective value); None when there is no codex to ask."""
    program = which("codex", ctx.env)
    if program is None:
        return None
    try:
        done = subprocess.run([program, "features", "list"], capture_output=True, text=True, timeout=20,
                              env=dict(ctx.env))
    except (OSError, subprocess.SubprocessError):
        return None
    out = {}
    for line in done.stdout.splitlines():
        words = line.split()
        if len(words) >= 3 and words[-1] in ("true", "false"):
            out[words[0]] = words[-1] == "true"
    return out if done.returncode == 0 and out else None


def inactive(ctx: Install) -> list[tuple[str, str]]:
    """(level, message) for maxmem's Codex wiring that is written but will not run: hooks
    not trusted yet (or disabled) in /hooks, the hooks feature off or under a deprecated name."""
    keys = hook_keys(ctx)
    if not keys:
        return []
    config = _load(codex_home(ctx) / "config.toml")
    state = (config.get("hooks") or {}).get("state") or {}
    out: list[tuple[str, str]] = []
    untrusted = sorted({event for key, event in keys.items()
                        if not (isinstance(state.get(key), dict) and state[key].get("trusted_hash"))})
    disabled = sorted({event for key, event in keys.items()
                       if isinstance(state.get(key), dict) and state[key].get("enabled") is False})
    if untrusted:
        out.append(("warn", f"Codex has not trusted maxmem's hooks yet ({', '.join(untrusted)}): it skips "
                            "them silently. Start  codex  and choose \"Trust all and continue\" (or review "
                            "them in  /hooks )"))
    if disabled:
        out.append(("warn", f"maxmem's Codex hooks {', '.join(disabled)} are disabled in /hooks"))
    flags = features(ctx)
    configured = config.get("features") or {}
    if flags is not None and flags.get("hooks", flags.get("codex_hooks")) is False:
        out.append(("warn", "Codex's hooks feature is off (codex features list): no hook runs, maxmem's "
                            "included; set [features] hooks = true in config.toml"))
    elif flags is not None and "hooks" in flags and "codex_hooks" in configured:
        out.append(("warn", "config.toml sets [features] codex_hooks, a name this Codex calls deprecated: "
                            "rename it hooks (maxmem setup codex does it for the line it wrote)"))
    elif flags is None and any(configured.get(k) is False for k in FLAGS):
        out.append(("warn", "[features] hooks is false in config.toml: Codex runs no hooks, maxmem's included"))
    return out


def checks(ctx: Install) -> list[tuple[str, str]]:
    """(level, message) for doctor: Codex wiring that will not run."""
    return inactive(ctx)
