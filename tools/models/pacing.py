"""Calling an embeddings endpoint from several threads: one retry loop, one back-off they all share.

    Pacer                         the endpoint's pause: ``hold(s)`` after a 429, ``wait()`` before a send
    with_retries(call, config, pacer)   the one retry loop (tenacity); what still fails is an
                                  EmbedderError (EmbedderUnavailableError when unreachable)
    BatchTooLarge                 the endpoint refused a request for its size (413, or a 400 naming a
                                  limit): the embedder splits the batch; it never leaves the embedder

Every sender waits on the same ``Pacer`` before each attempt: a 429 answered to one of them (its
``Retry-After``, else the exponential back-off) holds back every batch in flight, not only the one
that was refused, so a rate-limited endpoint sees the whole client slow down. Other transient
failures (408, 5xx, timeouts, lost connections) back off per sender, exponentially.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from evidence_loop.tools.errors import EmbedderError, EmbedderUnavailableError
from evidence_loop.tools.models.embedder_config import EmbedConfig

_MAX_RETRY_AFTER_S = 60.0  # a longer Retry-After is read as this: an ingest should not stall for hours
# How servers word a 400 that refuses a request's size (TEI, vLLM, llama.cpp, hosted APIs): a 400 for
# any other reason is no reason to split the batch.
_SIZE_WORDS = (
    "too many",
    "batch size",
    "batch_size",
    "too large",
    "too long",
    "maximum",
    "exceed",
    "max_client_batch",
    "tokens per request",
    "per request",
)


class BatchTooLarge(Exception):
    """The endpoint refused a request for its size (never raised out of the embedder: it splits)."""


class Pacer:
    """When the endpoint may be sent to again; shared by every thread sending to it."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._until = 0.0
        self._lock = threading.Lock()

    def hold(self, seconds: float) -> None:
        """Send nothing for ``seconds`` from now (a later hold never shortens an earlier one)."""
        with self._lock:
            self._until = max(self._until, self._clock() + seconds)

    def wait(self) -> None:
        """Return once the endpoint may be sent to."""
        while True:
            with self._lock:
                left = self._until - self._clock()
            if left <= 0:
                return
            self._sleep(left)


def with_retries(call: Callable[[], Any], config: EmbedConfig, pacer: Pacer) -> Any:
    """``call()`` with the endpoint's retries; an EmbedderError (or BatchTooLarge) when it still fails."""
    import openai
    from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

    backoff = wait_exponential(multiplier=0.2, max=4.0)

    def wait(state: Any) -> float:
        error = state.outcome.exception() if state.outcome is not None else None
        if isinstance(error, openai.APIStatusError) and error.status_code == 429:
            pacer.hold(max(backoff(state), _retry_after(error)))
            return 0.0  # the pacer's wait, before the next attempt, is this sender's too
        return float(backoff(state))

    try:
        for attempt in Retrying(
            retry=retry_if_exception(_transient),
            stop=stop_after_attempt(config.max_attempts),
            wait=wait,
            reraise=True,
        ):
            with attempt:
                pacer.wait()
                return call()
    except openai.APIStatusError as error:
        if _too_large(error):
            raise BatchTooLarge(f"{error.status_code}: {error.message}") from error
        raise EmbedderError(_failed(config, error)) from error
    except openai.OpenAIError as error:
        unreachable = isinstance(error, openai.APIConnectionError | openai.APITimeoutError)
        raise (EmbedderUnavailableError if unreachable else EmbedderError)(_failed(config, error)) from error
    raise AssertionError("unreachable")  # pragma: no cover


def _failed(config: EmbedConfig, error: BaseException) -> str:
    return f"the embeddings endpoint {config.base_url} failed: {type(error).__name__}: {error}"


def _transient(error: BaseException) -> bool:
    import openai

    if isinstance(error, openai.APIStatusError):
        return error.status_code in (408, 429) or error.status_code >= 500
    return isinstance(error, openai.APIConnectionError | openai.APITimeoutError)


def _too_large(error: Any) -> bool:
    """A 413, or a 400 whose message names a size limit."""
    if error.status_code == 413:
        return True
    message = str(error.message).lower()
    return error.status_code == 400 and any(word in message for word in _SIZE_WORDS)


def _retry_after(error: Any) -> float:
    """The seconds a 429's ``Retry-After`` (or ``retry-after-ms``) asks for, at most a minute; 0 if none."""
    headers = error.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            seconds = float(headers.get(name, "")) * scale
        except ValueError:
            continue  # absent, or an HTTP date: the exponential back-off then
        if seconds >= 0:
            return min(seconds, _MAX_RETRY_AFTER_S)
    return 0.0
