"""Where the LLM is and how it behaves: endpoint, model, limits and server quirks, never the key in view.

ConflictLLMConfig.from_env(environ)   a TOML file under the environment; None = no LLM configured
config.public()               the settings as a trace header holds them (no key)
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from evidence_loop.tools.errors import InputError
from evidence_loop.tools.settings_file import public_settings, read_settings


@dataclass(frozen=True, slots=True, repr=False)
class ConflictLLMConfig:
    """An OpenAI-compatible chat endpoint, the limits the adjudicator keeps to, and server quirks."""

    base_url: str
    model: str
    api_key: str = ""
    timeout_s: float = 20.0  # one HTTP attempt
    max_calls_per_question: int = 4  # model requests per question (each may take several attempts)
    max_attempts: int = 4  # attempts per model request
    deadline_s: float = 60.0  # all attempts of one model request
    backoff_base_s: float = 0.5  # the jitter window starts here and doubles per attempt
    backoff_max_s: float = 8.0
    jitter_seed: int = 0
    max_tokens: int = 1024
    temperature: float | None = 0.0  # None: not sent (some reasoning models refuse it)
    # quirks of OpenAI-compatible servers, applied as the model profile and settings in build_model
    force_tool_choice: bool = True  # tool_choice "required"; False sends "auto" (Ollama ignores it)
    send_max_tokens: bool = True  # False: no max_completion_tokens field at all
    system_role: bool = True  # False: the instructions are folded into the first user message
    json_schema_output: bool = False  # True: verdicts as a json_schema response_format, not a tool

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str], config_path: Path | None = None
    ) -> ConflictLLMConfig | None:
        """The settings of a TOML file (``config_path`` or ``EVLOOP_LLM_CONFIG``) under the environment.

        ``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``EVLOOP_LLM_MODEL`` win over the file. Without
        both a model and a base URL there is no LLM (None): an ``OPENAI_API_KEY`` left in a shell
        never sends evidence to a hosted API by accident. The key is read from the environment only.
        """
        path = config_path or (
            Path(environ["EVLOOP_LLM_CONFIG"]) if environ.get("EVLOOP_LLM_CONFIG") else None
        )
        values: dict[str, Any] = (
            read_settings(path, "LLM", "OPENAI_API_KEY", (f.name for f in fields(ConflictLLMConfig)))
            if path is not None
            else {}
        )
        for key, name in (("base_url", "OPENAI_BASE_URL"), ("model", "EVLOOP_LLM_MODEL")):
            if environ.get(name):
                values[key] = environ[name]
        if not values.get("model") or not values.get("base_url"):
            return None
        values["api_key"] = environ.get("OPENAI_API_KEY", "")
        try:
            return _CONFIG_ADAPTER.validate_python(values)
        except ValidationError as error:
            raise InputError(f"bad LLM settings: {error}") from error

    def public(self) -> dict[str, Any]:
        """The settings for a trace header: everything but the key, and whether a key is set."""
        return public_settings(self)

    def __repr__(self) -> str:
        return f"ConflictLLMConfig({self.public()})"  # never the key, not even one in a URL query

    def prompt_parts(self, system: str, user: str) -> tuple[str | None, str]:
        """Where the system prompt goes: instructions, or the head of the first user message."""
        return (system, user) if self.system_role else (None, f"{system}\n\n{user}")


_CONFIG_ADAPTER: TypeAdapter[ConflictLLMConfig] = TypeAdapter(ConflictLLMConfig)


def __getattr__(name: str) -> object:
    """Names renamed in 0.2.0, kept through 0.2.x with a DeprecationWarning (docs/versioning.md)."""
    if name == "LLMConfig":  # deprecated alias
        message = f"{__name__}.{name} is renamed ConflictLLMConfig; the old name goes in 0.3.0"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return ConflictLLMConfig
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
