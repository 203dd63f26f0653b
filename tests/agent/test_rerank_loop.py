"""The reader seam end to end on the sample help centre: a cross-encoder (a loopback server speaking
the rerank protocol; no reranker model can be installed here) reads the grown windows, its scores
change which window leads, the trace holds what was sent and what came back, and replay answers
from that record with the server stopped."""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.loop.runtime import Deps
from evidence_loop.agent.loop.tracing import ListRecorder
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import Policy
from evidence_loop.tools.errors import RerankerError
from evidence_loop.tools.models.reranker import HTTPReranker
from evidence_loop.tools.models.reranker_config import RerankConfig
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import TraceStep, TraceStore
from evidence_loop.traces.records.steps import AbortedStep, CheckedStep, RerankReplyStep, RerankRequestStep
from tests.fake_embedder import FakeEmbedder
from tests.fake_rerank_server import FakeRerankServer

# The lexical and semantic signals lead with the course policy (it speaks of refunds at length);
# the returns policy is where tablets are refunded, and the stand-in cross-encoder says so.
QUESTION = "What is the refund policy for tablets?"
QUESTIONS = [QUESTION, "LM-S10 整机保修多久？", "How do I reschedule a class?"]


def _cross_encoder(query: str, text: str) -> float:
    return 0.95 if "Returns and Exchanges" in text else 0.05


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, measured_sample: Path) -> Path:
    """The sample help centre with unit vectors and its scale, ingested once (without a reranker)."""
    copied: Path = shutil.copytree(measured_sample, tmp_path_factory.mktemp("rerank") / "index")
    return copied


@pytest.fixture
def server() -> Iterator[FakeRerankServer]:
    s = FakeRerankServer(_cross_encoder).start()
    try:
        yield s
    finally:
        s.stop()


def _reranker(base_url: str, **settings: Any) -> HTTPReranker:
    return HTTPReranker(RerankConfig(base_url=base_url, model="fake-cross-encoder", **settings))


@pytest.fixture
def reranked(index: Path, server: FakeRerankServer) -> Iterator[Service]:
    service = Service.open(index, embedder=FakeEmbedder(), reranker=_reranker(server.base_url))
    yield service
    service.close()


def _last_checked(steps: Sequence[TraceStep]) -> CheckedStep:
    return next(s for s in reversed(steps) if isinstance(s, CheckedStep))


def test_the_rerankers_scores_change_which_window_leads(reranked: Service) -> None:
    snapshot = reranked.store.snapshot()
    plain, scored = ListRecorder(), ListRecorder()
    Controller(embedder=reranked.embedder).ask(snapshot, QUESTION, recorder=plain)
    Controller(embedder=reranked.embedder, reranker=reranked.reranker).ask(
        snapshot, QUESTION, recorder=scored
    )
    before, after = _last_checked(plain.steps).windows, _last_checked(scored.steps).windows
    assert (before[0]["doc_id"], "rerank" in before[0]) == ("course-policy-en", False)
    assert (after[0]["doc_id"], after[0].get("rerank")) == ("returns-en", 0.95)
    assert after[0]["score"] > before[0]["score"]


def test_a_reranked_run_records_what_was_sent_and_what_came_back_before_each_check(
    reranked: Service, server: FakeRerankServer
) -> None:
    outcome = reranked.ask(QUESTION)
    trace = reranked.trace(outcome.run_id)
    assert trace.named("reranker") == {
        "model": "fake-cross-encoder",
        "base_url": server.base_url,
        "api": "cohere",
        "scores": "auto",
    }
    steps = [e.step for e in trace.events]
    for i, step in enumerate(steps):
        if step == "checked":
            assert steps[i - 2 : i] == ["rerank_request", "rerank_reply"]
    request = next(e.data for e in trace.events if isinstance(e.data, RerankRequestStep))
    policy = Policy()
    assert request.url == f"{server.base_url}/rerank" and request.body["query"] == QUESTION
    documents = request.trace_data()["body"]["documents"]
    assert 1 < len(documents) <= policy.rerank_k and all(len(d) <= policy.rerank_chars for d in documents)
    assert server.requests[0].body == request.trace_data()["body"]  # one request per check, as sent
    reply = next(e.data for e in trace.events if isinstance(e.data, RerankReplyStep))
    assert reply.status == 200 and len(reply.scores) == len(documents)
    checked = _last_checked([e.data for e in trace.events])
    lead, signals = checked.windows[0], checked.signals
    assert signals is not None and "rerank" in lead
    assert signals["rerank"] == max(w["rerank"] for w in checked.windows if "rerank" in w)
    # the judge reads the completeness score it was fitted on, the reranker's beside it
    assert signals["score"] == pytest.approx(lead["score"] - policy.w_rerank * lead["rerank"], abs=1e-6)


def test_a_reranked_run_replays_identical_with_the_server_stopped(
    reranked: Service, server: FakeRerankServer
) -> None:
    run_ids = [reranked.ask(q).run_id for q in QUESTIONS]
    asked = len(server.requests)
    server.stop()
    for run_id in run_ids:
        report = reranked.replay(run_id)
        assert report.identical, report.describe()
    assert len(server.requests) == asked


def test_a_run_without_a_reranker_sends_nothing_and_records_no_reranker(index: Path) -> None:
    service = Service.open(index, embedder=FakeEmbedder(), reranker=None)
    try:
        trace = service.trace(service.ask(QUESTION).run_id)
    finally:
        service.close()
    assert not {"rerank_request", "rerank_reply"} & {e.step for e in trace.events}
    assert "reranker" not in trace.header.model_dump()  # the header reads as before the seam existed
    checked = _last_checked([e.data for e in trace.events])
    written = checked.trace_data()
    assert "rerank" not in written["signals"] and all("rerank" not in w for w in written["windows"])


def test_an_unreachable_reranker_stops_the_run_with_a_clear_error_its_trace_records(
    index: Path, tmp_path: Path
) -> None:
    dead = FakeRerankServer().start()
    dead.stop()  # its port is now closed
    embedder = FakeEmbedder()
    service = Service(
        Store.open(index, embedder=embedder),
        traces=TraceStore(tmp_path / "traces"),
        deps=Deps(new_run_id=lambda: "r-unreachable"),
        embedder=embedder,
        reranker=_reranker(dead.base_url, max_attempts=2, timeout_s=2.0),
    )
    try:
        with pytest.raises(RerankerError, match=r"rerank endpoint .* failed after 2 attempt"):
            service.ask(QUESTION)
        trace = service.trace("r-unreachable")
    finally:
        service.close()
    last = trace.events[-1].data
    assert trace.footer is None and isinstance(last, AbortedStep) and last.error == "RerankerUnavailableError"
