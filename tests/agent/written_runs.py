"""Traces as evidence-loop wrote them before its trace steps were typed: one run for every kind of step.

``tests/agent/written/*.jsonl`` were recorded by this module at commit 7c853c1 (the golden traces are
older still and hold only recall, sliding, checks and decisions). They stand for the traces already
written by deployed versions, which every later version must read, verify and replay as they were
written: they are never rewritten. ``python -m tests.agent.written_runs DIR`` records the same runs
with the code of the tree it runs in, to compare byte for byte.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from pydantic_ai.models import override_allow_model_requests

from evidence_loop.agent.loop.conflict_check import ConflictChecker
from evidence_loop.agent.loop.llm_adjudicator import LLMAdjudicator
from evidence_loop.agent.loop.runtime import Deps
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import DeadlineExceeded
from evidence_loop.tools.models.llm_client import build_model
from evidence_loop.tools.models.llm_recording import LLMRecorder
from evidence_loop.tools.models.reranker import HTTPReranker
from evidence_loop.tools.models.reranker_config import RerankConfig
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import TraceStore
from tests.agent.golden_runs import recorded_sample_kb
from tests.fake_embedder import FakeEmbedder
from tests.fake_openai_server import FakeOpenAIServer, error_body, tool_calls_reply
from tests.fake_rerank_server import FakeRerankServer
from tests.legacy_parse import legacy_parse
from tests.llm_support import REFUND_DOCS, REFUND_QUESTION, config, refund_verdict

WRITTEN = Path(__file__).parent / "written"
FIXED_TIME = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
HYBRID = ("written-hybrid", "LM-S10 整机保修多久？")
RERANKED = (
    ("written-rerank", "What is the refund policy for tablets?", "cohere"),
    ("written-rerank-tei", "What is the refund policy for tablets?", "tei"),
)
ABORTED = ("written-aborted", "How long is the whole-unit warranty for the LM-S10?")
# one call answered; one whose every attempt fails (500), the rules deciding after it
LLM_RUNS = (
    ("written-llm", [(200, "final")]),
    ("written-llm-failed", [(500, error_body("boom"))] * 4),
)


def fixed(run_id: str, clock: Callable[[], float] | None = None) -> Deps:
    """The deps of one recorded run: its id and a fixed time (and a clock, to run out of time)."""
    if clock is None:
        return Deps(now=lambda: FIXED_TIME, new_run_id=lambda: run_id)
    return Deps(now=lambda: FIXED_TIME, new_run_id=lambda: run_id, clock=clock)


def hybrid_service(index: Path) -> Service:
    """The sample help centre as the runs were recorded against it, with the fake embedder's unit vectors
    and its corpus scale."""
    service = Service.open(index, create=True, embedder=FakeEmbedder(), reranker=None, tracing_on=False)
    if service.store.generation == 0:
        service.store.ingest(recorded_sample_kb(), parse=legacy_parse)
    return service


def refund_store(index: Path) -> Store:
    """Two pages that disagree on the refund period."""
    store = Store.open(index, create=True)
    if store.generation == 0:
        store.ingest(REFUND_DOCS)
    return store


def _cross_encoder(query: str, text: str) -> float:
    return 0.95 if "Returns and Exchanges" in text else 0.05


def _record_hybrid(index: Path, traces: TraceStore) -> None:
    base = hybrid_service(index)
    run_id, question = HYBRID
    Service(base.store, traces=traces, deps=fixed(run_id), embedder=base.embedder).ask(question)
    server = FakeRerankServer(_cross_encoder).start()
    try:
        for run_id, question, api in RERANKED:
            settings = RerankConfig(base_url=server.base_url, model="fake-cross-encoder", api=api)  # type: ignore[arg-type]
            reranker = HTTPReranker(settings)
            Service(
                base.store, traces=traces, deps=fixed(run_id), embedder=base.embedder, reranker=reranker
            ).ask(question)
            reranker.close()
    finally:
        server.stop()
    base.close()


def _record_llm(index: Path, traces: TraceStore) -> None:
    store = refund_store(index)
    server = FakeOpenAIServer().start()
    try:
        for run_id, replies in LLM_RUNS:
            for status, body in replies:
                final = tool_calls_reply(("final_result", json.dumps(refund_verdict(), ensure_ascii=False)))
                server.enqueue(status, final if body == "final" else body)
            settings = config(base_url=server.base_url)
            check = ConflictChecker(LLMAdjudicator(build_model(settings, LLMRecorder()), settings))
            with override_allow_model_requests(True):
                Service(store, traces=traces, deps=fixed(run_id), conflict_check=check).ask(REFUND_QUESTION)
    finally:
        server.stop()
    store.close()


def _record_aborted(index: Path, traces: TraceStore) -> None:
    with Store.open(index, create=True) as store:
        if store.generation == 0:
            store.ingest(recorded_sample_kb(), parse=legacy_parse)
        ticks = itertools.count()
        run_id, question = ABORTED
        service = Service(store, traces=traces, deps=fixed(run_id, lambda: float(next(ticks))))
        with contextlib.suppress(DeadlineExceeded):
            service.ask(question, timeout_s=4.5)


def record(out: Path, work: Path) -> None:
    """Record every run into ``out``, one trace file each; indexes are made under ``work``."""
    traces = TraceStore(work / "traces")
    _record_hybrid(work / "hybrid", traces)
    _record_llm(work / "refund", traces)
    _record_aborted(work / "sample", traces)
    for path in sorted(traces.root.rglob("written-*.jsonl")):
        (out / path.name).write_bytes(path.read_bytes())


if __name__ == "__main__":
    import tempfile

    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        record(target, Path(tmp))
    print(f"wrote {len(list(target.glob('written-*.jsonl')))} traces to {target}")
