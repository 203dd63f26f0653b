"""The run chain in PostgreSQL: a run whose rows are deleted (behind the append-only trigger) breaks
verification, as a run removed whole from a folder store does (``traces.journal.run_chain``).

    PgChain          one store's place in the chain: its writer name, and where each of its days got to
    verify_pg_chain  (name, verdict) of each break, then the summary row

Each store (a process) is a writer. Its runs of one UTC day are numbered 1, 2, 3... in the order they
are committed (``trace_runs.writer``, ``wseq``): the group's statement numbers the runs it stores, so a
run refused for its id takes no number. A run deleted from the start or the middle leaves a gap. The
ends are anchored in ``trace_anchors`` (writer, day, wseq, run id): by the store as it closes, for each
day it wrote; and by each store as it commits its first run of a day, for every writer's runs of the
newest day before it (and of that same day by other writers, still going or stopped). An anchor says
the writer's runs of that day reached at least that number, that run. Runs from before migration 5
have no writer: counted as written before the chain, never failed.
"""

from __future__ import annotations

import logging
import os
import secrets
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any, Final

from evidence_loop.tools.errors import EvidenceLoopError
from evidence_loop.tools.store.pg import unavailable
from evidence_loop.traces.verification.verify import VerifyResult

if TYPE_CHECKING:
    import psycopg

_LOG = logging.getLogger(__name__)
CHAIN: Final = "run chain"
ONE_DAY: Final = timedelta(days=1)
_CLOSE = "INSERT INTO trace_anchors (writer, day, wseq, run_id, by) VALUES (%s, %s, %s, %s, 'close')"
# Every writer's last run of the newest day before the one that starts at %(start)s, and the other
# writers' last run of that day itself (a writer stopped, or still going: a number it reached).
_BEHIND = """WITH newest AS (
    SELECT coalesce(max((created_at AT TIME ZONE 'UTC')::date), %(day)s::date) AS d FROM trace_runs
    WHERE writer IS NOT NULL AND created_at < %(start)s)
INSERT INTO trace_anchors (writer, day, wseq, run_id, by)
SELECT DISTINCT ON (r.writer, r.day) r.writer, r.day, r.wseq, r.run_id, 'next day' FROM (
    SELECT writer, (created_at AT TIME ZONE 'UTC')::date AS day, wseq, run_id FROM trace_runs, newest
    WHERE writer IS NOT NULL AND created_at >= (newest.d::timestamp AT TIME ZONE 'UTC')
    AND created_at < %(end)s AND NOT (writer = %(me)s AND created_at >= %(start)s)) AS r
ORDER BY r.writer, r.day, r.wseq DESC"""
_RUNS = (
    "SELECT writer, (created_at AT TIME ZONE 'UTC')::date, wseq, run_id FROM trace_runs "
    "WHERE writer IS NOT NULL ORDER BY 1, 2, 3"
)
_ANCHORS = "SELECT writer, day, wseq, run_id, by FROM trace_anchors"
_BEFORE = "SELECT count(*) FROM trace_runs WHERE writer IS NULL"
Query = Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]


class PgChain:
    """One store's writer: the last number and run of each of its days, and days not yet anchored."""

    def __init__(self) -> None:
        self.writer = f"{os.getpid()}-{secrets.token_hex(4)}"
        self._last: dict[date, tuple[int, str]] = {}
        self._new: set[date] = set()

    def bases(self, days: Iterable[date]) -> list[int]:
        """The number each run's day has reached (its runs of the group take the next ones)."""
        return [self._last.get(day, (0, ""))[0] for day in days]

    def stored(self, runs: Iterable[tuple[str, date, int]]) -> None:
        """(run id, day, number) of runs the group stored."""
        for run_id, day, wseq in runs:
            if day not in self._last:
                self._new.add(day)
            if wseq > self._last.get(day, (0, ""))[0]:
                self._last[day] = (wseq, run_id)

    def anchor(
        self, conn: psycopg.Connection[Any] | None, url: str, *, closing: bool
    ) -> psycopg.Connection[Any] | None:
        """The anchors due once a group's runs were released: the days behind each day this writer
        began, and at its close the end of each day it wrote. One that fails leaves an end
        unanchored, nothing more (it is logged); the connection is handed back unless it broke."""
        if conn is None or conn.closed or conn.broken:
            return conn
        try:
            with unavailable(url):
                self.anchor_behind(conn)
                if closing:
                    self.anchor_close(conn)
        except EvidenceLoopError as exc:
            _LOG.warning("run chain: an anchor was not written (%s)", exc)
        return None if conn.broken else conn

    def anchor_behind(self, conn: psycopg.Connection[Any]) -> None:
        """For each day this writer began: anchor every writer's runs of the newest day before it."""
        for day in sorted(self._new):
            start = datetime.combine(day, time(), tzinfo=UTC)
            conn.execute(_BEHIND, {"day": day, "start": start, "end": start + ONE_DAY, "me": self.writer})
        self._new.clear()

    def anchor_close(self, conn: psycopg.Connection[Any]) -> None:
        """Anchor the end of each day this writer wrote."""
        for day, (wseq, run_id) in sorted(self._last.items()):
            conn.execute(_CLOSE, (self.writer, day, wseq, run_id))


def verify_pg_chain(query: Query) -> Iterator[tuple[str, VerifyResult]]:
    """The breaks of every writer's runs of every day: a number missing (a run deleted), an anchor whose
    run is gone; then the summary row."""
    chains: dict[tuple[str, date], dict[int, str]] = defaultdict(dict)
    for writer, day, wseq, run_id in query(_RUNS, ()):
        chains[(writer, day)][wseq] = run_id
    anchors: dict[tuple[str, date], list[tuple[int, str, str]]] = defaultdict(list)
    for writer, day, wseq, run_id, by in query(_ANCHORS, ()):
        anchors[(writer, day)].append((wseq, run_id, by))
    breaks = anchored = open_ended = 0
    for key in sorted(chains.keys() | anchors.keys()):
        found = list(_breaks(key, chains.get(key, {}), anchors.get(key, [])))
        breaks += len(found)
        yield from found
        runs, reached = chains.get(key, {}), max((w for w, _, _ in anchors.get(key, [])), default=0)
        if runs and reached >= max(runs):
            anchored += 1
        elif runs:
            open_ended += 1
    before = int(query(_BEFORE, ())[0][0])
    days = len({day for _, day in chains})
    summary = _summary(days, len(chains), anchored, open_ended, before, breaks)
    yield CHAIN, VerifyResult(breaks == 0, True, None, summary)


def _breaks(
    key: tuple[str, date], runs: dict[int, str], anchors: list[tuple[int, str, str]]
) -> Iterator[tuple[str, VerifyResult]]:
    """A number missing up to the highest run or anchor; an anchor's number held by another run."""
    writer, day = key
    top = max([*runs, *(w for w, _, _ in anchors)], default=0)
    for wseq in range(1, top + 1):
        if wseq in runs:
            continue
        after = next((runs[w] for w in range(wseq + 1, top + 1) if w in runs), None)
        where = f" (the one before {after})" if after else " (its last: runs were removed from its end)"
        reason = f"run {wseq} of writer {writer}'s runs of {day.isoformat()} is gone{where}"
        yield after or f"{writer}/{day.isoformat()}", _broken(reason)
    for wseq, run_id, by in anchors:
        if runs.get(wseq, run_id) != run_id:
            reason = f"writer {writer}'s run {wseq} of {day.isoformat()} was anchored ({by}) as {run_id}"
            yield run_id, _broken(f"{reason}, which it no longer is")


def _broken(reason: str) -> VerifyResult:
    return VerifyResult(ok=False, complete=False, first_bad_seq=None, reason=f"{CHAIN}: {reason}")


def _summary(days: int, chains: int, anchored: int, open_ended: int, before: int, breaks: int) -> str:
    parts = [f"{_counted(days, 'day')}, {chains} writers' days chained, {anchored} anchored at their end"]
    if open_ended:
        parts.append(
            f"{open_ended} whose newest runs are not anchored yet (until their writer closes or the "
            "next day begins)"
        )
    if before:
        parts.append(f"{before} runs written before the chain (no number: a run deleted goes unseen)")
    verdict = f"FAILED - {_counted(breaks, 'break')}" if breaks else "holds"
    return f"{CHAIN} {verdict}: " + "; ".join(parts)


def _counted(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("s" if n != 1 else "")
