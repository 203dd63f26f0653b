"""Traces written before the steps were typed (tests/agent/written, recorded at 7c853c1, one run for
every kind of step) and the golden traces: each verifies, each event reads as the typed step it was
written as, to the byte, and each finished run replays identical."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent.loop.replay import replay
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import STEP_KINDS, canonical_json, read_trace, verify
from tests.agent.golden_runs import GOLDEN
from tests.agent.written_runs import WRITTEN, hybrid_service, refund_store

TRACES = sorted(WRITTEN.glob("*.jsonl")) + sorted(GOLDEN.glob("*.jsonl"))
# run -> the index it replays against. written-llm-failed is read and verified, not replayed: its call
# was retried, and replay serves a call's recorded outcome once, so signals.llm_calls (attempts)
# would differ; so it was at 7c853c1. written-aborted never finished.
REPLAYED = {
    "written-hybrid": "hybrid",
    "written-rerank": "hybrid",
    "written-rerank-tei": "hybrid",
    "written-llm": "refund",
}


def _raw_events(path: Path) -> list[dict[str, object]]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [r for r in records if r["type"] == "event"]


# steps added after the written traces, each replayed by tests of its own (tests/agent/test_followups.py,
# tests/agent/test_conflict_scan.py)
LATER_STEPS = {"resolved", "conflict_scan"}


def test_the_written_traces_hold_every_kind_of_step() -> None:
    written = {str(e["step"]) for path in WRITTEN.glob("*.jsonl") for e in _raw_events(path)}
    assert written == set(STEP_KINDS) - LATER_STEPS


@pytest.mark.parametrize("path", TRACES, ids=[p.stem for p in TRACES])
def test_a_trace_written_before_the_steps_were_typed_verifies(path: Path) -> None:
    result = verify(read_trace(path))
    assert result.ok, result.reason
    assert result.complete == (path.stem != "written-aborted")


@pytest.mark.parametrize("path", TRACES, ids=[p.stem for p in TRACES])
def test_each_event_reads_as_the_typed_step_it_was_written_as(path: Path) -> None:
    events = read_trace(path).events
    written = [(e["step"], canonical_json(e["data"])) for e in _raw_events(path)]
    assert [(e.step, canonical_json(e.data.trace_data())) for e in events] == written
    assert [(e.step, canonical_json(e.data.model_dump())) for e in events] == written  # the API's dump


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Store]]:
    """The indexes the runs read, built anew: the sample help centre with vectors, the refund pages."""
    root = tmp_path_factory.mktemp("written")
    hybrid, refund = hybrid_service(root / "hybrid"), refund_store(root / "refund")
    yield {"hybrid": hybrid.store, "refund": refund}
    hybrid.close()
    refund.close()


@pytest.mark.parametrize(("run_id", "index"), REPLAYED.items())
def test_a_run_written_before_replays_identical(stores: dict[str, Store], run_id: str, index: str) -> None:
    report = replay(read_trace(WRITTEN / f"{run_id}.jsonl"), stores[index])
    assert report.identical, report.describe()
