"""The six mandatory commit triggers: find them in conversation text, commit them to core.

A trigger is a sentence that carries durable knowledge: a **decision** (what was
decided and why), a **milestone** (something shipped, finished, reached), a
**preference** (how the user wants things), a **failure** (what broke, the cause,
the fix), a **lesson** (what to do differently next time), or an explicit
**remember** request.

Detection is rule based and sentence level, and it is built for precision: a core
full of chatter is worse than none. Each trigger has positive patterns written
around first-person subjects ("we decided", "I prefer"), and every sentence must
also pass the negative guards: questions, hypotheticals and conditions ("if we
decide..."), speculation, quoted text and code (masked before matching), reported
speech and third parties ("my sister decided..."), negations and plans ("we
haven't decided", "we plan to launch"). Patterns and guards can be extended or
replaced from the `[triggers]` section of the config.

`rules` holds the patterns and reads the config; `prefilter` says which rules a
sentence can match at all; `detect` finds the trigger sentences in turns; `commit`
writes them to core, for captured turns and in a sweep of stored conversations.
"""
