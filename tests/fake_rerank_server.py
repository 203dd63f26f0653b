"""A loopback rerank server speaking the protocol vLLM, TEI, llama.cpp and the hosted APIs serve, for tests.

    server = FakeRerankServer(score).start()   # 127.0.0.1, a free port, its own thread, ready when it returns
    server.base_url                             http://127.0.0.1:PORT/v1 (POST /v1/rerank, GET /health)
    server.fail(503, times=2)                   the next two requests get 503
    server.script(200, {"data": []})            the next request gets this reply, whatever it asked
    server.keep_only = 1                        results cut to the best one (a server keeping its own top_n)
    server.requests                             what arrived: path, headers, parsed JSON body
    server.stop()

``score(query, text)`` scores each document. A request with ``documents`` (Cohere, Jina, vLLM,
llama.cpp) gets ``{"results": [{"index", "relevance_score", "document"}]}``, best first, cut to its
``top_n``; one with ``texts`` (TEI) gets TEI's bare list of ``{"index", "score"}``. No model is run:
no reranker model can be installed here.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback import JsonHandler, LoopbackServer

Score = Callable[[str, str], float]


def shared_words(query: str, text: str) -> float:
    """A stand-in relevance: the share of the query's characters and words found in the text."""
    tokens = set(query.lower().split()) | set(query)
    return round(sum(t in text.lower() for t in tokens) / max(len(tokens), 1), 6)


@dataclass(frozen=True, slots=True)
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any] = field(default_factory=dict)


class FakeRerankServer(LoopbackServer):
    """Scores what it is sent with ``score``; scripted failures first; logs every request."""

    NAME = "rerank server"

    def __init__(self, score: Score = shared_words) -> None:
        self.score = score
        self.requests: list[Received] = []
        self.keep_only: int | None = None
        self._scripted: deque[tuple[int, Any]] = deque()
        self._lock = threading.Lock()
        super().__init__()

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def fail(self, status: int, times: int = 1) -> None:
        for _ in range(times):
            self.script(status, {"error": {"message": "scripted failure"}})

    def script(self, status: int, body: Any) -> None:
        with self._lock:
            self._scripted.append((status, body))

    def reply(self, received: Received) -> tuple[int, Any]:
        with self._lock:
            self.requests.append(received)
            if self._scripted:
                return self._scripted.popleft()
        body = received.body
        if not isinstance(body.get("query"), str):
            return 422, {"error": "query is required"}
        if isinstance(body.get("texts"), list):  # TEI
            scores = [self.score(body["query"], t) for t in body["texts"]]
            ranked = sorted(range(len(scores)), key=lambda i: -scores[i])
            return 200, [{"index": i, "score": scores[i]} for i in ranked]
        docs = body.get("documents")
        if not isinstance(docs, list) or not docs:
            return 422, {"error": "documents must be a non-empty list"}
        scores = [self.score(body["query"], d) for d in docs]
        top_n = min(int(body.get("top_n") or len(docs)), self.keep_only or len(docs))
        ranked = sorted(range(len(scores)), key=lambda i: -scores[i])[:top_n]
        results = [{"index": i, "relevance_score": scores[i], "document": {"text": docs[i]}} for i in ranked]
        return 200, {"id": "rerank-fake", "model": body.get("model"), "results": results}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JsonHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms delayed-ACK stall

            def do_GET(self) -> None:
                self._send(200, {"status": "ok"} if self.path == "/health" else {"error": "not found"})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode("utf-8")
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                headers = {k.lower(): v for k, v in self.headers.items()}
                received = Received(self.path, headers, body if isinstance(body, dict) else {})
                if self.path.split("?")[0] not in ("/v1/rerank", "/rerank"):
                    self._send(404, {"error": "not found"})
                    return
                self._send(*server.reply(received))

        return Handler
