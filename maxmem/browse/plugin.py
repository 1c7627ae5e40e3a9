"""The maxmem plugin for Datasette: maxmem's own pages, and Datasette set up for brain.db.

Registered by `server.build` on the one Datasette it starts (not through an entry
point: a Datasette started for another database must not grow maxmem pages). Hooks:

- prepare_connection: loads sqlite-vec into each of Datasette's connections, so the
  vec0 table and the `vec_*` SQL functions work in table pages and in SQL queries;
- register_routes: the overview (/), search, a memory, the timeline, charts, jobs,
  and the tending forms (POST), all under /maxmem/ but the overview;
- asgi_wrapper: loopback peers, a local Host header and this run's token only (guard.py),
  on every route, Datasette's included;
- skip_csrf: the maxmem forms carry their own session token (guard.Session);
- menu_links, render_cell: links between Datasette's pages and maxmem's.

The Brain lives in its own process (worker.py: sqlite-vec cannot serve two SQLite
libraries in one process); the pages call it from threads, so the event loop never
waits on SQLite. `maxmem doctor`'s checks, which open their own connection and may
read the whole file, have a process of their own, so they never hold up a search.
"""

from __future__ import annotations

import asyncio
import functools
import html
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from datasette import Response, hookimpl
from markupsafe import Markup

from ..errors import InvalidInput, MaxmemError, NotFound
from ..memory import CATEGORIES, STATUSES
from ..search.hybrid import MODES
from . import views
from .guard import Access, Session, owner_only, same_origin
from .worker import BrainWorker

REF = r"(?P<ref>[A-Za-z0-9][A-Za-z0-9_.:-]{0,127})"
MENU = (("/", "Overview"), ("/maxmem/search", "Search"), ("/maxmem/timeline", "Timeline"),
        ("/maxmem/charts", "Charts"), ("/maxmem/jobs", "Jobs and health"), ("/brain", "Tables and SQL"))


@dataclass
class BrowseState:
    """What the pages work with: the Brain's process and how the server was started."""

    pages: BrainWorker
    checks: BrainWorker
    read_only: bool
    session: Session
    access: Access
    database: str = "brain"
    threads: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=4, thread_name_prefix="maxmem-browse"))

    async def call(self, name: str, *args: Any, worker: BrainWorker | None = None) -> Any:
        """Operation `name` in the Brain's process (or `worker`'s), off the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.threads, functools.partial(
            (worker or self.pages).call, name, *args))

    def close(self) -> None:
        self.pages.stop()
        self.checks.stop()
        self.threads.shutdown(wait=False, cancel_futures=True)


class MaxmemPlugin:
    """Datasette hook implementations bound to one BrowseState."""

    __name__ = "maxmem.browse"  # Datasette's plugin list (/-/plugins) reads it

    def __init__(self, state: BrowseState) -> None:
        self.state = state

    # -- hooks ---------------------------------------------------------------
    @hookimpl
    def prepare_connection(self, conn: Any) -> None:
        import sqlite_vec

        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)

    @hookimpl
    def asgi_wrapper(self, datasette: Any) -> Any:
        return functools.partial(owner_only, access=self.state.access)

    @hookimpl
    def skip_csrf(self, datasette: Any, scope: Any) -> bool:
        return str(scope.get("path", "")).startswith("/maxmem/")

    @hookimpl
    def menu_links(self, datasette: Any, actor: Any, request: Any) -> list[dict[str, str]]:
        return [{"href": href, "label": f"maxmem: {label}"} for href, label in MENU]

    @hookimpl
    def render_cell(self, row: Any, value: Any, column: str, table: str | None, database: str,
                    datasette: Any) -> Any:
        if database != self.state.database:
            return None
        if table == "memories" and column == "uid" and isinstance(value, str):
            return Markup(f'<a href="/maxmem/memory/{html.escape(value)}">{html.escape(value)}</a>')
        if table == "memories_vec" and column == "embedding" and isinstance(value, bytes):
            return f"float[{len(value) // 4}] vector"
        return None

    @hookimpl
    def register_routes(self, datasette: Any) -> list[tuple[str, Any]]:
        return [
            (r"^/$", self.overview),
            (r"^/maxmem/search$", self.search),
            (r"^/maxmem/search\.json$", self.search_json),
            (rf"^/maxmem/memory/{REF}$", self.memory),
            (rf"^/maxmem/memory/{REF}/(?P<action>{'|'.join(views.ACTIONS)})$", self.tend),
            (r"^/maxmem/timeline$", self.timeline),
            (r"^/maxmem/charts$", self.charts),
            (r"^/maxmem/jobs$", self.jobs),
        ]

    # -- rendering -----------------------------------------------------------
    def _session_id(self, request: Any) -> tuple[str, bool]:
        """The browser's session id, and whether it is new (then the cookie is set)."""
        current = request.cookies.get(self.state.session.cookie)
        if current and len(current) == 32 and all(c in "0123456789abcdef" for c in current):
            return current, False
        return Session.new_id(), True

    async def _page(self, datasette: Any, request: Any, template: str, context: dict[str, Any],
                    status: int = 200) -> Response:
        session_id, new = self._session_id(request)
        base = {
            "menu": MENU, "read_only": self.state.read_only, "token": self.state.session.token(session_id),
            "database": self.state.database, "request_path": request.path,
        }
        body = await datasette.render_template(template, {**base, **context}, request=request)
        response = Response.html(body, status=status)
        response.headers["x-frame-options"] = "DENY"
        response.headers["content-security-policy"] = (
            "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
            "script-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
        if new:
            response.set_cookie(self.state.session.cookie, session_id, httponly=True, samesite="strict")
        return response

    async def _error(self, datasette: Any, request: Any, exc: MaxmemError) -> Response:
        status = 404 if isinstance(exc, NotFound) else 400 if isinstance(exc, InvalidInput) else 500
        return await self._page(datasette, request, "maxmem_error.html",
                                {"title": "Not found" if status == 404 else "Error", "message": str(exc)},
                                status=status)

    # -- pages ---------------------------------------------------------------
    async def overview(self, datasette: Any, request: Any) -> Response:
        try:
            data = await self.state.call("overview")
        except MaxmemError as exc:
            return await self._error(datasette, request, exc)
        return await self._page(datasette, request, "maxmem_overview.html", {"data": data, "title": "Overview"})

    async def _search(self, request: Any) -> tuple[views.SearchForm, dict[str, Any] | None]:
        args = {key: request.args.getlist(key) for key in request.args}
        form = views.SearchForm.from_args(args)
        if not form.query:
            return form, None
        return form, await self.state.call("search", form)

    async def search(self, datasette: Any, request: Any) -> Response:
        try:
            form, result = await self._search(request)
        except MaxmemError as exc:
            return await self._error(datasette, request, exc)
        json_url = "/maxmem/search.json?" + request.query_string if request.query_string else None
        return await self._page(datasette, request, "maxmem_search.html", {
            "title": f"Search: {form.query}" if form.query else "Search",
            "form": form, "result": result, "modes": MODES, "categories": CATEGORIES,
            "statuses": STATUSES, "json_url": json_url,
        })

    async def search_json(self, datasette: Any, request: Any) -> Response:
        """The hits as `maxmem search --json` prints them."""
        try:
            form, result = await self._search(request)
            if result is None:
                raise InvalidInput("the search query is empty: give some words to look for (?q=…)")
        except MaxmemError as exc:
            return Response.json({"error": str(exc)}, status=404 if isinstance(exc, NotFound) else 400)
        return Response.json({"query": form.query, "mode": result["plan"]["mode"],
                              "note": result["plan"]["note"], "hits": result["json_hits"]})

    async def memory(self, datasette: Any, request: Any) -> Response:
        try:
            data = await self.state.call("memory", request.url_vars["ref"])
        except MaxmemError as exc:
            return await self._error(datasette, request, exc)
        title = data["memory"]["title"] or f"Memory #{data['memory']['id']}"
        return await self._page(datasette, request, "maxmem_memory.html", {"data": data, "title": title})

    async def timeline(self, datasette: Any, request: Any) -> Response:
        try:
            day = request.args.get("day")
            if day:
                data = await self.state.call("day", day)
                return await self._page(datasette, request, "maxmem_day.html",
                                        {"data": data, "title": f"Timeline: {data['day']}"})
            days = _whole(request.args.get("days"), 14, "days")
            ahead = _whole(request.args.get("ahead"), 7, "ahead")
            data = await self.state.call("timeline", days, ahead)
        except MaxmemError as exc:
            return await self._error(datasette, request, exc)
        return await self._page(datasette, request, "maxmem_timeline.html", {"data": data, "title": "Timeline"})

    async def charts(self, datasette: Any, request: Any) -> Response:
        try:
            months = _whole(request.args.get("months"), 12, "months")
            if not 1 <= months <= 120:
                raise InvalidInput("months must be from 1 to 120")
            data = await self.state.call("charts", months)
        except MaxmemError as exc:
            return await self._error(datasette, request, exc)
        svgs = {k: Markup(v) for k, v in data.pop("svgs").items()}
        return await self._page(datasette, request, "maxmem_charts.html",
                                {"data": data, "svgs": svgs, "months": months, "title": "Charts"})

    async def jobs(self, datasette: Any, request: Any) -> Response:
        """The last runs and every check of `maxmem doctor`."""
        try:
            data = await self.state.call("jobs", worker=self.state.checks)
        except MaxmemError as exc:
            return await self._error(datasette, request, exc)
        return await self._page(datasette, request, "maxmem_jobs.html",
                                {"data": data, "seconds": data["seconds"], "title": "Jobs and health"})

    # -- tending -------------------------------------------------------------
    async def tend(self, datasette: Any, request: Any) -> Response:
        """pin, unpin, category, edit, supersede, forget: each one Brain call, for a form
        that carries the browser session's token, on a server not started --read-only."""
        if request.method != "POST":
            return Response.text("use the buttons on the memory's page (POST)\n", status=405)
        if self.state.read_only:
            return Response.text("refused: maxmem browse was started --read-only\n", status=403)
        form = await request.post_vars()
        session_id = request.cookies.get(self.state.session.cookie)
        headers = {k.lower(): v for k, v in request.headers.items()}
        if not self.state.session.valid(session_id, form.get("token")) or not same_origin(headers):
            return Response.text("refused: this form did not come from a page of this maxmem browse "
                                 "session (reload the memory's page and try again)\n", status=403)
        try:
            done, target = await self.state.call("tend", request.url_vars["ref"], request.url_vars["action"],
                                                 dict(form))
        except MaxmemError as exc:
            return await self._error(datasette, request, exc)
        datasette.add_message(request, done, datasette.INFO)
        return Response.redirect(target, status=303)


def _whole(value: str | None, default: int, what: str) -> int:
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise InvalidInput(f"{what} must be a whole number, not {value[:20]!r}") from None


