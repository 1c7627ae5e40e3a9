"""Files sealed with a key: AES-256-GCM (the `cryptography` package), authenticated.

What an encrypted brain writes outside brain.db (its retention archives) is sealed with a
key derived from the brain's key, so the file reads as noise without it and any change
to it is detected. One sealed blob:

    MAGIC (16 bytes) | salt (16) | nonce (12) | ciphertext and GCM tag

The file key comes from the secret and the salt: HKDF-SHA256 for a 64-hex-digit raw key
(already random), PBKDF2-SHA256 for a passphrase (slow on purpose, as brain.db's own
key derivation). `purpose` (e.g. "archive") enters the derivation and is authenticated,
so a blob sealed for one use never opens as another.
"""

from __future__ import annotations

import os

from .errors import EncryptionKeyError, InvalidInput
from .keys import RAW_KEY

MAGIC = b"maxmem-sealed\x00\x00\x01"  # the last byte is the format's version
SALT_BYTES = 16
NONCE_BYTES = 12
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
