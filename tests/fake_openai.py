"""A fake OpenAI-compatible chat endpoint on loopback, answering from a script.

Standard library only: an ``http.server`` in a thread. Each request to ``/v1/chat/completions``
takes the next scripted reply (status, JSON body, optional delay); every request body is kept so
a test can read exactly what the client sent. Current openai releases use httpx2, which
HTTP-mocking libraries for httpx do not intercept; a real socket does.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer: an HTTP status and body, sent after ``delay_s``."""

    status: int
    body: dict[str, Any] | str
    delay_s: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def completion(message: dict[str, Any], finish_reason: str = "stop") -> dict[str, Any]:
    """A chat.completion body carrying one assistant message."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "finish_reason": finish_reason, "message": {"role": "assistant", **message}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str = "call_1") -> Reply:
    """A 200 reply calling one tool; a string ``arguments`` is sent as written (to send broken JSON)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}
    return Reply(200, completion({"content": None, "tool_calls": [call]}, "tool_calls"))


def text(content: str) -> Reply:
    """A 200 reply with plain assistant text and no tool call."""
    return Reply(200, completion({"content": content}))


def error(status: int, message: str = "scripted error", delay_s: float = 0.0) -> Reply:
    """An error reply in the OpenAI error shape."""
    return Reply(status, {"error": {"message": message, "type": "server_error", "code": None}}, delay_s)


@dataclass
class FakeOpenAI:
    """The running server: its base URL, the script it answers from, the requests it received."""

    base_url: str = ""
    replies: list[Reply] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)

    def script(self, replies: Sequence[Reply]) -> None:
        self.replies = list(replies)

    def next_reply(self) -> Reply:
        if not self.replies:
            return error(500, "the fake server's script is exhausted")
        return self.replies.pop(0)


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server protocol
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            fake.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            reply = fake.next_reply()
            if reply.delay_s and fake.stopping.wait(reply.delay_s):
                return
            payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body, ensure_ascii=False)
            data = payload.encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client gave up (a timeout test): nothing to answer

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the http.server signature
            """Keep test output quiet."""

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up mid-reply is expected in timeout tests."""


def start() -> tuple[FakeOpenAI, _Server, threading.Thread]:
    """Start a fake server on an ephemeral loopback port."""
    fake = FakeOpenAI()
    server = _Server(("127.0.0.1", 0), _handler(fake))
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, name="fake-openai", daemon=True)
    thread.start()
    return fake, server, thread


def stop(fake: FakeOpenAI, server: _Server, thread: threading.Thread) -> None:
    fake.stopping.set()
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)
