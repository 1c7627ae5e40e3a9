"""OpenClaw: the maxmem skill in the workspace in use, and a Gateway hook pack.

OpenClaw's hooks are TypeScript inside its Gateway, not shell commands, and its
skills are Markdown the agent reads. So setup writes
  <workspace>/skills/maxmem/SKILL.md   the skill (metadata.openclaw as one-line JSON:
                                       requires.bins, the uv installer spec), with the
                                       absolute maxmem path added for a Gateway whose
                                       PATH lacks it
  <state>/hooks/maxmem/HOOK.md         a hook pack: on session:compact:before and
  <state>/hooks/maxmem/handler.ts      command:new/reset/stop it starts
                                       `maxmem hook … --harness openclaw` detached, the
                                       session's file on stdin, and never waits for it
and tells the user what only they can do: `openclaw hooks enable maxmem`, a Gateway
restart, the MCP server entry (openclaw.json is JSON5, edited by OpenClaw's own
tools), and scheduling capture (`maxmem setup systemd|cron|launchd`).

The state dir is the one in use: $OPENCLAW_STATE_DIR, else ~/.openclaw-<profile> for
$OPENCLAW_PROFILE, else ~/.openclaw (or a legacy ~/.clawdbot / ~/.moltbot when only
that exists). The workspace: $OPENCLAW_WORKSPACE_DIR, else openclaw.json's
agents.entries.main.workspace / agents.defaults.workspace / agent.workspace, else
<state>/workspace (older profiles: ~/.openclaw/workspace-<profile>).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..agents import OPENCLAW
from .files import Change, Plan, package_data, read_bytes
from .install import Install

NAME = OPENCLAW.name
LEGACY = OPENCLAW.transcripts.defaults[1:]  # older names of ~/.openclaw
MARK = "Written by maxmem setup openclaw"
EVENTS = {h.event: h.word for h in OPENCLAW.hooks}


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


def workspace(ctx: Install, profile: str | None = None, notes: list[str] | None = None) -> Path:
    if ctx.env.get("OPENCLAW_WORKSPACE_DIR"):
        return Path(ctx.env["OPENCLAW_WORKSPACE_DIR"]).expanduser()
    state = state_dir(ctx, profile)
    configured = _configured_workspace(state / "openclaw.json", notes if notes is not None else [])
    if configured:
        return Path(configured).expanduser()
    profile = profile or ctx.env.get("OPENCLAW_PROFILE")
    if profile and profile != "default" and not ctx.env.get("OPENCLAW_STATE_DIR"):
        older = ctx.home / ".openclaw" / f"workspace-{profile}"
        if older.is_dir() and not (state / "workspace").is_dir():
            return older
    return state / "workspace"


def _configured_workspace(config: Path, notes: list[str]) -> str | None:
    data = read_bytes(config)
    if not data:
        return None
    text = data.decode("utf-8", "replace")
    try:
        value: Any = json.loads(text)
    except json.JSONDecodeError:
        # JSON5 (comments, bare keys): no parser here; the first workspace key is enough.
        found = re.search(r"""\bworkspace["']?\s*:\s*["']([^"']+)["']""", text)
        if found:
            notes.append(f"read the workspace from {config} as text (JSON5): {found.group(1)}; "
                         "give --openclaw-workspace if that is not the one in use")
        return found.group(1) if found else None
    for path in (("agents", "entries", "main", "workspace"), ("agents", "defaults", "workspace"),
                 ("agent", "workspace")):
        node = value
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, str) and node.strip():
            return node
    return None


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


def skill_text(ctx: Install) -> bytes:
    text = package_data("skill", "SKILL.md").decode("utf-8")
    head, sep, body = text.partition("\n---\n")
    note = (f"\n> On this machine maxmem is `{ctx.executable}` (written by `maxmem setup openclaw`): "
            "if the shell says `maxmem: command not found`, run that path instead.\n")
    return (head + sep + note + body).encode("utf-8")


def hook_md() -> bytes:
    meta = json.dumps({"openclaw": {"emoji": "🧠", "events": sorted(EVENTS)}}, ensure_ascii=False)
    return (f"---\nname: maxmem\ndescription: Capture the session's transcript into maxmem before "
            f"compaction and when a session is reset or stopped.\nmetadata: {meta}\n---\n\n"
            f"<!-- {MARK}; remove with  maxmem setup openclaw --uninstall -->\n"
            "Starts `maxmem hook pre-compact|stop --harness openclaw` in the background (the Gateway "
            "never waits for it). Failures are one line each in maxmem's hook.log.\n").encode()


def handler_ts(ctx: Install) -> bytes:
    argv = json.dumps(ctx.argv())
    events = json.dumps(EVENTS)
    return f'''// {MARK}; remove with  maxmem setup openclaw --uninstall
// Plain JavaScript syntax, so it is valid TypeScript and runs under node as it is.
import {{ spawn }} from "node:child_process";

const MAXMEM = {argv};
const EVENTS = {events};

const handler = async (event) => {{
  const key = String(event?.type ?? "").includes(":") && !event?.action
    ? String(event.type) : `${{event?.type}}:${{event?.action}}`;
  const word = EVENTS[key];
  if (!word) return;
  const context = event.context ?? {{}};
  const input = JSON.stringify({{
    session_id: event.sessionKey ?? context.sessionId ?? null,
    transcript_path: context.sessionFile ?? context.sessionEntry?.sessionFile ?? null,
    cwd: context.workspaceDir ?? process.cwd(),
    hook_event_name: key,
  }});
  try {{
    const child = spawn(MAXMEM[0], [...MAXMEM.slice(1), "hook", word, "--harness", "openclaw"],
                        {{ stdio: ["pipe", "ignore", "ignore"], detached: true }});
    child.on("error", () => {{}});
    child.stdin.on("error", () => {{}});
    child.stdin.end(input);
    child.unref();
  }} catch {{
    // maxmem must never break the Gateway
  }}
}};

export default handler;
'''.encode()


def files(ctx: Install, profile: str | None = None, skill_dir: Path | None = None,
          notes: list[str] | None = None) -> dict[Path, bytes]:
    space = skill_dir or workspace(ctx, profile, notes)
    hooks = state_dir(ctx, profile) / "hooks" / "maxmem"
    return {space / "skills" / "maxmem" / "SKILL.md": skill_text(ctx),
            hooks / "HOOK.md": hook_md(), hooks / "handler.ts": handler_ts(ctx)}


def plan(ctx: Install, profile: str | None = None, skill_dir: Path | None = None) -> Plan:
    result = Plan(NAME)
    wanted = files(ctx, profile, skill_dir, result.notes)
    for path, data in wanted.items():
        result.add(Change(path, read_bytes(path), data, 0o644))
    skill = next(iter(wanted))
    result.notes.append(f"skill: {ctx.tilde(skill)} (workspace {ctx.tilde(skill.parent.parent.parent)})")
    result.steps += [
        ("Enable the capture hook, then restart the Gateway:  openclaw hooks enable maxmem  &&  "
         "openclaw gateway restart"),
        ("The skill shows only when `maxmem` is on the Gateway's PATH (a Gateway run by launchd or "
         f"systemd has a short one): if it is missing there, link it:  ln -s {ctx.executable} "
         "/usr/local/bin/maxmem"),
        ("MCP (optional): add a server in Control UI → Settings → MCP, or with  openclaw mcp add , "
         f"command {ctx.executable}, args {json.dumps(ctx.globals() + ['mcp'])}"),
        ("Capture every session on a schedule as well:  maxmem setup systemd  (Linux),  maxmem setup "
         "launchd  (macOS) or  maxmem setup cron"),
    ]
    return result


def unplan(ctx: Install, profile: str | None = None, skill_dir: Path | None = None) -> Plan:
    result = Plan(NAME)
    for path in files(ctx, profile, skill_dir):
        data = read_bytes(path)
        if data is not None and (MARK.encode() in data or b"maxmem setup openclaw" in data):
            result.add(Change(path, data, None))
    result.steps.append("If the hook was enabled:  openclaw hooks disable maxmem  &&  openclaw gateway restart")
    return result


def commands(ctx: Install) -> list[list[str]]:
    data = read_bytes(state_dir(ctx) / "hooks" / "maxmem" / "handler.ts")
    if not data:
        return []
    found = re.search(r"^const MAXMEM = (\[.*\]);$", data.decode("utf-8", "replace"), re.MULTILINE)
    try:
        return [list(json.loads(found.group(1)))] if found else []
    except json.JSONDecodeError:
        return []


def checks(ctx: Install) -> list[tuple[str, str]]:
    """(level, message) for doctor: OpenClaw wiring that will not run."""
    return []
