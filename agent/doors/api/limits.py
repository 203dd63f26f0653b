"""The server's limits, and the middleware that enforces the body size before anything is parsed.

A body is refused from its Content-Length when it declares one, and otherwise counted as it
streams in, so a chunked upload cannot slip past the limit either.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evidence_loop.agent.doors.api.problems import PROBLEM_JSON
from evidence_loop.agent.service import MAX_QUESTION_CHARS


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one request. Defaults suit a help-centre chatbot."""

    question_chars: int = MAX_QUESTION_CHARS  # the server hands it to its Service too
    body_bytes: int = 8_000_000
    batch_documents: int = 1_000
    timeout_s: float = 30.0
    # Questions run in threads; more than this many wait their turn rather than thrash the GIL.
    concurrent_asks: int = 8

    def __post_init__(self) -> None:
        for name in ("question_chars", "body_bytes", "batch_documents", "concurrent_asks"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive")


class BodyLimitMiddleware:
    """Answer 413 problem+json for a request body over ``limit`` bytes."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.limit:
            await self._refuse(send, f"the request body is {declared} bytes; the limit is {self.limit}")
            return
        received = 0
        started = refused = False

        async def counted() -> Message:
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request" and not refused:
                received += len(message.get("body", b""))
                if received > self.limit and not started:
                    await self._refuse(send, f"the request body is over the limit of {self.limit} bytes")
                    refused = True
            # The app sees a client that went away; whatever it answers then is dropped.
            return {"type": "http.disconnect"} if refused else message

        async def watched(message: Message) -> None:
            nonlocal started
            if refused:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, counted, watched)

    @staticmethod
    async def _refuse(send: Send, detail: str) -> None:
        body = json.dumps(
            {
                "type": "urn:evloop:problem:body-too-large",
                "title": "Request body too large",
                "status": 413,
                "detail": detail,
            }
        ).encode()
        headers = [
            (b"content-type", PROBLEM_JSON.encode()),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
