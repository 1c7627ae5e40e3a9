"""What harnesses wrap around a human's words, taken off before triggers and storage.

OpenClaw prefixes user text with a bracketed time, in several shapes over its
versions and producers:

    [Sat 2026-11-28 19:00 GMT+1] remember that …            Gateway injection (TUI, webchat)
    [Signal Alice +1555 2026-01-18 00:19 PST] hello          channel envelope, host-local
    [Signal Alice +1555 +2m 2026-01-18T05:19Z] follow-up     elapsed, UTC
    [WhatsApp +1555 Sun 2026-01-18 00:19:42 PST] hello       newer: seconds and weekday
    [Provider … 2026-01-05T21:26Z] message text              Clawdbot era

and newer channel messages carry `Conversation info (untrusted metadata):` and
`Sender (untrusted metadata):` JSON blocks before the text; cron turns append
`Current time: …`. Claude Code puts `<system-reminder>` blocks into user turns.

`strip(text)` returns the human text and what the envelope said. The envelope's time
is only a hint: minutes may be floored to 5, and a zone token such as `PST` names no
single zone, so the record time stays the transcript entry's own ISO timestamp; `at`
is filled only when the zone is unambiguous (`Z`, `UTC`, `GMT`, `GMT+1`, `GMT+5:30`),
for callers that have no timestamp of their own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from .clock import iso

# The doc's parser (§3.5), with the closing bracket followed by a space, a line break
# or the end of the text (a message can be the envelope alone).
_STAMP = re.compile(
    r"^\[(?:(?P<pre>[^\]\n]*?) )??(?:(?P<dow>Mon|Tue|Wed|Thu|Fri|Sat|Sun) )?"
    r"(?P<date>\d{4}-\d{2}-\d{2})[ T](?P<time>\d{2}:\d{2}(?::\d{2})?)"
    r"(?:(?P<z>Z)| (?P<tz>[A-Za-z]{1,5}(?:[+-]\d{1,2}(?::\d{2})?)?))?\](?:[ \t]+|[ \t]*\n|[ \t]*$)"
)
_ZONE = re.compile(r"^(?:UTC|GMT)(?:(?P<sign>[+-])(?P<h>\d{1,2})(?::(?P<m>\d{2}))?)?$")
_ELAPSED = re.compile(r"^\+\d+[smhd]$")
# "Conversation info (untrusted metadata):" + a fenced json block, and its siblings.
_METADATA = re.compile(
    r"(?:^|\n)[A-Z][\w ]*\(untrusted[^)\n]*\):[ \t]*\n```(?:json)?\n(.*?)\n```[ \t]*(?=\n|$)",
    re.DOTALL,
)
_CURRENT_TIME = re.compile(r"(?:^|\n)Current time: [^\n]*\s*\Z")
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_UNCLOSED_REMINDER = re.compile(r"<system-reminder>.*\Z", re.DOTALL)
_BLANK_RUNS = re.compile(r"\n{3,}")


@dataclass(frozen=True)
class Stripped:
    """A message without its envelopes, and what they said."""

    text: str
    stamp: str | None = None  # the envelope's time as written: "Sat 2026-11-28 19:00 GMT+1"
    at: str | None = None  # that time in UTC (stored format), when its zone is unambiguous
    sender: str | None = None  # the channel and sender, or the metadata's sender name
    removed: tuple[str, ...] = ()  # "timestamp", "metadata", "current-time", "system-reminder"

    @property
    def changed(self) -> bool:
        return bool(self.removed)

    def hint(self) -> dict[str, str]:
        """What to keep of the envelope in a memory's metadata."""
        return {k: v for k, v in (("time", self.stamp), ("sender", self.sender)) if v}


def strip_reminders(text: str) -> str:
    """Claude Code's `<system-reminder>` blocks out (a cut-off one runs to the end)."""
    if "<system-reminder>" not in text:
        return text
    return _UNCLOSED_REMINDER.sub("", _REMINDER.sub("", text))


def strip(text: str) -> Stripped:
    """`text` without the harness envelopes it starts with (or carries); see the module."""
    if not isinstance(text, str) or not text:
        return Stripped(text or "")
    removed: list[str] = []
    stamp = at = sender = None
    rest = text
    if "<system-reminder>" in rest:
        rest = strip_reminders(rest)
        removed.append("system-reminder")
    for _ in range(3):  # an injected stamp may come before or after the metadata blocks
        rest = rest.lstrip()
        match = _STAMP.match(rest)
        if match:
            stamp = stamp or _written(match)
            at = at or _utc(match)
            sender = sender or _channel(match["pre"])
            rest = rest[match.end():]
            removed.append("timestamp")
            continue
        if "(untrusted" in rest and _METADATA.search(rest):
            meta_stamp, meta_sender = _metadata(rest)
            stamp, sender = stamp or meta_stamp, meta_sender or sender
            if meta_stamp and at is None:
                found = _STAMP.match(f"[{meta_stamp}] ")
                at = _utc(found) if found else None
            rest = _METADATA.sub("", rest)
            removed.append("metadata")
            continue
        break
    if "Current time: " in rest and _CURRENT_TIME.search(rest):
        rest = _CURRENT_TIME.sub("", rest)
        removed.append("current-time")
    if not removed:
        return Stripped(text)
    rest = _BLANK_RUNS.sub("\n\n", rest).strip()
    return Stripped(rest, stamp, at, sender, tuple(dict.fromkeys(removed)))


def _written(match: re.Match[str]) -> str:
    """The stamp as written, from its weekday (or date) to its zone."""
    start = match.start("dow") if match["dow"] else match.start("date")
    end = max(match.end("time"), match.end("z"), match.end("tz"))
    return match.string[start:end]


def _utc(match: re.Match[str]) -> str | None:
    """The stamp's time in UTC when its zone says the offset; else None."""
    if match["z"]:
        offset = timedelta(0)
    elif match["tz"] and (zone := _ZONE.match(match["tz"])):
        hours, minutes = int(zone["h"] or 0), int(zone["m"] or 0)
        if hours > 14 or minutes >= 60:
            return None
        offset = timedelta(hours=hours, minutes=minutes) * (-1 if zone["sign"] == "-" else 1)
    else:
        return None  # no zone, or an abbreviation (PST, CET, IST) that names several
    clock = match["time"] if match["time"].count(":") == 2 else f"{match['time']}:00"
    try:
        local = datetime.fromisoformat(f"{match['date']}T{clock}").replace(tzinfo=timezone(offset))
    except ValueError:
        return None
    if match["dow"] and local.strftime("%a") != match["dow"]:
        return None  # a weekday that does not match its date: not a stamp to trust
    return iso(local)


def _channel(pre: str | None) -> str | None:
    """ "Signal Alice +1555 +2m" → "Signal Alice +1555" (the elapsed marker dropped)."""
    if not pre:
        return None
    words = [w for w in pre.split() if not _ELAPSED.match(w)]
    return " ".join(words) or None


def _metadata(text: str) -> tuple[str | None, str | None]:
    """The time and the sender's name the metadata blocks give."""
    stamp = name = None
    for match in _METADATA.finditer(text):
        try:
            meta = json.loads(match.group(1))
        except ValueError:
            continue
        if not isinstance(meta, dict):
            continue
        if stamp is None and isinstance(meta.get("timestamp"), str):
            stamp = meta["timestamp"].strip() or None
        for key in ("name", "sender"):
            value = meta.get(key)
            if name is None and isinstance(value, str) and value.strip():
                name = value.strip()
    return stamp, name
