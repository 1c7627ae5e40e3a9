"""Encryption at rest: `maxmem encrypt` and `maxmem decrypt` (maxmem.encryption)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from .. import encryption
from ..config import state_dir
from ..hooks.warm import stop_servers
from .common import State, emit, json_option, pass_state


@click.command()
@click.option("--keyring", "in_keyring", is_flag=True,
              help="Keep a new key in the OS keyring (pip install 'maxmem[keyring]') instead of a key file.")
@json_option
@pass_state
def encrypt(state: State, in_keyring: bool, as_json: bool) -> None:
    """Encrypt brain.db in place, after a backup of it as it is.

    The key is the one MAXMEM_KEY, the key file or the OS keyring gives, else a new random
    one saved first to brain.key beside config.toml (mode 0600) or, with --keyring, to the
    OS keyring. The encrypted copy is checked before it replaces brain.db; a run killed at
    any point leaves brain.db whole. Stop agents that hold brain.db open (their MCP
    server) first; the prompt hook's recall servers are stopped here.
    """
    stop_servers(state_dir(os.environ))  # each holds brain.db open; the next prompt starts one again
    done = encryption.encrypt(Path(state.config.db_path), state.config, in_keyring)
    emit(done.to_dict(), as_json, lambda d: [
        f"encrypted {d['path']}: {d['memories']} memories; the key is in {d['key_source']}",
        f"backup as it was (not encrypted): {d['backup']}",
        *([f"archives sealed: {len(d['archives'])}"] if d["archives"] else []),
        *([f"warning: {len(d['plain_backups'])} backup(s) in {Path(d['plain_backups'][0]).parent} hold your "
           "memories in clear: delete them once the encrypted brain.db serves you"] if d["plain_backups"] else []),
        "keep a copy of the key somewhere safe: without it brain.db, its backups and archives cannot be read",
    ])


@click.command()
@json_option
@pass_state
def decrypt(state: State, as_json: bool) -> None:
    """Decrypt brain.db in place (back to a plain SQLite file), after an encrypted backup.

    The key stays where it is: the encrypted backups need it. Archives are opened again.
    """
    stop_servers(state_dir(os.environ))
    done = encryption.decrypt(Path(state.config.db_path), state.config)
    emit(done.to_dict(), as_json, lambda d: [
        f"decrypted {d['path']}: {d['memories']} memories",
        f"backup as it was (encrypted): {d['backup']}",
        *([f"archives opened: {len(d['archives'])}"] if d["archives"] else []),
        "the key file or keyring entry is kept: the encrypted backups need it",
    ])


COMMANDS = [encrypt, decrypt]
