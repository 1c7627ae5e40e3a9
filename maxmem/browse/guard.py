"""Who may talk to `maxmem browse`, and which writes are really the person's.

Four checks, each for its own attack:

- the socket is bound to 127.0.0.1 (server.py), and `owner_only` answers 403 to
  any request whose peer is not a loopback address (a proxy or a port forward put
  in front of it by mistake);
- the Host header must name this machine (127.0.0.1, localhost, [::1]): a page on
  another site whose name was re-pointed to 127.0.0.1 (DNS rebinding) is refused,
  so it cannot read memories as same-origin;
- every request proves it comes from the person who started the server (`Access`):
  a random token made for each run is in the address `maxmem browse` prints (and
  opens with --open); the browser trades it for an HttpOnly, SameSite=Strict cookie
  and goes on to the same address without it. Any other request, from another user
  or process of this machine that can reach 127.0.0.1, is refused (403) before
  Datasette or a maxmem page sees it: tables, JSON, CSV, SQL, the `/-/` pages and
  static files alike. On Linux the kernel's socket table also names the user at the
  other end of the connection (`peer_uid`): another user is refused even with the
  token (a browser sends the cookie to every port of 127.0.0.1, so a page another
  user serves there could collect it). Datasette's `/-/messages` page (which shows any
  text posted to it as a banner) is refused for everyone;
- every write carries a token tied to this browser session (`Session`): a form
  posted from another site, or by anything that did not load a page of this
  server, is refused. Datasette's own CSRF check skips requests without cookies,
  which is exactly what a cross-site POST carries under SameSite cookies, so the
  maxmem routes do their own.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import ipaddress
import json
import os
import secrets
import socket
import sys
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

Scope = Mapping[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Any, Receive, Send], Awaitable[None]]

LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")
TOKEN_PARAM = "token"
LANDING_POLICY = b"default-src 'none'; script-src 'unsafe-inline'; frame-ancestors 'none'"
REFUSED_PATHS = ("/-/messages",)  # Datasette's page that shows whatever text is posted to it


def is_loopback(host: str | None) -> bool:
    """127.0.0.0/8 or ::1 (an IPv4-mapped ::ffff:127.x too)."""
    if not host:
        return False
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool((mapped or address).is_loopback)


def local_host_header(value: str | None) -> bool:
    """A Host header that names this machine, with or without a port."""
    if not value:
        return False
    host = value.strip().lower()
    if host.startswith("["):
        name = host[: host.find("]") + 1] if "]" in host else host
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name in LOCAL_NAMES or is_loopback(name)


def refusal(scope: Scope) -> str | None:
    """Why this request must be refused, or None."""
    client = scope.get("client")
    if not client or not is_loopback(str(client[0])):
        return "maxmem browse answers only on this machine (127.0.0.1)"
    if not local_host_header(headers_of(scope).get("host")):
        return "Host must be 127.0.0.1 or localhost: open the address maxmem browse printed"
    return None


class Access:
    """The token of one run of the server, and the cookie a browser keeps it in.

    The cookie is named after the port (cookies are shared by every port of a host: two
    servers keep their own), HttpOnly (no script reads it) and SameSite=Strict (no other
    site's page sends it). Tokens are compared in constant time."""

    def __init__(self, port: int, token: str | None = None, owner: int | None = None) -> None:
        self.cookie = f"maxmem_access_{port}"
        self.token = token or secrets.token_urlsafe(32)
        self.owner = os.geteuid() if owner is None and hasattr(os, "geteuid") else owner

    def url(self, base: str) -> str:
        """`base` (ending in /) with this run's token: the address to open."""
        return f"{base}?{TOKEN_PARAM}={self.token}"

    def matches(self, value: str | None) -> bool:
        return bool(value) and hmac.compare_digest(str(value).encode(), self.token.encode())

    def granted(self, headers: Mapping[str, str]) -> bool:
        """The request carries this run's cookie, or its token as `Authorization: Bearer`."""
        scheme, _, credential = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self.matches(credential.strip()):
            return True
        return self.matches(cookies(headers.get("cookie", "")).get(self.cookie))


def peer_uid(client: Any, server: Any, tables: tuple[str, ...] = ("/proc/net/tcp", "/proc/net/tcp6")) -> int | None:
    """The user id owning the client end of a loopback TCP connection, from the kernel's
    socket table (Linux); None where it cannot be told (another system, no such line)."""
    if not client or not server:
        return None
    try:
        wanted = (_proc_address(str(client[0]), int(client[1])), _proc_address(str(server[0]), int(server[1])))
    except (OSError, ValueError):
        return None
    for table in tables:
        try:
            with open(table, encoding="ascii") as lines:
                next(lines, None)  # the header
                for line in lines:
                    fields = line.split()
                    if len(fields) > 7 and (fields[1], fields[2]) in (wanted, _mapped(wanted)):
                        return int(fields[7])
        except (OSError, ValueError):
            continue
    return None


def _proc_address(host: str, port: int) -> str:
    """host:port as /proc/net/tcp{,6} prints it: each 32-bit word of the address in the
    machine's byte order, in hex, then the port in hex."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    packed = socket.inet_pton(family, host.strip("[]"))
    words = "".join(f"{int.from_bytes(packed[i:i + 4], sys.byteorder):08X}" for i in range(0, len(packed), 4))
    return f"{words}:{port:04X}"


def _mapped(pair: tuple[str, str]) -> tuple[str, str]:
    """An IPv4 pair as a dual-stack socket's table line shows it (::ffff:a.b.c.d)."""
    prefix = f"{0:08X}{0:08X}{int.from_bytes(bytes([0, 0, 0xff, 0xff]), sys.byteorder):08X}"
    return tuple(prefix + half if len(half) == 13 else half for half in pair)  # type: ignore[return-value]


def cookies(header: str) -> dict[str, str]:
    """The name=value pairs of a Cookie header (the first of a name wins)."""
    out: dict[str, str] = {}
    for part in header.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name not in out:
            out[name] = value.strip().strip('"')
    return out


def without_token(query: str) -> tuple[str | None, str]:
    """The token given in a query string (None: none), and the query string without it."""
    token, kept = None, []
    for piece in query.split("&") if query else []:
        name = urllib.parse.unquote_plus(piece.partition("=")[0])
        if name == TOKEN_PARAM:
            token = urllib.parse.unquote_plus(piece.partition("=")[2])
        else:
            kept.append(piece)
    return token, "&".join(kept)


def headers_of(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


async def respond(send: Send, status: int, body: str, headers: list[tuple[bytes, bytes]] | None = None,
                  content_type: bytes = b"text/plain; charset=utf-8") -> None:
    data = body.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type), (b"content-length", str(len(data)).encode()),
                            (b"cache-control", b"no-store"), (b"referrer-policy", b"no-referrer"),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


def landing(access: Access, target: str) -> tuple[str, list[tuple[bytes, bytes]]]:
    """The page that trades a good token for the cookie, then goes on to `target` (the
    address without the token). A page of this server, not a 30x: a SameSite=Strict
    cookie is sent on a navigation this site starts, whatever page opened the token's
    address (the file --open writes, a terminal, a link)."""
    cookie = f"{access.cookie}={access.token}; Path=/; HttpOnly; SameSite=Strict"
    quoted = html.escape(target, quote=True)
    script = "location.replace(" + json.dumps(target).replace("<", "\\u003c") + ")"
    page = (f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={quoted}">'
            f'<title>maxmem browse</title><script>{script}</script><a href="{quoted}">maxmem browse</a>\n')
    return page, [(b"set-cookie", cookie.encode()), (b"x-frame-options", b"DENY"),
                  (b"content-security-policy", LANDING_POLICY)]


def owner_only(app: ASGIApp, access: Access) -> ASGIApp:
    """ASGI middleware: 403 for a non-loopback peer, a foreign Host header, or a request
    without this run's token (`Access`); the token in a query string is traded for the
    cookie. Datasette's /-/messages is refused to everyone."""

    async def guarded(scope: Any, receive: Receive, send: Send) -> None:
        if scope.get("type") not in ("http", "websocket"):
            await app(scope, receive, send)
            return
        headers = headers_of(scope)
        given, rest = without_token(scope.get("query_string", b"").decode("latin-1"))
        reason = refusal(scope)
        if reason is None and access.owner is not None:
            uid = peer_uid(scope.get("client"), scope.get("server"))
            if uid is not None and uid != access.owner:
                reason = "maxmem browse answers only the user who started it"
        if reason is None and "/" + str(scope.get("path", "")).strip("/") in REFUSED_PATHS:
            reason = "this Datasette page is off in maxmem browse"
        if reason is None and given is not None and scope["type"] == "http" and scope.get("method") in ("GET", "HEAD"):
            if not access.matches(given):
                reason = "the token is not this server's: open the address maxmem browse printed"
            else:
                raw = scope.get("raw_path")
                path = raw.decode("latin-1") if raw else urllib.parse.quote(str(scope.get("path") or "/"))
                path = "/" + path.lstrip("/\\")  # never //host or /\host: the landing page goes nowhere else
                page, cookie = landing(access, path + (f"?{rest}" if rest else ""))
                await respond(send, 200, page, cookie, b"text/html; charset=utf-8")
                return
        if reason is None and not access.granted(headers):
            reason = "open the address maxmem browse printed (it carries this run's token)"
        if reason is None:
            await app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            await respond(send, 403, f"forbidden: {reason}\n")

    return guarded


class Session:
    """Per-browser-session tokens for the tending forms.

    The browser gets a random session id in an HttpOnly, SameSite=Strict cookie (named
    after the port: two servers on one machine keep their own); the forms carry
    HMAC(secret, session id) with a secret made when the server started. A write is
    accepted only with both, so a token copied from one session, or from before a
    restart, is refused.
    """

    def __init__(self, port: int, secret: bytes | None = None) -> None:
        self.cookie = f"maxmem_session_{port}"
        self._secret = secret or secrets.token_bytes(32)

    @staticmethod
    def new_id() -> str:
        return secrets.token_hex(16)

    def token(self, session_id: str) -> str:
        return hmac.new(self._secret, session_id.encode(), hashlib.sha256).hexdigest()

    def valid(self, session_id: str | None, token: str | None) -> bool:
        if not session_id or not token:
            return False
        return hmac.compare_digest(self.token(session_id), token)


def same_origin(headers: Mapping[str, str]) -> bool:
    """A form post's Origin (when the browser sends one) is this server's own."""
    origin = headers.get("origin")
    if origin is None:
        return True
    host = headers.get("host", "")
    return origin in (f"http://{host}", f"https://{host}")
