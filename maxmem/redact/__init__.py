"""Take secrets out of text before it is stored or sent to an embedding API.

    >>> redact("export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx")
    ('export OPENAI_API_KEY=[REDACTED:openai]', 1)

Each secret becomes `[REDACTED:<kind>]`; `<private>…</private>` spans disappear
entirely. Four families of rules find them:

- shapes (`shapes.py`): provider keys by their prefix and format (OpenAI, Anthropic,
  GitHub, GitLab, Slack, Google, AWS, Stripe, Hugging Face, PyPI, npm, SendGrid, Twilio,
  Azure and some 40 more), JWTs, PEM private keys, passwords in URLs, Slack, Discord
  and Teams webhook URLs, and the secrets that only their neighbour gives away (an AWS
  secret key near its AKIA… id);
- names (`assignments.py`): the value of `NAME=value`, `"name": "value"`, `name: value`,
  `--password x`, `Authorization: Bearer x`, `.netrc` lines, when the name says secret,
  judged by how strongly it does and how random the value looks (`values.py`);
- command lines: `mysql -pX`, `curl -u user:X`, `sshpass -p X` and the like;
- structure (`labels.py`): a label line's value, a table's secret column, a secret-named
  lookup's fallback or typed declaration, a user / password pair, a one-time link's token.

Allow-lists keep what only looks like a secret: placeholders (`<your-key>`, `${API_KEY}`,
`sk-...`), references (`password=db_password`), hashes, paths, `path:line:` prefixes;
and `public.py` then drops what is public or a stand-in: documented examples, keys
public by design, identifiers named as such, labels.
The user's own patterns and allow-list come from `[redact]` in the config
(`RedactSettings`); `explain()` says what would go and why.

The work is linear in the length of the text: a few `str.find` scans and one regular
expression over it, then bounded matches at the places they point to.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..config import Config
from ..errors import InvalidInput
from ..settings import CustomPattern, RedactSettings, check_pattern, compile_patterns
from .assignments import KEYWORDS, bearer_hits, command_hits, keyword_positions, named_hits, plist_hits, sql_hits
from .calls import KEYED_CALL_WORDS, annotation_hits, call_hits, key_call_hits, pair_literal_hits
from .commands import (
    announced_hits,
    credential_flag_hits,
    fed_hits,
    flag_hits,
    login_argument_hits,
    positional_hits,
    printed_hits,
    secret_set_hits,
    stdin_hits,
    store_flag_hits,
)
from .formats import cookie_hits, dsn_hits, host_map_hits, pgpass_hits, userlist_hits
from .labels import (
    declaration_hits,
    element_hits,
    fallback_hits,
    identity_literal_hits,
    label_hits,
    link_hits,
    login_pair_hits,
    pair_hits,
    replaced_hits,
    table_hits,
)
from .material import (
    card_hits,
    der_hits,
    grouped_key_hits,
    jwk_hits,
    key_material_hits,
    numbered_phrase_hits,
    phrase_hits,
    putty_hits,
    totp_hits,
)
from .precision import plausible
from .prose import prose_hits
from .public import public_value
from .shapes import (
    PRIVATE,
    Hit,
    azure_hits,
    key_block_hits,
    pem_hits,
    private_hits,
    provider_hits,
    url_hits,
    webhook_hits,
)
from .tokens import crypt_hits, dollar_hits, encoded_json_hits, random_run_hits, session_hits
from .values import inside_words, may_hold, text_words

__all__ = [
    "MARK",
    "CustomPattern",
    "Finding",
    "RedactSettings",
    "Redactor",
    "compile_patterns",
    "explain",
    "redact",
]

MARK = "[REDACTED:{}]"

# When two rules claim overlapping text, the union goes and the more specific kind names it.
_PRIORITY = {PRIVATE: 100, "private-key": 60, "custom": 5, "secret": 20, "password": 22, "token": 24, "card": 40,
             "bearer": 25, "basic-auth": 25, "url-password": 30}
_PROVIDER_PRIORITY = 50
_ALWAYS = frozenset({PRIVATE, "custom", "private-key"})  # what goes even when it looks public
_CACHED_CHARS = 8192
_DOTTED_I = "\u0130"  # İ: the one character whose lowercase is two characters long


@dataclass(frozen=True)
class Finding:
    """One secret: text[start:end] is replaced by `replacement`; `rule` says why."""

    kind: str
    start: int
    end: int
    rule: str

    @property
    def replacement(self) -> str:
        return "" if self.kind == PRIVATE else MARK.format(self.kind)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "start": self.start, "end": self.end, "rule": self.rule}


def _priority(kind: str) -> int:
    return _PRIORITY.get(kind, _PROVIDER_PRIORITY)


def _lower(text: str) -> str:
    """`text` lowercased with every offset kept: İ, which lowers to two characters, stays."""
    if _DOTTED_I not in text:
        return text.lower()
    return _DOTTED_I.join(part.lower() for part in text.split(_DOTTED_I))


class Redactor:
    """The built-in rules plus `settings`; reusable and thread-safe.

    Short texts (≤ 8 KB) are remembered (`cache_size` of them): capture redacts a chunk
    and Brain redacts the same text again when it stores it."""

    def __init__(self, settings: RedactSettings | None = None, cache_size: int = 2048) -> None:
        self.settings = settings or RedactSettings()
        self._custom = [(p.kind, check_pattern(p.pattern)) for p in self.settings.patterns]
        self._allow = [re.compile(a) for a in self.settings.allow]
        self._secret_words = frozenset(self.settings.secret_names)
        self._ignore = frozenset(self.settings.ignore_names)
        self._keywords = (*KEYWORDS, *self._secret_words)
        self._cached = lru_cache(maxsize=cache_size)(self._redact) if cache_size else self._redact

    @classmethod
    def from_config(cls, config: Config) -> Redactor:
        """The redactor a Config's [redact] section describes ([capture] redact_patterns,
        its older spelling, included when the config was read)."""
        return cls(config.redact)

    def redact(self, text: str) -> tuple[str, int]:
        """`text` with every secret replaced, and the number of secrets."""
        _check(text)
        if not text:
            return text, 0
        if len(text) <= _CACHED_CHARS:
            return self._cached(text)
        return self._redact(text)

    def redact_value(self, value: Any) -> tuple[Any, int]:
        """Every text inside `value` (a string, or lists and dicts of them) redacted, and
        the count; dict keys stay (a field name is not a secret). A string that is JSON
        itself goes through `redact_json`."""
        if isinstance(value, str):
            return self.redact_json(value)
        if isinstance(value, list):
            pairs = [self.redact_value(v) for v in value]
            return [v for v, _ in pairs], sum(n for _, n in pairs)
        if isinstance(value, dict):
            done = {k: self.redact_value(v) for k, v in value.items()}
            return {k: v for k, (v, _) in done.items()}, sum(n for _, n in done.values())
        return value, 0

    def redact_json(self, text: str) -> tuple[str, int]:
        """Text that may be JSON (a tool call's arguments): each string inside is redacted
        as it reads once decoded (a `curl -d '{\\"password\\": …}'` inside a "command"),
        then the text as a whole (the value of a secret-named key). Text that is not a
        JSON object or array is redacted as it is."""
        _check(text)
        stripped = text.lstrip()
        if not stripped.startswith(("{", "[")):
            return self.redact(text)
        try:
            value = json.loads(text)
            cleaned, inside = self.redact_value(value)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than Python recurses
            return self.redact(text)
        if inside:
            text = json.dumps(cleaned, ensure_ascii=False)
        text, whole = self.redact(text)
        return text, inside + whole

    def findings(self, text: str) -> list[Finding]:
        """What `redact` would remove, in order, overlaps merged: kind, span and rule."""
        _check(text)
        if not text:
            return []
        hits = [h for h in self._hits(text)
                if h.end > h.start and not self._allowed(text, h)
                and (h.kind in _ALWAYS or not public_value(text, h.start, h.end))
                and plausible(text, h.start, h.end, h.rule)]
        return _merge(hits)

    def _redact(self, text: str) -> tuple[str, int]:
        found = self.findings(text)
        if not found:
            return text, 0
        parts: list[str] = []
        done = 0
        for finding in found:
            parts += [text[done:finding.start], finding.replacement]
            done = finding.end
        parts.append(text[done:])
        return "".join(parts), len(found)

    def _hits(self, text: str) -> Iterable[Hit]:
        lowered = _lower(text)
        # Every gate below is a scan of bytes: on a text that holds a character outside
        # Latin-1 (an emoji) a scan of str reads four bytes a character. A gate for a
        # needle with letters looks at the text's distinct words first (a few KB).
        data = lowered.encode("utf-8", "surrogatepass")
        raw = text.encode("utf-8", "surrogatepass")
        words = text_words(data)

        def holds(needle: bytes) -> bool:
            return may_hold(words, needle) and needle in data

        if holds(b"<private"):
            yield from private_hits(text, lowered)
        if b"begin" in words:
            if holds(b"-----begin "):
                yield from pem_hits(text)
            yield from key_block_hits(text)
        yield from provider_hits(text, raw)
        if b"://" in data:
            yield from url_hits(text, data)
        if b"com" in words and b".com" in data:
            yield from webhook_hits(text, lowered, data, words)
        if len(text) >= 32:
            yield from random_run_hits(text, raw)
            if holds(b"eyj") or holds(b"ewo"):
                yield from encoded_json_hits(text, raw)
        if b"$" in data:
            yield from dollar_hits(text)
            yield from crypt_hits(text)
        if holds(b"q~"):
            yield from azure_hits(text)
        positions = keyword_positions(lowered, inside_words(words, self._keywords), data)
        yield from named_hits(text, lowered, self._secret_words, self._ignore, positions)
        if b"bearer" in words:
            yield from bearer_hits(text, lowered)
        yield from command_hits(text, lowered)
        if b"identified" in words:
            yield from sql_hits(text, lowered)
        if b"string" in words and b"</key>" in data:
            yield from plist_hits(text)
        yield from prose_hits(text, lowered, data, words, positions)
        if len(text) >= 40:
            yield from der_hits(text, raw)
        if b"lines" in words and holds(b"private-lines:"):
            yield from putty_hits(text)
        if b"kty" in words:
            yield from jwk_hits(text, lowered)
        yield from phrase_hits(text, lowered, data, words)
        if b"12. " in data or b"12) " in data:
            yield from numbered_phrase_hits(text)
        yield from card_hits(text, lowered, data, words)
        yield from key_material_hits(text, lowered, data, words)
        yield from grouped_key_hits(text, lowered, data, words)
        if may_hold(words, b"otp"):  # letters only: in the text exactly when inside one of its words
            yield from totp_hits(text, lowered)
        if b"echo" in words or b"printf" in words:
            yield from stdin_hits(text, lowered, data, words)
        yield from positional_hits(text, lowered, data, words)
        if b" -p" in data or b" -n" in data:
            yield from flag_hits(text, lowered, data, words)
        yield from announced_hits(text, lowered, data, words)
        if b" -" in data and b":" in data:
            yield from credential_flag_hits(text, data)
        if b'": {' in data or b'":{' in data:
            yield from host_map_hits(text, data)
        if b"<" in data:  # "<<<", "<(": one check, fed_hits finds both in one pass
            yield from fed_hits(text, data)
        if b"--" in data or b" /p" in data:  # --value, --secret-…, --data: found in one pass
            yield from store_flag_hits(text, data)
        if b"set" in words or b"add" in words or b"put" in words:
            yield from secret_set_hits(text, lowered, data, words)
        if b"$ " in data:
            yield from printed_hits(text, data)
        if b"@" in data:  # @tcp(, @unix(: found in one pass
            yield from dsn_hits(text, data)
        if b"login" in words or b"auth" in words or b" -t" in data:
            yield from login_argument_hits(text, lowered, data, words)
        if b"(" in data:
            yield from call_hits(text, lowered, data, words)
            if may_hold(words, b"hmac") or not words.isdisjoint(KEYED_CALL_WORDS):
                yield from key_call_hits(text, lowered, data, words)
            if b'@' in data and b'")' in data:
                yield from annotation_hits(text)
            yield from pair_literal_hits(text, lowered, data, words)
        if b"cookie" in data or b" -b " in data:
            yield from cookie_hits(text, lowered, data, words)
        if b"sess" in data or b"sid" in data or b"cookie" in data:
            yield from session_hits(text, lowered, data)
        if _holds_colons(data, 4):
            yield from pgpass_hits(text, lowered, data, words)
        if b'" "' in data:
            yield from userlist_hits(text)
        yield from _structure_hits(text, lowered, data, words)
        yield from declaration_hits(text, positions)
        if b"</" in data:
            yield from element_hits(text, positions)
        if b"://" in data:
            yield from link_hits(text, data)
        for kind, pattern in self._custom:
            for match in pattern.finditer(text):
                span = match.span("secret") if "secret" in pattern.groupindex else match.span()
                if span[0] >= 0 and not text.startswith("[REDACTED", span[0]):
                    yield Hit(kind, span[0], span[1], f"custom pattern {pattern.pattern!r}")

    def _allowed(self, text: str, hit: Hit) -> bool:
        if hit.kind == PRIVATE:
            return False
        value = text[hit.start:hit.end]
        return value.startswith("[REDACTED") or any(a.fullmatch(value) for a in self._allow)


def _holds_colons(data: bytes, count: int) -> bool:
    """At least `count` colons in `data`: found one by one, not all of them counted."""
    at = -1
    for _ in range(count):
        at = data.find(b":", at + 1)
        if at < 0:
            return False
    return True


def _structure_hits(text: str, lowered: str, data: bytes, words: frozenset[bytes]) -> Iterable[Hit]:
    """What a label line, a table's column, a lookup's fallback or a user / password pair
    gives away (`labels.py`)."""
    if b":" in data:
        yield from label_hits(text, lowered, data, words)
    if b"\n" in data and (b"|" in data or b"," in data or b"\t" in data):
        yield from table_hits(text)
    if b"env" in data or b"${" in data:
        yield from fallback_hits(text, data)
    if b"/" in data or b":" in data:
        yield from pair_hits(text, lowered, data, words)
    yield from login_pair_hits(text, lowered, data, words)
    if b"', '" in data or b'", "' in data or b"','" in data or b'","' in data:
        yield from identity_literal_hits(text, data)
    if b"replace" in data or b"sed" in words:
        yield from replaced_hits(text, data)


def _merge(hits: list[Hit]) -> list[Finding]:
    hits.sort(key=lambda h: (h.start, -h.end))
    merged: list[Finding] = []
    for hit in hits:
        if merged and hit.start < merged[-1].end:
            last = merged[-1]
            top = last if _priority(last.kind) >= _priority(hit.kind) else hit
            merged[-1] = Finding(top.kind, last.start, max(last.end, hit.end), top.rule)
        else:
            merged.append(Finding(hit.kind, hit.start, hit.end, hit.rule))
    return merged


def _check(text: Any) -> None:
    if not isinstance(text, str):
        raise InvalidInput(f"redact takes text (str), not {type(text).__name__}: decode bytes first")


@lru_cache(maxsize=32)
def _redactor(patterns: tuple[str, ...]) -> Redactor:
    return Redactor(RedactSettings(patterns=tuple(CustomPattern(p) for p in patterns)))


def redact(text: str, patterns: Iterable[str] | None = None) -> tuple[str, int]:
    """Return `text` with secrets replaced and the number of replacements made.

    `patterns` are extra regexes (a group named `secret` = only that part goes)."""
    return _redactor(compile_patterns(patterns)).redact(text)


def explain(text: str, settings: RedactSettings | None = None) -> list[Finding]:
    """What would be removed from `text` and why, for checking a rule before trusting it."""
    return (Redactor(settings, cache_size=0) if settings else _redactor(())).findings(text)
