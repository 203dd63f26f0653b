"""What the folder store writes beside a run's trace once it is durable: the day manifest's line, then
the index line (``traces.manifest``, ``traces.run_index``), appended through descriptors kept open
(``traces.appends``); a journal run's lines say where its frame is (the index's path ends ``#offset``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from evidence_loop.traces.appends import Appends
from evidence_loop.traces.journal_store import TakenIds
from evidence_loop.traces.manifest import MANIFEST_NAME, FinishedRun, append_finished, manifest_line
from evidence_loop.traces.run_index import short_question, summary_line
from evidence_loop.traces.schema import TraceFooter, TraceHeader, TraceSummary

Place = tuple[Path | None, int | None]
"""A journal run's frame: the journal and the offset; (None, None) for a run's own file."""


class FinishedLines:
    """The manifest and index lines of the finished runs of one store."""

    def __init__(
        self,
        root: Path,
        index_path: Path,
        taken: TakenIds,
        *,
        fsync: Callable[[int], None] | None = None,
    ) -> None:
        self._root = root
        self._index_path = index_path
        self._taken = taken
        self._fsync = fsync  # given (fsync_each): the manifest line is synced as it is written
        self._appends = Appends()

    def record(self, path: Path, header: TraceHeader, footer: TraceFooter, size: int, place: Place) -> None:
        """The lines of a run whose trace (at ``path``, or in the frame at ``place``) is durable."""
        path = place[0] or path
        journal = place[0].name if place[0] is not None else None
        at = round(time.time(), 3) if journal is not None else None  # a run's own file has its mtime
        finished = FinishedRun(header.run_id, footer.hash, footer.events, journal, place[1], at)
        if self._fsync is not None:
            append_finished(path.parent, finished, fsync=self._fsync)
        else:
            written = self._appends.append(path.parent / MANIFEST_NAME, manifest_line(finished))
            self._taken.finished(header.run_id, path.parent, written)
        self._taken.release(header.run_id)
        summary = TraceSummary.model_construct(  # what a reader validates: made of checked values
            run_id=header.run_id,
            created_at=header.created_at,
            status="complete",
            outcome_status=footer.outcome_status,
            question=short_question(header.question),
            path=path.relative_to(self._root).as_posix() + (f"#{place[1]}" if place[0] is not None else ""),
            final_hash=footer.hash,
            events=footer.events,
            bytes=size,
        )
        self._appends.append(self._index_path, summary_line(summary), fresh_line=True)

    def close(self) -> None:
        self._appends.close()
