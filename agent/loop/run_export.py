"""Runs handed to a team's tracing tools once their trace is written (``Service``, every door).

The service watches a run only when export is on (``SpanSink``): its steps are noted with the time
each was recorded, beside the trace writer, and once the trace is finished (or the run aborted) the
run becomes spans (``agent.loop.spans``) for the sink (``agent.loop.otel``: the OpenTelemetry SDK). With
export
off nothing is watched and nothing of OpenTelemetry is imported. A sink that fails is logged, never
the run's failure: the trace is the record, the spans a view of it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from evidence_loop.agent import settings
from evidence_loop.agent.loop.render import render_outcome
from evidence_loop.agent.loop.runtime import PlainRecorder
from evidence_loop.agent.loop.spans import Readable, RunRecord, SpanSpec, Text, run_spans
from evidence_loop.agent.outcome import Outcome, TraceRef
from evidence_loop.tools.errors import InputError, NotFoundError
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.traces.records.steps import AbortedStep, AnyStep

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

log = logging.getLogger("evidence_loop.export")
EXPORTS = ("off", "otlp")


class SpanSink(Protocol):
    """Where a run's spans go (``agent.loop.otel.OtelSink``)."""

    def emit(self, root: SpanSpec, children: Sequence[SpanSpec]) -> None: ...

    def close(self) -> None: ...


def configured_sink(spans: TracerProvider | SpanSink | str | None) -> SpanSink | None:
    """The sink for ``spans``: ``"configured"`` reads the settings (``otel``: off or otlp, and
    ``otel_endpoint``), a tracer provider (the application's own) makes spans with it, None is off."""
    if spans is None or spans == "off":
        return None
    if spans == "configured":
        chosen = settings.current()
        export = chosen.get("otel").strip().lower() or "off"
        if export not in EXPORTS:
            raise InputError(f"otel is one of {', '.join(EXPORTS)}, not {export!r} (EVLOOP_OTEL, --otel)")
        if export == "off":
            return None
        try:
            from evidence_loop.agent.loop.otel import otlp_sink  # OpenTelemetry is imported when export is on
        except ImportError as exc:
            raise InputError(f"otel = otlp needs pip install 'evidence-loop[otel]' ({exc})") from None
        return otlp_sink(chosen.get("otel_endpoint").strip() or None)
    if isinstance(spans, str):
        raise InputError(f"spans= is 'configured', None or a tracer provider, not {spans!r}")
    if hasattr(spans, "emit"):
        return spans  # type: ignore[return-value]
    from evidence_loop.agent.loop.otel import OtelSink

    return OtelSink(spans)


class TimedRecorder(PlainRecorder):
    """Passes each step to the trace writer's recorder (if any) and notes when it was recorded."""

    def __init__(self, inner: PlainRecorder | None) -> None:
        self.inner = inner
        self.steps: list[tuple[int, AnyStep]] = []

    def record(self, step: AnyStep) -> None:
        if self.inner is not None:
            self.inner.record(step)
        self.steps.append((time.time_ns(), step))


@dataclass(slots=True)
class Watch:
    """One run watched for export: its steps, and its outcome once it has one."""

    recorder: TimedRecorder = field(default_factory=lambda: TimedRecorder(None))
    outcome: Outcome | None = None
    started_ns: int = field(default_factory=time.time_ns)

    def around(self, inner: PlainRecorder | None) -> TimedRecorder:
        """The recorder the run records with: ``inner`` (the trace writer's), its steps noted."""
        self.recorder.inner = inner
        return self.recorder


@contextmanager
def watching(
    sink: SpanSink,
    snapshot: Snapshot,
    groups: Collection[str],
    run_id: str,
    question: str,
    caller: str | None,
) -> Iterator[Watch]:
    """Watch one run; its spans go to ``sink`` when it ends, aborted or not."""
    watch = Watch()
    error: str | None = None
    try:
        yield watch
    except BaseException as exc:
        error = f"{type(exc).__name__}: {str(exc)[:300]}"
        # the step the trace writer ends an aborted trace with (traces.records.writer), not a recorder's
        aborted = AbortedStep(error=type(exc).__name__, message=str(exc)[:300])
        watch.recorder.steps.append((time.time_ns(), aborted))
        raise
    finally:
        run = _record(watch, run_id, question, caller, error, snapshot.generation)
        try:
            sink.emit(*run_spans(run, _readable(snapshot, groups), _text(snapshot)))
        except Exception as exc:  # the spans are a view; the run stands without them
            log.warning("run %s not exported: %s", run_id, exc)


def _record(
    watch: Watch, run_id: str, question: str, caller: str | None, error: str | None, generation: int
) -> RunRecord:
    outcome = watch.outcome
    trace = outcome.trace if outcome is not None else None
    return RunRecord(
        run_id=run_id,
        question=question,
        started_ns=watch.started_ns,
        ended_ns=time.time_ns(),
        steps=watch.recorder.steps,
        output=_output(outcome) if outcome is not None else "",
        status=outcome.status if outcome is not None else "aborted",
        trace_hash=trace.hash if isinstance(trace, TraceRef) else None,
        caller=caller,
        generation=generation,
        error=error,
    )


def _output(outcome: Outcome) -> str:
    """The outcome as people read it: the answer and its citations, or what is missing."""
    return render_outcome(outcome, show_evidence=False)


def _readable(snapshot: Snapshot, groups: Collection[str]) -> Readable:
    readers = tuple(groups)

    def readable(doc_id: str, version: str) -> bool:
        try:
            return snapshot.readable(doc_id, version, readers)
        except NotFoundError:
            return False

    return readable


def _text(snapshot: Snapshot) -> Text:
    def text(doc_id: str, version: str, start: int, end: int) -> str | None:
        try:
            return snapshot.parsed(doc_id, version).text[start:end]
        except NotFoundError:
            return None

    return text
