"""Text made inert: shown as stored, never acted on by the terminal or reader it reaches.

One function, `inert`, used wherever stored or harness-given text is printed for people
(every command's text output, cli/common.say) or handed to a model (brief.py's fence).
Ground floor: it imports nothing of maxmem, so `maxmem --version` and an error line
stay as light as they were.
"""

from __future__ import annotations

# Characters a terminal or a reader acts on instead of showing: C0 and C1 controls (escape
# sequences: clear the screen, OSC 8 links, OSC 52 clipboard writes; a carriage return
# that overwrites a line), DEL, the bidi controls that reorder what follows (U+202E, the
# isolates, the marks) and the Unicode line and paragraph separators. Tab and newline stay.
_ACTED_ON = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7f, *range(0x80, 0xa0)) if c not in (0x09, 0x0a)}
_ACTED_ON.update({c: f"\\u{c:04x}" for c in (0x061c, 0x200e, 0x200f, 0x2028, 0x2029,
                                                 *range(0x202a, 0x202f), *range(0x2066, 0x206a))})
ACTED_ON: dict[int, str] = dict(_ACTED_ON)  # each such code point and how it is shown (\x1b, \u202e)


def inert(text: str) -> str:
    """`text` with every character a terminal or a reader would act on shown escaped
    (ESC as \\x1b, U+202E as \\u202e), and a lone surrogate (an undecodable byte of an
    argument or a file) as \\udcff: what is printed for people and fenced for models."""
    return text.translate(_ACTED_ON).encode("utf-8", "backslashreplace").decode("utf-8")


_JSON_ACTED_ON = {c: f"\\u{c:04x}" for c in ACTED_ON}


def json_inert(text: str) -> str:
    """JSON text (json.dumps with ensure_ascii=False) with every character a terminal acts on
    written as JSON's own escape (U+009B as \\u009b, U+202E as \\u202e), and a lone
    surrogate as \\udcff: the same JSON value, nothing raw on a terminal. JSON escapes
    C0 controls itself; DEL, the C1 controls, the bidi controls and U+2028 it leaves raw.
    (Outside its strings JSON text is ASCII: only strings change.)"""
    return text.translate(_JSON_ACTED_ON).encode("utf-8", "backslashreplace").decode("utf-8")


def one_line(text: str) -> str:
    """`inert(text)` that stays on one line: a line break (a path's, a file name's) shown
    as \\x0a, so it never starts a line of its own that reads as maxmem's."""
    return inert(text).replace("\n", "\\x0a")
