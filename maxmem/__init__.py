"""maxmem: a personal AI agent's long-term memory in one SQLite file.

The names below are imported on first use, so `maxmem --version` and the jobs that
need little of the package start fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Brain": "brain",
    "EmbedRun": "brain",
    "Clock": "clock",
    "FixedClock": "clock",
    "Config": "config",
    "load_config": "config",
    "Embedder": "embeddings",
    "LocalEmbedder": "embeddings",
    "OpenAIEmbedder": "embeddings",
    "ConfigError": "errors",
    "DatabaseError": "errors",
    "EmbeddingError": "errors",
    "InvalidInput": "errors",
    "MaxmemError": "errors",
    "MissingDependency": "errors",
    "NotFound": "errors",
    "Filters": "memory",
    "Hit": "memory",
    "Memory": "memory",
}

__all__ = [*_EXPORTS, "__version__"]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # 0.1 s: only when asked

    try:
        return version("maxmem")  # one source: pyproject.toml
    except PackageNotFoundError:  # pragma: no cover - run from a checkout that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'maxmem' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # pragma: no cover
    __version__: str
    from .brain import Brain, EmbedRun
    from .clock import Clock, FixedClock
    from .config import Config, load_config
    from .embeddings import Embedder, LocalEmbedder, OpenAIEmbedder
    from .errors import (
        ConfigError,
        DatabaseError,
        EmbeddingError,
        InvalidInput,
        MaxmemError,
        MissingDependency,
        NotFound,
    )
    from .memory import Filters, Hit, Memory
