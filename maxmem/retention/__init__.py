"""Retention: expire old memories by category, archive them first, reclaim the space.

Policy (config `[retention]`): core and project forever, daily 90 days, conversation
30 days. Pinned memories and those written by a commit trigger never expire. The
turns and tool calls of captured sessions age with the conversation memories.

Ages are counted in the jobs' day: calendar days of `[retention] timezone` (default
America/New_York, where the nightly job runs at 03:00), not your zone as the brief's: a conversation memory kept
30 days goes at the first run on or after local midnight 30 days after the day it
was made, whatever daylight saving time did in between.

`plan` is the dry run. `apply` works in batches: each batch's expired rows go to a
gzipped JSONL archive next to brain.db (one file per batch, mode 0600, written
whole, fsynced and read back before it is renamed into place: archive.py; `maxmem
import FILE` restores the memories), and only then are they deleted, in one
transaction, through Brain's delete path (keyword index, vectors and the change log
follow). A run killed anywhere leaves every row in brain.db or in a complete archive
(or both: the next run finishes the batch without archiving it twice; see `resume`).
It then prunes archives older than `archive_days`, and runs VACUUM when the free
pages reach `vacuum_share` of the file. `check_archives` is what `maxmem doctor`
reports about interrupted runs and damaged archives.

`policy` reads `[retention]` and computes the cutoffs; `run` applies it (`apply`, and
`resume` for what an interrupted run left); `archives` knows this brain's archive
files (their names, the journal of a run under way, pruning, doctor's check and the
repair); `vacuum` reclaims the space; `stats` is the dry run and the growth per month;
`report` says them as text.
"""
