"""What ``calibrate --feedback`` rests on, on both backends: a log that verifies (or is refused),
traces that verify, each reviewer's latest verdict, and runs whose reviewers disagree left out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent.tuning.feedback_reviews import DISAGREE, MOVED_ON, NO_JUDGE, TAMPERED, reviews
from evidence_loop.tools.errors import InputError
from evidence_loop.traces import TraceStore
from evidence_loop.traces.feedback.feedback import FeedbackEntry, Verdict
from evidence_loop.traces.records.schema import CorpusInfo, TraceHeader
from evidence_loop.traces.stores.pg_store import PgTraceStore
from tests.traces.conftest import SAMPLE_STEPS

DAY = "2026-03-01T08:00:00Z"


@pytest.fixture(params=["folder", pytest.param("postgresql", marks=pytest.mark.postgres)])
def traces(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TraceStore]:
    store = TraceStore(tmp_path / "traces") if request.param == "folder" else None
    store = store or PgTraceStore(request.getfixturevalue("pg_url"))
    yield store
    store.close()


def run(traces: TraceStore, run_id: str) -> str:
    """A finished run (its final hash); its status is answered."""
    corpus = CorpusInfo(generation=1, fingerprint="c0ffee" * 4, versions_read={})
    header = TraceHeader(run_id=run_id, created_at=DAY, code_version="0", corpus=corpus, question="q?")
    with traces.begin(header) as writer:
        for step in SAMPLE_STEPS:
            writer.append(step)
        return writer.finish("answered")


def review(traces: TraceStore, run_id: str, final: str, verdict: Verdict, reviewer: str) -> None:
    traces.feedback.append(FeedbackEntry(run_id, final, verdict, DAY, reviewer))


def test_a_run_two_reviewers_label_apart_is_left_out_as_a_disagreement(traces: TraceStore) -> None:
    final = run(traces, "r-1")
    review(traces, "r-1", final, "correct", "first")
    review(traces, "r-1", final, "should_have_refused", "second")

    assert reviews(traces).left_out == {DISAGREE: 1}


def test_verdicts_that_say_nothing_about_answering_disagree_with_nothing(traces: TraceStore) -> None:
    final = run(traces, "r-1")
    review(traces, "r-1", final, "correct", "first")
    review(traces, "r-1", final, "missed_conflict", "second")

    assert reviews(traces).left_out == {NO_JUDGE: 1}  # labelled: only the judge's signals are lacking


def test_a_verdict_on_another_end_of_the_run_is_not_read(traces: TraceStore) -> None:
    run(traces, "r-1")
    review(traces, "r-1", "0" * 64, "correct", "first")

    assert reviews(traces).left_out == {MOVED_ON: 1}


def test_a_run_whose_trace_fails_verification_is_left_out(traces: TraceStore) -> None:
    final = run(traces, "r-1")
    review(traces, "r-1", final, "correct", "first")
    from tests.trace_support import edit_run

    edit_run(traces, "r-1", lambda lines: [*lines[:3], lines[3].replace(b"0.61", b"0.99"), *lines[4:]])

    assert reviews(traces).left_out == {TAMPERED: 1}


def test_a_log_that_fails_its_chain_is_refused_naming_the_record(traces: TraceStore) -> None:
    final = run(traces, "r-1")
    for reviewer in ("first", "second", "third"):
        review(traces, "r-1", final, "correct", reviewer)
    if isinstance(traces, PgTraceStore):
        import psycopg

        with psycopg.connect(traces.url, autocommit=True) as conn:
            conn.execute("ALTER TABLE feedback_records DISABLE TRIGGER feedback_records_append_only")
            conn.execute("DELETE FROM feedback_records WHERE seq = 3")
    else:
        journal = next((traces.root / "feedback").glob("*.journal"))
        journal.write_text("".join(journal.read_text().splitlines(True)[:2]))

    with pytest.raises(InputError, match="record 3, the last one the log's tail anchor names, is gone"):
        reviews(traces)
