"""The change files of folder sync, sealed with the user's key, and the key itself.

A file is a 52-byte header followed by one AES-256-GCM ciphertext (`cryptography`'s
AESGCM). The header is plain, so that a reader can tell a file of another key, of a
newer maxmem or one still being delivered before trying to decrypt it, and it is the
cipher's associated data, so that none of it can be altered without the file failing
to authenticate:

    offset  size  field
    0       6     magic b"MXSYNC"
    6       2     format version (big-endian; this maxmem writes and reads 1)
    8       8     machine id (the writer's, 16 hex digits as 8 bytes)
    16      8     file number (the writer's own count, from 1)
    24      8     key id: the first 8 bytes of SHA-256("maxmem sync key id" + key)
    32      12    nonce (random for every write)
    44      8     length of the ciphertext that follows (with its 16-byte tag)

The plaintext is a 4-byte length, that many bytes of zlib-compressed JSON (the
records: `{"embedder": …, "dim": …, "records": […]}`), then the records' vectors as
raw float16, one after the other.

A reader bounds what a file may cost before it spends it: a file longer than
`MAX_FILE_BYTES` is not read, its JSON is decompressed by a streaming decompressor
that stops at `MAX_JSON_BYTES` (a small file cannot unfold into gigabytes), JSON of
more than `MAX_CONTAINERS` lists and objects is not parsed (a few bytes each, they
would cost a hundred each in memory), and JSON nested deeper than Python can parse is
refused, not raised. Writers cut their files well below these (sync/folder.py).

The key is 32 random bytes, kept base64-encoded in `sync.key` in the config folder,
readable by its owner only: a key file others can read is refused.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import InvalidInput, MaxmemError
from ..files import open_regular, read_at_most
from ..keys import MAX_KEY_FILE_BYTES

MAGIC = b"MXSYNC"
FORMAT = 1
SUFFIX = ".mxsync"
HEADER = struct.Struct(">6sH8sQ8s12sQ")
PREAMBLE = struct.Struct(">6sH")  # what every format version starts with
KEY_BYTES = 32
KEY_COMMENT = ("# maxmem sync key: every machine that syncs through the same folder needs this file "
               "(maxmem sync folder DIR --key-file FILE). Keep it secret: it reads all your memories.")
MACHINE = struct.Struct(">Q")
# What a reader accepts: writers cut their files well below (sync/folder.py, FILE_TEXT_BYTES).
MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_JSON_BYTES = 64 * 1024 * 1024
MAX_CONTAINERS = 1_000_000  # lists and objects ('[' and '{', in strings too): what parsing may build
MAX_DIM = 8192  # the widest vector a file may carry


class SyncKeyError(MaxmemError):
    """The sync key is missing, unreadable, readable by others, or not the folder's key."""


class ChangeFileError(MaxmemError):
    """A file of the sync folder that cannot be applied (yet): incomplete, damaged, newer."""


class Incomplete(ChangeFileError):
    """Shorter than its header says: still being delivered, or cut short."""


class Damaged(ChangeFileError):
    """It does not authenticate with the right key: altered or corrupted."""


class Newer(ChangeFileError):
    """Written by a newer maxmem, in a format this one does not read."""


class Foreign(ChangeFileError):
    """Not a maxmem sync file at all."""


@dataclass(frozen=True)
class Header:
    version: int
    machine: str
    number: int
    key_id: bytes
    nonce: bytes
    length: int


@dataclass(frozen=True)
class Payload:
    """What a file carries: records (JSON-ready dicts) and the vectors some refer to."""

    records: list[dict[str, Any]]
    embedder: str | None = None
    vectors: np.ndarray | None = None  # float16, one row per vector; a record's "v" is its row


# -- the key ----------------------------------------------------------------------------

def key_id(key: bytes) -> bytes:
    return hashlib.sha256(b"maxmem sync key id" + key).digest()[:8]


def make_key(path: Path) -> bytes:
    """A new random key written to `path` (0600, folder 0700); refuses to replace one."""
    key = AESGCM.generate_key(bit_length=8 * KEY_BYTES)
    write_key(path, key, replace=False)
    return key


def write_key(path: Path, key: bytes, replace: bool = True) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(f"{KEY_COMMENT}\n{base64.urlsafe_b64encode(key).decode()}\n")
            handle.flush()
            os.fsync(handle.fileno())
        if not replace and path.exists():
            raise SyncKeyError(f"{path} already exists: it is this machine's sync key")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def read_key(path: Path) -> bytes:
    """The key in `path`; SyncKeyError (one line) when it is missing, readable by others
    or not a key."""
    try:
        with open_regular(path, "a sync key") as handle:  # a FIFO or a device: refused, never read
            mode = stat.S_IMODE(os.fstat(handle.fileno()).st_mode)
            if mode & 0o077:
                raise SyncKeyError(f"{path} is readable by others (mode {mode:04o}): it unlocks every memory; "
                                   f"run  chmod 600 {path}  and try again")
            raw = read_at_most(handle, MAX_KEY_FILE_BYTES)
    except FileNotFoundError:
        raise SyncKeyError(f"no sync key at {path}") from None
    except OSError as exc:
        raise SyncKeyError(f"cannot read the sync key {path}: {exc.strerror}") from None
    except InvalidInput as exc:
        raise SyncKeyError(str(exc)) from None
    try:
        if raw is None:
            raise ValueError("too large")
        lines = [line.strip() for line in raw.decode("utf-8").splitlines()]
        text = next(line for line in lines if line and not line.startswith("#"))
        key = base64.urlsafe_b64decode(text.encode("ascii"))
    except (UnicodeDecodeError, StopIteration, ValueError):
        raise SyncKeyError(f"{path} is not a maxmem sync key: copy sync.key from a machine that syncs") from None
    if len(key) != KEY_BYTES:
        raise SyncKeyError(f"{path} is not a maxmem sync key: copy sync.key from a machine that syncs")
    return key


# -- files ------------------------------------------------------------------------------

def machine_bytes(machine: str) -> bytes:
    return bytes.fromhex(machine)


def encode(payload: Payload) -> bytes:
    """The plaintext of a file."""
    head: dict[str, Any] = {"records": payload.records}
    if payload.vectors is not None and len(payload.vectors):
        head["embedder"] = payload.embedder
        head["dim"] = int(payload.vectors.shape[1])
    packed = zlib.compress(json.dumps(head, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), 6)
    vectors = b"" if "dim" not in head else np.asarray(payload.vectors, dtype="<f2").tobytes()
    return struct.pack(">I", len(packed)) + packed + vectors


def inflate(packed: bytes, limit: int | None = None) -> bytes:
    """`packed` decompressed, at most `limit` (MAX_JSON_BYTES) bytes of it allocated:
    Damaged when it holds more, or is not whole."""
    limit = MAX_JSON_BYTES if limit is None else limit
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(packed, limit)
    except zlib.error:
        raise Damaged("its content is not what this format holds") from None
    if inflater.unconsumed_tail:
        raise Damaged(f"its records unpack to more than {limit // (1024 * 1024)} MiB: refused unread")
    if not inflater.eof:
        raise Damaged("its content is cut short")
    return out


def decode(plaintext: bytes) -> Payload:
    try:
        (size,) = struct.unpack_from(">I", plaintext)
        raw = inflate(plaintext[4:4 + size])
        if raw.count(b"[") + raw.count(b"{") > MAX_CONTAINERS:
            raise Damaged(f"its records hold more than {MAX_CONTAINERS:,} lists and objects: refused unparsed")
        head = json.loads(raw)
        records = head["records"]
        dim = head.get("dim")
        embedder = head.get("embedder")
        vectors = None
        if dim is not None:
            if not isinstance(dim, int) or isinstance(dim, bool) or not 0 < dim <= MAX_DIM:
                raise ValueError(dim)
            raw = plaintext[4 + size:]
            vectors = np.frombuffer(raw, dtype="<f2").reshape(-1, dim)
    except RecursionError:
        raise Damaged("its records are nested deeper than JSON this format holds") from None
    except (struct.error, ValueError, KeyError, TypeError):
        raise Damaged("its content is not what this format holds") from None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise Damaged("its records are not what this format holds")
    if embedder is not None and not isinstance(embedder, str):
        raise Damaged("its embedder is not what this format holds")
    return Payload(records, embedder, vectors)


def seal(key: bytes, machine: str, number: int, payload: Payload) -> bytes:
    """The bytes of file `number` of `machine`."""
    plaintext = encode(payload)
    nonce = os.urandom(12)
    length = len(plaintext) + 16
    header = HEADER.pack(MAGIC, FORMAT, machine_bytes(machine), number, key_id(key), nonce, length)
    return header + AESGCM(key).encrypt(nonce, plaintext, header)


def read_header(data: bytes) -> Header:
    """The header of a file's first bytes (at least HEADER.size of them, when there are)."""
    if len(data) < PREAMBLE.size:
        if MAGIC.startswith(data[:len(MAGIC)]):
            raise Incomplete(f"it holds {len(data)} bytes, less than a header")
        raise Foreign("not a maxmem sync file")
    magic, version = PREAMBLE.unpack_from(data)
    if magic != MAGIC:
        raise Foreign("not a maxmem sync file")
    if version > FORMAT:
        raise Newer(f"written by a newer maxmem (format {version}; this one reads {FORMAT}): "
                    "nothing of it applied; upgrade maxmem here (pip install -U maxmem)")
    if version < 1:
        raise Foreign(f"format {version} is not a maxmem sync format")
    if len(data) < HEADER.size:
        raise Incomplete(f"it holds {len(data)} bytes, less than a header")
    _, _, machine, number, kid, nonce, length = HEADER.unpack_from(data)
    return Header(version, machine.hex(), number, kid, nonce, length)


def unseal(key: bytes, data: bytes) -> tuple[Header, Payload]:
    """Header and payload of a whole file; Incomplete, Damaged, Newer, Foreign or
    SyncKeyError (another key) when it cannot be read."""
    header = read_header(data)
    if header.key_id != key_id(key):
        raise SyncKeyError("sealed with another key")
    if header.length > MAX_FILE_BYTES:
        raise Damaged(f"its header says {header.length:,} bytes, more than a change file holds "
                      f"({MAX_FILE_BYTES // (1024 * 1024)} MiB): refused unread")
    body = data[HEADER.size:]
    if len(body) < header.length:
        raise Incomplete(f"{HEADER.size + len(body)} of {HEADER.size + header.length} bytes: "
                         "the sync tool is still delivering it, or it was cut short")
    if len(body) > header.length:
        raise Damaged("longer than its header says")
    try:
        plaintext = AESGCM(key).decrypt(header.nonce, body, data[:HEADER.size])
    except InvalidTag:
        raise Damaged("it does not authenticate: damaged or altered") from None
    return header, decode(plaintext)
