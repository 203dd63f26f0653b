"""A fast deterministic embedder for benchmarks, and a loopback OpenAI-compatible endpoint serving it.

    HashEmbedder()                 384 dimensions: the text's UTF-8 byte trigrams hashed into signed
                                   buckets, a whole batch in a few numpy calls, unit length
    EndpointServer(delay_s).start()   ``POST /v1/embeddings`` answered with HashEmbedder's vectors after
                                   ``delay_s`` (each request in its own thread, as a real server)
    endpoint_process(delay_s)      the same server in a process of its own (``with``: its base URL), so
                                   that its JSON work does not take the measured client's GIL

Texts that share words share trigrams, so the cosine ranks related units first; no model runs, so a
benchmark that uses it measures the project around the embedder, not the model.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from evidence_loop.tools.models.embedding import EmbedderIdentity, Progress, Vectors

DIM = 384
MODEL = "hash-384"
_PREFIXES = ("query: ", "passage: ")


def hash_rows(texts: Sequence[str]) -> Vectors:
    """One unit row per text: its UTF-8 byte trigrams (two spaces appended, so every text has one),
    each hashed to a bucket and a sign, counted for all the texts at once; a constant keeps a row
    away from zero."""
    encoded = [text.encode("utf-8") + b"  " for text in texts]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8).astype(np.uint32)
    owner = np.repeat(np.arange(len(encoded), dtype=np.int64), lengths)
    keep = owner[:-2] == owner[2:]  # trigrams inside one text
    grams = ((data[:-2] << 16) | (data[1:-1] << 8) | data[2:])[keep]
    mixed = grams * np.uint32(2654435761)  # wraps modulo 2**32
    buckets = (mixed >> np.uint32(7)) % np.uint32(DIM)
    signs = np.where(mixed & np.uint32(1), 1.0, -1.0)
    slots = owner[:-2][keep] * DIM + buckets.astype(np.int64)
    out = np.bincount(slots, weights=signs, minlength=len(encoded) * DIM).reshape(-1, DIM).astype(np.float32)
    out[:, 0] += 0.5
    rows: Vectors = out / np.linalg.norm(out, axis=1, keepdims=True)
    return rows


class HashEmbedder:
    """The Embedder protocol over ``hash_vector``; queries and passages alike."""

    def __init__(self) -> None:
        self.identity = EmbedderIdentity("hash", MODEL, DIM, hashlib.sha256(MODEL.encode()).hexdigest())

    def queries(self, texts: Sequence[str]) -> Vectors:
        return hash_rows(texts) if texts else np.zeros((0, DIM), np.float32)

    def passages(self, texts: Sequence[str], progress: Progress | None = None) -> Vectors:
        rows = self.queries(texts)
        if progress is not None:
            progress(len(texts))
        return rows


class EndpointServer:
    """127.0.0.1, a free port, a thread per request; ``requests`` counts the batches answered."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s
        self.requests = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._server.request_queue_size = 64
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> EndpointServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        time.sleep(self.delay_s)
        with self._lock:
            self.requests += 1
        rows = hash_rows([_bare(t) for t in texts])
        data = [{"object": "embedding", "index": i, "embedding": row.tolist()} for i, row in enumerate(rows)]
        return {
            "object": "list",
            "data": data,
            "model": MODEL,
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                data = json.dumps(server.reply(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


def _bare(text: str) -> str:
    for prefix in _PREFIXES:
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text


@contextmanager
def endpoint_process(delay_s: float) -> Iterator[str]:
    """An ``EndpointServer`` in a child process; yields its base URL, stops it on exit."""
    command = [sys.executable, __file__, "--delay-ms", str(delay_s * 1000)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description="serve HashEmbedder's vectors on a loopback port")
    parser.add_argument("--delay-ms", type=float, default=0.0)
    args = parser.parse_args()
    server = EndpointServer(args.delay_ms / 1000).start()
    print(server.base_url, flush=True)
    server._thread.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
