"""The exceptions maxmem raises. Every message is one line that says what to do."""

from __future__ import annotations


class MaxmemError(Exception):
    """Base class: an expected failure with a message a user can act on."""

    exit_code = 1


class InvalidInput(MaxmemError):
    """The caller gave a value maxmem cannot accept (CLI exit code 2)."""

    exit_code = 2


class NotFound(MaxmemError):
    """No memory (or other object) with that id."""


class DatabaseError(MaxmemError):
    """brain.db cannot be opened, is locked too long, corrupt, or from another embedder."""


class EncryptionKeyError(DatabaseError):
    """An encrypted brain.db (or one of its backups or archives) and no key, a wrong key,
    or a key file others can read."""


class EmbeddingError(MaxmemError):
    """The embedding provider failed (bad key, unreachable, rate limited)."""


class ConfigError(MaxmemError):
    """The configuration file or an environment variable is invalid."""

    exit_code = 2


class MissingDependency(MaxmemError):
    """An optional extra is not installed; the message names the pip command."""

    def __init__(self, module: str, extra: str) -> None:
        super().__init__(
            f"{module} is not installed: run  pip install 'maxmem[{extra}]'"
        )
        self.module = module
        self.extra = extra
