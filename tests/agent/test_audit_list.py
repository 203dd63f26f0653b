"""The runs list's filters (applied on the server while paging), its conversation groups, and the
standing reviews it reads incrementally."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidence_loop.agent.access.keys import LOCAL, Caller
from evidence_loop.agent.doors.api.audit_list import ListFilters, StandingReviews, grouped, keeper
from evidence_loop.traces.feedback.feedback import FeedbackEntry, FeedbackRecord, Verdict, latest
from evidence_loop.traces.feedback.feedback_folder import FolderFeedback
from evidence_loop.traces.reading.run_rows import RunRow


def run(run_id: str, at: str = "08:00", **fields: object) -> RunRow:
    base: dict[str, object] = {
        "run_id": run_id,
        "created_at": f"2025-03-01T{at}:00Z",
        "status": "answered",
        "question": f"question {run_id}",
        "groups": (),
        "caller": None,
        "latency_ms": 10,
        "finished": True,
    }
    return RunRow(**{**base, **fields})  # type: ignore[arg-type]


def reviewed(*pairs: tuple[str, Verdict]) -> dict[str, FeedbackRecord]:
    log = [
        FeedbackRecord(seq=n, run_id=r, run_hash="h", verdict=v, created_at="2025-03-02T08:00:00Z", prev="")
        for n, (r, v) in enumerate(pairs, 1)
    ]
    return latest(log)


ROWS = [
    run("a", status="insufficient_evidence", missing=("uncovered_slot", "missing_scope")),
    run("b", status="insufficient_evidence", missing=("no_relevant_evidence",)),
    run("c"),
    run("d", groups=("staff",)),
]
STANDING = reviewed(("a", "should_have_answered"), ("c", "correct"), ("a", "correct"))


@pytest.mark.parametrize(
    ("filters", "kept"),
    [
        (ListFilters(review="reviewed"), ["a", "c"]),
        (ListFilters(review="unreviewed"), ["b", "d"]),
        (ListFilters(review="correct"), ["a", "c"]),
        (ListFilters(review="should_have_answered"), []),
        (ListFilters(missing="missing_scope"), ["a"]),
        (ListFilters(status="insufficient_evidence", review="unreviewed"), ["b"]),
    ],
)
def test_the_review_and_missing_filters_keep_the_runs_they_name(
    filters: ListFilters, kept: list[str]
) -> None:
    keep = keeper(LOCAL, filters, STANDING)

    assert [r.run_id for r in ROWS if keep(r)] == kept


def test_no_filter_keeps_a_run_whose_groups_the_caller_does_not_cover() -> None:
    public = Caller("auditor", frozenset(), frozenset({"audit"}))

    assert [r.run_id for r in ROWS if keeper(public, ListFilters(review="unreviewed"), STANDING)(r)] == ["b"]


def test_the_conversation_filter_keeps_the_run_and_the_runs_naming_it_as_an_earlier_turn() -> None:
    rows = [run("t1"), run("t2", follows=("t1",), earlier=("q1",)), run("x", follows=("other",))]

    assert [r.run_id for r in rows if keeper(LOCAL, ListFilters(conversation="t1"), {})(r)] == ["t1", "t2"]


def test_turns_joined_only_through_the_previous_turn_are_one_group_in_the_order_asked() -> None:
    page = [  # newest first, as a page comes
        run("t3", "08:03", follows=("t2",), earlier=("q1", "q2")),
        run("solo", "08:02"),
        run("t2", "08:01", follows=("t1",), earlier=("q1",)),
        run("t1", "08:00"),
    ]

    groups = grouped(page, {})

    assert [[(v.row.run_id, v.turn) for v in g.rows] for g in groups] == [
        [("t1", 1), ("t2", 2), ("t3", 3)],
        [("solo", 0)],
    ]
    assert [(g.key, g.conversation) for g in groups] == [("t1", True), ("solo", False)]


def test_a_follow_up_whose_earlier_turns_are_not_on_the_page_is_still_a_turn() -> None:
    (group,) = grouped([run("t2", follows=("gone",), earlier=("q1",))], {})

    assert (group.key, group.conversation, group.rows[0].turn) == ("gone", True, 2)


def post(log: FolderFeedback, run_id: str, verdict: Verdict, day: str) -> None:
    log.append(FeedbackEntry(run_id, "h", verdict, f"{day}T08:00:00Z"))


def test_standing_reviews_read_later_days_again_and_see_every_new_review(tmp_path: Path) -> None:
    log = FolderFeedback(tmp_path / "feedback", fsync=False)
    post(log, "r1", "correct", "2025-03-01")
    post(log, "r2", "correct", "2025-03-02")
    reviews = StandingReviews(lambda: log)
    first = reviews.current()
    post(log, "r1", "should_have_refused", "2025-03-02")
    post(log, "r3", "missed_conflict", "2025-03-03")

    second = reviews.current()

    assert {r: v.verdict for r, v in first.items()} == {"r1": "correct", "r2": "correct"}
    assert {r: v.verdict for r, v in second.items()} == {
        "r1": "should_have_refused",
        "r2": "correct",
        "r3": "missed_conflict",
    }


def test_standing_reviews_read_the_journals_of_settled_days_once(tmp_path: Path) -> None:
    log = FolderFeedback(tmp_path / "feedback", fsync=False)
    post(log, "r1", "correct", "2025-03-01")
    post(log, "r2", "correct", "2025-03-02")
    asked: list[object] = []

    class Counting:
        def records(self, since: object = None) -> list[FeedbackRecord]:
            asked.append(since)
            return log.records(since)  # type: ignore[arg-type]

    reviews = StandingReviews(lambda: Counting())  # type: ignore[arg-type,return-value]
    reviews.current()
    reviews.current()

    assert [str(d) if d else None for d in asked] == [None, "2025-03-02"]
