"""Credentials in the formats that hold them in known places.

    Cookie: sessionid=…                                   db.example.com:5432:app:alice:pw
    "github-oauth": {"github.com": "…"}                   alice:pw@tcp(localhost:3306)/app

The values of a cookie header (or curl -b), the password field of a .pgpass line, the
token of each host in composer's auth.json, the password of Go's MySQL data source name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .arguments import (
    offsets_of,
    pair_password,
    pattern_starts,
    secret_argument,
)
from .shapes import Hit
from .values import (
    char_offsets,
    find_words,
    is_placeholder,
    looks_random,
    may_hold,
    text_words,
)

__all__ = ["cookie_hits", "dsn_hits", "host_map_hits", "pgpass_hits", "userlist_hits"]


# a header, curl's flag, or a member named cookies (Sentry's request, a HAR export): "cookies": "a=…; b=…"
_COOKIE = re.compile(r"(?i)(?:set-)?cookies?[\"']?\s{0,4}[:=]\s{0,4}[\"']?|(?:\s-b|--cookie)\s{1,4}[\"']?")
def _cookie_places(lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[int]:
    present = [w for w in ("cookie", "cookies", " -b ") if w.strip(" -").encode() in words]
    for at, word in find_words(lowered, data, present):
        yield at - 4 if word == "cookie" and lowered.startswith("set-", at - 4) else at


_PAIR = re.compile(r"""\s{0,2}(?P<name>[\w.$%!#&*+^`|~-]{1,128})=(?P<value>[^;,\s"'\\]{1,4096})\s{0,2}""")
# Analytics and preference cookies: counters and choices, not sessions (_ga=GA1.1.…, theme=dark).
_NOT_SESSION = re.compile(r"(?i)_?(?:ga|gid|gat|gcl_\w{1,8}|fbp|fbc|hj\w{0,24}|utm\w{0,8}|__utm\w|pk_id\.\S{1,16}|"
                          r"_pk_\w{1,16}|ajs_anonymous_id|mp_\w{1,40}|theme|lang|language|locale|consent|cookie_?consent|"
                          r"prefs?|preferences|tz|timezone|currency|country|region)(?:_[\w-]{1,24})?")
_CHOICES = re.compile(r"[A-Za-z]{2,24}(?:(?:%2[Cc]|,|\+|%20|-|_)[A-Za-z]{2,24}){0,12}")
_SESSION = re.compile(r"(?i)sess|sid\b|auth|token|jwt|login|remember|sso|csrf|xsrf|secret|key|identity|user_session|_gh_sess")


def cookie_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterator[Hit]:
    """Cookie / Set-Cookie headers, curl -b, document.cookie: each session-like value."""
    for at in _cookie_places(lowered, data, words):
        match = _COOKIE.match(text, at)
        if match is None:
            continue
        pos = match.end()
        for _ in range(32):
            pair = _PAIR.match(text, pos)
            if not pair:
                break
            value, name = pair.group("value"), pair.group("name")
            if (len(value) >= 8 and not is_placeholder(value) and not _NOT_SESSION.fullmatch(name)
                    and not _CHOICES.fullmatch(value)
                    and (looks_random(value, 16) or _SESSION.search(name) and any(c.isdigit() for c in value))):
                yield Hit("secret", pair.start("value"), pair.end("value"), f"cookie {name}")
            pos = pair.end()
            if not text.startswith(";", pos) or lowered.startswith("set-cookie", match.start()):
                break  # Set-Cookie: one cookie, then its attributes (Path=/, Max-Age=…)
            pos += 1


# ~/.pgpass: hostname:port:database:username:password, one entry a line.
_PORT_FIELD = re.compile(r":\d{1,5}:[\w.*-]{1,64}:[\w.@*-]{1,64}:[^\s:]")  # host:port:db:user:pw
_PGPASS = re.compile(r"(?<![\w.*:-])[\w.*-]{1,253}:(?:\d{1,5}|\*):[\w.*-]{1,64}:[\w.@*-]{1,64}:"
                     r"(?P<secret>(?:\\[:\\]|[^\s:\"'\\]){1,256})(?=[\s\"']|\\[nrt\"']|\Z)")  # \: and \\ escaped


_PORT_FIELD_BYTES = re.compile(_PORT_FIELD.pattern.replace(r"\w", "a-zA-Z0-9_").encode())


def pgpass_hits(text: str, lowered: str, data: bytes | None = None,
                words: frozenset[bytes] | None = None) -> Iterator[Hit]:
    """The password field of .pgpass lines (the file named, or a line with a * field;
    `data`: `lowered` in UTF-8, where the gate is looked for, and `words` its words, when given)."""
    if data is None:
        data = lowered.encode("utf-8", "surrogatepass")
    if words is None:
        words = text_words(data)
    if (not (may_hold(words, b"pgpass") and b"pgpass" in data) and b":*:" not in data
            and not _PORT_FIELD_BYTES.search(data)):
        return
    for match in _PGPASS.finditer(text):
        if secret_argument(match.group("secret")):
            yield Hit("password", match.start("secret"), match.end("secret"), ".pgpass password field")


# PgBouncer's userlist.txt (and files like it): "user" "password" alone on a line; the
# password written plain, or as the md5 / SCRAM verifier that logs in just the same.
_USERLIST = re.compile(r'(?m)^[ \t]{0,8}"[\w.@-]{1,64}"[ \t]{1,8}"(?P<secret>[^"\s]{6,512})"[ \t]*$')
_VERIFIER = re.compile(r"md5[0-9a-f]{32}|SCRAM-SHA-256\$\d{1,6}:[A-Za-z0-9+/=]{8,64}\$[A-Za-z0-9+/=:]{40,200}")


def userlist_hits(text: str) -> Iterator[Hit]:
    """The password (or its verifier) of a "user" "password" line."""
    for match in _USERLIST.finditer(text):
        value = match.group("secret")
        if _VERIFIER.fullmatch(value) or pair_password(value):
            yield Hit("password", match.start("secret"), match.end("secret"), "password of a \"user\" \"password\" line")


# Go's MySQL driver: user:password@tcp(host:port)/db, user:password@unix(/path)/db.
_GO_DSN_USER = re.compile(r"""(?:^|(?<=[\s"'`=(]))[\w.$-]{1,64}:(?P<secret>[^\s@"'`]{1,128})\Z""")


_DSN_STARTS = re.compile(rb"@(?=tcp\(|unix\()")


def dsn_hits(text: str, data: bytes) -> Iterator[Hit]:
    """The password of a `user:password@tcp(…)` data source name (Go's MySQL driver)."""
    starts = pattern_starts(data, _DSN_STARTS)
    for needle in (b"@tcp(", b"@unix("):
        places = [at for at in starts if data.startswith(needle, at)]
        for at in places if len(data) == len(text) else char_offsets(data, places):
            user = _GO_DSN_USER.search(text, max(0, at - 200), at)
            if user and secret_argument(user.group("secret")):
                yield Hit("url-password", user.start("secret"), user.end("secret"), "password in a user:password@tcp(…) DSN")


# composer's auth.json: a secret-named object whose members are hosts, each given its token
# ("github-oauth": {"github.com": "…"}, "gitlab-token": {…}, "bearer": {…}).
_HOST_MAP = re.compile(r"""(?P<name>[\w-]{0,24}(?:oauth|token|bearer|auth))\\?"[ \t]{0,4}:[ \t]{0,4}\{[ \t\r\n]{0,40}"""
                       r"""\\?"[\w-]{1,63}(?:\.[\w-]{1,63}){1,6}(?::\d{1,5})?\\?"[ \t]{0,4}:[ \t]{0,4}\\?"(?P<v>[^"\\\s]{8,256})\\?\"""",
                       re.IGNORECASE)
_HOST_MAP_NEEDLES = (("oauth\"", "auth"), ("token\"", "token"), ("bearer\"", "bearer"), ("auth\"", "auth"))


def host_map_hits(text: str, data: bytes) -> Iterator[Hit]:
    """The token of each host under a secret-named object (composer's auth.json)."""
    for needle, base in _HOST_MAP_NEEDLES:  # read off the offsets of auth and token, found anyway
        for at in offsets_of(data, needle, len(text), base) if base.encode() in data else ():
            begin = at
            while begin > 0 and at - begin < 24 and (text[begin - 1].isalnum() or text[begin - 1] in "_-"):
                begin -= 1
            match = _HOST_MAP.match(text, begin)
            if match and (looks_random(match.group("v"), 16) or pair_password(match.group("v"))) and secret_argument(match.group("v")):
                yield Hit("token", match.start("v"), match.end("v"), f"token of a host under {match.group('name')}")
