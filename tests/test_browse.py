"""maxmem browse: the real command on a temp brain.db, driven by headless Chromium.

The brain holds real memories (brain.db.sample, embedded with the local e5 model), a
real capture of a Claude Code transcript (sessions, turns, provenance), commit
triggers, resolved work, memories about to expire and edited ones, all embedded with
the same local model the server uses (`--embedder local`). The server is the
installed `maxmem browse --port 0` in a subprocess; the pages are read by Debian's
chromium through Playwright, and what they show is compared with `maxmem search`,
`maxmem get`, `maxmem doctor` and retention's own plan.

The test run takes screenshots of the pages in a temporary folder, so that a test run
leaves the checkout as it was; the README's are rewritten with

    MAXMEM_SCREENSHOTS=docs/screenshots pytest -q tests/test_browse.py -k screenshots
"""

from __future__ import annotations

import http.client
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from maxmem import Brain, Config
from maxmem.capture import run_capture
from maxmem.clock import UTC, iso
from maxmem.jobs.runs import record_run
from maxmem.retention.stats import plan
from maxmem.triggers.commit import commit

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "brain.db.sample"
TRANSCRIPT = ROOT / "tests/fixtures/transcripts/claude-code"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOTS = os.environ.get("MAXMEM_SCREENSHOTS")  # a folder to keep them in (docs/screenshots for the README)
QUERIES = ["why did the backup fail?", "which port does the staging API use",
           "what did we decide about the mobile app", "photo library disk"]

pytestmark = pytest.mark.slow


# -- the brain, the servers, the browser ---------------------------------------------


def make_brain(path: Path, embedder: Any) -> dict[str, Any]:
    """A brain.db with every kind of memory the pages show; returns ids to look at."""
    shutil.copyfile(SAMPLE, path)
    os.chmod(path, 0o600)
    now = datetime.now(UTC)
    ids: dict[str, Any] = {}
    with Brain.open(path, embedder=embedder) as brain:
        run_capture(brain, paths=[TRANSCRIPT])
        captured = brain.list(category="conversation", kind="exchange", limit=5, order="recent")
        ids["captured"] = [m.id for m in captured if m.source == "capture"]
        assert ids["captured"], "the transcript gave no memory"
        ids["decision"] = commit(
            brain, "decision", "We moved the family photo library to the new 4 TB disk on atlas.",
            at=iso(now - timedelta(hours=1))).memory.id
        ids["lesson"] = commit(
            brain, "lesson", "Check the UPS battery before a firmware update of the NAS.",
            at=iso(now - timedelta(days=1))).memory.id
        task = brain.remember("Renew the TLS certificate of the staging API.", category="project",
                              kind="task", status="ongoing", created_at=iso(now - timedelta(days=3)))
        brain.update(task.id, status="resolved", resolved_at=iso(now - timedelta(hours=2)))
        ids["resolved"] = task.id
        ids["overdue"] = brain.remember("Daily note: water the garden sensors' plants.", category="daily",
                                        created_at=iso(now - timedelta(days=95))).id
        ids["expiring_soon"] = brain.remember("Daily note: the plumber comes on Friday.", category="daily",
                                              created_at=iso(now - timedelta(days=88))).id
        edited = brain.remember("The staging API listens on port 8443 behind Caddy.", category="project",
                                kind="fact", title="Staging API port", tags=["api"])
        brain.update(edited.id, content="The staging API listens on port 9443 behind Caddy.")
        brain.update(edited.id, content="The staging API listens on port 9443 behind Caddy; TLS by Let's Encrypt.",
                     tags=["api", "tls"])
        ids["edited"] = edited.id
        ids["plain"] = brain.remember("The accountant wants the VAT receipts by the 10th.",
                                      category="daily", kind="note").id
        ids["newer"] = brain.remember("The accountant now wants the VAT receipts by the 5th.",
                                      category="daily", kind="note").id
        ids["to_forget"] = brain.remember("A note written by mistake, to be forgotten.", category="daily").id
        record_run(brain.db, "capture", True, "1 file, 32 lines, 3 memories")
        record_run(brain.db, "backup", False, "no space left on /mnt/backup")
    return ids


def chromium_or_skip() -> None:
    if not CHROMIUM.exists():
        message = "Debian's chromium is not installed: apt-get install -y chromium"
        if os.environ.get("CI"):
            pytest.fail(message)  # scripts/test installs it: in CI its absence is a broken setup
        pytest.skip(message)


class Server:
    """`maxmem browse --port 0` in a subprocess; `url` once it listens."""

    def __init__(self, db: Path, home: Path, *extra: str) -> None:
        env = {**os.environ, "MAXMEM_HOME": str(home), "PYTHONUNBUFFERED": "1"}
        for var in ("MAXMEM_DB", "MAXMEM_EMBEDDER", "OPENAI_API_KEY"):
            env.pop(var, None)
        self.process = subprocess.Popen(
            [sys.executable, "-X", "faulthandler", "-m", "maxmem", "--db", str(db), "--embedder", "local", "browse",
             "--port", "0", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        ready, _, _ = select.select([self.process.stdout], [], [], 60)
        line = self.process.stdout.readline().strip() if ready else ""  # type: ignore[union-attr]
        if not line.startswith("http://127.0.0.1:"):
            self.close()
            raise AssertionError(f"maxmem browse did not start: {line!r} {self.process.stderr.read()[-2000:]}")  # type: ignore[union-attr]
        self.address = line  # what the person opens: with this run's token
        parts = urllib.parse.urlsplit(line)
        self.url = f"http://127.0.0.1:{parts.port}/"
        self.port = int(parts.port or 0)
        self.token = urllib.parse.parse_qs(parts.query)["token"][0]

    def login(self, page: Any) -> None:
        """What the person does: open the printed address (the browser trades the token for
        its cookie and lands on the address without it)."""
        page.goto(self.address)
        page.wait_for_url(self.url)

    def fetch(self, path: str, data: dict[str, str] | None = None,
              headers: dict[str, str] | None = None) -> tuple[int, str]:
        """A request as the owner's scripts make it: the token as a bearer credential."""
        return fetch(self.url + path, data, {"Authorization": f"Bearer {self.token}", **(headers or {})})

    def close(self) -> None:
        if self.process.poll() is not None:
            print("server exited", self.process.returncode, self.process.stderr.read()[-3000:])  # type: ignore[union-attr]
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def brain_db(tmp_path_factory: pytest.TempPathFactory, local_embedder: Any) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("browse")
    os.chmod(folder, 0o700)
    path = folder / "brain.db"
    return path, make_brain(path, local_embedder)


@pytest.fixture(scope="module")
def server(brain_db: tuple[Path, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    chromium_or_skip()
    running = Server(brain_db[0], tmp_path_factory.mktemp("home"))
    yield running
    running.close()


@pytest.fixture(scope="module")
def read_only_server(brain_db: tuple[Path, dict[str, Any]],
                     tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    chromium_or_skip()
    running = Server(brain_db[0], tmp_path_factory.mktemp("home-ro"), "--read-only")
    yield running
    running.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh browser context, logged in to the server the test uses through its printed address."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    for name in ("server", "read_only_server"):
        if name in request.fixturenames:
            request.getfixturevalue(name).login(opened)
    yield opened
    context.close()


def cli(db: Path, capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    code, out, err = run_cli(["--db", str(db), "--embedder", "local", *args, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


def hit_ids(page: Any) -> list[int]:
    return [int(x) for x in page.locator("tr.mx-hit").evaluate_all("rows => rows.map(r => r.dataset.id)")]


def fetch(url: str, data: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> tuple[int, str]:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


# -- search -------------------------------------------------------------------------


def test_search_shows_the_same_top_5_as_maxmem_search(server, brain_db, page, capsys):
    db, _ = brain_db
    for query in QUERIES:
        expected = [h["memory"]["id"] for h in cli(db, capsys, "search", query, "-n", "5")["hits"]]
        assert 1 <= len(expected) <= 5  # the relevant ones: hits below the gate are not listed
        page.goto(server.url + "maxmem/search?" + urllib.parse.urlencode({"q": query, "limit": 5}))
        assert hit_ids(page) == expected, query
    # the same with filters, typed into the form
    expected = [h["memory"]["id"] for h in cli(db, capsys, "search", "backup", "-n", "5", "-c", "core")["hits"]]
    page.goto(server.url + "maxmem/search")
    page.fill("input[name=q]", "backup")
    page.fill("input[name=limit]", "5")
    page.click("#mx-search-form summary")
    page.check("input[name=category][value=core]")
    page.click("input[type=submit][value=Search]")
    page.wait_for_selector("#mx-search-summary")
    assert hit_ids(page) == expected and expected


def test_explain_view_shows_both_sides_and_the_plan(server, brain_db, page, capsys):
    db, _ = brain_db
    query = QUERIES[0]
    hits = cli(db, capsys, "search", query, "-n", "3", "--explain")["hits"]
    page.goto(server.url + "maxmem/search?" + urllib.parse.urlencode({"q": query, "limit": 3, "explain": 1}))
    first = page.locator("tr.mx-hit").first.locator(".mx-explain").inner_text()
    e = hits[0]["explain"]
    assert f"cosine {e['cosine']:.3f}" in first and f"bm25 {e['bm25']:.3f}" in first
    plan_text = page.locator("#mx-plan").inner_text()
    assert '"backup"' in plan_text and "m.status != 'superseded'" in plan_text
    status, body = server.fetch("maxmem/search.json?" + urllib.parse.urlencode({"q": query, "limit": 3}))
    assert status == 200 and [h["memory"]["id"] for h in json.loads(body)["hits"]] == [h["memory"]["id"] for h in hits]
    status, body = server.fetch("maxmem/search?q=x&min_importance=lots")
    assert status == 400 and "min_importance must be a number" in body


# -- one memory ----------------------------------------------------------------------


def test_memory_page_shows_text_provenance_history_and_related(server, brain_db, page, local_embedder):
    db, ids = brain_db
    with Brain.open(db, embedder=local_embedder) as brain:
        versions = brain.history(ids["edited"])
        captured = brain.get(ids["captured"][0])
    page.goto(server.url + f"maxmem/memory/{ids['edited']}")
    assert "TLS by Let's Encrypt" in page.locator("#mx-content").inner_text()
    rows = page.locator("tr.mx-version")
    assert rows.count() == len(versions) == 3
    texts = rows.locator(".mx-version-content").all_inner_texts()
    assert "port 8443" in texts[-1] and "port 9443" in texts[1]  # newest first
    assert "tags" in rows.nth(0).inner_text()
    assert page.locator("#mx-related li a.mx-memory-link").count() >= 1

    page.goto(server.url + f"maxmem/memory/{captured.uid}")  # by uid too
    provenance = page.locator("#mx-provenance").inner_text()
    assert captured.session_id in provenance and ".jsonl" in provenance and "claude-code" in provenance
    page.click("#mx-provenance a:has-text('–')")  # the turns, in Datasette's table
    page.wait_for_selector("table.rows-and-columns")
    first, last = captured.metadata["turn_range"]
    assert page.locator("table.rows-and-columns tbody tr").count() == last - first + 1
    status, body = server.fetch("maxmem/memory/999999")
    assert status == 404 and "no memory" in body


# -- tending ---------------------------------------------------------------------------


def test_pin_and_edit_are_visible_to_maxmem_get(server, brain_db, page, capsys):
    db, ids = brain_db
    memory_id = ids["plain"]
    page.goto(server.url + f"maxmem/memory/{memory_id}")
    page.click("#mx-pin")
    page.wait_for_selector("#mx-pinned")
    assert "pinned" in page.locator(".message-info").inner_text()
    assert cli(db, capsys, "get", str(memory_id))["pinned"] is True

    new_text = "The accountant wants the VAT receipts by the 10th, scanned as PDF."
    page.fill("#mx-edit-form textarea[name=content]", new_text)
    page.click("#mx-save")
    page.wait_for_selector("text=edited")
    got = cli(db, capsys, "get", str(memory_id))
    assert got["content"] == new_text and got["pinned"] is True
    assert page.locator("#mx-content").inner_text() == new_text
    assert page.locator("tr.mx-version").count() == 3  # created, pinned, edited

    page.click("#mx-pin")  # now "Unpin"
    page.wait_for_selector("text=unpinned")
    assert cli(db, capsys, "get", str(memory_id))["pinned"] is False


def test_category_supersede_and_forget(server, brain_db, page, capsys):
    db, ids = brain_db
    page.goto(server.url + f"maxmem/memory/{ids['plain']}")
    page.select_option("#mx-category-form select", "core")
    page.click("#mx-category-form button")
    page.wait_for_selector("text=moved to core")
    assert cli(db, capsys, "get", str(ids["plain"]))["category"] == "core"

    page.fill("#mx-supersede-form input[name=by]", str(ids["newer"]))
    page.click("#mx-supersede-form button")
    page.wait_for_selector("text=superseded by")
    old = cli(db, capsys, "get", str(ids["plain"]))
    assert old["status"] == "superseded" and old["superseded_by"] == cli(db, capsys, "get", str(ids["newer"]))["uid"]

    page.goto(server.url + f"maxmem/memory/{ids['to_forget']}")
    page.click("#mx-forget-form button")  # not confirmed: refused, nothing lost
    assert "tick the box" in page.locator(".mx-error").inner_text()
    assert cli(db, capsys, "get", str(ids["to_forget"]))["id"] == ids["to_forget"]
    page.go_back()
    page.check("#mx-forget-form input[name=confirm]")
    page.click("#mx-forget-form button")
    page.wait_for_selector("text=forgotten")
    code, _, err = run_cli(["--db", str(db), "get", str(ids["to_forget"])], capsys)
    assert code == 1 and "no memory" in err


def test_a_forged_write_is_refused(server, brain_db, page, browser, capsys):
    db, ids = brain_db
    target = f"maxmem/memory/{ids['lesson']}/forget"
    before = cli(db, capsys, "get", str(ids["lesson"]))
    # no token, no session
    assert server.fetch(target, {"confirm": "yes"})[0] == 403
    # a real session's token, replayed without its cookie, or with another session's cookie
    page.goto(server.url + f"maxmem/memory/{ids['lesson']}")
    token = page.locator("#mx-forget-form input[name=token]").input_value()
    cookie = next(c for c in page.context.cookies() if c["name"] == f"maxmem_session_{server.port}")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert server.fetch(target, {"confirm": "yes", "token": token})[0] == 403
    assert server.fetch(target, {"confirm": "yes", "token": token},
                 {"Cookie": f"{cookie['name']}={'0' * 32}"})[0] == 403
    # with the cookie but a token guessed
    assert server.fetch(target, {"confirm": "yes", "token": "f" * 64},
                 {"Cookie": f"{cookie['name']}={cookie['value']}"})[0] == 403
    # the right pair from another origin's page (the Origin header says so)
    assert server.fetch(target, {"confirm": "yes", "token": token},
                 {"Cookie": f"{cookie['name']}={cookie['value']}", "Origin": "http://evil.example"})[0] == 403
    # a page on another site posting a form to maxmem browse, in the same browser
    evil = EvilSite(server.url + target)
    try:
        page.goto(evil.url)
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(300)
        assert "forbidden" in page.content()  # its SameSite=Strict cookie is not sent: no access at all
    finally:
        evil.close()
    assert cli(db, capsys, "get", str(ids["lesson"])) == before


class EvilSite:
    """Another web site on loopback whose page posts a forget form to maxmem browse."""

    def __init__(self, target: str) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        html = (f'<form id="f" method="post" action="{target}"><input name="confirm" value="yes">'
                '<input name="token" value="guess"></form><script>document.getElementById("f").submit()</script>')

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = html.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://localhost:{self.httpd.server_address[1]}/"  # another site: another host name
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_read_only_server_shows_no_forms_and_refuses_writes(read_only_server, brain_db, page, capsys):
    db, ids = brain_db
    page.goto(read_only_server.url + f"maxmem/memory/{ids['decision']}")
    assert page.locator("form[method=post]").count() == 0
    assert "read-only" in page.locator(".mx-nav").inner_text()
    cookie = next(c for c in page.context.cookies() if c["name"].startswith("maxmem_session_"))
    # refused before the token is even looked at
    status, body = read_only_server.fetch(f"maxmem/memory/{ids['decision']}/pin", {"token": "x" * 64},
                         {"Cookie": f"{cookie['name']}={cookie['value']}"})
    assert status == 403 and "--read-only" in body
    assert cli(db, capsys, "get", str(ids["decision"]))["pinned"] is False


# -- who may connect -------------------------------------------------------------------


def test_only_loopback_clients_are_served(server, brain_db):
    import psutil

    listening = [c for c in psutil.net_connections(kind="tcp")
                 if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == server.port]
    assert [c.laddr.ip for c in listening] == ["127.0.0.1"]
    # bound to 127.0.0.1 itself, not to every address: another address of this machine
    # (127.0.0.2 is one, and stays on loopback) finds nothing listening
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.2", server.port), timeout=5).close()
    # a page of another name pointed at 127.0.0.1 (DNS rebinding)
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("GET", "/maxmem/search?q=backup", headers={"Host": f"evil.example:{server.port}"})
    response = connection.getresponse()
    assert response.status == 403 and b"Host must be" in response.read()
    connection.close()

    # a non-loopback peer reaching the app (a port forward or a proxy in front of it)
    # gets 403 from the whole stack, maxmem's pages and Datasette's alike. In a process
    # of its own: this one holds apsw's SQLite with sqlite-vec (maxmem/browse/worker.py).
    done = subprocess.run([sys.executable, "-c", ASGI_CHECK, str(brain_db[0])], check=False, capture_output=True,
                          text=True, timeout=120,
                          env={**os.environ, "MAXMEM_HOME": str(brain_db[0].parent / "home-asgi")})
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "192.0.2.10": 403, "10.1.2.3": 403, "::ffff:8.8.8.8": 403, "127.0.0.1": 200, "::1": 200,
        "127.0.0.1 without the token": 403, "listen 0.0.0.0": "refused"}


def test_the_printed_address_logs_the_browser_in(server, browser, tmp_path):
    from maxmem.browse.server import launcher

    context = browser.new_context()
    page = context.new_page()
    try:
        # the address without its token: nothing but a 403
        assert page.goto(server.url).status == 403 and "forbidden" in page.content()
        assert page.goto(server.url + "brain/memories.json").status == 403
        assert page.goto(server.url + "?token=" + "A" * 43).status == 403  # a token guessed
        # the printed address: the token becomes an HttpOnly, SameSite=Strict cookie, and the
        # browser lands on the address without it
        server.login(page)
        assert page.url == server.url and "token" not in page.url
        assert page.locator(".mx-nav").count() == 1
        cookie = next(c for c in context.cookies() if c["name"] == f"maxmem_access_{server.port}")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["value"] == server.token
        assert server.token not in page.evaluate("document.cookie")
        # every route serves the owner now: Datasette's JSON, its static files, the SQL page
        assert page.goto(server.url + "brain/memories.json?_size=1").status == 200
        assert page.goto(server.url + "-/static/app.css").status == 200
        assert page.goto(server.url + "brain?sql=select+1").status == 200
        # a token on a deeper address keeps the rest of the address
        page.goto(server.address.replace("/?", "/maxmem/search?q=backup&"))
        page.wait_for_url(server.url + "maxmem/search?q=backup")
        assert page.locator("tr.mx-hit").count() >= 1
        # Datasette's message page (it shows any posted text as a banner) is off, even for the owner
        assert page.goto(server.url + "-/messages").status == 403
    finally:
        context.close()
    # --open starts the browser on a private file (no token on a command line): the
    # navigation it starts is another site's, and the browser still ends up logged in
    folder = tmp_path / "open"
    folder.mkdir(mode=0o700)
    opener = launcher(folder, server.address)
    assert (folder / "open.html").stat().st_mode & 0o777 == 0o600
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(opener)
        page.wait_for_url(server.url)
        assert page.locator(".mx-nav").count() == 1
    finally:
        context.close()


PROBE = r"""
import http.client, json, sys
port, marker, pid, stolen = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
out = {"statuses": {}, "leaked": [], "cookies": [], "answers": set()}

def ask(method, path, body=None, cookie="", bearer=""):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Host": f"127.0.0.1:{port}"}
    if bearer:
        headers["Authorization"] = "Bearer " + bearer
    if body is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    if cookie:
        headers["Cookie"] = cookie
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    text = r.read().decode("utf-8", "replace")
    for value in r.headers.get_all("Set-Cookie") or []:
        out["cookies"].append(value.split(";")[0])
    out["statuses"][f"{method} {path}{' (stolen token)' if bearer or stolen in cookie + path else ''}"] = r.status
    out["answers"].add(text.strip())
    if marker in text:
        out["leaked"].append(f"{method} {path}")
    return text

ask("GET", "/")
cookie = "; ".join(out["cookies"])
for path in ["/", "/brain", "/brain/memories", "/brain/memories.json", "/brain/memories.json?_shape=array",
             "/brain/memories.csv", "/brain.json?sql=select+content+from+memories", "/brain?sql=select+1",
             "/brain/memories/1.json", "/-/messages", "/-/plugins.json", "/-/metadata.json", "/-/static/app.css",
             "/-/databases.json", "/maxmem/search?q=backup", "/maxmem/search.json?q=backup", "/maxmem/memory/1",
             "/maxmem/timeline", "/maxmem/charts", "/maxmem/jobs", "/?token=guess", "/?token="]:
    ask("GET", path, cookie=cookie)
for path, body in [("/maxmem/memory/1/forget", "confirm=yes&token=x"), ("/maxmem/memory/1/edit", "content=obey+me"),
                   ("/maxmem/memory/1/pin", ""), ("/-/messages", "message=evil&message_type=1"),
                   ("/brain/-/query", "sql=delete+from+memories")]:
    ask("POST", path, body, cookie=cookie)
# a token stolen from the owner (it never leaves the owner's terminal and browser):
# the kernel still says whose connection it is
ask("GET", "/brain/memories.json", bearer=stolen)
ask("GET", "/?token=" + stolen)
ask("GET", "/maxmem/search?q=backup", cookie=f"maxmem_access_{port}={stolen}")
ask("POST", "/maxmem/memory/1/pin", "", bearer=stolen)
out["answers"] = sorted(out["answers"])
try:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        out["cmdline"] = f.read().decode("utf-8", "replace")
except OSError as exc:
    out["cmdline"] = str(exc)
try:
    with open(f"/proc/{pid}/environ", "rb") as f:
        out["environ"] = "readable"
except OSError:
    out["environ"] = "refused"
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def other_user() -> Iterator[str]:
    """A second local account of this machine, made for the test (root only)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("making a second local user needs root (useradd)")
    if not (shutil.which("useradd") and shutil.which("runuser") and Path("/usr/bin/python3").exists()):
        pytest.skip("useradd, runuser or /usr/bin/python3 is missing")
    name = f"mxprobe{os.getpid() % 100000}"
    made = subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", name], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"useradd failed: {made.stderr.strip()}")
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], capture_output=True)


def test_another_local_user_reads_and_changes_nothing(server, brain_db, other_user, capsys, local_embedder):
    db, ids = brain_db
    with Brain.open(db, embedder=local_embedder) as brain:
        marker = brain.get(ids["lesson"]).content  # a memory's text: in no answer to the other user
        before = [(m.id, m.content, m.pinned, m.status) for m in brain.list(limit=1000)]
    done = subprocess.run(["runuser", "-u", other_user, "--", "/usr/bin/python3", "-I", "-c", PROBE,
                           str(server.port), marker, str(server.process.pid), server.token],
                          capture_output=True, text=True, timeout=300, cwd="/")
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert len(seen["statuses"]) >= 30
    assert {k: v for k, v in seen["statuses"].items() if v not in (401, 403)} == {}
    if Path("/proc/net/tcp").exists():  # Linux: refused as another user, token or not
        assert seen["answers"] == ["forbidden: maxmem browse answers only the user who started it"]
    assert seen["leaked"] == [] and seen["cookies"] == []
    assert server.token not in seen["cmdline"] and seen["environ"] == "refused"
    with Brain.open(db, embedder=local_embedder) as brain:
        assert [(m.id, m.content, m.pinned, m.status) for m in brain.list(limit=1000)] == before


ASGI_CHECK = """
import asyncio, json, sys
from pathlib import Path
from maxmem import Config, InvalidInput
from maxmem.browse import build, listen

def get(app, path, client, token="the-token"):
    sent = []
    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}
    async def send(message):
        sent.append(message)
    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": [(b"host", b"127.0.0.1:8765"), (b"authorization", b"Bearer " + token.encode())],
             "client": client, "server": ("127.0.0.1", 8765),
             "scheme": "http", "http_version": "1.1", "asgi": {"version": "3.0"}}
    asyncio.run(app(scope, receive, send))
    return next(m["status"] for m in sent if m["type"] == "http.response.start")

ds, state = build(Config(db_path=Path(sys.argv[1]), embedder="none"), read_only=True, token="the-token")
try:
    app = ds.app()
    out = {host: get(app, "/brain/memories.json", (host, 50000))
           for host in ("192.0.2.10", "10.1.2.3", "::ffff:8.8.8.8", "127.0.0.1", "::1")}
    out["127.0.0.1 without the token"] = get(app, "/brain/memories.json", ("127.0.0.1", 50000), "guess")
    try:
        listen(0, host="0.0.0.0")
        out["listen 0.0.0.0"] = "bound"
    except InvalidInput:
        out["listen 0.0.0.0"] = "refused"
    print(json.dumps(out))
finally:
    state.close()
"""


# -- Datasette's own pages over brain.db -----------------------------------------------


def test_datasette_tables_fts_export_and_read_only_sql(server, brain_db, page, capsys):
    db, _ids = brain_db
    page.goto(server.url + "brain/memories_vec?_size=3")  # the vec0 table opens (sqlite-vec loaded)
    assert "float[384] vector" in page.content()
    status, body = server.fetch("brain/memories.json?_search=Backblaze&_shape=array&_col=content")
    found = json.loads(body)
    assert status == 200 and found and all("Backblaze" in r["content"] for r in found)
    status, body = server.fetch("brain/memories.csv?_size=3&_col=category")
    assert status == 200 and body.splitlines()[0] == "id,category"
    sql = "select count(*) as n, (select vec_length(embedding) from memories_vec limit 1) as dim from memories"
    status, body = server.fetch("brain.json?" + urllib.parse.urlencode({"sql": sql, "_shape": "array"}))
    count = cli(db, capsys, "stats")["memories"]
    assert status == 200 and json.loads(body) == [{"n": count, "dim": 384}]
    status, body = server.fetch("brain.json?" + urllib.parse.urlencode({"sql": "delete from memories"}))
    assert status == 400 and cli(db, capsys, "stats")["memories"] == count
    page.goto(server.url + "brain")
    tables = page.locator("h3 a").all_inner_texts()
    assert "memories" in tables and not [t for t in tables if t.startswith("memories_vec_")]


# -- timeline, charts, jobs --------------------------------------------------------------


def test_timeline_counts_match_the_brain_and_retention(server, brain_db, page, local_embedder):
    db, ids = brain_db
    with Brain.open(db, embedder=local_embedder) as brain:
        due = plan(brain)["expired"]
        resolved = brain.get(ids["resolved"])
        decided = brain.get(ids["decision"])
    page.goto(server.url + "maxmem/timeline?days=30&ahead=7")
    today = page.locator("tr.mx-today")

    def cell(row: Any, event: str) -> int:
        text = row.locator(f"td[data-event={event}]").inner_text().strip()
        return int(text.replace(",", "") or 0)

    assert cell(today, "expiring") == due >= 1
    assert cell(page.locator(f"tr[data-day='{local_day(decided.created_at)}']"), "committed") >= 1
    resolved_day = page.locator(f"tr[data-day='{local_day(resolved.resolved_at)}']")
    assert cell(resolved_day, "resolved") >= 1
    future = sum(cell(page.locator("tr.mx-future").nth(i), "expiring") for i in range(7))
    assert future >= 1  # the daily note made 88 days ago
    page.goto(server.url + f"maxmem/timeline?day={local_day(resolved.resolved_at)}")
    assert str(ids["resolved"]) in page.locator(".mx-day-resolved").inner_text()


def local_day(value: str) -> str:
    from zoneinfo import ZoneInfo

    return datetime.fromisoformat(value).astimezone(ZoneInfo("America/New_York")).date().isoformat()


def test_charts_are_inline_svg_from_nothing_but_the_page(server, page):
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(server.url + "maxmem/charts")
    for name in ("growth", "total", "size", "pending"):
        assert page.locator(f"#mx-chart-{name} svg").count() == 1
    assert "brain.db:" in page.locator("#mx-chart-size").inner_text()
    assert all(u.startswith(server.url) for u in requests), requests  # no script from the web


def test_jobs_page_shows_what_maxmem_doctor_shows(server, brain_db, page, capsys):
    db, _ = brain_db
    code, out, _ = run_cli(["--db", str(db), "--embedder", "local", "doctor", "--json"], capsys)
    report = json.loads(out)
    page.goto(server.url + "maxmem/jobs")
    rows = page.locator("#mx-checks tr").all_inner_texts()[1:]
    label = {"ok": "ok", "warn": "WARN", "fail": "FAIL"}
    shown = [(r.split("\t")[0].strip(), r.split("\t")[1].strip()) for r in rows]
    assert shown == [(label[c["level"]], c["name"]) for c in report["checks"]]
    assert ("WARN", "last backup") in shown  # one failure is a warning; three in a row fail
    assert code == 0 and "no space left on /mnt/backup" in page.locator("#mx-runs").inner_text()


def test_reads_never_block_a_writer(server, brain_db, local_embedder):
    """The agent keeps remembering while pages are read; no write waits on the server."""
    db, _ = brain_db
    stop = threading.Event()
    statuses: list[int] = []

    def browse() -> None:
        while not stop.is_set():
            for path in ("", "maxmem/search?q=backup+NAS", "maxmem/timeline", "brain/memories.json?_size=50"):
                statuses.append(server.fetch(path)[0])

    readers = [threading.Thread(target=browse) for _ in range(2)]
    for reader in readers:
        reader.start()
    written = 0
    try:
        # A busy timeout of 1 ms: a write that had to wait for the server would fail.
        with Brain.open(db, embedder=local_embedder, config=Config(db_path=db, busy_timeout_ms=1)) as brain:
            for i in range(15):
                brain.remember(f"Writer note {i}: the sprinkler ran for {i + 3} minutes.", category="daily")
                written += 1
    finally:
        stop.set()
        for reader in readers:
            reader.join()
    assert written == 15 and len(statuses) >= 8 and set(statuses) == {200}


# -- screenshots -------------------------------------------------------------------------


def test_screenshots(server, brain_db, page, tmp_path):
    """Screenshots of the pages, for the README when MAXMEM_SCREENSHOTS names its folder."""
    _db, ids = brain_db
    folder = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    shots = {
        "overview": "",
        "search": "maxmem/search?" + urllib.parse.urlencode({"q": QUERIES[0], "explain": 1, "limit": 6}),
        "memory": f"maxmem/memory/{ids['edited']}",
        "timeline": "maxmem/timeline?days=10&ahead=5",
        "charts": "maxmem/charts",
    }
    for name, path in shots.items():
        page.goto(server.url + path)
        out = folder / f"{name}.png"
        page.screenshot(path=str(out), full_page=True)
        assert out.stat().st_size > 20_000
