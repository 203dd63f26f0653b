"""A run whose trace cannot be written, under ``when_traces_fail="answer-untraced"``: the outcome
computed once is returned, saying it was not traced; the question is never run a second time."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from evidence_loop.agent.loop.conflict_check import ConflictChecker
from evidence_loop.agent.loop.llm_adjudicator import LLMAdjudicator
from evidence_loop.agent.outcome import NotTraced
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import TraceStoreUnavailableError
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import TraceStore
from evidence_loop.traces.records.batch import BatchWriter
from evidence_loop.traces.records.writer import TraceWriter
from tests.llm_support import REFUND_DOCS, REFUND_QUESTION, Script, answer, config, read, refund_verdict


def _full(*args: object, **kwargs: object) -> str:
    raise TraceStoreUnavailableError("/srv/traces", "no space left on the disk")


def _service(tmp_path: Path, script: Script, layout: str = "journal") -> Service:
    store = Store.open(tmp_path / "index", create=True)
    store.ingest(REFUND_DOCS)
    check = ConflictChecker(LLMAdjudicator(script.model(), config()))
    traces = TraceStore(tmp_path / "traces", layout="files" if layout == "files" else "journal")
    return Service(store, traces=traces, conflict_check=check, when_traces_fail="answer-untraced")


def _script() -> Script:
    return Script([read("e1", "e2"), answer(refund_verdict())])


def test_a_trace_that_cannot_be_finished_does_not_run_the_question_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(BatchWriter, "finish", _full)
    script = _script()
    with _service(tmp_path, script) as service:
        outcome = service.ask(REFUND_QUESTION)
    assert len(script.seen) == 2  # the model's two turns, once
    assert outcome.status == "conflicting_evidence" and outcome.conflicts[0].adjudicator == "llm"
    assert isinstance(outcome.trace, NotTraced) and outcome.trace.id == outcome.run_id


def test_a_step_that_cannot_be_written_lets_the_run_finish_once_untraced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(TraceWriter, "append", _full)
    script = _script()
    with _service(tmp_path, script, layout="files") as service:
        outcome = service.ask(REFUND_QUESTION)
    assert len(script.seen) == 2
    assert outcome.status == "conflicting_evidence"
    assert isinstance(outcome.trace, NotTraced) and "no space left" in outcome.trace.reason


def test_answering_untraced_is_a_warning_on_the_librarys_logger_and_nothing_on_stdout(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    evloop_caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(BatchWriter, "finish", _full)
    with _service(tmp_path, _script()) as service:
        outcome = service.ask(REFUND_QUESTION)
    warned = [r for r in evloop_caplog.records if r.getMessage() == "answering untraced"]
    assert [(r.name, r.levelno) for r in warned] == [("evidence_loop.agent.service", logging.WARNING)]
    assert getattr(warned[0], "run_id", None) == outcome.run_id
    assert capsys.readouterr().out == ""


def test_refusing_when_traces_fail_stops_the_run_at_the_failed_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(TraceWriter, "append", _full)
    script = _script()
    service = _service(tmp_path, script, layout="files")
    service.when_traces_fail = "refuse"
    with service, pytest.raises(TraceStoreUnavailableError):
        service.ask(REFUND_QUESTION)
    assert script.seen == []  # the first step's write failed: the model was never asked
