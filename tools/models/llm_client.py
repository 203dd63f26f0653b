"""The LLM client for conflict checks: one retrying model over an OpenAI-compatible endpoint, and replay.

    build_model(config, rec)      RetryingModel(OpenAIChatModel) on an AsyncOpenAI client whose own
                                  retries are off; quirks go in as the model profile and settings
    RetryingModel                 the one retry loop (tenacity): 429, 5xx, timeouts, lost connections;
                                  exponential backoff with seeded jitter, an attempt cap and a deadline
    replay_model(records)         a FunctionModel answering with the recorded replies, in order

Configuration lives in ``tools.models.llm_config``, the verbatim records in ``tools.models.llm_recording``.
The API key is never recorded and never shown in a repr; no request header is recorded at all.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx2
import openai
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
    ModelResponse,
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

from evidence_loop.tools.errors import LLMError, TraceError
from evidence_loop.tools.models.llm_config import ConflictLLMConfig
from evidence_loop.tools.models.llm_recording import (
    EXCHANGE,
    Capture,
    LLMRecorder,
    Record,
    response_text,
    summarize,
)


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

    def __init__(self, wrapped: Model, recorder: LLMRecorder, config: ConflictLLMConfig) -> None:
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
        token = EXCHANGE.set(exchange)
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
            EXCHANGE.reset(token)
        dumped = ModelMessagesTypeAdapter.dump_python([response], mode="json")[0]
        reply = {"outcome": "ok", "status": None, "text": response_text(response), "model_response": dumped}
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


def build_model(config: ConflictLLMConfig, recorder: LLMRecorder) -> RetryingModel:
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
