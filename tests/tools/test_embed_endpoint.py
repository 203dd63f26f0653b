"""An OpenAI-compatible embeddings endpoint kept busy: several batches in flight give the rows of one
at a time in the same order, a 429 to one batch holds back every batch, and a batch refused for its
size is sent again in halves, later batches cut to the size the endpoint took."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np
import pytest

from evidence_loop.tools.errors import EmbedderError
from evidence_loop.tools.models.embedder import OpenAIEmbedder
from evidence_loop.tools.models.embedder_config import EmbedConfig
from tests.fake_embedder import FakeEmbedder
from tests.loopback import LoopbackServer

BOUND_S = 30.0  # a wait on another thread: a busy machine always meets it
TEXTS = [f"unit {n} of the help centre, about topic {n % 7}" for n in range(40)]
Reply = tuple[int, dict[str, Any], dict[str, str]]


class ScriptedServer(LoopbackServer):
    """``POST /v1/embeddings`` answered by ``script(texts, server)``, else with FakeEmbedder's rows.

    Every request is logged as (arrival time, its texts); ``running`` counts those being answered."""

    NAME = "scripted embeddings server"

    def __init__(self, script: Callable[[list[str], ScriptedServer], Reply | None] | None = None) -> None:
        self.script = script
        self.embedder = FakeEmbedder("endpoint")
        self.log: list[tuple[float, list[str]]] = []
        self.running = 0
        self.most_running = 0
        self.changed = threading.Condition()
        super().__init__()

    def rows(self, texts: list[str]) -> Reply:
        data = [{"index": i, "embedding": v.tolist()} for i, v in enumerate(self.embedder.queries(texts))]
        return 200, {"object": "list", "data": data, "model": "fake"}, {}

    def wait_for(self, check: Callable[[], bool]) -> None:
        with self.changed:
            assert self.changed.wait_for(check, BOUND_S)

    def answer(self, texts: list[str]) -> Reply:
        with self.changed:
            self.log.append((time.monotonic(), texts))
            self.running += 1
            self.most_running = max(self.most_running, self.running)
            self.changed.notify_all()
        try:
            return (self.script(texts, self) if self.script else None) or self.rows(texts)
        finally:
            with self.changed:
                self.running -= 1
                self.changed.notify_all()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            # No kept-alive sockets: the embedders are never closed, and a pooled connection would
            # be reported as an unclosed socket.
            protocol_version = "HTTP/1.1"
            close_connection = True

            def do_GET(self) -> None:
                self._send((200, {"status": "ok"}, {}))

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                self._send(server.answer([t.removeprefix("passage: ") for t in body["input"]]))

            def _send(self, reply: Reply) -> None:
                status, body, headers = reply
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in {**headers, "Content-Type": "application/json"}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def serve() -> Iterator[Callable[..., ScriptedServer]]:
    started: list[ScriptedServer] = []

    def start(script: Callable[[list[str], ScriptedServer], Reply | None] | None = None) -> ScriptedServer:
        started.append(ScriptedServer(script).start())
        return started[-1]

    yield start
    for server in started:
        server.stop()


def _embedder(server: ScriptedServer, **settings: Any) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        EmbedConfig(backend="openai", base_url=f"{server.root}/v1", model="fake", **settings)
    )


def test_batches_in_flight_give_the_rows_of_one_at_a_time_in_the_same_order(serve: Any) -> None:
    def later_first(texts: list[str], server: ScriptedServer) -> None:
        first = int(texts[0].split()[1])
        if first < 16:  # the first four batches wait for each other, then answer last one first
            server.wait_for(lambda: server.running >= 4 or len(server.log) > 4)
            time.sleep(0.05 * (4 - first // 4))

    server = serve(later_first)
    many = _embedder(server, batch_size=4, in_flight=4).passages(TEXTS)
    one = _embedder(serve(), batch_size=4, in_flight=1).passages(TEXTS)
    assert server.most_running == 4
    assert np.array_equal(many, one)
    assert np.allclose(many, FakeEmbedder("endpoint").queries(TEXTS), atol=1e-6)


def test_a_429_to_one_batch_holds_back_every_batch_in_flight(serve: Any) -> None:
    refused = threading.Event()
    at: dict[str, float] = {}

    def script(texts: list[str], server: ScriptedServer) -> Reply | None:
        name = texts[0]
        if name == "a" and "429" not in at:
            server.wait_for(lambda: any(t == ["b"] for _, t in server.log))
            at["429"] = time.monotonic()
            refused.set()
            return 429, {"error": {"message": "rate limited"}}, {"Retry-After": "3"}
        if name == "b":
            assert refused.wait(BOUND_S)
            time.sleep(1.5)  # b's sender would send c now, were the 429 only a's
        at.setdefault(name, time.monotonic())
        return None

    server = serve(script)
    rows = _embedder(server, batch_size=1, in_flight=2).passages(["a", "b", "c"])
    assert at["c"] - at["429"] >= 2.9
    assert np.allclose(rows, FakeEmbedder("endpoint").queries(["a", "b", "c"]), atol=1e-6)


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (413, "Payload Too Large"),
        (400, "batch size 16 > maximum allowed batch size 8"),
        (400, "Too many inputs: at most 8 per request"),
    ],
)
def test_a_batch_refused_for_its_size_is_split_and_later_batches_are_cut_to_the_size_taken(
    serve: Any, status: int, message: str
) -> None:
    def at_most_eight(texts: list[str], server: ScriptedServer) -> Reply | None:
        return (status, {"error": {"message": message}}, {}) if len(texts) > 8 else None

    server = serve(at_most_eight)
    rows = _embedder(server, batch_size=32, in_flight=1).passages(TEXTS)
    assert np.allclose(rows, FakeEmbedder("endpoint").queries(TEXTS), atol=1e-6)
    sizes = [len(texts) for _, texts in server.log]
    assert sizes[:2] == [32, 16] and all(size <= 8 for size in sizes[2:])
    assert [t for _, texts in server.log if len(texts) <= 8 for t in texts] == TEXTS


def test_a_400_for_another_reason_is_an_error_and_not_a_split(serve: Any) -> None:
    server = serve(lambda texts, server: (400, {"error": {"message": "unknown model 'fake'"}}, {}))
    with pytest.raises(EmbedderError, match="unknown model"):
        _embedder(server, batch_size=8).passages(TEXTS[:8])
    assert [len(texts) for _, texts in server.log] == [8]


def test_a_single_text_refused_as_too_large_says_to_lower_max_chars(serve: Any) -> None:
    server = serve(lambda texts, server: (413, {"error": {"message": "Payload Too Large"}}, {}))
    with pytest.raises(EmbedderError, match=r"refused a single text as too large.*lower max_chars"):
        _embedder(server, batch_size=2).passages(TEXTS[:2])
