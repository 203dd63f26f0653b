"""OpenTelemetry export of runs (``pip install 'evidence-loop[otel]'``): ``agent.loop.spans`` made with the
SDK.

Imported only when export is on (``EVLOOP_OTEL=otlp``, or a tracer provider given to the service).
``otlp_sink`` owns a tracer provider that batches spans to an OTLP/HTTP endpoint in the background
(the run does not wait for the network); the standard variables are honoured: ``OTEL_EXPORTER_OTLP_
[TRACES_]ENDPOINT`` when no endpoint is set, ``..._HEADERS`` (a Langfuse or vendor key belongs there),
``..._TIMEOUT``, ``..._COMPRESSION``, ``OTEL_SERVICE_NAME`` and ``OTEL_BSP_*``. ``OtelSink`` over an
application's own provider (Phoenix's ``register()``, say) makes the spans with it.

A run's root span is a child of the span current where the question was asked (an instrumented web
framework's request), so a team sees it inside its own trace.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode, TracerProvider

from evidence_loop.agent.loop.spans import SpanSpec
from evidence_loop.agent.loop.tracing import code_version

SCOPE = "evidence_loop"
DEFAULT_SERVICE = "evidence-loop"


class OtelSink:
    """Makes each run's spans with ``provider``; shuts it down on ``close`` when it owns it."""

    def __init__(self, provider: TracerProvider, *, owned: bool = False) -> None:
        self.provider = provider
        self._owned = owned
        self._tracer = provider.get_tracer(SCOPE, code_version())

    def emit(self, root: SpanSpec, children: Sequence[SpanSpec]) -> None:
        """The root span (a child of the current span, if any) and its step spans, ended at their times."""
        span = self._tracer.start_span(
            root.name, kind=SpanKind.INTERNAL, attributes=root.attributes, start_time=root.start_ns
        )
        inside = trace.set_span_in_context(span)
        for child in children:
            step = self._tracer.start_span(
                child.name, context=inside, attributes=child.attributes, start_time=child.start_ns
            )
            if child.error is not None:
                step.set_status(Status(StatusCode.ERROR, child.error))
            step.end(end_time=child.end_ns)
        if root.error is not None:
            span.set_status(Status(StatusCode.ERROR, root.error))
        span.end(end_time=root.end_ns)

    def close(self) -> None:
        """Send what is batched and stop, for a provider this sink made."""
        if self._owned and isinstance(self.provider, SdkTracerProvider):
            self.provider.shutdown()


def otlp_sink(endpoint: str | None = None) -> OtelSink:
    """A sink batching spans to ``endpoint`` (OTLP over HTTP, protobuf), else to the one the standard
    variables name, else ``http://localhost:4318/v1/traces``."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    name = os.environ.get("OTEL_SERVICE_NAME") or DEFAULT_SERVICE
    provider = SdkTracerProvider(resource=Resource.create({SERVICE_NAME: name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    return OtelSink(provider, owned=True)
