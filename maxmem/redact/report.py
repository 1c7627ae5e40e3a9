"""What `maxmem redact-test` shows: each finding's place, kind and rule, never the secret
itself unless asked (a terminal, a CI log or a screen share is a way out too)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .shapes import PRIVATE

__all__ = ["describe", "preview", "summary"]


def preview(secret: str, reveal: bool = False) -> str:
    """`sk-p…(51 chars)`: enough to recognise a value, not to use it."""
    if reveal:
        return secret
    head = secret[:4] if len(secret) >= 12 else secret[:1]
    return f"{head}…({len(secret)} chars)"


def describe(text: str, findings: list[Any], reveal: bool = False) -> list[dict[str, Any]]:
    """One dict per finding: line and column (1-based), kind, rule, a preview."""
    out = []
    line, line_start, scanned = 1, 0, 0
    for finding in findings:
        line += text.count("\n", scanned, finding.start)
        newline = text.rfind("\n", 0, finding.start)
        line_start = newline + 1 if newline >= 0 else 0
        scanned = finding.start
        value = text[finding.start:finding.end]
        out.append({
            "line": line, "column": finding.start - line_start + 1, "kind": finding.kind, "rule": finding.rule,
            "chars": len(value),
            "preview": "(a <private> span, removed without a mark)" if finding.kind == PRIVATE and not reveal
            else preview(value, reveal),
        })
    return out


def summary(findings: list[Any]) -> str:
    if not findings:
        return "nothing would be redacted"
    kinds = Counter(f.kind for f in findings)
    listed = ", ".join(f"{kind} {n}" for kind, n in kinds.most_common())
    return f"{len(findings)} secret(s) would be redacted ({listed})"
