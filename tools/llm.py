"""The LLM client for conflict checks: configuration, one retrying model, verbatim recording, replay.

    LLMConfig.from_env(env)      the endpoint, model, limits and server quirks; None = no LLM
    build_model(config, rec)     RetryingModel(OpenAIChatModel(...)) on an AsyncOpenAI client with
                                 its own retries off, so retrying happens in exactly one place
    RetryingModel                tenacity around each model request: 429, 5xx, timeouts and
                                 connection errors, exponential backoff with seeded jitter, a
                                 deadline and an attempt cap; every attempt recorded
    LLMRecorder.capture()        the records of one question: per attempt, the HTTP request and
                                 response bodies verbatim, the pydantic-ai messages sent and the
                                 reply (``ModelMessagesTypeAdapter`` JSON)
    replay_model(records)        a model that answers with the recorded replies, in order

The API key is never recorded, logged or shown in a repr.
"""

from __future__ import annotations

import json
import random
import time
import tomllib
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import anyio
import httpx2
from openai import AsyncOpenAI
from pydantic import TypeAdapter, ValidationError
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelRequestTimeout,
    ModelServerError,
    ModelUnavailableError,
)
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.profiles.openai import OpenAIModelProfile
from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider
from pydantic_ai.settings import ModelSettings
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, stop_before_delay

from tools.errors import InputError, LLMError, TraceError

Record = dict[str, Any]
DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True, slots=True)
class Quirks:
    """What some OpenAI-compatible servers need, as settings rather than code."""

    force_tool_choice: bool = False  # a named tool_choice on every request (some local servers)
    send_max_tokens: bool = True  # False: no max_completion_tokens at all
    system_role: bool = True  # False: instructions go out in a user message
    json_schema_output: bool = False  # True: the verdicts come as a JSON-schema response format


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """An OpenAI-compatible chat endpoint and the limits the adjudicator keeps to."""

    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    timeout_s: float = 30.0  # one HTTP attempt
    deadline_s: float = 60.0  # all attempts of one model request
    max_attempts: int = 3  # per model request
    max_calls_per_question: int = 4  # model requests per question
    max_tokens: int = 1024
    backoff_s: float = 0.5  # first wait; doubles per attempt
    max_backoff_s: float = 8.0
    jitter_seed: int = 0
    quirks: Quirks = Quirks()

    @classmethod
    def from_env(cls, env: Mapping[str, str], config_file: Path | None = None) -> LLMConfig | None:
        """The configuration from a TOML or JSON file (``EVLOOP_LLM_CONFIG``) under the environment.

        ``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``EVLOOP_LLM_MODEL`` override the file. Without
        a model name there is no LLM: None.
        """
        path = config_file or (Path(env["EVLOOP_LLM_CONFIG"]) if env.get("EVLOOP_LLM_CONFIG") else None)
        values: dict[str, Any] = _read_config_file(path) if path is not None else {}
        for key, name in (("base_url", "OPENAI_BASE_URL"), ("model", "EVLOOP_LLM_MODEL")):
            if env.get(name):
                values[key] = env[name]
        if not values.get("model"):
            return None
        values.setdefault("base_url", DEFAULT_BASE_URL)
        values["api_key"] = env.get("OPENAI_API_KEY", "")
        return _from_mapping(values)

    def as_record(self) -> dict[str, Any]:
        """The configuration as JSON for a trace header, without the API key."""
        record = asdict(self)
        del record["api_key"]
        return record


def _read_config_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError) as error:
        raise InputError(f"{path}: cannot read the LLM configuration: {error}") from error
    if not isinstance(data, dict):
        raise InputError(f"{path}: the LLM configuration must be a table of settings")
    if "api_key" in data:
        raise InputError(f"{path}: put the API key in OPENAI_API_KEY, not in a file")
    return dict(data)


def _from_mapping(values: Mapping[str, Any]) -> LLMConfig:
    """Validate settings (types included) at the edge; unknown names are an error, not ignored."""
    unknown = set(values) - {f.name for f in fields(LLMConfig)}
    quirks = values.get("quirks", {})
    if isinstance(quirks, Mapping):
        unknown |= {f"quirks.{name}" for name in set(quirks) - {f.name for f in fields(Quirks)}}
    if unknown:
        raise InputError(f"unknown LLM settings: {sorted(unknown)}")
    try:
        return _CONFIG_ADAPTER.validate_python(dict(values))
    except ValidationError as error:
        raise InputError(f"bad LLM settings: {error}") from error


_CONFIG_ADAPTER: TypeAdapter[LLMConfig] = TypeAdapter(LLMConfig)


# --- recording -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Sink:
    """Where the records of one capture go; ``calls`` counts model requests."""

    records: list[Record] = field(default_factory=list)
    calls: int = 0


_ATTEMPT: ContextVar[Record | None] = ContextVar("evloop_llm_attempt", default=None)


class LLMRecorder:
    """Collects what goes to and comes back from the model, one JSON-able record per attempt."""

    def __init__(self) -> None:
        self._sink: ContextVar[_Sink | None] = ContextVar(f"evloop_llm_sink_{id(self)}", default=None)
        self._default = _Sink()

    @contextmanager
    def capture(self) -> Iterator[_Sink]:
        """Route the records made in this context (one question) to a fresh sink."""
        sink = _Sink()
        token = self._sink.set(sink)
        try:
            yield sink
        finally:
            self._sink.reset(token)

    def sink(self) -> _Sink:
        return self._sink.get() or self._default

    async def on_request(self, request: httpx2.Request) -> None:
        """httpx event hook: the request body as sent (headers, with the key, are not kept)."""
        record = _ATTEMPT.get()
        if record is not None:
            body = request.content.decode("utf-8", errors="replace")
            record["http_request"] = {"method": request.method, "url": str(request.url), "body": body}

    async def on_response(self, response: httpx2.Response) -> None:
        """httpx event hook: the response status and body as received."""
        record = _ATTEMPT.get()
        if record is not None:
            await response.aread()
            record["http_response"] = {"status": response.status_code, "body": response.text}


# --- retrying ---------------------------------------------------------------------------------


def is_transient(error: BaseException) -> bool:
    """Errors worth another attempt: rate limits, server errors, timeouts, lost connections."""
    if isinstance(error, ModelHTTPError):
        return error.status_code in (408, 409, 429) or error.status_code >= 500
    transient = (ModelRateLimitError, ModelUnavailableError, ModelServerError, ModelConnectionError)
    return isinstance(error, (*transient, ModelRequestTimeout))


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently one model request is tried."""

    max_attempts: int = 3
    deadline_s: float = 60.0
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0
    jitter_seed: int = 0

    @classmethod
    def from_config(cls, config: LLMConfig) -> RetryPolicy:
        return cls(
            config.max_attempts, config.deadline_s, config.backoff_s, config.max_backoff_s, config.jitter_seed
        )


class _Backoff:
    """Exponential backoff with seeded full jitter; a provider's Retry-After is honoured up to the cap."""

    def __init__(self, policy: RetryPolicy) -> None:
        self._policy = policy
        self._rng = random.Random(policy.jitter_seed)

    def __call__(self, state: RetryCallState) -> float:
        policy = self._policy
        ceiling = min(policy.max_backoff_s, policy.backoff_s * 2 ** (state.attempt_number - 1))
        wait = self._rng.uniform(ceiling / 2, ceiling)
        error = state.outcome.exception() if state.outcome is not None else None
        if isinstance(error, ModelAPIError) and error.retry_after is not None:
            wait = max(wait, min(error.retry_after, policy.max_backoff_s))
        return wait


class RetryingModel(WrapperModel):
    """A model whose every request is retried by tenacity and recorded attempt by attempt."""

    def __init__(
        self,
        wrapped: Model,
        recorder: LLMRecorder,
        policy: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], Awaitable[None]] | None = None,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        super().__init__(wrapped)
        self.recorder = recorder
        self.policy = policy
        self._sleep = sleep or anyio.sleep
        self._http_client = http_client

    async def aclose(self) -> None:
        """Close the HTTP client this model was built with, if any."""
        if self._http_client is not None:
            await self._http_client.aclose()

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        sink = self.recorder.sink()
        sink.calls += 1
        sent = ModelMessagesTypeAdapter.dump_python(messages, mode="json")
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.policy.max_attempts) | stop_before_delay(self.policy.deadline_s),
            wait=_Backoff(self.policy),
            retry=retry_if_exception(is_transient),
            reraise=True,
            sleep=self._sleep,
        )
        try:
            async for attempt in retrying:
                with attempt, self._attempt(sink, attempt.retry_state.attempt_number, sent) as record:
                    response = await self.wrapped.request(messages, model_settings, model_request_parameters)
                    record["model_response"] = ModelMessagesTypeAdapter.dump_python([response], mode="json")[
                        0
                    ]
        except ModelAPIError as error:
            tried = sum(1 for r in sink.records if r["call"] == sink.calls)
            raise LLMError(f"the model failed after {tried} attempt(s): {_describe(error)}") from error
        return response

    @contextmanager
    def _attempt(self, sink: _Sink, number: int, sent: list[Any]) -> Iterator[Record]:
        record: Record = {
            "call": sink.calls,
            "attempt": number,
            "model": self.model_name,
            "messages": sent,
            "http_request": None,
            "http_response": None,
            "model_response": None,
            "error": None,
        }
        sink.records.append(record)
        token = _ATTEMPT.set(record)
        started = time.monotonic()
        try:
            yield record
        except Exception as error:
            record["error"] = _describe(error)
            raise
        finally:
            record["elapsed_ms"] = round((time.monotonic() - started) * 1000, 1)
            _ATTEMPT.reset(token)


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


# --- building ---------------------------------------------------------------------------------


def build_model(config: LLMConfig, recorder: LLMRecorder) -> RetryingModel:
    """The configured chat model, its HTTP exchanges recorded, wrapped in the one retry loop."""
    http_client = httpx2.AsyncClient(
        timeout=config.timeout_s,
        event_hooks={"request": [recorder.on_request], "response": [recorder.on_response]},
    )
    client = AsyncOpenAI(
        base_url=config.base_url,
        api_key=config.api_key or "api-key-not-set",
        max_retries=0,  # retries happen in RetryingModel only
        timeout=config.timeout_s,
        http_client=http_client,
    )
    quirks = config.quirks
    profile = OpenAIModelProfile(
        supports_forced_tool_choice=quirks.force_tool_choice,
        supports_json_schema_output=quirks.json_schema_output,
        openai_system_prompt_role="system" if quirks.system_role else "user",
    )
    settings = ModelSettings(max_tokens=config.max_tokens) if quirks.send_max_tokens else None
    chat = OpenAIChatModel(
        config.model,
        provider=OpenAICompatibleProvider("evloop-llm", openai_client=client),
        profile=profile,
        settings=settings,
    )
    return RetryingModel(chat, recorder, RetryPolicy.from_config(config), http_client=http_client)


def replay_model(records: Sequence[Record]) -> FunctionModel:
    """A model that gives the recorded outcome of each call in order: its reply, or its failure.

    Raises ``TraceError`` when the replay asks for more calls than were recorded.
    """
    outcomes: dict[int, Record] = {}
    for record in records:
        outcomes[int(record["call"])] = record  # the last attempt of a call decided it
    ordered = [outcomes[call] for call in sorted(outcomes)]
    served = iter(ordered)

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        record = next(served, None)
        if record is None:
            raise TraceError(
                f"the replay asked for LLM call {len(ordered) + 1}; {len(ordered)} were recorded"
            )
        if record["model_response"] is None:
            raise LLMError(f"recorded failure: {record['error']}")
        reply = ModelMessagesTypeAdapter.validate_python([record["model_response"]])[0]
        if not isinstance(reply, ModelResponse):
            raise TraceError(f"recorded LLM call {record['call']} holds no model response")
        return reply

    return FunctionModel(answer, model_name="replay")
