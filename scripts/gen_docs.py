#!/usr/bin/env python3
"""Regenerate docs/cli.md (every command's --help) and docs/schema.md (brain.db's DDL).

    python scripts/gen_docs.py          # write the files
    python scripts/gen_docs.py --check  # exit 1 if they differ from the code (a test runs this)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def cli_reference() -> str:
    from maxmem.cli import cli

    lines = ["# maxmem command reference", "",
             "Generated from the code by `python scripts/gen_docs.py`; do not edit by hand.", ""]

    def walk(command: click.Command, path: list[str]) -> None:
        with click.Context(command, info_name=" ".join(path), terminal_width=100) as ctx:
            help_text = command.get_help(ctx)
        lines.extend([f"## `{' '.join(path)}`", "", "```", help_text.rstrip(), "```", ""])
        if isinstance(command, click.Group):
            for name in sorted(command.list_commands(ctx)):
                sub = command.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    walk(sub, [*path, name])

    walk(cli, ["maxmem"])
    return "\n".join(lines)


def schema_reference() -> str:
    from maxmem import Brain
    from maxmem.store.migrations import MIGRATIONS

    lines = ["# brain.db schema", "",
             "Generated from the migrations by `python scripts/gen_docs.py`; do not edit by hand.",
             "", "Migrations, in order: " + ", ".join(f"`{name}`" for name, _ in MIGRATIONS) + ".", "",
             "`memories_vec` (a sqlite-vec `vec0` table) is created on the first vector with the "
             "embedder's dimension (chunks of about 192 KB: `vectors.vector_table_sql`); `meta` records "
             "the embedder, the quantizer and the schema facts.", "",
             "`embeddings_cache` holds (as float16) the vector of every text embedded that no live "
             "memory holds as its stored vector: a memory without a title and outside a session "
             "stores exactly its text's vector in `memories_vec`, which the cache then reads instead "
             "of keeping a copy (copied into the cache before that memory is deleted or re-embedded).",
             ""]
    with tempfile.TemporaryDirectory() as tmp:
        with Brain.open(Path(tmp) / "brain.db", embedder="none") as brain:
            rows = brain.db.rows(
                "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
                "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'memories_fts_%' ORDER BY rowid")
    for row in rows:
        lines.extend([f"## {row['type']} `{row['name']}`", "", "```sql", row["sql"].strip() + ";", "```", ""])
    return "\n".join(lines)


def main() -> None:
    check = "--check" in sys.argv
    stale = []
    for path, text in ((ROOT / "docs" / "cli.md", cli_reference()),
                       (ROOT / "docs" / "schema.md", schema_reference())):
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.parent.mkdir(exist_ok=True)
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("out of date: " + ", ".join(stale) + " — run  python scripts/gen_docs.py", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
