"""Who may talk to `maxmem browse`, and which writes are really the person's.

Three checks, each for its own attack:

- the socket is bound to 127.0.0.1 (server.py), and `loopback_only` answers 403 to
  any request whose peer is not a loopback address (a proxy or a port forward put
  in front of it by mistake);
- the Host header must name this machine (127.0.0.1, localhost, [::1]): a page on
  another site whose name was re-pointed to 127.0.0.1 (DNS rebinding) is refused,
  so it cannot read memories as same-origin;
- every write carries a token tied to this browser session (`Session`): a form
  posted from another site, or by anything that did not load a page of this
  server, is refused. Datasette's own CSRF check skips requests without cookies,
  which is exactly what a cross-site POST carries under SameSite cookies, so the
  maxmem routes do their own.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

Scope = Mapping[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Any, Receive, Send], Awaitable[None]]

LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")


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
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    if not local_host_header(headers.get("host")):
        return "Host must be 127.0.0.1 or localhost: open the address maxmem browse printed"
    return None


def loopback_only(app: ASGIApp) -> ASGIApp:
    """ASGI middleware: 403 for a non-loopback peer or a foreign Host header."""

    async def guarded(scope: Any, receive: Receive, send: Send) -> None:
        if scope.get("type") in ("http", "websocket"):
            reason = refusal(scope)
            if reason is not None:
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                body = f"forbidden: {reason}\n".encode()
                await send({"type": "http.response.start", "status": 403,
                            "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

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
