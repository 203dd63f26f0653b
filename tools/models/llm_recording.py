"""Verbatim records of what goes to the model and comes back: per question, without headers or keys.

LLMRecorder.capture()   the records of one question: per attempt an ``llm_request`` record
                        (messages, HTTP body as sent) and an ``llm_reply`` record (status,
                        HTTP body as received, the pydantic-ai ``ModelResponse`` as JSON)
summarize(messages)     messages as ``[{role, content}]`` for the trace renderer
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import httpx2
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from evidence_loop.tools.settings_file import without_query

Record = dict[str, Any]


@dataclass(slots=True)
class Capture:
    """The records of one question; ``calls`` counts model requests, ``attempts`` requests sent."""

    records: list[Record] = field(default_factory=list)
    calls: int = 0
    attempts: int = 0


EXCHANGE: ContextVar[Record | None] = ContextVar("evloop_llm_exchange", default=None)


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
        exchange = EXCHANGE.get()
        if exchange is not None:
            exchange["http_request"] = {
                "method": request.method,
                "url": without_query(str(request.url)),
                "body": request.content.decode("utf-8", errors="replace"),
            }

    @staticmethod
    async def on_response(response: httpx2.Response) -> None:
        """httpx event hook: the status and the body as received."""
        exchange = EXCHANGE.get()
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
            out.append({"role": "assistant", "content": response_text(message)})
    return out


def response_text(response: ModelResponse) -> str:
    pieces: list[str] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            pieces.append(part.content)
        elif isinstance(part, ToolCallPart):
            pieces.append(f"{part.tool_name}({part.args_as_json_str()})")
    return "\n".join(pieces)
