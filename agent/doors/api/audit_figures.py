"""The console's figures over a range of UTC days: what the runs did and what the reviewers said of it.

    figures(rows, standing, first, last)   the counts of ``/audit/figures`` from the runs' rows
    Bar                                    one bar: a label, its count, its share of the whole

Counted over the finished runs of the days ``first`` to ``last`` that the viewer may see:

- outcomes: answered, refused (``insufficient_evidence``), conflicting;
- refusal kinds: of the refused runs, how many name each kind of missing piece (a run naming two
  kinds counts for each);
- review verdicts: the verdict that stands for each reviewed run of the range;
- agreement: of the reviewed runs of each outcome, how many the reviewers called ``correct``;
- latency p50 and p95: from each run's start to its trace's last write (nearest rank), of the runs
  whose store records it (a PostgreSQL store does not).

The page draws each list of bars as an SVG made on the server (widths are numbers in its attributes:
no script, no style attribute, nothing from elsewhere), beside a table of the same numbers.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta

from evidence_loop.traces.feedback.feedback import VERDICTS, FeedbackRecord
from evidence_loop.traces.reading.run_rows import RunRow

DEFAULT_DAYS = 7  # the range shown when none is asked for: the last week, today included
OUTCOMES = (
    ("answered", "answered"),
    ("insufficient_evidence", "refused"),
    ("conflicting_evidence", "conflicting"),
)


@dataclass(frozen=True, slots=True)
class Bar:
    key: str
    label: str
    count: int
    share: float  # of the bars' whole (0 when the whole is 0)


@dataclass(frozen=True, slots=True)
class Agreement:
    status: str
    label: str
    reviewed: int
    correct: int

    @property
    def share(self) -> float | None:
        return self.correct / self.reviewed if self.reviewed else None


@dataclass(frozen=True, slots=True)
class Figures:
    first: date
    last: date
    runs: int
    outcomes: list[Bar]
    kinds: list[Bar]
    verdicts: list[Bar]
    agreement: list[Agreement]
    latency_runs: int  # runs whose latency the store records
    p50_ms: int | None
    p95_ms: int | None


def bars(counts: Mapping[str, int], labels: Iterable[tuple[str, str]]) -> list[Bar]:
    whole = sum(counts.values())
    return [
        Bar(key, label, counts.get(key, 0), counts.get(key, 0) / whole if whole else 0.0)
        for key, label in labels
    ]


def nearest_rank(values: list[int], share: float) -> int | None:
    """The value at ``share`` of the sorted values, by nearest rank; None without values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def figures(
    rows: Iterable[RunRow], standing: Mapping[str, FeedbackRecord], first: date, last: date
) -> Figures:
    """The figures of ``rows`` (the finished runs of the range the viewer may see)."""
    outcomes: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    verdicts: Counter[str] = Counter()
    reviewed: Counter[str] = Counter()
    agreed: Counter[str] = Counter()
    latencies: list[int] = []
    for row in rows:
        outcomes[row.status] += 1
        if row.status == "insufficient_evidence":
            kinds.update(row.missing)
        if row.latency_ms is not None:
            latencies.append(row.latency_ms)
        review = standing.get(row.run_id)
        if review is not None:
            verdicts[review.verdict] += 1
            reviewed[row.status] += 1
            agreed[row.status] += review.verdict == "correct"
    return Figures(
        first=first,
        last=last,
        runs=sum(outcomes.values()),
        outcomes=bars(outcomes, OUTCOMES),
        kinds=bars(kinds, [(k, k) for k, _ in kinds.most_common()]),
        verdicts=bars(verdicts, [(v, v.replace("_", " ")) for v in VERDICTS]),
        agreement=[Agreement(key, label, reviewed[key], agreed[key]) for key, label in OUTCOMES],
        latency_runs=len(latencies),
        p50_ms=nearest_rank(latencies, 0.50),
        p95_ms=nearest_rank(latencies, 0.95),
    )


def day_range(since: str, until: str, today: date) -> tuple[date, date] | str:
    """The days ``since`` to ``until`` (YYYY-MM-DD, either left empty: the last ``DEFAULT_DAYS`` days
    up to today), or what is wrong with them."""
    for text in (since, until):
        try:
            date.fromisoformat(text) if text else None
        except ValueError:
            return f"a day is written YYYY-MM-DD, not {text!r}"
    last = date.fromisoformat(until) if until else today
    first = date.fromisoformat(since) if since else last - timedelta(days=DEFAULT_DAYS - 1)
    if first > last:
        return f"the range starts ({first.isoformat()}) after it ends ({last.isoformat()})"
    return first, last
