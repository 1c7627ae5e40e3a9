"""Hybrid logical clocks: the stamps that order the changes of several machines.

A stamp is 32 hex digits: 16 of the clock (milliseconds since the epoch shifted left
16 bits, plus a counter in the low 16 bits), then the 16 of the machine id. Compared
as strings they compare as (clock, machine): a later write wins, and two writes of the
same instant are told apart by the machine, the same way everywhere.

The clock never goes back and never falls behind a stamp it has seen: a change made
after another machine's change was applied here gets a later stamp than it, whatever
the two machines' wall clocks say. A stamp whose time is far ahead of this machine's
wall clock is refused before it is seen (`ahead`): seen, it would drag this machine's
clock along with it (and past 16 hex digits, break the order of every later stamp).
"""

from __future__ import annotations

import re
from datetime import datetime

from ..clock import parse_time

COUNTER_BITS = 16
WIDTH = 16  # hex digits of the clock part
MAX_CLOCK = (1 << (4 * WIDTH)) - (1 << COUNTER_BITS)  # room for a counter past the last millisecond
STAMP = re.compile(r"^[0-9a-f]{32}$")


def wall_ms(at: str | datetime) -> int:
    """Milliseconds since the epoch of a stored time."""
    return int(parse_time(at).timestamp() * 1000)


def from_wall(ms: int) -> int:
    return max(0, ms) << COUNTER_BITS


def valid(value: object) -> bool:
    """32 lowercase hex digits: a stamp as this module writes it."""
    return isinstance(value, str) and STAMP.match(value) is not None


def ahead(value: str, now_ms: int, slack_ms: int) -> bool:
    """The stamp's time is more than `slack_ms` after `now_ms` (this machine's wall clock)."""
    return (clock_of(value) >> COUNTER_BITS) > now_ms + slack_ms


def stamp(clock: int, machine: str) -> str:
    return f"{clock:0{WIDTH}x}{machine}"


def clock_of(value: str) -> int:
    return int(value[:WIDTH], 16)


def machine_of(value: str) -> str:
    return value[WIDTH:]


def time_of(value: str) -> datetime:
    """When a stamp's change was made, as its machine's clock said (to the millisecond)."""
    return datetime.fromtimestamp((clock_of(value) >> COUNTER_BITS) / 1000).astimezone()


class Clock:
    """One machine's hybrid logical clock, from its last value."""

    def __init__(self, last: int = 0) -> None:
        self.last = last

    def tick(self, ms: int) -> int:
        """The clock of a change made at wall time `ms`: after every stamp seen."""
        self.last = min(max(from_wall(ms), self.last + 1), MAX_CLOCK)
        return self.last

    def see(self, clock: int) -> None:
        """A stamp arrived from another machine: later changes here come after it. One
        past the clock's range (the caller refuses those first) is not seen."""
        if clock <= MAX_CLOCK:
            self.last = max(self.last, clock)
