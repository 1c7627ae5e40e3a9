"""Commands for backups: backup and restore (SQLite's online backup API, checked)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..backup import create_backup, restore
from .common import State, emit, json_option, pass_state


@click.command("backup")
@click.argument("dest", required=False, type=click.Path(path_type=str))  # str: keeps a trailing /
@click.option("--keep", type=click.IntRange(min=1),
              help="Rotated backups to keep (default: [backup] keep, 7).")
@json_option
@pass_state
def backup_(state: State, dest: str | None, keep: int | None, as_json: bool) -> None:
    """Copy brain.db safely while it is in use (SQLite's online backup API).

    DEST may be a folder (default: [backup] dir, else backups/ beside brain.db), where
    the newest --keep backups are kept, or a new file name. Backups are checked with
    PRAGMA integrity_check, self-contained (no -wal), mode 0600 in a 0700 folder.
    Never copy a brain.db in use with cp: it can tear (see docs/backup.md).
    """
    result = create_backup(state.config.db_path, dest, config=state.config, keep=keep)
    emit(result.to_dict(), as_json, lambda r: [
        f"backed up {r['memories']} memories to {r['path']} ({r['size_bytes'] / 1e6:.1f} MB)",
        *(f"removed old backup {p}" for p in r["removed"]),
    ])


@click.command("restore")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True,
              help="Restore even if its vectors come from another embedder (then run maxmem reindex).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@json_option
@pass_state
def restore_(state: State, file: Path, force: bool, yes: bool, as_json: bool) -> None:
    """Replace brain.db with the backup FILE, after checking it.

    FILE must pass PRAGMA integrity_check, have a schema this maxmem knows and vectors
    from the configured embedder. The current brain.db is kept aside first as
    before-restore-<time>.db in the backups folder.
    """
    if not yes and sys.stdin.isatty():
        click.confirm(f"replace {state.config.db_path} with {file}?", abort=True)
    result = restore(file, state.config.db_path, config=state.config, embedder=state.embedder,
                     force=force)
    emit(result.to_dict(), as_json, lambda r: [
        f"restored {r['memories']} memories from {r['restored_from']} into {r['path']}",
        f"the previous brain.db is kept at {r['kept_aside']}" if r["kept_aside"]
        else "there was no previous brain.db",
    ])


COMMANDS = [backup_, restore_]
