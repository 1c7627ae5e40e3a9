"""What the rules for command lines and for calls in code share: a shell word, the test
of a value given as an argument, a password's shape, and where the needles they look for
stand in the text.
"""

from __future__ import annotations

import re

from .shapes import scan_within
from .values import (
    Strength,
    char_offsets,
    is_placeholder,
    looks_random,
    mixed_case_random,
    scan,
    value_is_secret,
    wordy,
)

__all__ = ["PORTS", "SHELL_WORD", "offsets_among", "offsets_of", "pair_password", "pattern_starts", "plain_word",
           "secret_argument", "value_span"]


# One word of a command line: quoted ('…', "…", bash's $'…') or bare up to a space, a quote or | ; &.
SHELL_WORD = r"""(?:\$?'[^'\n]{1,256}'|"[^"\n]{1,256}"|[^\s'"|;&]{1,256})"""


_STAND_INS = frozenset({"password", "passwd", "passphrase", "secret", "key", "pass", "token", "mypassword",
                        "yourpassword", "my-password", "your-password", "mysecret", "apikey", "api_key"})


def secret_argument(value: str) -> bool:
    """A value given to a command or a call (quotes and a $'…' off) is a password: not an
    option, a variable, a mark, a placeholder or the docs' stand-in word."""
    value = value.removeprefix("$").strip("'\"")
    if (not value or value.startswith(("-", "$", "[REDACTED", "<", "%")) or is_placeholder(value)
            or value.lower() in _STAND_INS):  # PRAGMA key = 'passphrase': the docs' stand-in
        return False
    return value_is_secret(value, Strength.PASSWORD, quoted=True, literal=True)


def value_span(match: re.Match[str], group: str) -> tuple[int, int]:
    """The span of `group` in `match` without the quotes around it."""
    start, end = match.span(group)
    if match.group(group).startswith("$'"):  # bash's $'…' quoting
        return start + 2, end - 1
    if end - start >= 2 and match.group(group)[0] in "'\"" and match.group(group)[-1] == match.group(group)[0]:
        return start + 1, end - 1
    return start, end


def plain_word(value: str) -> bool:
    """A lower-case word as prose spells it (session, local): letters with a word's share
    of vowels; fzivkdldhwwnuwzv has too few."""
    return value.isalpha() and value.islower() and 10 * sum(c in "aeiou" for c in value) >= 3 * len(value)


PORTS = re.compile(r"[\d.:/a-z-]*\d:\d[\d:/a-z-]*")  # docker's -p 8080:80, -p 127.0.0.1:53:53/udp


def offsets_of(data: bytes, needle: str, length: int, base: str = "") -> list[int]:
    """Where `needle` (ASCII) stands in the text of `length` characters whose UTF-8 (lower
    case) is `data`: found in the bytes, in C, and given in characters (read off the
    offsets of `base`, a part of it, when given: `scan_within`)."""
    places = scan_within(data, needle.encode(), base.encode()) if base else scan(data, needle.encode())
    return list(places) if len(data) == length else char_offsets(data, places)


def pattern_starts(data: bytes, starts: re.Pattern[bytes]) -> list[int]:
    """The offsets `starts` finds in `data`: a first byte and a lookahead for several needles,
    one pass over the text for all of them, in C (a check for each reads the text once a needle)."""
    return [m.start() for m in starts.finditer(data)]


def offsets_among(data: bytes, starts: list[int], needle: str, length: int) -> list[int]:
    """`offsets_of` of `needle`, read off `starts` (`pattern_starts` of a pattern that finds it)."""
    encoded = needle.encode()
    places = [at for at in starts if data.startswith(encoded, at)]
    return places if len(data) == length else char_offsets(data, places)


def pair_password(value: str) -> bool:
    """A password's shape: digits or symbols with letters, or random; not a port, a group
    (www-data), a path or a number."""
    if not secret_argument(value) or PORTS.fullmatch(value) or value.isdigit() or wordy(value) or "/" in value:
        return False
    return (looks_random(value, 12) or mixed_case_random(value)
            or any(c.isdigit() for c in value) and any(c.isalpha() for c in value))
