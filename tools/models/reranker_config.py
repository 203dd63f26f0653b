"""Which cross-encoder reads the grown windows, if any; configured like the embedder (TOML, environment).

RerankConfig.from_env(environ)   the settings; None when no rerank endpoint is configured (the default)
config.public()                  the settings as a trace header holds them (no key)

A rerank endpoint takes a question and a list of texts and scores each (``POST {base_url}/rerank``).
Two request shapes are spoken: ``api = "cohere"`` sends ``{"model", "query", "documents", "top_n"}``
(vLLM, llama.cpp ``--reranking``, Cohere, Jina and most hosted APIs); ``api = "tei"`` sends
``{"query", "texts", "raw_scores": false}`` (Hugging Face text-embeddings-inference). Either reply
shape is read: ``{"results": [{"index", "relevance_score"}]}`` or TEI's bare ``[{"index", "score"}]``.

Scores become 0..1 relevance: ``scores = "probability"`` takes them as the server gives them
(vLLM, TEI, Cohere and Jina return sigmoid-activated scores), ``"logit"`` passes each through a
sigmoid (llama.cpp returns raw logits), ``"auto"`` (the default) does the latter for a reply holding
any score outside 0..1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from evidence_loop.tools.errors import InputError
from evidence_loop.tools.settings_file import first_error, public_settings, read_settings

Api = Literal["cohere", "tei"]
ScoreKind = Literal["auto", "probability", "logit"]
_ENV = {"base_url": "EVLOOP_RERANK_BASE_URL", "model": "EVLOOP_RERANK_MODEL"}
CONFIG_ENV = "EVLOOP_RERANK_CONFIG"
KEY_ENV = "EVLOOP_RERANK_API_KEY"


@dataclass(frozen=True, slots=True, repr=False)
class RerankConfig:
    """A rerank endpoint and how to read its scores."""

    base_url: str  # e.g. http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:8080 (TEI, llama.cpp)
    model: str  # the name the server knows; TEI serves one model and is not told it
    api_key: str = ""  # from EVLOOP_RERANK_API_KEY only, never a file, never recorded
    api: Api = "cohere"
    scores: ScoreKind = "auto"
    timeout_s: float = 30.0  # one HTTP attempt
    max_attempts: int = 3  # attempts per request (408, 429, 5xx, timeouts, lost connections)

    @classmethod
    def from_env(cls, environ: Mapping[str, str], config_path: Path | None = None) -> RerankConfig | None:
        """The settings of a TOML file (``config_path`` or ``EVLOOP_RERANK_CONFIG``) under the environment.

        None when neither names a base URL: no reranker, the loop as without one. A base URL without
        a model is an error, as is a key in the file.
        """
        path = config_path or (Path(environ[CONFIG_ENV]) if environ.get(CONFIG_ENV) else None)
        values: dict[str, Any] = (
            read_settings(path, "reranker", KEY_ENV, (f.name for f in fields(RerankConfig)))
            if path is not None
            else {}
        )
        for key, name in _ENV.items():
            if environ.get(name):
                values[key] = environ[name]
        if not values.get("base_url"):
            if path is not None:
                raise InputError(f"{path}: the reranker needs a base_url (or EVLOOP_RERANK_BASE_URL)")
            return None
        if not values.get("model"):
            raise InputError(
                "the reranker needs a model (EVLOOP_RERANK_MODEL, or model in EVLOOP_RERANK_CONFIG)"
            )
        values["api_key"] = environ.get(KEY_ENV, "")
        try:
            config = _ADAPTER.validate_python(values)
        except ValidationError as error:
            raise InputError(f"bad reranker settings: {first_error(error)}") from None
        if config.max_attempts < 1 or config.timeout_s <= 0:
            raise InputError("the reranker's max_attempts must be at least 1 and its timeout_s positive")
        return config

    def public(self) -> dict[str, Any]:
        """The settings for a trace header: everything but the key, and whether a key is set."""
        return public_settings(self)

    def __repr__(self) -> str:
        return f"RerankConfig({self.public()})"  # never the key, not even one in a URL query


_ADAPTER: TypeAdapter[RerankConfig] = TypeAdapter(RerankConfig)
