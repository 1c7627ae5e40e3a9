"""Tokens found by their structure alone, whatever the vendor and whatever stands beside them.

    AKCp5e3b…(73 characters, three character classes)      a long random run on its own
    access_token$production$k7…$9f…                        parts joined by `$`
    nsec1…, …secret…1…                                     bech32 whose prefix says secret
    _shop_session=…--…, .AspNetCore.Cookies=…, SESSION=…    a long random value named a session

The mechanism: a run of token characters ([A-Za-z0-9_-]) long enough that no word,
identifier or name is that long and that random: 45 characters or more (32 when it
holds a character base58 leaves out, so it is no wallet address), capitals, small
letters and digits all present, high entropy, no word inside. A run that is a
slice of a longer base64 text (a `+`, `/` or `=` on either side), a path segment, a
digest behind its algorithm's name, a JSON Web Key's public member ("n", "x"),
the body of a certificate or public key block, a signature, the value of a name that
says what it is (an id, a cursor, a page token), base64 that starts with zero bytes (AAAA…: an SSH
public key, a length-prefixed structure), or a line of exactly the width a base64 body is
wrapped at is left: those are what logs, lockfiles and certificates are full of.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from collections.abc import Iterator

from .shapes import Hit
from .values import SECRET_HEADS, char_offset, char_offsets, looks_random, name_strength, scan, value_is_secret

__all__ = ["crypt_hits", "dollar_hits", "encoded_json_hits", "random_run_hits", "secret_json", "session_hits"]

_RUN_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_CLASSES = bytes(ord("a") if i in _RUN_BYTES else ord(" ") for i in range(256))
_MIN_RUN = 45  # longer than a Solana or Bitcoin address (≤ 44), an IPFS v0 id is 46 (Qm…)
_MIN_NOT_BASE58 = 32  # shorter runs count when they hold what base58 leaves out (0 O I l _ -): no address
_NOT_BASE58 = frozenset("0OIl_-")
_WORD_PREFIX = re.compile(r"[a-z]{2,12}[-_]")  # chatcmpl-…, resp_…: an object id under its type's name
_NEEDLE = b"a" * _MIN_NOT_BASE58
_BASE64_SIDE = frozenset(b"+/=")
_ESCAPES = frozenset(b"nrtbf")
_WRAP_WIDTHS = (60, 64, 76)  # base64 bodies wrapped at PEM / MIME widths
# A digest or a public identifier named just before the run.
_NAMED_BEFORE = re.compile(r"(?i)(?:sha\d{0,3}|md5|blake\w{0,3}|h1|xxh\d{0,3}|integrity|nonce|digest|etag|base64|"
                           r"fingerprint|ipfs|cid|commit|tx|hash|checksum|signature|sig)[\s:=,\"'-]{0,3}\Z")
# A JSON Web Key's public members: the modulus, the curve point, the certificate chain, the key id.
_PUBLIC_MEMBER = re.compile(r"""\\?["'](?:n|x|y|x5c|x5t|x5t#S256|kid)\\?["']\s{0,4}:\s{0,4}\[?\s{0,4}\\?["']\Z""")
_BECH32_SECRET = re.compile(r"[a-z]{0,10}(?:sec|prv|priv|secret)[a-z]{0,10}1[a-z0-9]{38,200}\Z")


_UPPER = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = b"abcdefghijklmnopqrstuvwxyz"
_DIGITS = b"0123456789"


def _classes(token: str | bytes) -> bool:
    """Three of each: capitals, small letters, digits (AC + 32 hex, a Twilio id, has two capitals)."""
    data = token if isinstance(token, bytes) else token.encode("ascii", "ignore")
    n = len(data)
    return (n - len(data.translate(None, _UPPER)) >= 3 and n - len(data.translate(None, _LOWER)) >= 3
            and n - len(data.translate(None, _DIGITS)) >= 3)


# The name a value is given (JSON, YAML, config, a query): "next_page_token": "…", cursor=…
_NAME_BEFORE = re.compile(r"""([A-Za-z][A-Za-z0-9_.-]{0,63})\\{0,3}["']?\s{0,4}[:=]\s{0,4}\\{0,3}["']?\Z""")
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
_ID_NAMES = frozenset({"id", "ids", "cursor", "etag", "hash", "digest", "checksum", "nonce", "sha", "uuid", "guid", "ref",
                       "version", "revision", "rev", "commit", "signature", "sig", "integrity", "fingerprint", "address",
                       "addr", "wallet", "url", "uri", "path", "file", "name", "slug", "handle"})


def _named_not_secret(text: str, start: int) -> bool:
    """Whether the value at `start` is given a name that says what it is, and not a secret:
    an id, a cursor, a digest, a page token, a sort key."""
    window = text[max(0, start - 8):start]
    if not start or text[start - 1] not in "\"'=: \t" or ("=" not in window and ":" not in window):
        return False
    match = _NAME_BEFORE.search(text, max(0, start - 72), start)
    if not match:
        return False
    words = [w.lower() for w in _NAME_WORDS.findall(match.group(1))]
    if not words:
        return False
    if words[-1] in _ID_NAMES or match.group(1).lower() in _ID_NAMES:
        return True  # a cursor, an ETag: the name says what the value is
    return any(w in SECRET_HEADS for w in words) and name_strength(match.group(1)) is None


def _armoured_public(token: str) -> bool:
    """LS0tLS1CRUdJTi…: base64 of -----BEGIN …; a certificate or public key (kubeconfig's
    certificate-authority-data), unless what begins is a private key."""
    if not token.startswith("LS0tLS1CRUdJTi"):
        return False
    head = token[:64]
    try:
        decoded = base64.b64decode(head[: len(head) // 4 * 4])
    except (binascii.Error, ValueError):
        return False
    return b"PRIVATE" not in decoded


def _line_starts(text: str, at: int) -> bool:
    """Whether a line starts at `at` (after a line break, or an escaped one in JSON)."""
    return at == 0 or text[at - 1] == "\n" or text.startswith("\\n", at - 2)


_PUBLIC_LABELS = ("PUBLIC", "CERTIFICATE", "X509", "TRUSTED", "PKCS7", "CMS", "SSH2 PUBLIC", "PGP PUBLIC", "PGP SIGNATURE")


def _public_blocks(text: str) -> tuple[list[int], list[int]]:
    """Where armoured blocks of public material (a certificate, a public key) start and end,
    in order; an unclosed one runs to the end. One scan: each marker is looked for once."""
    starts: list[int] = []
    ends: list[int] = []
    close = -1
    at = text.find("-----BEGIN ")
    while at >= 0:
        if close != len(text) and close < at:
            close = text.find("-----END ", at)
            close = len(text) if close < 0 else close
        if text.startswith(_PUBLIC_LABELS, at + 11):
            starts.append(at)
            ends.append(close)
        at = text.find("-----BEGIN ", max(at + 11, close) if close < len(text) else at + 11)
    return starts, ends


def _inside(blocks: tuple[list[int], list[int]], at: int) -> bool:
    starts, ends = blocks
    index = bisect.bisect_right(starts, at) - 1
    return index >= 0 and at < ends[index]


def _judge(text: str, start: int, end: int, blocks: tuple[list[int], list[int]]) -> Hit | None:
    token = text[start:end]
    if _BECH32_SECRET.match(token):
        return Hit("private-key", start, end, "bech32 secret key (its prefix says secret)")
    if end - start in _WRAP_WIDTHS and _line_starts(text, start) and (end == len(text) or text[end] in "\r\n\\"):
        return None
    if end - start < _MIN_RUN and (_NOT_BASE58.isdisjoint(token) or _WORD_PREFIX.match(token)):
        return None
    if token.startswith(("Qm", "AAAA")) or _inside(blocks, start) or _armoured_public(token):
        return None
    flat = token.replace("-", "").replace("_", "")
    if not looks_random(flat, _MIN_NOT_BASE58 - 4):
        return None
    if (_NAMED_BEFORE.search(text, max(0, start - 14), start) or (text[start - 1:start] in ("\"", "'") and _PUBLIC_MEMBER.search(text, max(0, start - 16), start))
            or _named_not_secret(text, start)):
        return None
    return Hit("token", start, end, "long random token (three character classes, no word)")


# The key's own name glued before its secret: appId.keyId:secret (one string, one key).
_KEY_NAME_GLUED = re.compile(r"(?<![\w.:/@-])[A-Za-z0-9_-]{3,24}\.[A-Za-z0-9_-]{3,24}:\Z")


def random_run_hits(text: str, data: bytes | None = None) -> Iterator[Hit]:
    """Runs of 32+ token characters random enough to be a key, standing on their own
    (`data`: `text` in UTF-8, when encoded already)."""
    if data is None:
        data = text.encode("utf-8", "surrogatepass")
    classes = data.translate(_CLASSES)
    n = len(data)
    same = n == len(text)
    blocks = _public_blocks(text) if "-----BEGIN " in text else ([], [])
    find = classes.find
    pos = find(_NEEDLE)
    while pos >= 0:
        end = find(b" ", pos + _MIN_NOT_BASE58)
        if end < 0:
            end = n
        before = data[pos - 1] if pos else 32
        after = data[end] if end < n else 32
        start = pos + 1 if before == 92 and data[pos] in _ESCAPES else pos  # \n glued to the run
        if before not in _BASE64_SIDE and after not in _BASE64_SIDE and before != 47 and end - start >= _MIN_NOT_BASE58:
            token = data[start:end]
            if _classes(token) or _BECH32_SECRET.match(token.decode()):
                at = start if same else char_offset(data, start)
                hit = _judge(text, at, at + end - start, blocks)
                if hit:
                    named = _KEY_NAME_GLUED.search(text, max(0, hit.start - 50), hit.start)
                    yield Hit(hit.kind, named.start(), hit.end, hit.rule) if named else hit
        pos = find(_NEEDLE, end)


# Parts joined by `$`: kind$environment$id$secret (Braintree-style access tokens).
_DOLLAR = re.compile(r"[A-Za-z][A-Za-z0-9_]{1,30}(?:\$[A-Za-z0-9_]{2,80}){2,6}(?![A-Za-z0-9_$])")


def dollar_hits(text: str) -> Iterator[Hit]:
    """A word and two or more parts joined by `$` whose last parts are random."""
    at = text.find("$")
    while at >= 0:
        start = at
        while start > 0 and at - start < 31 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        match = _DOLLAR.match(text, start) if start < at and (start == 0 or text[start - 1] not in "$\\") else None
        if match:
            parts = match.group(0).split("$")
            body = "".join(parts[2:])
            if len(body) >= 24 and looks_random(body, 24):
                yield Hit("token", match.start(), match.end(), "token of parts joined by $")
            at = text.find("$", match.end())
        else:
            at = text.find("$", at + 1)


# A password's hash in crypt's format (htpasswd, /etc/shadow, a users table): $id$[params$]salt$hash.
# Offline it gives the password up to a guess, so it goes; a bare "$2b$12$" prefix stays.
_CRYPT = re.compile(r"(?<![\w$])\$(?:1|2[abxy]|5|6|7|apr1|y|gy|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha\d{1,3})?)"
                    r"\$(?:[\w.,=+/-]{1,64}\$){0,3}[A-Za-z0-9./+]{16,120}={0,2}(?![\w$])")


def crypt_hits(text: str) -> Iterator[Hit]:
    """A password hash in crypt's format: $apr1$…$…, $6$…$…, $2b$12$…, $argon2id$…$…$…."""
    at = text.find("$")  # each match starts at a $: tried there only (a search tries every place)
    while at >= 0:
        match = _CRYPT.match(text, at)
        if match is None:
            at = text.find("$", at + 1)
            continue
        body = match.group(0).rsplit("$", 1)[-1]
        if looks_random(body.rstrip("="), 16):
            yield Hit("password", match.start(), match.end(), "password hash in crypt's format")
        at = text.find("$", match.end())


# base64 of a JSON object ({" → eyJ, {\n → ewo, {\r\n → ew0K): a Kubernetes
# .dockerconfigjson, GOOGLE_CREDENTIALS=ewogICJ0eXBlIjog…; a JWT's parts are dotted.
_JSON_HEADS = (b"eyJ", b"ewo", b"ew0K")
_ENCODED_JSON = re.compile(rb"(?:eyJ|ewo|ew0K)[A-Za-z0-9+/_-]{36,40000}={0,2}")
# {"auths": … (a registry's credentials: .dockerconfigjson, DOCKER_AUTH_CONFIG), however
# cut: its first member says what the rest holds.
_DOCKER_AUTHS = (b"eyJhdXRocyI6", b"eyAiYXV0aHMiOi", b"ewogICJhdXRocyI6", b"ewoJImF1dGhzIjo")
_FIRST_MEMBER = re.compile(r'\{\s{0,8}"([\w.-]{1,80})"\s{0,4}:')
_MEMBER = re.compile(r'"([\w.-]{1,80})"\s{0,4}:\s{0,4}"([^"\\]{1,4096})"')


def encoded_json_hits(text: str, data: bytes | None = None) -> Iterator[Hit]:
    """base64 that decodes to a JSON object with a secret-named member holding a value
    (`data`: `text` in UTF-8, when encoded already): the whole encoded text goes."""
    if data is None:
        data = text.encode("utf-8", "surrogatepass")
    same = len(data) == len(text)
    for head in _JSON_HEADS:
        at = data.find(head)
        while at >= 0:
            match = _ENCODED_JSON.match(data, at) if not at or data[at - 1] not in _RUN_BYTES else None
            end = match.end() if match else at + len(head)
            if match and data[end:end + 1] != b"." and (match.group(0).startswith(_DOCKER_AUTHS)
                                                       or secret_json(match.group(0))):
                start = at if same else char_offset(data, at)
                yield Hit("secret", start, start + end - at, "base64 of JSON holding a secret-named member")
            at = data.find(head, end)


def secret_json(encoded: bytes) -> bool:
    """base64 `encoded` decodes to JSON with a secret-named member holding a secret value."""
    body = encoded.rstrip(b"=")
    try:
        decoded = base64.b64decode(body + b"=" * (-len(body) % 4), altchars=b"-_" if b"-" in body or b"_" in body
                                   else None)
    except (binascii.Error, ValueError):
        return False
    readable = decoded.decode("utf-8", "replace")
    for member in _MEMBER.finditer(readable):
        strength = name_strength(member.group(1))
        if strength and value_is_secret(member.group(2), strength, quoted=True, literal=True):
            return True  # {"auths": {…: {"auth": "…"}}}, {"private_key": "-----BEGIN …"}
    first = _FIRST_MEMBER.match(readable)
    if first and (first.group(1) == "auths" or name_strength(first.group(1))) and "\ufffd" in readable:
        return True  # {"auths":{"… then bytes no JSON holds: a credential that is not text (or cut off)
    return False


# A session handed over as a value, whatever the framework: the name says session or
# cookie (_shop_session=, .AspNetCore.Cookies=, TELEGRAM_SESSION=, connect.sid=, a
# Pyrogram session_string: "…") and the value is long and random. Whoever holds it is
# signed in. A session's id in a log (a UUID, 32 hex) is no such value.
_SESSION_WORDS = ("sess", "sid", "cookie")
_SESSION_AFTER = re.compile(r"[\w.-]{0,24}\\?[\"']?\s{0,2}[=:]\s{0,2}\\?[\"']?(?![0-9a-fA-F]{8}-[0-9a-fA-F]{4}-)(?P<value>[A-Za-z0-9+/_%.-]{32,8000}={0,2})")
_SESSION_BEFORE = re.compile(r"[\w.-]{0,40}\Z")
_SEPARATORS = str.maketrans("", "", "-_.%/+=")


def session_hits(text: str, lowered: str, data: bytes) -> Iterator[Hit]:
    """The value of a name that says session or cookie, when it is long and random."""
    for word in _SESSION_WORDS:
        places = scan(data, word.encode())  # in the bytes, found once for every rule that looks
        resume = 0
        for at in places if len(data) == len(text) else char_offsets(data, places):
            if at < resume:
                continue
            resume = at + len(word)
            if ((word == "sid" and at and lowered[at - 1].isalpha())  # inside, consider: no session's id
                    or (word == "sess" and lowered[at + 4:at + 5].isalpha()
                        and not lowered.startswith(("ion", "id"), at + 4))):  # assessment, obsessed
                continue
            match = _SESSION_AFTER.match(text, at + len(word))
            if match and _session_value(match.group("value")) and not _tls_session_id(text, at, match):
                head = _SESSION_BEFORE.search(text, max(0, at - 40), at)
                name = text[head.start() if head else at:match.start("value")].strip(" \t=:\"'\\")
                yield Hit("session", match.start("value"), match.end("value"), f"session value ({name})")
                resume = match.end()


_TLS_NEAR = 300


def _tls_session_id(text: str, at: int, match: re.Match[str]) -> bool:
    """Session-ID: … beside Master-Key: … (openssl s_client, sess_id): a TLS session's id,
    sent in the clear in every handshake; the master key beside it is the secret."""
    if not text.startswith("ion-ID", at + 4) or text[at + 10:at + 11] not in (":", " "):
        return False
    around = text[max(0, at - _TLS_NEAR):match.end() + _TLS_NEAR]
    return "Master-Key:" in around or "SSL-Session:" in around


def _session_value(value: str) -> bool:
    flat = value.translate(_SEPARATORS)
    if len(flat) < 32 or _UUID_LIKE.fullmatch(value) or value.startswith("[REDACTED"):
        return False
    if not _classes(flat) and len(flat) < 64:
        return False  # 32 hex: a session's id in a log, a trace id
    return looks_random(flat[:200], 32)


_UUID_LIKE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
