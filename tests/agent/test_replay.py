"""Traces and replay for audits: every run recorded, verifiable, replayable to the first divergent step."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from evidence_loop.agent.loop.replay import replay
from evidence_loop.agent.loop.runtime import ConflictReport, Recorder
from evidence_loop.agent.service import Service
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.types import EvidenceView
from evidence_loop.tools.errors import TamperedTraceError, TraceError
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import TraceStore, read_trace, verify
from tests.agent.golden_runs import EDITED_SHIPPING, GOLDEN, RUNS, sample_store
from tests.trace_support import edit_run

GOLDEN_IDENTICAL = [run_id for run_id, _, _ in RUNS if run_id.startswith("golden-")]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    s = sample_store(tmp_path_factory.mktemp("golden") / "index")
    yield s
    s.close()


@pytest.mark.parametrize("run_id", GOLDEN_IDENTICAL)
def test_a_committed_golden_trace_replays_identical(store: Store, run_id: str) -> None:
    report = replay(read_trace(GOLDEN / f"{run_id}.jsonl"), store)
    assert report.identical, report.describe()


@pytest.mark.parametrize("run_id", [r for r, _, _ in RUNS])
def test_a_committed_golden_trace_verifies(run_id: str) -> None:
    assert verify(read_trace(GOLDEN / f"{run_id}.jsonl")).ok


def test_the_diverging_golden_trace_reports_the_recall_that_changed(tmp_path: Path) -> None:
    store = sample_store(tmp_path / "index")
    store.ingest([EDITED_SHIPPING])
    trace = read_trace(GOLDEN / "diverge-shipping.jsonl")
    pinned = replay(trace, store)
    current = replay(trace, store, current=True)
    store.close()
    assert pinned.identical
    assert current.divergence is not None
    assert (current.divergence.seq, current.divergence.step) == (0, "recalled")
    assert current.divergence.path.startswith("data.hits[")
    assert current.corpus_changed


@pytest.fixture()
def service(tmp_path: Path) -> Iterator[Service]:
    s = Service(sample_store(tmp_path / "index"), traces=TraceStore(tmp_path / "traces"))
    yield s
    s.close()


def test_every_run_leaves_a_complete_verifying_trace_named_by_the_outcome(service: Service) -> None:
    outcome = service.ask("LM-S10 的整机保修期是多久？")
    assert outcome.trace is not None and outcome.trace.id == outcome.run_id
    result = service.verify(outcome.run_id)
    assert result.ok and result.complete
    assert result.final_hash == outcome.trace.hash


def test_the_trace_records_each_step_of_the_loop(service: Service) -> None:
    outcome = service.ask("我的常规班已经开课了，还能免费改期一次吗？")
    steps = [e.step for e in service.trace(outcome.run_id).events]
    assert steps[0] == "recalled" and steps[-1] == "decided"
    assert "checked" in steps and "slid" in steps


def test_a_tampered_trace_fails_verify_at_the_changed_event(service: Service) -> None:
    outcome = service.ask("LM-S10 的整机保修期是多久？")
    assert service.traces is not None
    record = _edit_query(service.traces, outcome.run_id, 2)
    result = verify(service.traces.read(outcome.run_id))
    assert not result.ok and result.first_bad_seq == record["seq"]


def test_replaying_a_tampered_trace_says_tampered_at_the_event_not_a_divergence(service: Service) -> None:
    outcome = service.ask("LM-S10 的整机保修期是多久？")
    assert service.traces is not None
    _edit_query(service.traces, outcome.run_id, 1)
    with pytest.raises(TamperedTraceError, match="tampered at event 0") as caught:
        service.replay(outcome.run_id)
    assert caught.value.seq == 0
    with pytest.raises(TamperedTraceError, match="tampered at event 0"):
        replay(service.traces.read(outcome.run_id), service.store)  # the library call verifies too


def _edit_query(traces: TraceStore, run_id: str, line: int) -> dict[str, Any]:
    """Change the query a recall event of ``run_id`` recorded (its ``line``), keeping valid JSON."""
    record: dict[str, Any] = {}

    def edit(lines: list[bytes]) -> list[bytes]:
        record.update(json.loads(lines[line]))
        record["data"]["query"] = "LM-S10 的整机保修期是几年？"
        return [*lines[:line], json.dumps(record, ensure_ascii=False).encode() + b"\n", *lines[line + 1 :]]

    edit_run(traces, run_id, edit)
    return record


def _exploding_check(question: Question, views: Sequence[EvidenceView], recorder: Recorder) -> ConflictReport:
    raise RuntimeError("killed mid-run")


def test_an_interrupted_run_leaves_an_incomplete_but_valid_trace(tmp_path: Path) -> None:
    traces = TraceStore(tmp_path / "traces")
    service = Service(sample_store(tmp_path / "index"), traces=traces, conflict_check=_exploding_check)
    with pytest.raises(RuntimeError):
        service.ask("LM-S10 的整机保修期是多久？")
    (summary,) = traces.list()
    trace = traces.read(summary.run_id)
    assert summary.status == "incomplete" and not trace.complete
    assert verify(trace).ok
    service.close()


def test_replay_after_a_new_version_is_identical_pinned_and_differs_current(service: Service) -> None:
    outcome = service.ask("满多少元可以免费配送？")
    service.ingest([EDITED_SHIPPING])
    assert service.replay(outcome.run_id).identical
    current = service.replay(outcome.run_id, current=True)
    assert not current.identical and current.corpus_changed


def test_a_trace_under_a_policy_this_code_cannot_rebuild_is_refused_not_guessed(store: Store) -> None:
    trace = read_trace(GOLDEN / "golden-warranty-en.jsonl")
    header = trace.header.model_copy(update={"policy": {**trace.header.policy, "retired_threshold": 1}})
    with pytest.raises(TraceError, match="cannot rebuild"):
        replay(dataclasses.replace(trace, header=header), store)
