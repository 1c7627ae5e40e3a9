"""What agents' hooks run: `maxmem hook EVENT`.

`events` runs each event within its time budget, failing open; `recall` picks the
memories a prompt is shown and `shown` keeps which ones a session has seen; `warm` is
the warm recall server's socket (where it listens, how a hook asks it, how it starts)
and `server` the server (`python -m maxmem.hooks.server`); `log` writes hook.log.

Nothing is imported here: the prompt hook's short path (maxmem/entry.py) loads `warm`
and `log` alone before it knows whether the CLI is needed at all. The harnesses' names
are here, for the hooks and for `maxmem setup`'s wiring alike.
"""

# The programs agents run in, that a hook says it runs in (`--harness`): spelt as
# `maxmem setup` and `import --from` spell them, and as capture names their formats.
HARNESSES = ("claude-code", "codex", "openclaw")
# What hooks wired by an older maxmem say instead (`--harness claude`): still understood.
OLDER_HARNESS_NAMES = {"claude": "claude-code"}


def harness_named(word: str) -> str:
    """The harness `word` names: its current spelling for an older one, else `word` as
    given (for the caller to refuse when it is none of HARNESSES)."""
    return OLDER_HARNESS_NAMES.get(word, word)


def spellings(harness: str) -> frozenset[str]:
    """Every word that names `harness` on a hook's command line, older spellings included."""
    return frozenset({harness, *(old for old, new in OLDER_HARNESS_NAMES.items() if new == harness)})
