"""A loopback OTLP/HTTP trace receiver: decodes each protobuf export request, as a collector would.

receiver = OtlpReceiver().start()         # 127.0.0.1, a free port, its own thread
... export to receiver.endpoint (http://127.0.0.1:PORT/v1/traces) ...
receiver.spans()                           # every span received: name, parent, attributes
receiver.stop()
"""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from tests.loopback import JsonHandler, LoopbackServer


@dataclass(frozen=True, slots=True)
class ReceivedSpan:
    name: str
    trace_id: bytes
    span_id: bytes
    parent_span_id: bytes
    attributes: dict[str, Any]
    service: str


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind is not None else None


class OtlpReceiver(LoopbackServer):
    """Takes ``POST /v1/traces`` (``application/x-protobuf``, gzip or not) and keeps what it decodes."""

    NAME = "OTLP receiver"

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.content_types: list[str] = []
        self._lock = threading.Lock()
        super().__init__()

    @property
    def endpoint(self) -> str:
        return f"{self.root}/v1/traces"

    def spans(self) -> list[ReceivedSpan]:
        with self._lock:
            requests = list(self.requests)
        out: list[ReceivedSpan] = []
        for request in requests:
            for resource_spans in request.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                for scope in resource_spans.scope_spans:
                    for span in scope.spans:
                        attributes = {a.key: _value(a.value) for a in span.attributes}
                        out.append(ReceivedSpan(span.name, span.trace_id, span.span_id,
                                                span.parent_span_id, attributes,
                                                str(resource.get("service.name"))))  # fmt: skip
        return out

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(JsonHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self._send(200, {"status": "ok"} if self.path == "/health" else {"error": "not found"})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    raw = gzip.decompress(raw)
                if self.path != "/v1/traces":
                    self._send(404, {"error": "not found"})
                    return
                request = ExportTraceServiceRequest.FromString(raw)
                with receiver._lock:
                    receiver.requests.append(request)
                    receiver.content_types.append(self.headers.get("Content-Type", ""))
                body = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler
