"""A loopback OpenAI-compatible chat-completions server with scripted replies, for contract tests.

    server = FakeOpenAIServer().start()        # 127.0.0.1, a free port, its own thread
    server.enqueue(429, error_body("slow down"))
    server.enqueue(200, tool_calls_reply(("final_result", '{"verdicts": []}')))
    ... point an OpenAI client at server.base_url ...
    server.requests                             # what arrived: path, headers, parsed JSON body
    server.stop()

An empty queue answers 500 "no scripted reply", so a test that asks more than it scripted fails loudly.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True, slots=True)
class Scripted:
    """One reply: status, JSON body (or raw text), and how long to wait before sending it."""

    status: int
    body: Any
    delay_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any] = field(default_factory=dict)
    raw: str = ""


def completion(message: dict[str, Any], finish_reason: str = "stop") -> dict[str, Any]:
    """A chat.completion body around one assistant message."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "fake-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def tool_calls_reply(*calls: tuple[str, str]) -> dict[str, Any]:
    """An assistant message calling tools: (name, raw JSON arguments) each."""
    tool_calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": args}}
        for i, (name, args) in enumerate(calls)
    ]
    return completion({"role": "assistant", "content": None, "tool_calls": tool_calls}, "tool_calls")


def text_reply(text: str) -> dict[str, Any]:
    """An assistant message with plain text content."""
    return completion({"role": "assistant", "content": text})


def error_body(message: str, kind: str = "server_error") -> dict[str, Any]:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": kind, "code": None}}


class FakeOpenAIServer:
    """Answers POST /v1/chat/completions from a queue of scripted replies; logs every request."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # a short poll interval keeps stop() quick
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # cuts scripted delays short
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def enqueue(self, status: int, body: Any, delay_s: float = 0.0) -> None:
        with self._lock:
            self._queue.append(Scripted(status, body, delay_s))

    def _next(self, received: Received) -> Scripted:
        with self._lock:
            self.requests.append(received)
            return self._queue.popleft() if self._queue else Scripted(500, error_body("no scripted reply"))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode("utf-8")
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = server._next(Received(self.path, headers, body, raw))
                if reply.delay_s and server._stopping.wait(reply.delay_s):
                    return
                data = (reply.body if isinstance(reply.body, str) else json.dumps(reply.body)).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (a timeout test): nothing to answer

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet test output

        return Handler
