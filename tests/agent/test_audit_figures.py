"""The figures page's counts: outcomes, refusal kinds, verdicts, agreement, latency; and its range."""

from __future__ import annotations

from datetime import date

import pytest

from evidence_loop.agent.doors.api.audit_figures import day_range, figures, nearest_rank
from evidence_loop.traces.feedback.feedback import FeedbackRecord, Verdict
from evidence_loop.traces.reading.run_rows import RunRow

DAY = date(2025, 3, 1)


def run(run_id: str, status: str, *, missing: tuple[str, ...] = (), latency: int | None = 100) -> RunRow:
    return RunRow(run_id, "2025-03-01T08:00:00Z", status, "q", (), None, latency, True, missing=missing)


def review(run_id: str, verdict: Verdict) -> FeedbackRecord:
    return FeedbackRecord(
        seq=1, run_id=run_id, run_hash="h", verdict=verdict, created_at="2025-03-01T09:00:00Z", prev=""
    )


ROWS = [
    run("a1", "answered", latency=100),
    run("a2", "answered", latency=300),
    run("a3", "answered", latency=200),
    run("r1", "insufficient_evidence", missing=("uncovered_slot", "missing_scope"), latency=50),
    run("r2", "insufficient_evidence", missing=("uncovered_slot",), latency=None),
    run("c1", "conflicting_evidence", latency=400),
]
STANDING = {
    "a1": review("a1", "correct"),
    "a2": review("a2", "should_have_refused"),
    "r1": review("r1", "correct"),
    "c1": review("c1", "false_conflict"),
    "elsewhere": review("elsewhere", "correct"),  # a run outside the range: not counted
}


def test_outcomes_are_counted_with_their_share() -> None:
    counted = figures(ROWS, STANDING, DAY, DAY)

    assert [(b.key, b.count) for b in counted.outcomes] == [
        ("answered", 3),
        ("insufficient_evidence", 2),
        ("conflicting_evidence", 1),
    ]
    assert counted.runs == 6 and counted.outcomes[0].share == 0.5


def test_each_refusal_counts_once_for_each_kind_it_names() -> None:
    counted = figures(ROWS, STANDING, DAY, DAY)

    assert [(b.key, b.count) for b in counted.kinds] == [("uncovered_slot", 2), ("missing_scope", 1)]


def test_verdicts_and_agreement_count_only_the_reviewed_runs_of_the_range() -> None:
    counted = figures(ROWS, STANDING, DAY, DAY)

    assert {b.key: b.count for b in counted.verdicts if b.count} == {
        "correct": 2,
        "should_have_refused": 1,
        "false_conflict": 1,
    }
    assert [(a.status, a.reviewed, a.correct) for a in counted.agreement] == [
        ("answered", 2, 1),
        ("insufficient_evidence", 1, 1),
        ("conflicting_evidence", 1, 0),
    ]


def test_latency_percentiles_are_nearest_ranks_of_the_runs_that_record_one() -> None:
    counted = figures(ROWS, STANDING, DAY, DAY)

    assert (counted.latency_runs, counted.p50_ms, counted.p95_ms) == (5, 200, 400)


def test_no_runs_give_no_percentiles_and_no_shares() -> None:
    counted = figures([], {}, DAY, DAY)

    assert (counted.runs, counted.p50_ms, counted.p95_ms) == (0, None, None)
    assert all(b.share == 0.0 for b in counted.outcomes)


@pytest.mark.parametrize(("share", "value"), [(0.5, 3), (0.95, 6), (0.01, 1), (1.0, 6)])
def test_nearest_rank(share: float, value: int) -> None:
    assert nearest_rank([6, 1, 5, 2, 4, 3], share) == value


def test_without_a_range_the_figures_are_of_the_last_seven_days() -> None:
    assert day_range("", "", date(2025, 3, 10)) == (date(2025, 3, 4), date(2025, 3, 10))


@pytest.mark.parametrize(
    ("since", "until", "says"),
    [
        ("2025-03-10", "2025-03-01", "starts"),
        ("2025-13-01", "", "YYYY-MM-DD"),
        ("", "tomorrow", "YYYY-MM-DD"),
    ],
)
def test_a_range_that_is_not_one_says_why(since: str, until: str, says: str) -> None:
    answer = day_range(since, until, date(2025, 3, 10))

    assert isinstance(answer, str) and says in answer
