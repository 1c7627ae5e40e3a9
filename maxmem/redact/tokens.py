"""Tokens found by their structure alone, whatever the vendor and whatever stands beside them.

    AKCp5e3b…(73 characters, three character classes)      a long random run on its own
    access_token$production$k7…$9f…                        parts joined by `$`
    nsec1…, …secret…1…                                     bech32 whose prefix says secret

The mechanism: a run of token characters ([A-Za-z0-9_-]) long enough that no word,
identifier or name is that long and that random: 45 characters or more, capitals,
small letters and digits all present, high entropy, no word inside. A run that is a
slice of a longer base64 text (a `+`, `/` or `=` on either side), a path segment, a
digest behind its algorithm's name, a JSON Web Key's public member ("n", "x"),
the body of a certificate or public key block, a signature, base64 that starts with zero bytes (AAAA…: an SSH
public key, a length-prefixed structure), or a line of exactly the width a base64 body is
wrapped at is left: those are what logs, lockfiles and certificates are full of.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .shapes import Hit
from .values import looks_random

__all__ = ["dollar_hits", "random_run_hits"]

_RUN_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_CLASSES = bytes(ord("a") if i in _RUN_BYTES else ord(" ") for i in range(256))
_MIN_RUN = 45  # longer than a Solana or Bitcoin address (≤ 44), an IPFS v0 id is 46 (Qm…)
_NEEDLE = b"a" * _MIN_RUN
_BASE64_SIDE = frozenset(b"+/=")
_ESCAPES = frozenset(b"nrtbf")
_WRAP_WIDTHS = (60, 64, 76)  # base64 bodies wrapped at PEM / MIME widths
# A digest or a public identifier named just before the run.
_NAMED_BEFORE = re.compile(r"(?i)(?:sha\d{0,3}|md5|blake\w{0,3}|h1|xxh\d{0,3}|integrity|nonce|digest|etag|base64|"
                           r"fingerprint|ipfs|cid|commit|tx|hash|checksum|signature|sig)[\s:=,\"'-]{0,3}\Z")
# A JSON Web Key's public members: the modulus, the curve point, the certificate chain, the key id.
_PUBLIC_MEMBER = re.compile(r"""\\?["'](?:n|x|y|x5c|x5t|x5t#S256|kid)\\?["']\s{0,4}:\s{0,4}\[?\s{0,4}\\?["']\Z""")
_BECH32_SECRET = re.compile(r"[a-z]{0,10}(?:sec|prv|priv|secret)[a-z]{0,10}1[a-z0-9]{38,200}\Z")


def _classes(token: str) -> bool:
    return any(c.isupper() for c in token) and any(c.islower() for c in token) and any(c.isdigit() for c in token)


def _line_starts(text: str, at: int) -> bool:
    """Whether a line starts at `at` (after a line break, or an escaped one in JSON)."""
    return at == 0 or text[at - 1] == "\n" or text.startswith("\\n", at - 2)


_PUBLIC_LABELS = ("PUBLIC", "CERTIFICATE", "X509", "TRUSTED", "PKCS7", "CMS", "SSH2 PUBLIC", "PGP PUBLIC", "PGP SIGNATURE")
_BLOCK_REACH = 20000


def _in_public_block(text: str, at: int) -> bool:
    """Whether `at` is inside an armoured block of public material (a certificate, a public key)."""
    begin = text.rfind("-----BEGIN ", max(0, at - _BLOCK_REACH), at)
    return begin >= 0 and text.find("-----END ", begin, at) < 0 and text.startswith(_PUBLIC_LABELS, begin + 11)


def _judge(text: str, start: int, end: int) -> Hit | None:
    token = text[start:end]
    if _BECH32_SECRET.match(token):
        return Hit("private-key", start, end, "bech32 secret key (its prefix says secret)")
    if end - start in _WRAP_WIDTHS and _line_starts(text, start) and (end == len(text) or text[end] in "\r\n\\"):
        return None
    if (_NAMED_BEFORE.search(text, max(0, start - 14), start) or _PUBLIC_MEMBER.search(text, max(0, start - 16), start)
            or token.startswith(("Qm", "AAAA")) or _in_public_block(text, start)):
        return None
    flat = token.replace("-", "").replace("_", "")
    if not _classes(flat) or not looks_random(flat, _MIN_RUN - 5):
        return None
    return Hit("token", start, end, "long random token (45+ characters, three character classes)")


def random_run_hits(text: str) -> Iterator[Hit]:
    """Runs of 45+ token characters random enough to be a key, standing on their own."""
    data = text.encode("utf-8", "surrogatepass")
    classes = data.translate(_CLASSES)
    n = len(data)
    same = n == len(text)
    find = classes.find
    pos = find(_NEEDLE)
    while pos >= 0:
        end = find(b" ", pos + _MIN_RUN)
        if end < 0:
            end = n
        before = data[pos - 1] if pos else 32
        after = data[end] if end < n else 32
        start = pos + 1 if before == 92 and data[pos] in _ESCAPES else pos  # \n glued to the run
        if before not in _BASE64_SIDE and after not in _BASE64_SIDE and before != 47 and end - start >= _MIN_RUN:
            if same:
                hit = _judge(text, start, end)
            else:
                at = len(data[:start].decode("utf-8", "surrogatepass"))
                hit = _judge(text, at, at + end - start)
            if hit:
                yield hit
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
