"""The hybrid loop end to end on the sample help centre, with a small deterministic embedder:
recorded question vectors, the embedder and scale in the header, the judge's signals, exact replay,
and replay under another embedder naming the first step that changed."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent.loop.calibrate import MIN_SAMPLES, self_calibrate
from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.service import Service
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import DocumentInput
from evidence_loop.traces.records.steps import CheckedStep, EmbeddedStep, RecalledStep
from tests.fake_embedder import FakeEmbedder

QUESTIONS = [
    "LM-S10 整机保修多久？",
    "How do I reschedule a class?",
    "What is the refund policy for tablets?",
]


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory: pytest.TempPathFactory, measured_sample: Path) -> Iterator[Service]:
    """The sample help centre as ``Service.open(create=True, embedder=FakeEmbedder())`` ingests it
    (tests/agent/conftest.py makes that index once a session)."""
    index = shutil.copytree(measured_sample, tmp_path_factory.mktemp("hybrid") / "index")
    service = Service.open(index, embedder=FakeEmbedder())
    yield service
    service.close()


def test_ingest_measures_the_corpus_scale_and_runs_are_judged_on_it(hybrid: Service) -> None:
    scale = hybrid.store.scale()
    assert scale is not None and scale.samples >= 20
    assert {name for name, _, _ in scale.signals} >= {"semantic_top", "semantic_window", "coverage"}
    outcome = hybrid.ask(QUESTIONS[0])
    assert outcome.signals.semantic is not None and outcome.signals.judge is not None
    assert 0.0 < outcome.signals.judge_threshold < 1.0  # type: ignore[operator]


def test_a_hybrid_run_records_its_vector_first_and_its_embedder_and_scale_in_the_header(
    hybrid: Service,
) -> None:
    outcome = hybrid.ask(QUESTIONS[1])
    trace = hybrid.trace(outcome.run_id)
    assert trace.named("embedder")["backend"] == "fake" and trace.named("embedder")["dim"] == 64
    assert trace.header.judge["scale"]["samples"] >= 20
    first = trace.events[0].data
    assert isinstance(first, EmbeddedStep) and len(first.digest) == 64
    recalled = next(e.data for e in trace.events if isinstance(e.data, RecalledStep))
    assert all("similarity" in hit for hit in recalled.hits)
    checked = next(e.data for e in trace.events if isinstance(e.data, CheckedStep))
    assert set(checked.signals or ()) == {
        "semantic_top",
        "semantic_window",
        "coverage",
        "score",
        "slot_coverage",
        "absent",
        "unstated",
    }


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_hybrid_run_replays_identical_with_its_recorded_vector(hybrid: Service, question: str) -> None:
    outcome = hybrid.ask(question)
    report = hybrid.replay(outcome.run_id)
    assert report.identical, report.describe()


def test_replay_under_another_embedder_names_the_first_step_that_changed(
    tmp_path: Path, measured_sample: Path
) -> None:
    index = shutil.copytree(measured_sample, tmp_path / "index")  # ingested with FakeEmbedder()
    service = Service.open(index, embedder=FakeEmbedder())
    run_id = service.ask(QUESTIONS[2]).run_id
    service.close()
    Store.open(index, embedder=FakeEmbedder("b"), reembed=True).close()
    other = Service.open(index, embedder=FakeEmbedder("b"))
    try:
        report = other.replay(run_id, current=True)
    finally:
        other.close()
    assert not report.identical and report.divergence is not None
    assert report.divergence.seq == 0  # the question's vector: another model made it


def test_a_hidden_document_gives_no_evidence_to_a_question_drawn_from_it(hybrid: Service) -> None:
    snapshot = hybrid.store.snapshot()
    controller = Controller(embedder=hybrid.embedder)
    question = "LM-S10 整机保修多久？"
    found = controller.ask(snapshot, question)
    hidden = snapshot.hiding(["warranty-zh"])
    assert "warranty-zh" in {e.doc_id for e in found.evidence}
    assert "warranty-zh" not in {e.doc_id for e in controller.ask(hidden, question).evidence}


def test_self_calibration_is_deterministic_and_needs_vectors(hybrid: Service) -> None:
    snapshot = hybrid.store.snapshot()
    first = self_calibrate(snapshot, Controller(embedder=hybrid.embedder), samples=40)
    again = self_calibrate(snapshot, Controller(embedder=hybrid.embedder), samples=40)
    assert first is not None and first == again
    assert self_calibrate(snapshot, Controller(), samples=40) is None


TWO_ARTICLES = [
    DocumentInput(
        doc_id="refunds",
        title="Refunds",
        format="markdown",
        text="# Refunds\n\nYou can ask for a full refund within 14 days of purchase. "
        "Orders older than 14 days cannot be refunded.\n",
    ),
    DocumentInput(
        doc_id="shipping",
        title="Shipping",
        format="markdown",
        text="# Shipping\n\nStandard delivery takes 3-5 business days within mainland China. "
        "Express delivery takes 1-2 business days and costs 15 yuan.\n",
    ),
]


def test_a_few_short_articles_measure_no_scale_and_the_lexical_rule_decides(tmp_path: Path) -> None:
    """Two articles of four sentences: 200 pseudo-questions would repeat them, and a spread measured
    over repeats made the judge answer questions the articles never speak of."""
    with Service.open(tmp_path / "ix", create=True, embedder=FakeEmbedder(), tracing_on=False) as service:
        service.ingest(TWO_ARTICLES)
        assert service.store.scale() is None
        gap = service.judge_gap()
        assert gap is not None and gap.repair == "grow" and f"fewer than {MIN_SAMPLES}" in gap.reason
        assert service.ask("Can I pay with paypal?").status == "insufficient_evidence"
        assert service.ask("How long does express delivery take?").status == "answered"
