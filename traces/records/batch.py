"""Writing a run's trace whole when it ends (schema 4): the steps kept as made, encoded and hashed once.

The folder journal and PostgreSQL hold a run's records in memory until it ends (a journal frame, a
row of a commit group), so nothing is gained by encoding and hashing each step as the loop makes it.
This writer keeps the steps it is handed (plain data, ``traces.records.steps.Made``, or typed) in a list;
``finish`` encodes them in one pass, hashes their lines once (``hashing.steps_digest``: the footer's
``prev_hash``), seals the footer and hands the sink the whole run in one write, then makes it
durable (the sink's commit). What it costs a run is the encoding of its data, one hash, and the
frame; none of it happens while the loop runs.

A run closed without finishing (an exception, a deadline: the ``aborted`` step last) is written in
schema 3 instead, its header sealed as such and each event chained (``encode.event_line``), as the
event-by-event writer (``traces.records.writer``) writes it: there is no footer to chain its events.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Self

from evidence_loop.tools.disk import check_write
from evidence_loop.tools.errors import TraceError
from evidence_loop.traces.records.encode import batch_events, event_line, finished_run, sealed_header
from evidence_loop.traces.records.schema import CHAINED_SCHEMA, TraceFooter, TraceHeader
from evidence_loop.traces.records.steps import AbortedStep, AnyStep
from evidence_loop.traces.records.writer import FinishHook, unwritable


class BatchWriter:
    """A run's trace, written whole when it finishes (or is closed); use as a context manager.

    ``header`` is sealed in schema 4 and ``line`` is its line; ``sync`` makes what was written to
    ``sink`` durable (a journal frame's commit, a PostgreSQL group's). Leaving the ``with`` block
    through an exception records an ``aborted`` step and closes the run unfinished, as
    ``traces.records.writer.TraceWriter`` does."""

    def __init__(
        self,
        sink: BinaryIO,
        path: Path,
        header: TraceHeader,
        line: bytes,
        *,
        sync: Callable[[], None],
        on_finish: FinishHook | None = None,
    ) -> None:
        self._sink = sink
        self._path = path
        self._header = header
        self._line = line
        self._sync = sync
        self._on_finish = on_finish
        self._steps: list[AnyStep] = []
        self._footer: TraceFooter | None = None
        self._closed = False

    @property
    def header(self) -> TraceHeader:
        """The header as a finished run writes it, with its hash."""
        return self._header

    @property
    def path(self) -> Path:
        """Where the run is kept (its day's journal)."""
        return self._path

    @property
    def finished(self) -> bool:
        """True once the footer is written."""
        return self._footer is not None

    def append(self, step: AnyStep) -> None:
        """Keep one step as the run's next event (encoded when the run ends)."""
        if self._closed:
            raise TraceError(f"trace {self._header.run_id} is closed; it takes no more records")
        self._steps.append(step)

    def finish(self, outcome_status: str, *, versions_read: Mapping[str, str] | None = None) -> str:
        """Encode the run, write it in one piece, make it durable, and return its final hash."""
        if self._closed:
            raise TraceError(f"trace {self._header.run_id} is closed; it takes no more records")
        events = batch_events(self._steps)
        footer, footer_line = finished_run(
            self._header.hash, events, len(self._steps), outcome_status, versions_read or {}
        )
        records = b"".join((self._line, events, footer_line))
        self._closed = True
        try:
            check_write(self._path)
            self._sink.write(records)
            self._sync()
        except OSError as exc:
            raise unwritable(self._path, exc) from exc
        finally:
            self._sink.close()  # even when the sync fails: nothing may follow the footer
        self._footer = footer
        if self._on_finish is not None:
            try:
                self._on_finish(self._path, self._header, footer, len(records))
            except OSError as exc:  # the day's manifest is part of the record: unrecorded, unanswered
                raise unwritable(self._path, exc) from exc
        return footer.hash

    def close(self) -> None:
        """Without a prior ``finish``, write the run so far as an unfinished schema 3 trace. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            with contextlib.suppress(OSError, TraceError, ValueError, TypeError):
                check_write(self._path)
                self._sink.write(self._unfinished())
        finally:
            self._sink.close()

    def _unfinished(self) -> bytes:
        """The run so far in schema 3: the header sealed as such, each event chained; a step that
        cannot be encoded ends it (the run raised already)."""
        header, line = sealed_header(self._header.model_copy(update={"schema_version": CHAINED_SCHEMA}))
        lines, last = [line], header.hash
        for seq, step in enumerate(self._steps):
            try:
                last, written = event_line(last, seq, step)
            except (TypeError, ValueError):
                break
            lines.append(written)
        return b"".join(lines)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None and not self._closed:
            self._steps.append(AbortedStep(error=exc_type.__name__, message=str(exc)[:300]))
        self.close()
