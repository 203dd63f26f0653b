"""A run that is out of time stops at its next step: no loop left running for a caller that gave up."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from evidence_loop.agent.doors.api import Limits
from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.loop.runtime import Deps
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import Policy
from evidence_loop.tools.errors import DeadlineExceeded, InputError
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces.records.steps import AbortedStep
from tests.agent.api_support import PUBLIC, api_client, open_sample

RESCHEDULE_ZH = "我的常规班已经开课了，还能免费改期一次吗？"
WARRANTY_EN = "How long is the whole-unit warranty for the LM-S10?"


def stepping_clock(seconds_per_call: float) -> Callable[[], float]:
    """A clock that moves on by a fixed amount each time it is read."""
    ticks = itertools.count()
    return lambda: next(ticks) * seconds_per_call


def test_a_run_past_its_deadline_stops_naming_where(sample_snapshot: Snapshot) -> None:
    controller = Controller(Policy(), deps=Deps(clock=stepping_clock(1.0)))
    with pytest.raises(DeadlineExceeded, match="ran out of time before"):
        controller.ask(sample_snapshot, RESCHEDULE_ZH, timeout_s=0.5)


def test_a_run_within_its_deadline_is_the_run_without_one(sample_snapshot: Snapshot) -> None:
    controller = Controller(Policy(), deps=Deps(clock=stepping_clock(0.001)))
    timed = controller.ask(sample_snapshot, RESCHEDULE_ZH, run_id="r", timeout_s=3600)
    free = controller.ask(sample_snapshot, RESCHEDULE_ZH, run_id="r")
    assert timed.model_dump(exclude={"latency_ms"}) == free.model_dump(exclude={"latency_ms"})


def test_a_traced_run_past_its_deadline_leaves_an_incomplete_valid_trace(tmp_path: Path) -> None:
    sample = open_sample(tmp_path)
    service = Service(sample.store, traces=sample.traces, deps=Deps(clock=stepping_clock(1.0)))
    try:
        with pytest.raises(DeadlineExceeded):
            service.ask(WARRANTY_EN, timeout_s=0.5)
        assert service.traces is not None
        (summary,) = service.traces.list()
        trace = service.trace(summary.run_id)
        assert summary.status == "incomplete"
        last = trace.events[-1].data
        assert isinstance(last, AbortedStep) and last.error == "DeadlineExceeded"
        assert service.verify(summary.run_id).ok
    finally:
        sample.close()


def test_the_api_answers_a_run_that_ran_out_of_time_with_a_504(tmp_path: Path) -> None:
    sample = open_sample(tmp_path)
    service = Service(sample.store, traces=sample.traces, deps=Deps(clock=stepping_clock(100.0)))
    try:
        response = api_client(service).post("/v1/ask", json={"question": WARRANTY_EN}, headers=PUBLIC.headers)
        assert response.status_code == 504
        assert response.json()["type"].endswith("timeout")
    finally:
        sample.close()


def test_the_service_limit_on_question_length_is_configurable(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "index", create=True)
    try:
        with pytest.raises(InputError, match="the limit is 10"):
            Service(store, question_chars=10).ask("x" * 11)
    finally:
        store.close()


def test_the_service_and_the_api_refuse_a_long_question_in_the_same_words(tmp_path: Path) -> None:
    sample = open_sample(tmp_path)
    try:
        with pytest.raises(InputError) as refused:
            Service(sample.store, question_chars=10).ask("保修" * 6)
        client = api_client(sample, Limits(question_chars=10))
        response = client.post("/v1/ask", json={"question": "保修" * 6}, headers=PUBLIC.headers)
    finally:
        sample.close()
    assert (response.status_code, response.json()["detail"]) == (422, str(refused.value))
