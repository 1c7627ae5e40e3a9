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
_ASSIGNMENT = re.compile(
    r"""(?x)
    (?<![A-Za-z0-9_.-])(?P<name>[A-Za-z][A-Za-z0-9_.-]*)
    ["']?[ \t]*(?:=|:)[ \t]*
    # the value is looked at, not consumed: scanning goes on inside it (URLs hold
    # "https:" before "?token=")
    (?=(?P<open>["'])?(?P<secret>(?(open)[^"'\n]+|(?:[^\s"',;&)}\]]|&(?![A-Za-z0-9_.-]+=))+)))
    """
)
_NAME_KEYWORDS = ("secret", "token", "passw", "passphrase", "key", "credential")
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
    lowered = text.lower()
    if not any(keyword in lowered for keyword in _NAME_KEYWORDS):
        return text, 0
    mark = MARK.format("secret")
    parts: list[str] = []
    done = 0  # text[:done] is in parts
    for match in _ASSIGNMENT.finditer(text):
        name = match.group("name")
        start, end = match.span("secret")
        if start < done or not any(keyword in name.lower() for keyword in _NAME_KEYWORDS):
            continue
        value = match.group("secret")
        words = {word.lower() for word in _NAME_WORDS.findall(name)}
        if (not words & _SECRET_WORDS or value.startswith("[REDACTED") or _SAFE_VALUE.match(value)
                or value.lower() in _NOT_SECRETS):
            continue
        parts += [text[done:start], mark]
        done = end
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
