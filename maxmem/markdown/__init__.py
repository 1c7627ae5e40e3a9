"""The Markdown workspace: memories as Markdown files, both ways, in OpenClaw's layout.

OpenClaw keeps an agent's memory as plain Markdown in its workspace:

- `MEMORY.md` — curated long-term memory (decisions, preferences, durable facts),
  loaded at the start of private sessions;
- `memory/YYYY-MM-DD.md` — the daily log, append-only; today's and yesterday's are
  read at session start (`memory/YYYY-MM-DD-<slug>.md` variants are written by its
  session-memory hook and belong to the same day).

`render` writes memories as such files and `parse` reads any such file back,
hand-written ones included; `export` writes a brain's memories to a folder (`maxmem
export --format markdown`) and `merge` brings a folder's files back in (`maxmem import
--format markdown`), updating the memories edited in Markdown and reporting conflicts.
"""
