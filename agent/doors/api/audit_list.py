"""What the console's runs list filters and shows: the filters of ``/audit``, each row with the review
that stands for it, and the turns of one conversation grouped.

    ListFilters            the query of ``/audit``: status, day, text, review, missing kind, conversation
    keeper(...)            the rows a caller may see that the filters keep (applied while paging, on
                           the server, so a page holds up to 50 matching rows)
    grouped(rows, ...)     the rows of a page in groups: a conversation's turns together, oldest first,
                           where its newest turn falls; a run asked alone in a group of its own
    StandingReviews(log)   the verdict that stands for each reviewed run, the log read incrementally
    ConsoleRuns(traces)    a store's runs as the console reads them, kept for the process: a page of
                           the list, the figures of a range

A run is in a conversation when its trace has a ``resolved`` step: the earlier turns it read, each
with the run id the chatbot passed for it, if any (``traces.reading.run_rows``). The turns of a page are
joined through those run ids, so a chatbot that passes only the previous turn's run still has its
turns grouped; ``?conversation=RUN`` lists a run and every run that names it as an earlier turn.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Final, get_args

from evidence_loop.agent.access.keys import Caller
from evidence_loop.agent.access.run_access import may_see
from evidence_loop.agent.doors.api.audit_figures import Figures, figures
from evidence_loop.policies.types import MissingKind
from evidence_loop.traces.feedback.feedback import VERDICTS, FeedbackLog, FeedbackRecord, latest
from evidence_loop.traces.reading.listing import Cursor, lister_for
from evidence_loop.traces.reading.run_rows import RunRow
from evidence_loop.traces.stores.store import TraceStore

PAGE_SIZE: Final = 50
STATUSES: Final = ("answered", "insufficient_evidence", "conflicting_evidence", "incomplete", "unreadable")
UNFINISHED: Final = ("incomplete", "unreadable")  # runs without an end: listed from a scan of the days
MISSING_KINDS: Final[tuple[str, ...]] = get_args(MissingKind)
REVIEWED, UNREVIEWED = "reviewed", "unreviewed"
REVIEW_CHOICES: Final[tuple[str, ...]] = (REVIEWED, UNREVIEWED, *VERDICTS)


@dataclass(frozen=True, slots=True)
class ListFilters:
    status: str = ""
    day: str = ""
    q: str = ""
    review: str = ""  # reviewed, unreviewed, or a verdict that stands
    missing: str = ""  # a missing piece's kind
    conversation: str = ""  # a run id: that run and the runs that name it as an earlier turn

    def query(self) -> dict[str, str]:
        """The filters set, as a page's address carries them."""
        names = ("status", "day", "q", "review", "missing", "conversation")
        return {name: value for name in names if (value := getattr(self, name))}


def keeper(
    caller: Caller, filters: ListFilters, standing: Mapping[str, FeedbackRecord]
) -> Callable[[RunRow], bool]:
    """Whether a row is the caller's to see (its groups covered) and every filter keeps it."""
    needle = filters.q.casefold().strip()

    def keep(row: RunRow) -> bool:
        if not may_see(caller, row.caller, row.groups):
            return False
        if filters.status and row.status != filters.status:
            return False
        if filters.missing and filters.missing not in row.missing:
            return False
        if filters.conversation and filters.conversation not in (row.run_id, *row.follows):
            return False
        if filters.review and not _reviewed_as(standing.get(row.run_id), filters.review):
            return False
        return not needle or needle in row.question.casefold() or needle == row.run_id

    return keep


def _reviewed_as(review: FeedbackRecord | None, wanted: str) -> bool:
    if wanted == REVIEWED:
        return review is not None
    if wanted == UNREVIEWED:
        return review is None
    return review is not None and review.verdict == wanted


@dataclass(frozen=True, slots=True)
class RowView:
    row: RunRow
    review: FeedbackRecord | None  # the verdict that stands, if the run was reviewed
    turn: int  # its place in its conversation (1 = asked first); 0 for a run asked alone


@dataclass(frozen=True, slots=True)
class Group:
    key: str  # the run its conversation is listed by (?conversation=key)
    rows: list[RowView]

    @property
    def conversation(self) -> bool:
        return any(view.turn for view in self.rows)


def grouped(rows: Sequence[RunRow], standing: Mapping[str, FeedbackRecord]) -> list[Group]:
    """The page's rows in groups, a conversation's turns together (see the module's docstring)."""
    parent = {row.run_id: row.run_id for row in rows}

    def root(run_id: str) -> str:
        while parent[run_id] != run_id:
            parent[run_id] = parent[parent[run_id]]
            run_id = parent[run_id]
        return run_id

    for row in rows:
        for earlier in row.follows:
            if earlier in parent:
                parent[root(row.run_id)] = root(earlier)
    members: dict[str, list[RunRow]] = {}
    for row in rows:  # newest first: a group stands where its newest turn does
        members.setdefault(root(row.run_id), []).append(row)
    groups = []
    for turns in members.values():
        ordered = sorted(turns, key=lambda r: (r.created_at, r.run_id))
        talk = len(ordered) > 1 or bool(ordered[0].earlier)
        views = [RowView(r, standing.get(r.run_id), len(r.earlier) + 1 if talk else 0) for r in ordered]
        groups.append(Group(ordered[0].conversation, views))
    return groups


class StandingReviews:
    """The verdict that stands for each reviewed run, for every page of the list: the days before the
    newest day of the log are read once (a review is filed under the UTC day it was posted, and the
    log is append-only), that day and any later on each call (``FeedbackLog.records(since)``)."""

    def __init__(self, log: Callable[[], FeedbackLog]) -> None:
        self._log = log
        self._settled: dict[str, FeedbackRecord] = {}  # the standing verdicts of the days before _day
        self._day: date | None = None
        self._lock = threading.Lock()

    def current(self) -> dict[str, FeedbackRecord]:
        with self._lock:
            fresh = self._log().records(self._day)
            standing = {**self._settled, **latest(fresh)}
            newest = max((r.created_at[:10] for r in fresh), default=None)
            if newest is not None:
                self._settled.update(latest(r for r in fresh if r.created_at[:10] < newest))
                self._day = date.fromisoformat(newest)
            return standing


class ConsoleRuns:
    """A trace store's runs as the console reads them; one per server process, so rows and reviews
    read once are not read again."""

    def __init__(self, traces: TraceStore) -> None:
        self.lister = lister_for(traces)
        self.reviews = StandingReviews(lambda: traces.feedback)

    def page(
        self, caller: Caller, filters: ListFilters, cursor: Cursor | None
    ) -> tuple[list[Group], Cursor | None]:
        """One page of the list, its rows grouped by conversation, and the cursor of the next."""
        standing = self.reviews.current()
        rows, more = self.lister.page(
            keeper(caller, filters, standing),
            size=PAGE_SIZE,
            day=day_of(filters.day),
            cursor=cursor,
            unfinished=filters.status in UNFINISHED,
        )
        return grouped(rows, standing), more

    def figures(self, caller: Caller, first: date, last: date) -> Figures:
        """The figures of the finished runs of the days ``first`` to ``last`` the caller may see."""
        standing = self.reviews.current()
        rows = self.lister.each(keeper(caller, ListFilters(), standing), first, last)
        return figures(rows, standing, first, last)


def day_of(text: str) -> date | None:
    """A day written YYYY-MM-DD; None for none, or for text that is not one."""
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None
