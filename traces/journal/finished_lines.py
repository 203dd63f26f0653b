"""What the folder store writes beside a run's trace once it is durable: the day manifest's line, then
the index line (``traces.journal.manifest``, ``traces.journal.run_index``), appended through descriptors kept
open
(``traces.journal.appends``); a journal run's lines say where its frame is (the index's path ends
``#offset``).
The manifest's lines also carry the run chain (``traces.journal.run_chain``): each run's link, an unfinished
frame's link, and the anchors of the journals and writers this store closes or finds a day behind.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from evidence_loop.traces.journal.appends import Appends
from evidence_loop.traces.journal.journal import Journal, journal_files
from evidence_loop.traces.journal.journal_store import PendingFrame, TakenIds
from evidence_loop.traces.journal.manifest import MANIFEST_NAME, FinishedRun, append_finished, manifest_line
from evidence_loop.traces.journal.run_chain import (
    Anchor,
    FileChain,
    Link,
    anchor_line,
    anchored,
    journal_tail,
    link_line,
)
from evidence_loop.traces.journal.run_index import short_question, summary_line
from evidence_loop.traces.records.schema import TraceFooter, TraceHeader, TraceSummary


@dataclass(frozen=True, slots=True)
class Place:
    """A journal run's frame: the journal, the offset, and the hash the frame before it ended on."""

    journal: Path
    offset: int
    prev: str


class FinishedLines:
    """The manifest and index lines of the finished runs of one store, and its run chain's lines."""

    def __init__(
        self,
        root: Path,
        index_path: Path,
        taken: TakenIds,
        *,
        fsync: Callable[[int], None] | None = None,
        sync: Callable[[int], None] = os.fsync,
        days: Callable[[date | None], Iterable[Path]] = lambda _since: (),
    ) -> None:
        self._root = root
        self._sync = sync  # what makes another process's journal durable before it is anchored
        self._days = days  # the store's day folders, newest first
        self._index_path = index_path
        self._taken = taken
        self._fsync = fsync  # given (fsync_each): the manifest line is synced as it is written
        self._appends = Appends()
        self._files = FileChain()

    def record(
        self, path: Path, header: TraceHeader, footer: TraceFooter, size: int, place: Place | None
    ) -> None:
        """The lines of a run whose trace (at ``path``, or in the frame at ``place``) is durable."""
        if place is not None:
            at = round(time.time(), 3)  # a run's own file has its mtime
            finished = FinishedRun(
                header.run_id, footer.hash, footer.events, place.journal.name, place.offset, at, place.prev
            )
            self._manifest_line(place.journal.parent, finished)
        else:
            with self._files.lock:  # the chain's order is its lines' order
                prev, writer = self._files.prev(path.parent), self._files.writer
                finished = FinishedRun(header.run_id, footer.hash, footer.events, prev=prev, writer=writer)
                self._manifest_line(path.parent, finished)
                self._files.advance(path.parent, header.run_id, footer.hash)
        self._taken.release(header.run_id)
        where = place.journal if place is not None else path
        summary = TraceSummary.model_construct(  # what a reader validates: made of checked values
            run_id=header.run_id,
            created_at=header.created_at,
            status="complete",
            outcome_status=footer.outcome_status,
            question=short_question(header.question),
            path=where.relative_to(self._root).as_posix() + (f"#{place.offset}" if place is not None else ""),
            final_hash=footer.hash,
            events=footer.events,
            bytes=size,
        )
        self._appends.append(self._index_path, summary_line(summary), fresh_line=True)

    def closed_unfinished(self, pending: PendingFrame) -> None:
        """A journal run closed without finishing: its frame's link in the chain, then its id free."""
        journal = pending.journal
        if journal is not None and pending.offset >= 0:
            link = link_line(Link(pending.run_id, journal.path.name, pending.prev, pending.last))
            with contextlib.suppress(OSError):  # its link lost: a check the less, the run had failed
                self._appends.append(journal.path.parent / MANIFEST_NAME, link, fresh_line=True)
        self._taken.release(pending.run_id)

    def journal_closing(self, day: Path, journal: Journal) -> None:
        """Anchor the end of a journal this process is done with, in its day's manifest."""
        tail = journal.durable_tail()
        if tail is not None:
            self.anchor(day, [anchored(journal.path.name, tail, "close")])

    def day_begun(self, day: Path, journal: Journal) -> None:
        """Anchor the end of every journal of the newest day before ``day``, in the new day's manifest:
        a run removed from the end of a day that is over fails verification."""
        earlier = next((folder for folder in self._days(None) if folder < day), None)
        if earlier is None:
            return
        name = earlier.relative_to(self._root).as_posix()
        with contextlib.suppress(OSError):  # an anchor not written: that day's ends stay unanchored
            tails = [(path.name, journal_tail(path, self._sync)) for path in journal_files(earlier)]
            self.anchor(day, [anchored(j, tail, "next day", name) for j, tail in tails if tail is not None])

    def anchor(self, day: Path, anchors: Iterable[Anchor]) -> None:
        """Anchor lines on the manifest of ``day`` (one write)."""
        lines = b"".join(anchor_line(anchor) for anchor in anchors)
        if lines:
            self._appends.append(day / MANIFEST_NAME, lines, fresh_line=True)

    def close(self) -> None:
        """Anchor the end of the chain of each day's own files this store wrote, then let go."""
        for day, tail in self._files.tails().items():
            with contextlib.suppress(OSError):  # its end stays unanchored; nothing else is lost
                self.anchor(day, [anchored(self._files.writer, tail, "close")])
        self._appends.close()

    def _manifest_line(self, day: Path, finished: FinishedRun) -> None:
        if self._fsync is not None:
            append_finished(day, finished, fsync=self._fsync)
        else:
            written = self._appends.append(day / MANIFEST_NAME, manifest_line(finished))
            self._taken.finished(finished.run_id, day, written)
