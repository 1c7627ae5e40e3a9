"""The prefilter: which of the triggers' rules a sentence can match at all.

Most sentences can match no rule. Each rule's regex is read once, with the stdlib's
own parser (the private `re._parser`, guarded: a parser that changed shape gives no
prefilter, never a wrong one), for literal strings one of which every match must
contain; a rule is tried only when one of them is in the sentence. A pattern (or part
of one) the reader cannot vouch for promises nothing, and such a rule is tried on
every sentence.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

# Under re.IGNORECASE these four non-ASCII letters match ASCII ones (a test checks this
# against every code point); they are folded before the case-insensitive substring test.
ASCII_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})  # İ ı ſ, Kelvin sign


@lru_cache(maxsize=1024)
def needed_literals(pattern: str, flags: int) -> frozenset[str] | None:
    """Lowercase ASCII strings one of which every match of the pattern contains, or None."""
    try:
        from re import _constants, _parser  # type: ignore[attr-defined]

        return _needs(_parser.parse(pattern, flags), _constants)
    except Exception:  # a parser that changed shape: no prefilter, never a wrong one
        return None


def _needs(items: Any, ops: Any) -> frozenset[str] | None:
    # Every item of a sequence must match, so any one item's promise holds for the whole:
    # keep the rarest. A run of ASCII literals is one string (zero-width items end a run).
    options: list[frozenset[str]] = []
    run: list[str] = []
    for op, arg in items:
        if op is ops.LITERAL and arg < 128:
            run.append(chr(arg).lower())
            continue
        if run:
            options.append(frozenset({"".join(run)}))
            run = []
        inner: frozenset[str] | None = None
        if op is ops.SUBPATTERN:
            inner = _needs(arg[-1], ops)
        elif op is ops.ATOMIC_GROUP:
            inner = _needs(arg, ops)
        elif op in (ops.MAX_REPEAT, ops.MIN_REPEAT, ops.POSSESSIVE_REPEAT) and arg[0] >= 1:
            inner = _needs(arg[2], ops)
        elif op is ops.BRANCH:
            branches = [_needs(branch, ops) for branch in arg[1]]
            if all(branch is not None for branch in branches):
                inner = frozenset().union(*branches)  # type: ignore[arg-type]
        if inner is not None:
            options.append(inner)
    if run:
        options.append(frozenset({"".join(run)}))
    # A string of n letters is about 10^n times rarer than one letter.
    return min(options, key=lambda needs: sum(0.1 ** len(lit) for lit in needs), default=None)
