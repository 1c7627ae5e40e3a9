"""What agents' hooks run: `maxmem hook EVENT`.

`events` runs each event within its time budget, failing open; `recall` picks the
memories a prompt is shown and `shown` keeps which ones a session has seen; `warm` is
the warm recall server's socket (where it listens, how a hook asks it, how it starts)
and `server` the server (`python -m maxmem.hooks.server`); `log` writes hook.log.

Nothing is imported here: the prompt hook's short path (maxmem/entry.py) loads `warm`
and `log` alone before it knows whether the CLI is needed at all.
"""
