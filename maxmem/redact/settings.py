"""The `[redact]` section of the config file: the user's own rules.

    [redact]
    # extra secret shapes: a regex (a group named "secret" = only that part goes) or a
    # table giving the kind shown in [REDACTED:kind]
    patterns = ["ACME-[0-9]{6}", { kind = "ticket", pattern = "TKT-(?P<secret>[A-Z0-9]{12})" }]
    # would-be secrets that are not: regexes matched against the whole secret
    allow = ["AKIAIOSFODNN7EXAMPLE", "sk-test-fixture-[a-z]+"]
    # more words that make NAME=value secret-named, and names that never are
    secret_names = ["pin", "passcode"]
    ignore_names = ["session_token_count"]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, InvalidInput

__all__ = ["CustomPattern", "RedactSettings", "check_pattern", "compile_patterns"]

_KIND = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


@dataclass(frozen=True)
class CustomPattern:
    """A user's regex; its group named `secret` (else the whole match) is redacted."""

    pattern: str
    kind: str = "custom"


@dataclass(frozen=True)
class RedactSettings:
    """Everything the redactor can be told, beyond its built-in rules."""

    patterns: tuple[CustomPattern, ...] = ()
    allow: tuple[str, ...] = ()
    secret_names: tuple[str, ...] = ()
    ignore_names: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, config: Any) -> RedactSettings:
        """From a Config's [redact] table (anything with `.section(name)`), plus the older
        [capture] redact_patterns."""
        settings = cls.from_table(config.section("redact"))
        older = config.section("capture").get("redact_patterns", [])
        if not isinstance(older, list):
            raise ConfigError("[capture] redact_patterns must be a list of regular expressions")
        try:
            return settings.with_patterns(older)
        except InvalidInput as exc:
            raise ConfigError(f"[capture] {exc}") from None

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str = "[redact]") -> RedactSettings:
        known = ("patterns", "allow", "secret_names", "ignore_names")
        unknown = sorted(set(table) - set(known))
        if unknown:
            raise ConfigError(f"{where}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(known)}")
        return cls(
            patterns=tuple(_custom(item, f"{where} patterns[{i}]") for i, item in enumerate(_list(table, "patterns", where))),
            allow=tuple(_regex(item, f"{where} allow[{i}]") for i, item in enumerate(_list(table, "allow", where))),
            secret_names=tuple(_name(item, f"{where} secret_names[{i}]")
                               for i, item in enumerate(_list(table, "secret_names", where))),
            ignore_names=tuple(_name(item, f"{where} ignore_names[{i}]")
                               for i, item in enumerate(_list(table, "ignore_names", where))),
        )

    def with_patterns(self, patterns: Iterable[str]) -> RedactSettings:
        """These settings plus more plain patterns (kind "custom"), e.g. [capture] redact_patterns."""
        extra = tuple(CustomPattern(p) for p in compile_patterns(patterns))
        return RedactSettings(self.patterns + extra, self.allow, self.secret_names, self.ignore_names)


def _list(table: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise ConfigError(f"{where} {key} must be a list, not {type(value).__name__}")
    return value


def check_pattern(pattern: str) -> re.Pattern[str]:
    """A user's regex, compiled; InvalidInput when it is not one or matches nothing but ""."""
    if not isinstance(pattern, str):
        raise InvalidInput(f"bad redaction pattern {pattern!r}: not a string")
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise InvalidInput(f"bad redaction pattern {pattern!r}: {exc}") from None
    if compiled.fullmatch(""):
        raise InvalidInput(f"bad redaction pattern {pattern!r}: it matches the empty string")
    return compiled


def compile_patterns(patterns: Iterable[str] | None) -> tuple[str, ...]:
    """Check extra patterns early, so a typo in the config fails with a clear message."""
    extra = tuple(patterns or ())
    for pattern in extra:
        check_pattern(pattern)
    return extra


def _regex(value: Any, where: str) -> str:
    try:
        check_pattern(value)
    except InvalidInput as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return str(value)


def _custom(item: Any, where: str) -> CustomPattern:
    if isinstance(item, str):
        return CustomPattern(_regex(item, where))
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where} must be a regex or a table {{ kind = \"…\", pattern = \"…\" }}")
    unknown = sorted(set(item) - {"kind", "pattern"})
    if unknown or "pattern" not in item:
        raise ConfigError(f"{where} takes pattern (required) and kind, not {', '.join(unknown) or 'nothing'}")
    kind = item.get("kind", "custom")
    if not isinstance(kind, str) or not _KIND.fullmatch(kind):
        raise ConfigError(f"{where} kind = {kind!r}: use lowercase letters, digits and -, at most 32")
    return CustomPattern(_regex(item["pattern"], where), kind)


def _name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise ConfigError(f"{where} = {value!r}: a name is letters, digits, _ . - (at most 64)")
    return value.lower()
