"""What agents' hooks run: `maxmem hook EVENT`.

`events` runs each event within its time budget, failing open; `recall` picks the
memories a prompt is shown and `shown` keeps which ones a session has seen; `warm` is
the warm recall server's socket (where it listens, how a hook asks it, how it starts)
and `server` the server (`python -m maxmem.hooks.server`); `log` writes hook.log.

Only the agents' records are imported here: the prompt hook's short path (maxmem/entry.py)
loads `warm` and `log` alone before it knows whether the CLI is needed at all. The
harnesses' names are here, for the hooks and for `maxmem setup`'s wiring alike.
"""

import sys

from ..agents import AGENTS, agent_named
from ..files import read_at_most

MAX_INPUT_BYTES = 64 << 20  # a hook's stdin read at most: a harness sends one JSON object

# The programs agents run in, that a hook says it runs in (`--harness`): the agents'
# names, as `maxmem setup`, `import --from` and `capture --format` spell them.
HARNESSES = tuple(a.name for a in AGENTS)


def harness_named(word: str) -> str:
    """The harness `word` names: its current spelling for an older one, else `word` as
    given (for the caller to refuse when it is none of HARNESSES)."""
    found = agent_named(word)
    return found.name if found is not None else word


def spellings(harness: str) -> frozenset[str]:
    """Every word that names `harness` on a hook's command line, older spellings included."""
    found = agent_named(harness)
    return frozenset({harness, *(found.aliases if found is not None else ())})


def read_input() -> str:
    """The event's JSON a harness gives on stdin, as text ("" from a terminal, and for
    more than MAX_INPUT_BYTES: /dev/zero or an endless pipe is not read on until memory
    runs out)."""
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    data = read_at_most(sys.stdin.buffer, MAX_INPUT_BYTES)
    return "" if data is None else data.decode("utf-8", "replace")
