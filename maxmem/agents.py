"""The agents maxmem works with, one record each.

Everything maxmem knows about an agent that is not code is declared here once: the
name its hooks, `setup`, `capture --format` and `import --from` spell it by (and
the older spellings still understood), where its transcripts live and which reader
reads them, the hook events it runs and the shape of what a hook prints for it, how
much added context it takes, and the words `setup` and `--help` use for it. Each
layer derives its tables from `AGENTS`:

    capture   maxmem.capture.roots (folders, discovery), maxmem.capture.readers (the reader)
    hooks     maxmem.hooks (harness names), maxmem.hooks.events (budgets, output shape)
    setup     maxmem.wiring (one module per agent: plan, unplan, commands, detect, checks)
    import    maxmem.importers (a reader when `imports` is true)

and `tests/test_agents.py` fails when a record's parts are missing in any of them.
Adding an agent is a record here, its transcript reader, its setup module and their
tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Output = Literal["hook-json", "plain"]


@dataclass(frozen=True)
class Transcripts:
    """Where an agent keeps its transcripts: folders named by its own variable (`env`,
    several joined by `separator` when it takes a list), else `defaults` under HOME;
    `setting` is the `[capture]` key that overrides both, `look_in` the folder under
    each where the transcripts are (what `capture --dry-run` lists)."""

    env: str
    defaults: tuple[str, ...]
    setting: str
    look_in: str
    separator: str | None = None


@dataclass(frozen=True)
class Hook:
    """One hook an agent runs: its own event name, maxmem's word for it (`maxmem hook
    WORD`), and the timeout setup writes (seconds)."""

    event: str
    word: str
    timeout: int
    matcher: str | None = None  # which of the event's sources it runs for (None: all)


@dataclass(frozen=True)
class Agent:
    name: str  # as `setup`, `--harness`, `capture --format` and `import --from` spell it
    title: str  # as people write it
    home: str  # its folder, as the survey names it when nothing is found
    transcripts: Transcripts
    hooks: tuple[Hook, ...]
    output: Output  # what a hook prints for it: hookSpecificOutput JSON, or plain text
    context_chars: int  # the most added context one hook may print (below the agent's own cap)
    setup: str  # what `maxmem setup NAME` wires, in a few words
    aliases: tuple[str, ...] = ()  # older spellings a hook's command line may still use
    imports: bool = True  # `import --from NAME` reads the memory it keeps itself
    mcp_option: bool = False  # `setup NAME --no-mcp` applies
    capture_all: bool = False  # a hook whose event names no transcript captures all of its sessions

    @property
    def format(self) -> str:
        """The transcript format its reader reads (`capture --format`): its name."""
        return self.name

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(h.word for h in self.hooks)


CLAUDE_CODE = Agent(
    name="claude-code", title="Claude Code", home="~/.claude",
    transcripts=Transcripts(env="CLAUDE_CONFIG_DIR", separator=",", defaults=(".claude", ".config/claude"),
                            setting="claude_dirs", look_in="projects"),
    hooks=(Hook("SessionStart", "session-start", 15), Hook("UserPromptSubmit", "user-prompt", 10),
           Hook("PreCompact", "pre-compact", 30), Hook("Stop", "stop", 30), Hook("SessionEnd", "session-end", 5)),
    output="hook-json", context_chars=9_500, aliases=("claude",), mcp_option=True,
    setup="hooks in settings.json, the MCP server in ~/.claude.json")

CODEX = Agent(
    name="codex", title="Codex", home="~/.codex",
    transcripts=Transcripts(env="CODEX_HOME", defaults=(".codex",), setting="codex_dirs", look_in="sessions"),
    hooks=(Hook("SessionStart", "session-start", 15, "startup|resume|clear|compact"),
           Hook("UserPromptSubmit", "user-prompt", 10), Hook("PreCompact", "pre-compact", 30),
           Hook("Stop", "stop", 30)),
    output="hook-json", context_chars=9_000, mcp_option=True,
    setup="the MCP server and hooks in config.toml")

OPENCLAW = Agent(
    name="openclaw", title="OpenClaw", home="~/.openclaw",
    transcripts=Transcripts(env="OPENCLAW_STATE_DIR", defaults=(".openclaw", ".clawdbot", ".moltbot", ".moldbot"),
                            setting="openclaw_dirs", look_in="agents"),
    # Typed hooks of maxmem's memory plugin (maxmem/data/openclaw-plugin): the brief goes
    # into the system prompt of a session's first prompt, the recall into the prompt itself.
    hooks=(Hook("before_prompt_build", "session-start", 10), Hook("before_prompt_build", "user-prompt", 10),
           Hook("agent_end", "stop", 30)),
    output="plain", context_chars=20_000, capture_all=True, mcp_option=True,
    setup="the memory plugin in the memory slot, the skill")

AGENTS: tuple[Agent, ...] = (OPENCLAW, CLAUDE_CODE, CODEX)
NAMES: tuple[str, ...] = tuple(a.name for a in AGENTS)
DEFAULT = CLAUDE_CODE.name  # the harness a hook runs for when it names none


def agent_named(word: str) -> Agent | None:
    """The agent `word` names (its name or an older spelling), else None."""
    for agent in AGENTS:
        if word == agent.name or word in agent.aliases:
            return agent
    return None


def agent(name: str) -> Agent:
    """The agent called `name` (a KeyError for an unknown one: callers check names first)."""
    found = agent_named(name)
    if found is None:
        raise KeyError(name)
    return found


def listed(names: tuple[str, ...] = NAMES, last: str = "or") -> str:
    """"claude-code, codex or openclaw": names for help text."""
    return ", ".join(names[:-1]) + f" {last} {names[-1]}" if len(names) > 1 else "".join(names)
