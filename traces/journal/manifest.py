"""The day manifest: one line per finished run, kept apart from its trace, so a cut trace is caught.

A trace file alone cannot prove it is whole: cut after any line it reads as a run that never finished.
When a run finishes, after its trace file and folder are durable, its run id, final hash and event
count are appended to ``YYYY/MM/DD/finished.manifest`` beside the trace. Cutting the trace leaves that
line alone, and ``verify`` tells the two apart: no line is a crashed run, a line the file does not reach
is a truncated one. A run written to the day journal (``traces.journal.journal``) has the journal's file name
and its frame's offset on its line too: the manifest is also the day's index of offsets, so reading a
run by id is a seek. Retention removes the manifest with its day folder. The name does not end in
``.jsonl``, so the store never takes it for a trace.

Cost and durability: one ``os.write`` to a file opened in append mode, and no fsync of its own (a
second fsync per run would double what durability costs on the hot path). The line is written only
once its trace is durable, so it never makes a whole trace look truncated; a power cut within the
kernel's writeback interval may lose the newest lines, which only loses the check for those runs
(their traces stay whole, and the index may still hold their final hash). A store opened with
``fsync_each`` fsyncs the manifest too.

Each line also carries the run's link in the run chain (``traces.journal.run_chain``): ``prev``, the hash the
run before it ended on, in its journal (or, for a run's own file, among the runs its ``writer``
finished); the chain's other lines (an unfinished frame's link, an anchor) start otherwise and are no
finished run to a reader of this module. Lines written before the chain have no ``prev``.

Every process writing into the store appends here; one ``write`` per line in append mode keeps lines
whole and in one piece. A line torn by a power cut is skipped without taking the next one with it:
every record starts with ``{"run_id"``, so a line glued onto a torn one is read from its last start.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

MANIFEST_NAME: Final = "finished.manifest"
_START: Final = b'{"run_id":'
_ENCODER: Final = json.JSONEncoder(separators=(",", ":"))  # what json.dumps builds for every call


@dataclass(frozen=True, slots=True)
class FinishedRun:
    """What a run's end looked like when it finished: its final hash after ``events`` events."""

    run_id: str
    final_hash: str
    events: int
    journal: str | None = None  # the journal file (in the day folder) holding the run's frame
    offset: int | None = None  # where in it the frame starts
    at: float | None = None  # when it was durable (seconds since the epoch): the console's latency
    prev: str | None = None  # its link in the run chain (None: a line written before the chain)
    writer: str | None = None  # the writer whose chain a run's own file is in (a journal run: its journal)


def manifest_line(run: FinishedRun) -> bytes:
    """The manifest's line for ``run``."""
    record: dict[str, object] = {"run_id": run.run_id, "final_hash": run.final_hash, "events": run.events}
    if run.journal is not None:
        record.update(journal=run.journal, offset=run.offset, at=run.at)
    elif run.writer is not None:
        record.update(writer=run.writer)
    if run.prev is not None:
        record.update(prev=run.prev)
    return _ENCODER.encode(record).encode("utf-8") + b"\n"


def append_finished(day: Path, run: FinishedRun, *, fsync: Callable[[int], None] | None = None) -> None:
    """Append one line for ``run`` to the manifest of ``day``; ``fsync`` makes it durable at once (and
    the folder entry of a manifest this line created)."""
    line = manifest_line(run)
    fd = os.open(day / MANIFEST_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        if fsync is not None:
            fsync(fd)
            created = os.fstat(fd).st_size == len(line)
    finally:
        os.close(fd)
    if fsync is not None and created and os.name != "nt":  # folders cannot be fsynced on Windows
        folder = os.open(day, os.O_RDONLY)
        try:
            fsync(folder)
        finally:
            os.close(folder)


def read_manifest(day: Path, *, only: str | None = None) -> dict[str, FinishedRun]:
    """The runs the manifest of ``day`` records as finished (none when it has no manifest).

    ``only`` keeps the line of that run id, which skips parsing the others.
    """
    try:
        content = (day / MANIFEST_NAME).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return {}
    if only is None:
        lines = content.split(b"\n")
    else:
        lines = _lines_with(content, json.dumps({"run_id": only}, separators=(",", ":"))[1:-1].encode())
    runs: dict[str, FinishedRun] = {}
    for line in lines:
        start = line.rfind(_START)
        run = _parse(line[start:]) if start >= 0 else None
        if run is not None and only in (None, run.run_id):
            runs[run.run_id] = run
    return runs


def finished_runs(content: bytes) -> list[FinishedRun]:
    """The runs of a manifest's whole lines, in the order they finished (torn lines skipped)."""
    runs = []
    for line in content.split(b"\n"):
        start = line.rfind(_START)
        run = _parse(line[start:]) if start >= 0 else None
        if run is not None:
            runs.append(run)
    return runs


def record_lines(content: bytes) -> list[bytes]:
    """The whole lines of ``content`` that hold a record's start, unparsed, in the order written: for
    a reader that parses only the lines it shows (``parse_line``). A line here that does not parse is
    one ``finished_runs`` skips; the other lines are no finished run to either."""
    lines = content.split(b"\n")
    if not lines[-1]:
        lines.pop()  # what follows the last newline: nothing, for whole lines
    starts = content.count(b"\n" + _START) + content.startswith(_START)
    if starts == len(lines) == content.count(_START):  # each line one record: none to drop (fast)
        return lines
    return [line for line in lines if _START in line]


def parse_line(line: bytes) -> FinishedRun | None:
    """The run a manifest line records, read from its last record start (as ``finished_runs`` reads
    it); None for a torn or damaged line."""
    start = line.rfind(_START)
    return _parse(line[start:]) if start >= 0 else None


def _lines_with(content: bytes, needle: bytes) -> list[bytes]:
    """The lines of ``content`` that hold ``needle``, found without splitting the whole file."""
    lines = []
    at = content.find(needle)
    while at >= 0:
        start = content.rfind(b"\n", 0, at) + 1
        end = content.find(b"\n", at)
        end = len(content) if end < 0 else end
        lines.append(content[start:end])
        at = content.find(needle, end)
    return lines


def _parse(line: bytes) -> FinishedRun | None:
    """One manifest record, or None for a torn or foreign line."""
    try:
        raw = json.loads(line)
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    run_id, final_hash, events = raw.get("run_id"), raw.get("final_hash"), raw.get("events")
    if not (isinstance(run_id, str) and isinstance(final_hash, str) and type(events) is int):
        return None
    journal, offset, at = raw.get("journal"), raw.get("offset"), raw.get("at")
    if not (isinstance(journal, str) and type(offset) is int and "/" not in journal):
        journal, offset = None, None
    prev, writer = raw.get("prev"), raw.get("writer")
    return FinishedRun(
        run_id,
        final_hash,
        events,
        journal,
        offset,
        at if type(at) is float else None,
        prev if isinstance(prev, str) else None,
        writer if isinstance(writer, str) else None,
    )
