"""Files sealed with a key: AES-256-GCM (the `cryptography` package), authenticated.

What an encrypted brain writes outside brain.db (its retention archives) is sealed with a
key derived from the brain's key, so the file reads as noise without it and any change
to it is detected. One sealed blob:

    MAGIC (16 bytes) | salt (16) | nonce (12) | ciphertext | GCM tag (16)

A sealed file is written and read as a stream (Sealer, Unsealer), in memory bounded by
the pieces handed over, however large the file: the tag at its end is read first, the
ciphertext decrypted piece by piece and the tag checked once the last piece is in. Until
`Unsealer.finish` has checked it, what was decrypted is not to be trusted: a reader
acts on none of it before.

The file key comes from the secret and the salt: HKDF-SHA256 for a 64-hex-digit raw key
(already random), PBKDF2-SHA256 for a passphrase (slow on purpose, as brain.db's own
key derivation). `purpose` (e.g. "archive") enters the derivation and is authenticated,
so a blob sealed for one use never opens as another.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, BinaryIO

from .errors import EncryptionKeyError, InvalidInput
from .keys import RAW_KEY

MAGIC = b"maxmem-sealed\x00\x00\x01"  # the last byte is the format's version
SALT_BYTES = 16
NONCE_BYTES = 12
TAG_BYTES = 16
HEADER_BYTES = len(MAGIC) + SALT_BYTES + NONCE_BYTES
CHUNK = 1 << 20  # ciphertext read per piece
PASSPHRASE_ROUNDS = 200_000


def is_sealed(head: bytes) -> bool:
    """Whether a file starting with `head` (its first 16 bytes or more) is sealed."""
    return head[: len(MAGIC)] == MAGIC


def _file_key(secret: str, salt: bytes, purpose: str) -> bytes:
    from cryptography.hazmat.primitives import hashes  # loaded only when a file is sealed or opened

    info = b"maxmem " + purpose.encode("utf-8")
    if RAW_KEY.match(secret):
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        return HKDF(hashes.SHA256(), 32, salt, info).derive(bytes.fromhex(secret))
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

    return PBKDF2HMAC(hashes.SHA256(), 32, salt + info, PASSPHRASE_ROUNDS).derive(secret.encode("utf-8"))


def seal(secret: str, data: bytes, purpose: str) -> bytes:
    """`data` sealed under a key derived from `secret` for `purpose`."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    salt, nonce = os.urandom(SALT_BYTES), os.urandom(NONCE_BYTES)
    header = MAGIC + salt + nonce
    return header + AESGCM(_file_key(secret, salt, purpose)).encrypt(nonce, data, header + purpose.encode())


class Sealer:
    """Seal a stream: `header` first, then what `update` returns for each piece of data,
    then `finish()`'s bytes (the tag). The same bytes as `seal` of the whole."""

    def __init__(self, secret: str, purpose: str) -> None:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        salt, nonce = os.urandom(SALT_BYTES), os.urandom(NONCE_BYTES)
        self.header = MAGIC + salt + nonce
        self._encryptor: Any = Cipher(algorithms.AES(_file_key(secret, salt, purpose)), modes.GCM(nonce)).encryptor()
        self._encryptor.authenticate_additional_data(self.header + purpose.encode())

    def update(self, data: bytes) -> bytes:
        return self._encryptor.update(data)

    def finish(self) -> bytes:
        return self._encryptor.finalize() + self._encryptor.tag


class Unsealer:
    """Open the sealed file `stream` (a regular file open for reading, at its start) as a
    stream: `chunks()` yields its data decrypted, CHUNK of ciphertext at a time; `finish()`
    reads on to the end and checks the tag: EncryptionKeyError when the key is not the one
    it was sealed with or the file was changed, InvalidInput when it is not a whole sealed
    file (raised at once). Nothing `chunks()` gave is to be trusted before `finish()`."""

    def __init__(self, secret: str, stream: BinaryIO, purpose: str, what: str) -> None:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        self.stream, self.what = stream, what
        header = stream.read(HEADER_BYTES)
        size = os.fstat(stream.fileno()).st_size
        if not is_sealed(header) or len(header) < HEADER_BYTES or size < HEADER_BYTES + TAG_BYTES:
            raise InvalidInput(f"{what} is not a whole sealed file")
        stream.seek(size - TAG_BYTES)
        tag = stream.read(TAG_BYTES)
        stream.seek(HEADER_BYTES)
        self.left = size - HEADER_BYTES - TAG_BYTES  # ciphertext not read yet
        salt, nonce = header[len(MAGIC) : len(MAGIC) + SALT_BYTES], header[len(MAGIC) + SALT_BYTES :]
        self._decryptor: Any = Cipher(algorithms.AES(_file_key(secret, salt, purpose)),
                                      modes.GCM(nonce, tag)).decryptor()
        self._decryptor.authenticate_additional_data(header + purpose.encode())
        self._checked = False

    def chunks(self) -> Iterator[bytes]:
        while self.left > 0:
            data = self.stream.read(min(CHUNK, self.left))
            if not data:  # the file shrank while it was read: the tag check fails
                return
            self.left -= len(data)
            yield self._decryptor.update(data)

    def finish(self) -> None:
        """Decrypt what is left, unkept, and check the tag (once)."""
        from cryptography.exceptions import InvalidTag

        if self._checked:
            return
        for _ in self.chunks():
            pass
        try:
            self._decryptor.finalize()
        except InvalidTag:
            raise EncryptionKeyError(f"{self.what} does not open with the key given (a wrong key, or the file "
                                     "is damaged)") from None
        self._checked = True


def unseal(secret: str, blob: bytes, purpose: str, what: str) -> bytes:
    """The data sealed in `blob`; EncryptionKeyError when the key is not the one it was
    sealed with, InvalidInput when `blob` is damaged or not sealed. `what` names it."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    start = len(MAGIC) + SALT_BYTES + NONCE_BYTES
    if not is_sealed(blob) or len(blob) < start + 16:
        raise InvalidInput(f"{what} is not a whole sealed file")
    salt = blob[len(MAGIC) : len(MAGIC) + SALT_BYTES]
    nonce = blob[len(MAGIC) + SALT_BYTES : start]
    try:
        return AESGCM(_file_key(secret, salt, purpose)).decrypt(nonce, blob[start:], blob[:start] + purpose.encode())
    except InvalidTag:
        raise EncryptionKeyError(f"{what} does not open with the key given (a wrong key, or the file is damaged)"
                                 ) from None
