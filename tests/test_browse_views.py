"""maxmem browse without a browser: the page data (views), the guards, the Brain's process.

The pages themselves, in Chromium, are tests/test_browse.py.
"""

from __future__ import annotations

import os
import signal
import time
from datetime import timedelta

import pytest
from conftest import HashEmbedder

from maxmem import Brain, Config, FixedClock, InvalidInput, NotFound
from maxmem.browse import guard, views
from maxmem.browse.worker import BrainWorker, portable
from maxmem.clock import iso
from maxmem.errors import DatabaseError
from maxmem.retention.stats import plan
from maxmem.triggers.commit import commit
from maxmem.tune import fetched_questions


def test_host_headers_and_peers():
    for host in ("127.0.0.1:8765", "localhost:8765", "LOCALHOST", "[::1]:8765", "127.0.0.1", "[::1]"):
        assert guard.local_host_header(host), host
    for host in ("evil.example:8765", "evil.example", "127.0.0.1.evil.example", "", None, "[::2]:80",
                 "192.168.1.20:8765", "localhost.evil:1"):
        assert not guard.local_host_header(host), host
    for peer in ("127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"):
        assert guard.is_loopback(peer), peer
    for peer in ("10.0.0.1", "192.0.2.1", "::ffff:8.8.8.8", "fe80::1", "", None, "localhost"):
        assert not guard.is_loopback(peer), peer
    scope = {"client": ("127.0.0.1", 1), "headers": [(b"host", b"127.0.0.1:9")]}
    assert guard.refusal(scope) is None
    assert "only on this machine" in guard.refusal({**scope, "client": ("10.0.0.7", 1)})
    assert "Host must be" in guard.refusal({**scope, "headers": [(b"host", b"evil.example")]})
    assert guard.refusal({"headers": []}) is not None  # no peer at all (a Unix socket)


def ask(app, path: str, query: str = "", headers: list[tuple[bytes, bytes]] | None = None,
        method: str = "GET") -> tuple[int, dict[str, str], str]:
    """One request through an ASGI app: status, headers, body."""
    import asyncio

    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(),
             "query_string": query.encode(), "client": ("127.0.0.1", 5),
             "headers": [(b"host", b"127.0.0.1:9"), *(headers or [])]}
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body.decode()


def test_every_request_needs_this_runs_token():
    async def inner(scope, receive, send) -> None:  # what Datasette would answer
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"the memories"})

    access = guard.Access(9, "s3cret-token")
    app = guard.owner_only(inner, access)
    assert ask(app, "/brain/memories.json")[0] == 403
    assert ask(app, "/", "token=wrong")[0] == 403
    assert ask(app, "/", headers=[(b"cookie", b"maxmem_access_9=wrong; maxmem_access_8=s3cret-token")])[0] == 403
    assert ask(app, "/", headers=[(b"authorization", b"Bearer wrong")])[0] == 403
    # the token in the address: a landing page that sets the cookie and goes on without it
    status, headers, body = ask(app, "/maxmem/search", "q=a%20b&token=s3cret-token&limit=3")
    assert status == 200 and "the memories" not in body
    assert headers["set-cookie"] == "maxmem_access_9=s3cret-token; Path=/; HttpOnly; SameSite=Strict"
    assert 'location.replace("/maxmem/search?q=a%20b&limit=3")' in body and headers["cache-control"] == "no-store"
    assert 'location.replace("/evil.example/")' in ask(app, "//evil.example/", "token=s3cret-token")[2]
    assert 'location.replace("/evil.example/")' in ask(app, "/\\evil.example/", "token=s3cret-token")[2]
    # the cookie, or the token as a bearer credential, opens every route
    assert ask(app, "/brain/memories.json", headers=[(b"cookie", b"a=b; maxmem_access_9=s3cret-token")])[2] == \
        "the memories"
    assert ask(app, "/brain.csv", headers=[(b"authorization", b"Bearer s3cret-token")])[0] == 200
    # but not Datasette's message page, nor a foreign Host
    owner = [(b"authorization", b"Bearer s3cret-token")]
    assert ask(app, "/-/messages", headers=owner, method="POST")[0] == 403
    assert ask(app, "//-/messages/", headers=owner)[0] == 403
    assert ask(app, "/", headers=[(b"host", b"evil.example"), *owner])[0] == 403  # a foreign Host among the headers
    assert guard.without_token("a=1&token=x%2By&b=") == ("x+y", "a=1&b=")
    assert guard.without_token("") == (None, "")
    assert guard.Access(9).token != guard.Access(9).token  # a new one each run


def test_the_kernel_names_the_user_at_the_other_end():
    import socket
    from pathlib import Path

    if not Path("/proc/net/tcp").exists():
        pytest.skip("no /proc/net/tcp (not Linux): the token alone guards maxmem browse here")
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            listener = socket.socket(family)
            listener.bind((host, 0))
        except OSError:
            continue  # no IPv6 loopback here
        listener.listen()
        client = socket.create_connection(listener.getsockname()[:2])
        accepted, peer = listener.accept()
        try:
            assert guard.peer_uid(peer, listener.getsockname()) == os.geteuid()
        finally:
            for s in (accepted, client, listener):
                s.close()
    assert guard.peer_uid(("127.0.0.1", 1), ("127.0.0.1", 2)) is None  # no such connection
    assert guard.peer_uid(None, None) is None


def test_session_tokens_are_bound_to_the_session_and_the_server():
    session = guard.Session(8765)
    one, two = guard.Session.new_id(), guard.Session.new_id()
    assert session.valid(one, session.token(one))
    assert not session.valid(two, session.token(one))
    assert not session.valid(one, None) and not session.valid(None, session.token(one))
    assert not guard.Session(8765).valid(one, session.token(one))  # another start, another secret
    assert guard.same_origin({"host": "127.0.0.1:8765"})
    assert guard.same_origin({"host": "127.0.0.1:8765", "origin": "http://127.0.0.1:8765"})
    assert not guard.same_origin({"host": "127.0.0.1:8765", "origin": "http://evil.example"})
    assert not guard.same_origin({"host": "127.0.0.1:8765", "origin": "null"})


def test_search_form_takes_what_maxmem_search_takes():
    form = views.SearchForm.from_args({
        "q": ["backup"], "limit": ["5"], "mode": ["keyword"], "category": ["core", "daily"],
        "tag": ["nas, backup"], "since": ["2026-11-01"], "min_importance": ["0.5"],
        "meta": ["project=maxmem\nturns=3"], "status": ["active"], "session": ["s1"], "explain": ["1"],
    })
    assert (form.query, form.limit, form.mode, form.explain) == ("backup", 5, "keyword", True)
    assert form.filters == {
        "category": ["core", "daily"], "tags": ["nas", "backup"], "since": "2026-11-01",
        "min_importance": 0.5, "metadata": {"project": "maxmem", "turns": 3}, "status": ["active"],
        "session_id": "s1"}
    for bad, message in (({"limit": ["0"]}, "limit must be from 1"), ({"limit": ["x"]}, "whole number"),
                         ({"mode": ["fuzzy"]}, "mode must be one of"),
                         ({"min_importance": ["high"]}, "min_importance"), ({"meta": ["oops"]}, "key=value")):
        with pytest.raises(InvalidInput, match=message):
            views.SearchForm.from_args({"q": ["x"], **bad})


@pytest.fixture
def timeline_brain(tmp_path, hash_embedder):
    clock = FixedClock("2026-11-30T17:00:00Z")  # noon in New York
    with Brain.open(tmp_path / "brain.db", embedder=hash_embedder, clock=clock) as brain:
        now = clock.now()
        for days in (120, 95, 91, 90, 89, 88, 60):  # daily: kept 90 days
            brain.remember(f"daily note from {days} days ago", category="daily",
                           created_at=iso(now - timedelta(days=days)))
        for days in (40, 31, 30, 29, 27):  # conversation: 30 days
            brain.remember(f"exchange from {days} days ago", category="conversation",
                           created_at=iso(now - timedelta(days=days)))
        brain.remember("pinned daily from long ago", category="daily", pinned=True,
                       created_at=iso(now - timedelta(days=200)))
        commit(brain, "decision", "we keep the NAS", at=iso(now - timedelta(hours=3)))
        brain.remember("captured exchange", category="conversation", source="capture",
                       created_at=iso(now - timedelta(days=1)))
        task = brain.remember("renew the certificate", kind="task", status="ongoing")
        brain.update(task.id, status="resolved", resolved_at=iso(now - timedelta(days=2)))
        yield brain


def test_timeline_expiring_is_retentions_own_plan(timeline_brain):
    data = views.timeline(timeline_brain, days=7, ahead=40)
    rows = {r["day"]: r for r in data["rows"]}
    assert rows["2026-11-30"]["today"]
    # due now (what `maxmem retain` removes if run now): daily 120, 95, 91 days; conversation 40, 31
    assert rows["2026-11-30"]["expiring"] == plan(timeline_brain)["expired"] == 5
    # each later day: what retention's cutoff passes that day. A daily memory made 90 days
    # ago (Sep 1, local) is kept while made on or after the cutoff day; it goes Dec 1
    by_day = {d: r["expiring"] for d, r in rows.items() if r["future"] and r["expiring"]}
    assert by_day == {"2026-12-01": 2, "2026-12-02": 2, "2026-12-03": 1, "2026-12-04": 1, "2026-12-30": 1,
                      "2026-12-31": 1}
    # and it is what retention's own plan says as the days go by (nothing run in between)
    clock, due = timeline_brain.clock, plan(timeline_brain)["expired"]
    for r in sorted((r for r in data["rows"] if r["future"]), key=lambda r: r["day"]):
        clock.advance(days=1)
        later = plan(timeline_brain)["expired"]
        assert r["expiring"] == later - due, r["day"]
        due = later
    clock.advance(days=-40)
    assert rows["2026-11-29"]["captured"] == 1 and rows["2026-11-30"]["committed"] == 1
    assert rows["2026-11-28"]["resolved"] == 1
    assert rows["2026-11-30"]["created"] == 2  # the decision and the task
    day = views.timeline_day(timeline_brain, "2026-12-01")
    assert sorted(m["snippet"] for m in day["events"]["expiring"]) == [
        "daily note from 90 days ago", "exchange from 30 days ago"]
    with pytest.raises(InvalidInput):
        views.timeline(timeline_brain, days=0)


def test_tend_refuses_what_the_brain_refuses(brain):
    memory = brain.remember("a note")
    with pytest.raises(InvalidInput, match="category must be one of"):
        views.tend(brain, str(memory.id), "category", {"category": "secret"})
    with pytest.raises(InvalidInput, match="tick the box"):
        views.tend(brain, str(memory.id), "forget", {})
    with pytest.raises(InvalidInput, match="cannot supersede itself"):
        views.tend(brain, str(memory.id), "supersede", {"by": str(memory.id)})
    with pytest.raises(InvalidInput, match="content"):
        views.tend(brain, str(memory.id), "edit", {"content": "   "})
    with pytest.raises(NotFound):
        views.tend(brain, "999", "pin", {})
    assert brain.get(memory.id).content == "a note"
    assert views.tend(brain, str(memory.id), "pin", {}) == (f"#{memory.id} pinned", f"/maxmem/memory/{memory.id}")
    assert brain.get(memory.id).pinned


def test_the_brains_process_answers_and_reraises(tmp_path):
    path = tmp_path / "brain.db"
    with Brain.open(path, embedder=HashEmbedder()) as brain:
        brain.remember("the NAS backs up to B2 at 02:30")
    config = Config.from_tables({"retention": {"daily": "30d"}}, db_path=path, embedder="none")
    assert Config(**portable(config)).retention.daily == 30
    worker = BrainWorker(config, "none")
    worker.start()
    try:
        assert worker.call("overview")["memories"] == 1
        with pytest.raises(NotFound):
            worker.call("memory", "42")
        with pytest.raises(InvalidInput):
            worker.call("day", "yesterday")
        os.kill(worker.pid, signal.SIGKILL)  # a crash: the next call starts it again
        time.sleep(0.5)
        assert worker.call("overview")["memories"] == 1
    finally:
        worker.stop()
    wrong = BrainWorker(Config(db_path=path, embedder="local"), "local")  # vectors from another embedder
    with pytest.raises(DatabaseError, match="maxmem reindex"):
        wrong.start()


def test_browse_command_says_in_one_line_why_it_cannot_start(tmp_path, capsys):
    import socket

    from conftest import run_cli

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        port = taken.getsockname()[1]
        code, out, err = run_cli(["--db", str(tmp_path / "brain.db"), "browse", "--port", str(port)], capsys)
    finally:
        taken.close()
    assert code == 1 and out == ""
    assert err.startswith("maxmem: error: cannot listen on 127.0.0.1:") and "--port" in err
    code, _, err = run_cli(["browse", "--port", "70000"], capsys)
    assert code == 2 and "70000" in err


def test_opening_a_memory_answers_the_search_that_returned_it(tmp_path):
    clock = FixedClock("2026-11-30T12:00:00Z")
    db = tmp_path / "brain.db"
    with Brain.open(db, embedder="none", clock=clock) as brain:
        port = brain.remember("The staging database listens on port 5433 on host db2.", category="project").id
        other = brain.remember("The user prefers tabs over spaces in Go code.", category="project").id
        views.memory_page(brain, str(other))  # no search of yours returned it: no question
        assert brain.search("staging database port", min_relevance=0)[0].memory.id == port
        clock.advance(minutes=1)
        views.memory_page(brain, str(port))
    with Brain.open(db, embedder="none") as brain:
        (question,) = fetched_questions(brain)
    assert (question.query, question.gold, question.source) == ("staging database port", {port}, "fetched")
