"""A loopback OpenAI-compatible embeddings endpoint, for tests that run ``evloop`` with an embedder.

    server = FakeEmbeddingServer().start()     127.0.0.1, a free port, its own thread, ready when it returns
    server.environ                              the EVLOOP_EMBED* settings that point the openai backend at it
    server.stop()

It answers ``POST /v1/embeddings`` with the vectors of ``tests.fake_embedder.FakeEmbedder`` (bag of
words hashed into a few dimensions), the client's "query: " and "passage: " prefixes taken off, so that
a command line, a worker process and a test see the same small deterministic embedder. No model runs:
embedding a test corpus with the real one costs minutes on a busy machine.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fake_embedder import FakeEmbedder
from tests.loopback import JsonHandler, LoopbackServer

MODEL = "fake-e5"
PREFIXES = ("query: ", "passage: ")


def _bare(text: str) -> str:
    for prefix in PREFIXES:
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text


class FakeEmbeddingServer(LoopbackServer):
    """Embeds what it is sent with a ``FakeEmbedder``; counts the texts it embedded and keeps those sent
    as passages (``passages``: a store's units, and the client's dimension probe). ``delay_s`` slows
    each request down, as a busy endpoint."""

    NAME = "embeddings server"

    def __init__(self, delay_s: float = 0.0) -> None:
        self.embedder = FakeEmbedder(MODEL)
        self.texts = 0
        self.passages: list[str] = []
        self.delay_s = delay_s
        self._lock = threading.Lock()
        super().__init__()

    @property
    def environ(self) -> dict[str, str]:
        """The settings that make ``evloop`` (and any process started with them) embed here."""
        return {
            "EVLOOP_EMBEDDER": "openai",
            "EVLOOP_EMBED_BASE_URL": f"{self.root}/v1",
            "EVLOOP_EMBED_MODEL": MODEL,
        }

    def reply(self, body: dict[str, Any]) -> tuple[int, Any]:
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return 422, {"error": {"message": "input must be a string or a list of strings"}}
        if self.delay_s:
            time.sleep(self.delay_s)
        vectors = self.embedder.queries([_bare(t) for t in texts])
        with self._lock:
            self.texts += len(texts)
            self.passages.extend(t[len(PREFIXES[1]) :] for t in texts if t.startswith(PREFIXES[1]))
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        usage = {"prompt_tokens": 0, "total_tokens": 0}
        return 200, {"object": "list", "data": data, "model": body.get("model", MODEL), "usage": usage}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JsonHandler):
            # No kept-alive sockets: an embedder a command builds in the test's process is never
            # closed, and its pooled connection would be reported as an unclosed socket.
            keep_alive = False

            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True
            close_connection = True

            def do_GET(self) -> None:
                self._send(200, {"status": "ok"} if self.path == "/health" else {"error": "not found"})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode("utf-8")
                if self.path.split("?")[0] != "/v1/embeddings":
                    self._send(404, {"error": "not found"})
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                if not isinstance(body, dict):
                    self._send(400, {"error": {"message": "not a JSON object"}})
                    return
                self._send(*server.reply(body))

        return Handler
