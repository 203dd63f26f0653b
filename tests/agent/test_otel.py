"""Runs exported as OpenTelemetry spans: a view of each run's trace records, in OpenInference's
conventions, bounded by what the caller may read; off by default, and the same run either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from openinference.semconv.trace import (
    DocumentAttributes,
    MessageAttributes,
    OpenInferenceSpanKindValues,
    RerankerAttributes,
    SpanAttributes,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from evidence_loop.agent import settings
from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.loop import spans as view
from evidence_loop.agent.loop.runtime import Deps
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import DeadlineExceeded, InputError
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import TraceStore
from tests.fake_otlp_receiver import OtlpReceiver

ROOT = Path(__file__).resolve().parents[2]
SEVERAL = "How long is the LM-X200 warranty?"
STAFF_ONLY = "员工购买学习设备打几折？"  # answered from staff-discount-zh, which only staff may read


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("otel") / "index"
    with Service.open(folder, create=True) as service:
        service.ingest(load_sample_kb())
    return folder


@pytest.fixture
def exported() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    yield provider, memory
    provider.shutdown()


def root_of(spans: tuple[ReadableSpan, ...]) -> ReadableSpan:
    (root,) = [s for s in spans if s.parent is None]
    return root


def test_each_loop_step_is_a_span_under_the_run_with_its_id_and_trace_hash(
    index: Path, exported: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, memory = exported
    with Service.open(index, spans=provider) as service:
        outcome = service.ask(SEVERAL)
        steps = [e.step for e in service.trace(outcome.run_id).events]
    spans = memory.get_finished_spans()
    root = root_of(spans)
    assert root.attributes is not None
    assert root.attributes["evidence_loop.run_id"] == outcome.run_id
    assert root.attributes["evidence_loop.trace.hash"] == outcome.trace.hash  # type: ignore[union-attr]
    assert root.attributes["openinference.span.kind"] == "CHAIN"
    assert root.attributes["input.value"] == SEVERAL and root.attributes["evidence_loop.status"] == "answered"
    children = sorted((s for s in spans if s is not root), key=lambda s: s.start_time or 0)
    assert [s.name for s in children] == steps
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in children)
    assert all(s.context.trace_id == root.context.trace_id for s in children)


def test_the_attribute_names_are_openinferences_own() -> None:
    pairs = [
        (view.SPAN_KIND, SpanAttributes.OPENINFERENCE_SPAN_KIND),
        (view.INPUT_VALUE, SpanAttributes.INPUT_VALUE),
        (view.INPUT_MIME_TYPE, SpanAttributes.INPUT_MIME_TYPE),
        (view.OUTPUT_VALUE, SpanAttributes.OUTPUT_VALUE),
        (view.OUTPUT_MIME_TYPE, SpanAttributes.OUTPUT_MIME_TYPE),
        (view.RETRIEVAL_DOCUMENTS, SpanAttributes.RETRIEVAL_DOCUMENTS),
        (view.DOCUMENT_ID, DocumentAttributes.DOCUMENT_ID),
        (view.DOCUMENT_SCORE, DocumentAttributes.DOCUMENT_SCORE),
        (view.DOCUMENT_CONTENT, DocumentAttributes.DOCUMENT_CONTENT),
        (view.DOCUMENT_METADATA, DocumentAttributes.DOCUMENT_METADATA),
        (view.EMBEDDING_MODEL_NAME, SpanAttributes.EMBEDDING_MODEL_NAME),
        (view.LLM_MODEL_NAME, SpanAttributes.LLM_MODEL_NAME),
        (view.LLM_INPUT_MESSAGES, SpanAttributes.LLM_INPUT_MESSAGES),
        (view.LLM_OUTPUT_MESSAGES, SpanAttributes.LLM_OUTPUT_MESSAGES),
        (view.MESSAGE_ROLE, MessageAttributes.MESSAGE_ROLE),
        (view.MESSAGE_CONTENT, MessageAttributes.MESSAGE_CONTENT),
        (view.RERANKER_QUERY, RerankerAttributes.RERANKER_QUERY),
        (view.RERANKER_MODEL_NAME, RerankerAttributes.RERANKER_MODEL_NAME),
        (view.RERANKER_INPUT_DOCUMENTS, RerankerAttributes.RERANKER_INPUT_DOCUMENTS),
        (view.RERANKER_OUTPUT_DOCUMENTS, RerankerAttributes.RERANKER_OUTPUT_DOCUMENTS),
        (view.USER_ID, SpanAttributes.USER_ID),
    ]
    assert [ours for ours, _ in pairs] == [theirs for _, theirs in pairs]
    kinds = {k.value for k in OpenInferenceSpanKindValues}
    assert {"CHAIN", "RETRIEVER", "EMBEDDING", "RERANKER", "LLM"} <= kinds


def test_recall_spans_follow_openinference_retrieval_conventions(
    index: Path, exported: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, memory = exported
    with Service.open(index, spans=provider) as service:
        service.ask(SEVERAL)
        snapshot = service.snapshot()
        recalled = [s for s in memory.get_finished_spans() if s.name == "recalled"]
        assert recalled
        for span in recalled:
            attributes = dict(span.attributes or {})
            assert attributes["openinference.span.kind"] == "RETRIEVER"
            assert attributes["input.value"] == attributes["evidence_loop.recalled.query"]
            i = 0
            while f"retrieval.documents.{i}.document.id" in attributes:
                prefix = f"retrieval.documents.{i}.document"
                meta = json.loads(str(attributes[f"{prefix}.metadata"]))
                text = snapshot.parsed(str(attributes[f"{prefix}.id"]), meta["version"]).text
                assert attributes[f"{prefix}.content"] == text[meta["start"] : meta["end"]]
                assert isinstance(attributes[f"{prefix}.score"], float)
                i += 1
            assert i > 0


def every_value(spans: tuple[ReadableSpan, ...]) -> str:
    return "\n".join(f"{k}={v}" for s in spans for k, v in (s.attributes or {}).items())


def test_a_callers_spans_show_nothing_of_documents_their_groups_cannot_read(
    index: Path, exported: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, memory = exported
    with Service.open(index, spans=provider) as service:
        staff_text = service.snapshot().parsed("staff-discount-zh", "1").text
        public = service.ask(STAFF_ONLY)
        shown_public = every_value(memory.get_finished_spans())
        memory.clear()
        staff = service.ask(STAFF_ONLY, ["staff"])
        shown_staff = every_value(memory.get_finished_spans())
    assert public.status == "insufficient_evidence" and staff.status == "answered"
    assert "staff-discount-zh" in shown_staff  # what the staff caller read is there
    assert "staff-discount-zh" not in shown_public
    sentences = [line for line in staff_text.splitlines() if len(line) > 8]
    assert not any(sentence in shown_public for sentence in sentences)
    for shown in (shown_public, shown_staff):  # neither the caller's groups nor any ACL
        assert "groups" not in shown and "acl" not in shown


def test_a_run_traced_with_export_on_and_off_has_the_same_outcome_and_trace_hash(
    index: Path, tmp_path: Path, exported: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, memory = exported
    moment = datetime(2026, 3, 1, 8, 30, tzinfo=UTC)
    hashes, outcomes = [], []
    for name, spans in (("off", None), ("on", provider)):
        deps = Deps(now=lambda: moment, new_run_id=lambda: "same-run")
        with Service(
            Store.open(index), traces=TraceStore(tmp_path / name), deps=deps, spans=spans
        ) as service:
            outcome = service.ask(SEVERAL)
        hashes.append(outcome.trace.hash)  # type: ignore[union-attr]
        outcomes.append(outcome.model_dump(exclude={"latency_ms"}))
    assert hashes[0] == hashes[1] and outcomes[0] == outcomes[1]
    assert root_of(memory.get_finished_spans()).attributes["evidence_loop.trace.hash"] == hashes[0]  # type: ignore[index]


def test_a_run_that_stops_is_exported_with_its_error(
    index: Path, exported: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, memory = exported
    with Service.open(index, spans=provider) as service, pytest.raises(DeadlineExceeded):
        service.ask(SEVERAL, timeout_s=0.0)
    spans = memory.get_finished_spans()
    root = root_of(spans)
    assert root.status.status_code == StatusCode.ERROR and "DeadlineExceeded" in str(root.status.description)
    assert spans[-2].name == "aborted" and spans[-2].status.status_code == StatusCode.ERROR


def test_evloop_ask_sends_its_spans_to_an_otlp_http_receiver(index: Path) -> None:
    receiver = OtlpReceiver().start()
    try:
        code = main(["ask", "--index", str(index), "--otel", "otlp", "--otel-endpoint", receiver.endpoint,
                     "--json", SEVERAL])  # fmt: skip
        assert code == 0
        spans = receiver.spans()  # the service's close flushed the batch
    finally:
        receiver.stop()
        settings.install({})  # the flags main() installed for this process: gone for the next test
    assert receiver.content_types and all(t == "application/x-protobuf" for t in receiver.content_types)
    (root,) = [s for s in spans if not s.parent_span_id]
    assert root.name == "evidence_loop.ask" and root.service == "evidence-loop"
    assert (
        root.attributes["input.value"] == SEVERAL
        and len(str(root.attributes["evidence_loop.trace.hash"])) == 64
    )
    assert {s.name for s in spans} >= {"recalled", "checked", "decided"}
    assert all(s.trace_id == root.trace_id for s in spans)


def test_export_is_off_by_default_and_opentelemetry_is_not_imported(index: Path) -> None:
    script = (
        "import sys; from evidence_loop import Service\n"
        f"with Service.open({str(index)!r}) as s:\n"
        f"    assert s.spans is None; s.ask({SEVERAL!r})\n"
        "print(sorted(m for m in sys.modules if m.startswith(('opentelemetry', 'openinference'))))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_an_unknown_exporter_is_refused_naming_the_choices(
    index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVLOOP_OTEL", "jaeger")
    with pytest.raises(InputError, match="off, otlp"):
        Service.open(index)
