"""The key of an encrypted brain.db: where it is found, in one documented order.

1. `MAXMEM_KEY` in the environment;
2. a key file: `key_file` in the config (or `MAXMEM_KEY_FILE`), else `brain.key` in the
   config folder. It must be readable by its owner only (0600): one that others can read
   is refused, saying why;
3. the OS keyring (the `keyring` package: `pip install 'maxmem[keyring]'`), service
   "maxmem", name "brain.key". It is asked only for a brain.db that is encrypted and got
   no key from 1 or 2, so a plain brain.db never waits on a keyring.

`load_config` resolves the key once (library code never reads the environment) and
`Database` applies it. A key that is exactly 64 hexadecimal digits (what maxmem makes)
is used as the raw 256-bit key; any other text is a passphrase, stretched by SQLite3
Multiple Ciphers' Argon2id on every open (about 30 ms).

The cipher is AEGIS-256 (SQLite3 Multiple Ciphers' "aegis"): authenticated like its
default ChaCha20-Poly1305, and built on the CPU's AES instructions, which makes it the
fastest of its ciphers here (bench/encrypt_bench.py --cipher compares them).
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .errors import EncryptionKeyError, InvalidInput
from .files import open_regular, read_at_most, write_private

log = logging.getLogger("maxmem")

KEY_FILE_NAME = "brain.key"
KEYRING_SERVICE = "maxmem"
KEYRING_NAME = "brain.key"
ENV_VAR = "MAXMEM_KEY"
MAX_KEY_FILE_BYTES = 4096  # a key (64 hex digits, or a passphrase) is small: a larger file is not one
CIPHER = "aegis"  # SQLite3 Multiple Ciphers' name; a file does not record it: every open sets it
RAW_KEY = re.compile(r"^[0-9a-fA-F]{64}$")
SQLITE_HEADER = b"SQLite format 3\x00"
# SQLite3 Multiple Ciphers leaves bytes 16-23 of the header readable (page size, file
# format versions, reserved bytes, payload fractions): the last three are always these.
CIPHER_HEADER_TAIL = b"\x40\x20\x20"


@dataclass(frozen=True)
class Key:
    """A brain's key and where it was found (for messages: never the key itself)."""

    secret: str = field(repr=False)
    source: str
    cipher: str = CIPHER

    def pragma(self) -> str:
        """The value of SQLite3 Multiple Ciphers' `PRAGMA key` for this key."""
        return f"x'{self.secret}'" if RAW_KEY.match(self.secret) else self.secret


# The end of every "no key" message: the three places a key is looked for.
HOW_TO_GIVE = (f"set {ENV_VAR}, put the key in {KEY_FILE_NAME} beside config.toml (mode 0600), "
               f"or store it in the OS keyring (service {KEYRING_SERVICE!r}, name {KEYRING_NAME!r})")


def is_encrypted(path: Path) -> bool:
    """Whether `path` is a database encrypted by SQLite3 Multiple Ciphers (its first 16
    bytes are not SQLite's header, and bytes 16-23 still read like one)."""
    try:
        with open_regular(path) as handle:  # a FIFO is no database: never waited on
            head = handle.read(24)
    except (OSError, InvalidInput):
        return False
    return len(head) == 24 and head[:16] != SQLITE_HEADER and head[21:24] == CIPHER_HEADER_TAIL


def new_secret() -> str:
    """A new random 256-bit key, as 64 hexadecimal digits."""
    return secrets.token_hex(32)


def read_key_file(path: Path) -> Key:
    """The key in `path`; EncryptionKeyError when others can read it, it is empty, or it
    is no key file (a FIFO, a device, more than MAX_KEY_FILE_BYTES: refused, never read on)."""
    try:
        with open_regular(path, "a key file") as handle:
            info = os.fstat(handle.fileno())
            if stat.S_IMODE(info.st_mode) & 0o077:
                raise EncryptionKeyError(
                    f"the key file {path} can be read by others (mode {stat.S_IMODE(info.st_mode):04o}): "
                    f"it is not used; run  chmod 600 {path}"
                )
            if hasattr(os, "getuid") and info.st_uid != os.getuid():
                raise EncryptionKeyError(f"the key file {path} belongs to another user: it is not used")
            raw = read_at_most(handle, MAX_KEY_FILE_BYTES)
        if raw is None:
            raise EncryptionKeyError(f"the key file {path} holds more than {MAX_KEY_FILE_BYTES} bytes: "
                                     "it is not a key; write the key on one line")
        secret = raw.decode("utf-8").strip()
    except InvalidInput as exc:
        raise EncryptionKeyError(f"the key file {exc}") from None
    except OSError as exc:
        raise EncryptionKeyError(f"cannot read the key file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise EncryptionKeyError(f"the key file {path} is not text: write the key as one line") from None
    if not secret or "\n" in secret:
        raise EncryptionKeyError(f"the key file {path} must hold the key on one line")
    return Key(secret, f"the key file {path}")


def write_key_file(path: Path, secret: str) -> Key:
    """Save a key to a new 0600 file (never over an existing one: it may hold the key of
    backups and archives)."""
    if path.exists():
        raise EncryptionKeyError(f"{path} exists already: not replacing a key file")
    write_private(path, lambda handle: handle.write(secret + "\n"))
    return Key(secret, f"the key file {path}")


def keyring_secret() -> str | None:
    """The key stored in the OS keyring, or None (no keyring package, no backend, no entry)."""
    try:
        import keyring
    except ImportError:
        return None
    try:
        return keyring.get_password(KEYRING_SERVICE, KEYRING_NAME) or None
    except Exception as exc:  # any backend's failure (locked, no D-Bus) means: not found here
        log.debug("the OS keyring gave no key: %s", exc)
        return None


def store_in_keyring(secret: str) -> Key:
    """Save a key in the OS keyring; EncryptionKeyError when there is no usable keyring."""
    try:
        import keyring
    except ImportError:
        raise EncryptionKeyError("the keyring package is not installed: run  pip install 'maxmem[keyring]'"
                                 " (or keep the key in a key file)") from None
    try:
        keyring.set_password(KEYRING_SERVICE, KEYRING_NAME, secret)
    except Exception as exc:
        raise EncryptionKeyError(f"the OS keyring cannot store the key ({exc}): keep it in a key file") from None
    return Key(secret, "the OS keyring")


def key_file_path(key_file: Path | None, folder: Path) -> Path:
    """Where the key file is: the configured one, else brain.key in the config folder."""
    return key_file if key_file is not None else folder / KEY_FILE_NAME


def resolve(env: Mapping[str, str], key_file: Path | None, folder: Path, db_path: Path) -> Key | None:
    """The key by the order above, or None. `key_file` is the configured file (None: the
    default `brain.key` in `folder`, the config folder, used when it exists); a
    configured one that does not exist is an error only for an encrypted brain.db."""
    if env.get(ENV_VAR):
        return Key(env[ENV_VAR], ENV_VAR)
    path = key_file_path(key_file, folder)
    if path.exists():
        return read_key_file(path)
    if str(db_path) == ":memory:" or not is_encrypted(db_path):
        return None
    secret = keyring_secret()
    if secret:
        return Key(secret, "the OS keyring")
    if key_file is not None:
        raise EncryptionKeyError(f"the key file {key_file} (key_file in the config) does not exist: "
                                 f"put {db_path.name}'s key there, or {HOW_TO_GIVE}")
    return None
