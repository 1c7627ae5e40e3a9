"""The hooks JSON Claude Code and Codex share: `{"hooks": {EVENT: [{"matcher"?, "hooks":
[{"type": "command", "command", "timeout"}]}]}}`, in Claude Code's settings.json and in
Codex's hooks.json (or its config.toml's [hooks], read as the same tree).

maxmem's handlers are `maxmem … hook WORD --harness H`: setup adds one per event,
leaves every other handler as it is, and finds an older install's (another path, an
older spelling of H) to replace it.
"""

from __future__ import annotations

import copy
from typing import Any

from ..hooks import spellings
from .files import WiringError
from .install import Install, is_maxmem_command, split_command


def handler(ctx: Install, event: str, timeout: int, harness: str) -> dict[str, Any]:
    return {"type": "command", "command": ctx.shell("hook", event, "--harness", harness),
            "timeout": timeout}


def is_ours(entry: Any, harness: str) -> bool:
    """A hook handler `maxmem … hook EVENT --harness H` (any path, any spelling of H: an
    old install's too, which setup then replaces)."""
    if not isinstance(entry, dict) or entry.get("type") != "command" or not isinstance(entry.get("command"), str):
        return False
    argv = split_command(entry["command"])
    return is_maxmem_command(argv) and "hook" in argv and "--harness" in argv and bool(spellings(harness) & set(argv))


def _calls_maxmem(entry: Any, harness: str) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    return is_maxmem_command(split_command(entry["command"])) and not is_ours(entry, harness)


def with_hooks(settings: dict[str, Any], wanted: dict[str, tuple[str | None, dict[str, Any]]],
               harness: str) -> dict[str, Any]:
    """`settings` with one handler of ours per event: {event: (matcher, handler)}. An
    event already holding exactly that handler is left as it is (no reordering)."""
    out = copy.deepcopy(settings)
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise WiringError('"hooks" is not an object: fix the file first; nothing was changed')
    for event, (matcher, entry) in wanted.items():
        groups = list_of(hooks.get(event))
        found = [(g.get("matcher"), h) for g in groups if isinstance(g, dict)
                 for h in (g.get("hooks") or []) if is_ours(h, harness)]
        if found == [(matcher, entry)]:
            continue
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        hooks[event] = _without_ours(groups, harness) + [{**group, "hooks": [entry]}]
    return out


def without_hooks(settings: dict[str, Any], harness: str) -> dict[str, Any]:
    out = copy.deepcopy(settings)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        if isinstance(hooks[event], list):
            kept = _without_ours(hooks[event], harness)
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not hooks:
        del out["hooks"]
    return out


def _without_ours(groups: list[Any], harness: str) -> list[Any]:
    kept = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            kept.append(group)
            continue
        handlers = [h for h in group["hooks"] if not is_ours(h, harness)]
        if handlers:
            kept.append({**group, "hooks": handlers})
        elif not any(is_ours(h, harness) for h in group["hooks"]):
            kept.append(group)  # an empty group of the user's own: not ours to drop
    return kept


def list_of(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def object_of(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def other_maxmem_commands(settings: dict[str, Any], harness: str) -> list[str]:
    """Handlers that run maxmem but are not maxmem's hooks (hand wiring from the docs)."""
    hooks = object_of(settings.get("hooks"))
    return [h["command"] for groups in hooks.values() if isinstance(groups, list)
            for g in groups if isinstance(g, dict) for h in (g.get("hooks") or []) if _calls_maxmem(h, harness)]


def hook_commands(settings: dict[str, Any], harness: str) -> list[list[str]]:
    """The argv of every maxmem hook in `settings` (for doctor)."""
    hooks = object_of(settings.get("hooks"))
    return [split_command(h["command"]) for groups in hooks.values() if isinstance(groups, list)
            for g in groups if isinstance(g, dict) for h in (g.get("hooks") or []) if is_ours(h, harness)]
