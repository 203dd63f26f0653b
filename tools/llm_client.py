"""The LLM client for conflict checks: configuration, one retrying model, verbatim records, replay.

    LLMConfig.from_env(environ)   endpoint, model, limits and server quirks; None = no LLM configured
    build_model(config, rec)      RetryingModel(OpenAIChatModel) on an AsyncOpenAI client whose own
                                  retries are off; quirks go in as the model profile and settings
    RetryingModel                 the one retry loop (tenacity): 429, 5xx, timeouts, lost connections;
                                  exponential backoff with seeded jitter, an attempt cap and a deadline
    LLMRecorder.capture()         the records of one question: per attempt an ``llm_request`` record
                                  (messages, HTTP body as sent) and an ``llm_reply`` record (status,
                                  HTTP body as received, the pydantic-ai ``ModelResponse`` as JSON)
    replay_model(records)         a FunctionModel answering with the recorded replies, in order

The API key is never recorded and never shown in a repr; no request header is recorded at all.
"""

from __future__ import annotations

import random
import time
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import httpx2
import openai
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
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.profiles.openai import OpenAIModelProfile
from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider
from pydantic_ai.settings import ModelSettings
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential,
    wait_random_exponential,
)

from tools.errors import InputError, LLMError, TraceError

Record = dict[str, Any]


@dataclass(frozen=True, slots=True, repr=False)
class LLMConfig:
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
    def from_env(cls, environ: Mapping[str, str], config_path: Path | None = None) -> LLMConfig | None:
        """The settings of a TOML file (``config_path`` or ``EVLOOP_LLM_CONFIG``) under the environment.

        ``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``EVLOOP_LLM_MODEL`` win over the file. Without
        both a model and a base URL there is no LLM (None): an ``OPENAI_API_KEY`` left in a shell
        never sends evidence to a hosted API by accident. The key is read from the environment only.
        """
        path = config_path or (
            Path(environ["EVLOOP_LLM_CONFIG"]) if environ.get("EVLOOP_LLM_CONFIG") else None
        )
        values: dict[str, Any] = _read_toml(path) if path is not None else {}
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
        record = asdict(self)
        del record["api_key"]
        record["base_url"] = _without_query(self.base_url)
        record["key_configured"] = bool(self.api_key)
        return record

    def __repr__(self) -> str:
        return f"LLMConfig({self.public()})"  # never the key, not even one in a URL query

    def prompt_parts(self, system: str, user: str) -> tuple[str | None, str]:
        """Where the system prompt goes: instructions, or the head of the first user message."""
        return (system, user) if self.system_role else (None, f"{system}\n\n{user}")


_CONFIG_ADAPTER: TypeAdapter[LLMConfig] = TypeAdapter(LLMConfig)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(f"{path}: cannot read the LLM configuration: {error}") from error
    if "api_key" in data:
        raise InputError(f"{path}: put the API key in OPENAI_API_KEY, not in a file")
    unknown = set(data) - {f.name for f in fields(LLMConfig)}
    if unknown:
        raise InputError(f"{path}: unknown LLM settings {sorted(unknown)}")
    return data


def _without_query(url: str) -> str:
    """A URL without its query: some gateways take the key as ``?api-key=``."""
    return url.split("?", 1)[0]


# --- recording ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Capture:
    """The records of one question; ``calls`` counts model requests, ``attempts`` requests sent."""

    records: list[Record] = field(default_factory=list)
    calls: int = 0
    attempts: int = 0


_EXCHANGE: ContextVar[Record | None] = ContextVar("evloop_llm_exchange", default=None)


class LLMRecorder:
    """Collects what goes to and comes back from the model; JSON-able, without headers or keys."""

    def __init__(self) -> None:
        self._current: ContextVar[Capture | None] = ContextVar(f"evloop_llm_capture_{id(self)}", default=None)
        self._loose = Capture()  # requests made outside capture(), e.g. a bare agent run in a REPL

    @contextmanager
    def capture(self) -> Iterator[Capture]:
        """Route the records made in this context (one question) to a fresh capture."""
        capture = Capture()
        token = self._current.set(capture)
        try:
            yield capture
        finally:
            self._current.reset(token)

    def current(self) -> Capture:
        """The capture of the running question."""
        return self._current.get() or self._loose

    @staticmethod
    async def on_request(request: httpx2.Request) -> None:
        """httpx event hook: the request body as sent; the headers (with the key) are not kept."""
        exchange = _EXCHANGE.get()
        if exchange is not None:
            exchange["http_request"] = {
                "method": request.method,
                "url": _without_query(str(request.url)),
                "body": request.content.decode("utf-8", errors="replace"),
            }

    @staticmethod
    async def on_response(response: httpx2.Response) -> None:
        """httpx event hook: the status and the body as received."""
        exchange = _EXCHANGE.get()
        if exchange is not None:
            await response.aread()
            exchange["http_response"] = {"status": response.status_code, "body": response.text}


def summarize(messages: Sequence[ModelMessage]) -> list[dict[str, str]]:
    """Messages as ``[{role, content}]`` for the trace renderer (the HTTP body keeps the rest)."""
    out: list[dict[str, str]] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            if message.instructions:
                out.append({"role": "instructions", "content": message.instructions})
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    out.append({"role": "system", "content": part.content})
                elif isinstance(part, UserPromptPart):
                    out.append({"role": "user", "content": str(part.content)})
                elif isinstance(part, ToolReturnPart):
                    out.append({"role": f"tool:{part.tool_name}", "content": part.model_response_str()})
                elif isinstance(part, RetryPromptPart):
                    out.append({"role": "retry", "content": part.model_response()})
        else:
            out.append({"role": "assistant", "content": _response_text(message)})
    return out


def _response_text(response: ModelResponse) -> str:
    pieces: list[str] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            pieces.append(part.content)
        elif isinstance(part, ToolCallPart):
            pieces.append(f"{part.tool_name}({part.args_as_json_str()})")
    return "\n".join(pieces)


# --- retrying -----------------------------------------------------------------------------------


def is_transient(error: BaseException) -> bool:
    """Worth another attempt: rate limits, server errors, timeouts and lost connections."""
    if isinstance(error, ModelHTTPError):
        return error.status_code in (408, 429) or error.status_code >= 500
    transient = (ModelRateLimitError, ModelServerError, ModelUnavailableError, ModelConnectionError)
    raw = (openai.APITimeoutError, openai.APIConnectionError, httpx2.TimeoutException, httpx2.NetworkError)
    return isinstance(error, (*transient, ModelRequestTimeout, *raw))


class _SeededJitter(wait_random_exponential):
    """``wait_random_exponential`` drawing from a seeded generator; a Retry-After is honoured up to max."""

    def __init__(self, base_s: float, max_s: float, seed: int) -> None:
        super().__init__(multiplier=base_s, max=max_s)
        self._rng = random.Random(seed)
        self._max_s = max_s

    def __call__(self, retry_state: RetryCallState) -> float:
        wait = self._rng.uniform(0, wait_exponential.__call__(self, retry_state))
        error = retry_state.outcome.exception() if retry_state.outcome is not None else None
        if isinstance(error, ModelAPIError) and error.retry_after is not None:
            wait = max(wait, min(error.retry_after, self._max_s))
        return wait


class RetryingModel(WrapperModel):
    """A model whose every request is retried by tenacity and recorded attempt by attempt."""

    def __init__(self, wrapped: Model, recorder: LLMRecorder, config: LLMConfig) -> None:
        super().__init__(wrapped)
        self.recorder = recorder
        self.config = config

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        capture = self.recorder.current()
        capture.calls += 1
        config = self.config
        retrying = AsyncRetrying(
            # before_delay, not after_delay: never sleep past the deadline only to give up
            stop=stop_after_attempt(config.max_attempts) | stop_before_delay(config.deadline_s),
            wait=_SeededJitter(config.backoff_base_s, config.backoff_max_s, config.jitter_seed),
            retry=retry_if_exception(is_transient),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    number = attempt.retry_state.attempt_number
                    return await self._attempt(
                        capture, number, messages, model_settings, model_request_parameters
                    )
        except LLMError:
            raise  # already final, e.g. a recorded failure during replay
        except Exception as error:
            if not (isinstance(error, ModelAPIError) or is_transient(error)):
                raise
            tried = capture.records[-1]["attempt"]
            final = f"call {capture.calls} failed after {tried} attempt(s): {_describe(error)}"
            capture.records[-1]["final_error"] = final
            raise LLMError(final) from error
        raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover

    async def _attempt(
        self,
        capture: Capture,
        number: int,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        parameters: ModelRequestParameters,
    ) -> ModelResponse:
        exchange: Record = {"http_request": None, "http_response": None}
        token = _EXCHANGE.set(exchange)
        capture.attempts += 1
        started = time.monotonic()
        head: Record = {"call": capture.calls, "attempt": number, "model": self.model_name}
        try:
            response = await self.wrapped.request(messages, model_settings, parameters)
        except Exception as error:
            reply: Record = {
                "outcome": "error",
                "error_class": type(error).__name__,
                "error": _describe(error),
            }
            reply["status"] = error.status_code if isinstance(error, ModelHTTPError) else None
            self._record(capture, head, messages, exchange, started, reply)
            raise
        finally:
            _EXCHANGE.reset(token)
        dumped = ModelMessagesTypeAdapter.dump_python([response], mode="json")[0]
        reply = {"outcome": "ok", "status": None, "text": _response_text(response), "model_response": dumped}
        self._record(capture, head, messages, exchange, started, reply)
        return response

    @staticmethod
    def _record(
        capture: Capture,
        head: Record,
        messages: list[ModelMessage],
        exchange: Record,
        started: float,
        reply: Record,
    ) -> None:
        http_response = exchange["http_response"]
        if http_response is not None:
            reply["status"] = http_response["status"]
        request = {"step": "llm_request", **head, "messages": summarize(messages)}
        request["http_request"] = exchange["http_request"]
        elapsed = round((time.monotonic() - started) * 1000, 1)
        capture.records.append(request)
        capture.records.append(
            {"step": "llm_reply", **head, **reply, "http_response": http_response, "latency_ms": elapsed}
        )


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


# --- building -----------------------------------------------------------------------------------


def build_model(config: LLMConfig, recorder: LLMRecorder) -> RetryingModel:
    """The configured chat model, its HTTP exchanges recorded, wrapped in the one retry loop."""
    http_client = openai.DefaultAsyncHttpxClient(
        timeout=config.timeout_s,
        event_hooks={"request": [recorder.on_request], "response": [recorder.on_response]},
        # no pooled connections: each question may run on another thread's event loop
        limits=httpx2.Limits(max_connections=8, max_keepalive_connections=0),
    )
    client = openai.AsyncOpenAI(
        base_url=config.base_url,
        api_key=config.api_key or "api-key-not-set",
        max_retries=0,  # retrying happens in RetryingModel only
        timeout=config.timeout_s,
        http_client=http_client,
    )
    profile = OpenAIModelProfile(
        supports_forced_tool_choice=config.force_tool_choice,
        supports_json_schema_output=config.json_schema_output,
        default_structured_output_mode="native" if config.json_schema_output else "tool",
        openai_system_prompt_role="system" if config.system_role else "user",
    )
    settings = ModelSettings(timeout=config.timeout_s)
    if config.send_max_tokens:
        settings["max_tokens"] = config.max_tokens
    if config.temperature is not None:
        settings["temperature"] = config.temperature
    chat = OpenAIChatModel(
        config.model,
        provider=OpenAICompatibleProvider("evloop", openai_client=client),
        profile=profile,
        settings=settings,
    )
    return RetryingModel(chat, recorder, config)


def replay_model(records: Sequence[Mapping[str, Any]]) -> FunctionModel:
    """A model giving the recorded outcome of each model request in order: its reply or its failure.

    Only ``llm_reply`` records count; the last attempt of each call decided it. Asking for more
    calls than were recorded raises ``TraceError``; a call that failed raises its ``LLMError`` again.
    """
    last: dict[int, Mapping[str, Any]] = {}
    for record in records:
        if record.get("step") == "llm_reply":
            last[int(record["call"])] = record
    ordered = [last[call] for call in sorted(last)]
    served = iter(ordered)

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        record = next(served, None)
        if record is None:
            raise TraceError(
                f"the replay asked for LLM call {len(ordered) + 1}; {len(ordered)} were recorded"
            )
        if record.get("model_response") is None:
            raise LLMError(str(record.get("final_error") or record.get("error") or "recorded failure"))
        reply = ModelMessagesTypeAdapter.validate_python([record["model_response"]])[0]
        if not isinstance(reply, ModelResponse):
            raise TraceError(f"recorded LLM call {record['call']} holds no model response")
        return reply

    return FunctionModel(answer, model_name="replay")
