"""The folder store's index: one ``TraceSummary`` line per finished run in ``index.jsonl``, a cache
that makes listing 10k runs one file read; and the summary of a run the index does not know, read
from its own file or its journal frame.

The index is appended after the trace is durable and never fsynced: a line lost or torn by a kill
only costs speed (``TraceStore.list`` reads any run the index lacks). A journal run's ``path`` is
its journal's, relative to the store root, followed by ``#`` and its frame's offset.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import orjson

from evidence_loop.tools.errors import TraceError
from evidence_loop.traces.journal.journal import read_frame
from evidence_loop.traces.records.reader import parse_trace
from evidence_loop.traces.records.schema import TraceSummary, utc_timestamp

QUESTION_CHARS: Final = 80
_FIELDS: Final = tuple(TraceSummary.model_fields)


def short_question(question: str) -> str:
    flat = " ".join(question.split())
    return flat if len(flat) <= QUESTION_CHARS else flat[: QUESTION_CHARS - 1] + "…"


def summary_line(summary: TraceSummary) -> bytes:
    """The index's line for ``summary``: its fields in order, as ``model_dump_json`` writes them, by
    orjson (a finished run's line, written on the request path)."""
    return orjson.dumps({name: getattr(summary, name) for name in _FIELDS}, option=orjson.OPT_APPEND_NEWLINE)


def rewrite_index(index_path: Path, kept: Sequence[TraceSummary]) -> None:
    """Replace the index with ``kept``: a new file, fsynced, renamed over the old one. A line another
    process appends meanwhile may be lost; ``list`` then reads its run."""
    temporary = index_path.with_suffix(".jsonl.tmp")
    with temporary.open("wb") as out:
        out.writelines(summary_line(summary) for summary in kept)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, index_path)


def read_index(index_path: Path, only: str | None = None) -> dict[str, TraceSummary]:
    """The index as run id -> summary; unreadable lines (a torn append) are skipped.

    ``only`` restricts it to lines that mention that run id, which skips parsing the rest.
    """
    try:
        content = index_path.read_bytes()
    except FileNotFoundError:
        return {}
    rows: dict[str, TraceSummary] = {}
    needle = f'"{only}"'.encode() if only is not None else b""
    for line in content.splitlines():
        if needle not in line:
            continue
        try:
            summary = TraceSummary.model_validate_json(line)
        except ValueError:
            continue
        rows[summary.run_id] = summary
    return rows


def summarize(root: Path, path: Path, run_id: str, offset: int | None = None) -> TraceSummary:
    """The summary of a run read from its own file, or from its frame at ``offset`` of a journal."""
    relative = path.relative_to(root).as_posix() + (f"#{offset}" if offset is not None else "")
    try:
        if offset is None:
            content = path.read_bytes()
        else:
            frame = read_frame(path, offset, run_id)
            content = frame.records if frame is not None else b""
        trace = parse_trace(content, path=path)
    except (OSError, TraceError):
        moment = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
        return TraceSummary(
            run_id=run_id, created_at=utc_timestamp(moment), status="unreadable", path=relative
        )
    return TraceSummary(
        run_id=trace.header.run_id,
        created_at=trace.header.created_at,
        status="complete" if trace.complete else "incomplete",
        outcome_status=trace.footer.outcome_status if trace.footer is not None else None,
        question=short_question(trace.header.question),
        path=relative,
        final_hash=trace.footer.hash if trace.footer is not None else None,
        events=len(trace.events),
        bytes=len(content),
    )
