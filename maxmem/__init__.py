"""maxmem: a personal AI agent's long-term memory in one SQLite file."""

from .brain import Brain
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
from .memory import Hit, Memory

__version__ = "0.1.0"

__all__ = [
    "Brain",
    "Clock",
    "Config",
    "ConfigError",
    "DatabaseError",
    "Embedder",
    "EmbeddingError",
    "FixedClock",
    "Hit",
    "InvalidInput",
    "LocalEmbedder",
    "MaxmemError",
    "Memory",
    "MissingDependency",
    "NotFound",
    "OpenAIEmbedder",
    "load_config",
    "__version__",
]
