"""The brain over the Model Context Protocol (stdio), with the official `mcp` SDK.

`maxmem mcp` starts a server an agent (Claude Code, Claude Desktop, OpenClaw, any
MCP client) launches as a subprocess. Tools: `search`, `remember`, `get`, `forget`,
`commit` (store a trigger: a decision, milestone, preference, failure, lesson or
"remember this" request), `context` (the boot brief) and `query` (plain English).
Arguments are JSON-schema'd from the signatures below; a maxmem error comes back to
the model as a tool error carrying its one-line message, never as a crash.

The SDK is an optional extra (pip install 'maxmem[mcp]') and imported only here.
"""

# No `from __future__ import annotations` here: the SDK reads the tools' annotations
# at registration, and they name pydantic's Field, imported only when serving.
import functools
import logging
from collections.abc import Awaitable, Callable
from datetime import tzinfo
from typing import TYPE_CHECKING, Annotated, Any, Literal

from . import __version__, nlquery
from .briefing import DEFAULT_BUDGET_TOKENS, build_brief
from .errors import MaxmemError, MissingDependency
from .triggers import commit as commit_trigger

if TYPE_CHECKING:
    from .brain import Brain

log = logging.getLogger("maxmem")

INSTRUCTIONS = """\
maxmem is your long-term memory. At the start of a session (or after your context was
compacted) call `context` to read what you should know. `search` before assuming
anything about the user's preferences, past decisions or earlier work. `remember`
durable facts and running notes; `commit` decisions, milestones, preferences,
failures and lessons the moment they happen. `query` answers plain-English questions
like "unresolved projects from last week"."""

Category = Literal["core", "daily", "conversation", "project"]
Trigger = Literal["decision", "milestone", "preference", "failure", "lesson", "remember"]


def _sdk() -> tuple[Any, Any, Any]:
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from pydantic import Field
    except ImportError:
        raise MissingDependency("the mcp SDK (version 2)", "mcp") from None
    return MCPServer, ToolError, Field


def _compact(memory: Any, score: float | None = None) -> dict[str, Any]:
    """The fields a model needs, without vectors' bookkeeping."""
    out = {
        "id": memory.id, "uid": memory.uid, "category": memory.category, "kind": memory.kind,
        "title": memory.title, "content": memory.content, "tags": memory.tags,
        "importance": memory.importance, "status": memory.status, "pinned": memory.pinned,
        "created_at": memory.created_at,
    }
    if memory.started_at:
        out["started_at"] = memory.started_at
    if memory.resolved_at:
        out["resolved_at"] = memory.resolved_at
    if memory.session_id:
        out["session_id"] = memory.session_id
    if score is not None:
        out["score"] = round(score, 4)
    return out


def build_server(brain: "Brain", tz: Any = None) -> Any:
    """An MCPServer whose tools act on `brain` (kept open for the server's life)."""
    MCPServer, ToolError, Field = _sdk()

    server = MCPServer("maxmem", instructions=INSTRUCTIONS, version=__version__)

    def tool(description: str) -> Callable[[Callable[..., Any]], Callable[..., Awaitable[Any]]]:
        """Register an async tool; a MaxmemError becomes a tool error with its message.

        Tools are async and call the Brain on the event loop's thread: one apsw
        connection, never shared between threads, and a stdio server has one client.
        """
        def register(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
            @functools.wraps(fn)
            async def run(*args: Any, **kwargs: Any) -> Any:
                try:
                    return fn(*args, **kwargs)
                except MaxmemError as exc:
                    raise ToolError(str(exc)) from None

            server.add_tool(run, name=fn.__name__, description=description)
            return run
        return register

    @tool("Find the memories that best answer a question (hybrid keyword + meaning search), "
          "optionally filtered.")
    def search(
        query: Annotated[str, Field(description="What to look for, in plain words.")],
        limit: Annotated[int, Field(ge=1, le=100, description="How many results.")] = 10,
        category: Annotated[Category | None, Field(description="Only this category.")] = None,
        kind: Annotated[str | None, Field(description="Only this kind: decision, fact, …")] = None,
        tags: Annotated[list[str] | None, Field(description="Only memories with all these tags.")] = None,
        since: Annotated[str | None, Field(description="Created at or after (ISO-8601).")] = None,
        until: Annotated[str | None, Field(description="Created before (ISO-8601).")] = None,
        min_importance: Annotated[float | None, Field(ge=0, le=1)] = None,
        session_id: Annotated[str | None, Field(description="Only this session.")] = None,
    ) -> dict[str, Any]:
        hits = brain.search(query, limit=limit, category=category, kind=kind, tags=tags,
                            since=since, until=until, min_importance=min_importance,
                            session_id=session_id)
        return {"hits": [_compact(h.memory, h.score) for h in hits]}

    @tool("Store a memory. core: durable facts and standing decisions; daily: running notes; "
          "project: long-lived project knowledge. Identical text in a category is stored once.")
    def remember(
        content: Annotated[str, Field(description="The text to remember.")],
        category: Annotated[Category, Field(description="Where it belongs.")] = "daily",
        kind: Annotated[str, Field(description="note, decision, fact, preference, lesson, task, …")] = "note",
        title: Annotated[str | None, Field(description="A short title.")] = None,
        tags: Annotated[list[str] | None, Field(description="Tags.")] = None,
        importance: Annotated[float, Field(ge=0, le=1, description="0 to 1.")] = 0.5,
        pinned: Annotated[bool, Field(description="Never expires; first in the context.")] = False,
        session_id: Annotated[str | None, Field(description="The session it came from.")] = None,
    ) -> dict[str, Any]:
        memory = brain.remember(content, category=category, kind=kind, title=title, tags=tags,
                                importance=importance, pinned=pinned, session_id=session_id,
                                source="agent")
        return _compact(memory)

    @tool("Read one memory by its id (a number) or uid.")
    def get(id: Annotated[int | str, Field(description="The memory's id (a number) or uid.")]) -> dict[str, Any]:
        return _compact(brain.get(id))

    @tool("Delete a memory for good (its keyword and vector index entries too).")
    def forget(id: Annotated[int | str, Field(description="The memory's id (a number) or uid.")]) -> dict[str, Any]:
        memory = brain.forget(id)
        return {"forgotten": memory.id, "uid": memory.uid}

    @tool("Commit a trigger to core memory the moment it happens: a decision (what and why), "
          "a milestone, a preference, a failure (cause and fix), a lesson, or an explicit "
          "'remember this'. Committed memories never expire.")
    def commit(
        trigger: Annotated[Trigger, Field(description="What kind of moment this is.")],
        content: Annotated[str, Field(description="What happened, in one or two sentences.")],
        title: Annotated[str | None, Field(description="A short title.")] = None,
        tags: Annotated[list[str] | None, Field(description="Tags.")] = None,
        importance: Annotated[float | None, Field(ge=0, le=1)] = None,
        project: Annotated[str | None, Field(description="The project it belongs to.")] = None,
        session_id: Annotated[str | None, Field(description="The session it came from.")] = None,
    ) -> dict[str, Any]:
        result = commit_trigger(brain, trigger, content, title=title, tags=tags,
                                importance=importance, project=project, session_id=session_id)
        return {**_compact(result.memory), "action": result.action}

    @tool("The boot brief: core memories, work in progress, today's and yesterday's notes, "
          "this session's latest exchanges, the last day's important observations. Read it at "
          "session start and after compaction.")
    def context(
        session: Annotated[str | None, Field(description="Include this session's exchanges.")] = None,
        budget_tokens: Annotated[int, Field(ge=100, le=100_000)] = DEFAULT_BUDGET_TOKENS,
    ) -> str:
        return build_brief(brain, session=session, budget_tokens=budget_tokens,
                             **({"tz": tz} if tz else {})).markdown

    @tool("Ask in plain English, e.g. 'high-importance unresolved projects from last week' or "
          "'decisions about the API since March 3'. Returns how it was understood and the results.")
    def query(question: Annotated[str, Field(description="The question.")]) -> dict[str, Any]:
        interp = nlquery.interpret(question, brain.clock, **({"tz": tz} if tz else {}))
        result = nlquery.answer(brain, interp)
        return {
            "interpretation": interp.describe(),
            "notes": list(interp.notes),
            "results": [_compact(m, s) for m, s in
                        zip(result.memories, result.scores or [None] * len(result.memories))],
        }

    return server


def serve(brain: "Brain", tz: tzinfo | None = None) -> None:
    """Run the stdio server over `brain` until the client closes the pipe."""
    server = build_server(brain, tz=tz)
    log.info("maxmem mcp: serving %s over stdio", brain.path)
    server.run("stdio")
