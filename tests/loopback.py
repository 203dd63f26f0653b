"""A loopback HTTP server in its own thread, for the fake endpoints the tests talk to.

A subclass gives ``_handler_class``; ``start`` returns once ``GET /health`` answers (generous: a busy
machine is slow to schedule a thread), ``stop`` shuts it down.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class JsonHandler(BaseHTTPRequestHandler):
    """A fake endpoint's handler: JSON replies (``_send``), no request log."""

    keep_alive = True  # False: every reply closes its connection

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if not self.keep_alive:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the client gave up

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet test output


class LoopbackServer:
    """127.0.0.1, a free port, its own thread."""

    NAME = "loopback server"  # as the readiness error names it

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def root(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self, ready_within_s: float = 60.0) -> Self:
        """Serve, and return once ``/health`` answers."""
        self._thread.start()
        deadline = time.monotonic() + ready_within_s
        while True:
            try:
                with urllib.request.urlopen(f"{self.root}/health", timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the {self.NAME} was not ready within {ready_within_s} s") from None
                time.sleep(0.05)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
