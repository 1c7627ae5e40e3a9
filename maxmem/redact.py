"""Take secrets out of text before it is stored or sent to an embedding API.

    >>> redact("export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx")
    ('export OPENAI_API_KEY=[REDACTED:openai]', 1)

Each secret becomes `[REDACTED:<kind>]`; `<private>…</private>` spans disappear
entirely. The built-in shapes are API keys (OpenAI, Anthropic, GitHub, Slack, Google,
AWS, Stripe), JWTs, Bearer tokens, PEM private keys, passwords in URLs and
`NAME=value` / `"name": "value"` assignments whose name says secret, token, password
or key. Extra patterns (regex text) can be passed in; if a pattern has a group named
`secret`, only that group is replaced, otherwise the whole match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from .errors import InvalidInput

__all__ = ["redact", "compile_patterns"]

MARK = "[REDACTED:{}]"

_PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.DOTALL | re.IGNORECASE)
_PEM = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?)-----.*?(?:-----END \1PRIVATE KEY\2-----|\Z)",
    re.DOTALL,
)

# (kind, pattern); the whole match (or the group named "secret") is replaced.
_SHAPES: list[tuple[str, str]] = [
    ("url-password", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/?#@\"'<>]+:(?P<secret>[^\s@/?#\"'<>]+)@"),
    ("bearer", r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{12,})"),
    ("anthropic", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai", r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}"),
    ("github", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    ("slack", r"\bxox[abposrce]-[A-Za-z0-9-]{10,}"),
    ("slack", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]+"),
    ("google", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("google", r"\bya29\.[0-9A-Za-z_-]{20,}"),
    ("google", r"\bGOCSPX-[0-9A-Za-z_-]{20,}"),
    ("aws", r"\b(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|ANPA|ANVA|AGPA)[0-9A-Z]{16}\b"),
    ("stripe", r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("basic-auth", r"(?i)\bauthorization\s*:\s*basic\s+(?P<secret>[A-Za-z0-9+/=]{8,})"),
]

# NAME=value, NAME: value, "name": "value". Every assignment matches; the callback
# keeps those whose name has a secret-sounding word (OPENAI_API_KEY, apiKey,
# db_password, "client_secret") and leaves max_tokens, keyboard or PWD alone.
# What follows a secret-sounding name in an assignment: the separator and the value.
_ASSIGNED = re.compile(
    r"""["']?[ \t]*(?:=|:)[ \t]*(?P<open>["'])?(?P<secret>(?(open)[^"'\n]+|(?:[^\s"',;&)}\]]|&(?![A-Za-z0-9_.-]+=))+))"""
)
_NAME_KEYWORDS = ("secret", "token", "passw", "passphrase", "key", "credential")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_SECRET_WORDS = {"secret", "secrets", "token", "password", "passwd", "passphrase", "key", "apikey",
                 "credential", "credentials", "privatekey", "secretkey", "accesskey", "authkey"}
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_NOT_SECRETS = {"null", "none", "true", "false", "undefined", "nil", "redacted"}

_SAFE_VALUE = re.compile(r"^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^>]*>|\.\.\.|…|xxx+|\*+)$", re.IGNORECASE)


# Every built-in shape contains one of these literals (case aside). Most memories
# hold no secret, and looking for a few substrings costs far less than fourteen
# regular-expression substitutions; when one is present, every shape runs.
_SHAPE_LITERALS = (
    "://", "bearer", "sk-", "sk_", "rk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
    "xox", "aiza", "ya29.", "gocspx-", "akia", "asia", "abia", "acca", "aida", "aroa", "anpa",
    "anva", "agpa", "eyj", "authorization",
)


def _may_hold_shape(text: str) -> bool:
    lowered = text.lower()
    return any(literal in lowered for literal in _SHAPE_LITERALS)


@lru_cache(maxsize=32)
def _compiled(extra: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    shapes = [(kind, re.compile(pattern)) for kind, pattern in _SHAPES]
    shapes += [("custom", re.compile(pattern)) for pattern in extra]
    return tuple(shapes)


def compile_patterns(patterns: Iterable[str] | None) -> tuple[str, ...]:
    """Check extra patterns early, so a typo in the config fails with a clear message."""
    extra = tuple(patterns or ())
    for pattern in extra:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise InvalidInput(f"bad redaction pattern {pattern!r}: {exc}") from None
    return extra


def redact(text: str, patterns: Iterable[str] | None = None) -> tuple[str, int]:
    """Return `text` with secrets replaced and the number of replacements made."""
    if not text:
        return text, 0
    extra = compile_patterns(patterns)
    if len(text) <= _CACHED_CHARS:
        # Capture redacts a chunk, then Brain redacts it again on prefetch and on store.
        return _redact_cached(text, extra)
    return _redact(text, extra)


_CACHED_CHARS = 8192


@lru_cache(maxsize=2048)
def _redact_cached(text: str, extra: tuple[str, ...]) -> tuple[str, int]:
    return _redact(text, extra)


def _redact(text: str, extra: tuple[str, ...]) -> tuple[str, int]:
    count = 0
    if "<" in text:
        text, n = _PRIVATE.subn("", text)
        count += n
    if "PRIVATE KEY" in text:
        text, n = _PEM.subn(MARK.format("private-key"), text)
        count += n
    if extra or _may_hold_shape(text):
        for kind, pattern in _compiled(extra):
            text, n = _substitute(pattern, kind, text)
            count += n
    if "=" in text or ":" in text:
        text, n = _assignments(text)
        count += n
    return text, count


def _assignments(text: str) -> tuple[str, int]:
    """NAME=value, NAME: value, "name": "value" where the name says secret.

    Found from the keywords outward (a regular expression tried at every word is
    several times slower on long tool outputs, where most words are not names)."""
    lowered = text.lower()
    names: set[tuple[int, int]] = set()
    for keyword in _NAME_KEYWORDS:
        at = lowered.find(keyword)
        while at >= 0:
            start, end = at, at + len(keyword)
            while start > 0 and text[start - 1] in _NAME_CHARS:
                start -= 1
            while end < len(text) and text[end] in _NAME_CHARS:
                end += 1
            names.add((start, end))
            at = lowered.find(keyword, end)
    if not names:
        return text, 0
    mark = MARK.format("secret")
    parts: list[str] = []
    done = 0  # text[:done] is in parts
    for start, end in sorted(names):
        while start < end and not text[start].isalpha():
            start += 1
        match = _ASSIGNED.match(text, end)
        if match is None or start >= end or start < done:
            continue
        value = match.group("secret")
        words = {word.lower() for word in _NAME_WORDS.findall(text[start:end])}
        if (not words & _SECRET_WORDS or value.startswith("[REDACTED") or _SAFE_VALUE.match(value)
                or value.lower() in _NOT_SECRETS):
            continue
        value_start, value_end = match.span("secret")
        parts += [text[done:value_start], mark]
        done = value_end
    if not parts:
        return text, 0
    parts.append(text[done:])
    return "".join(parts), len(parts) // 2


def _substitute(pattern: re.Pattern[str], kind: str, text: str) -> tuple[str, int]:
    count = 0
    mark = MARK.format(kind)

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        if "secret" not in pattern.groupindex:
            count += 1
            return mark
        value = match.group("secret")
        if value is None or value.startswith("[REDACTED") or _SAFE_VALUE.match(value):
            return match.group(0)
        count += 1
        start, end = match.span("secret")
        whole = match.group(0)
        offset = match.start()
        return whole[: start - offset] + mark + whole[end - offset:]

    return pattern.sub(replace, text), count
