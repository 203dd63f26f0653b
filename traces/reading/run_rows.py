"""What the console's list shows of one run, read from the few records that say it, not the whole trace.

    RunRow                     one run's row: when, who, what was asked, how it ended, what it answered
                               or why it refused, and the earlier turns of a follow-up
    read_row(path)             the row of a run's own file: a read of its head and one of its tail
    read_frame_row(...)        the row of a run in a day journal: its frame
    row_of(run_id, records)    the row of the records below, however they were read (PostgreSQL too)

A row is read from four records at most: the header (the question, groups, caller), the
``resolved`` step when the run was a follow-up (it comes right after the header, or after the
question's ``embedded`` vector), the ``decided`` step (the answer's text, the reason, the missing
pieces' kinds) and the footer (the status), which a finished trace ends with, ``decided`` just
before it. A record that does not read as expected leaves its columns empty: a listing never fails
on one run.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, Final

import orjson

from evidence_loop.traces.journal.journal import Frame, read_frame, scan_file

ANSWER_CHARS: Final = 160  # of the answer's text a row keeps, on one line
WHY_CHARS: Final = 160
TURN_CHARS: Final = 80  # of each earlier turn's question
_TAIL: Final = 16384  # bytes read first from a trace's end: its decided step and footer, usually
_STEP_AT: Final = 64  # an event line names its step within its first bytes: {"type":"event","seq":N,"step":


@dataclass(frozen=True, slots=True)
class RunRow:
    run_id: str
    created_at: str
    status: str  # the outcome's status, else "incomplete" or "unreadable"
    question: str
    groups: tuple[str, ...]
    caller: str | None
    latency_ms: int | None  # from the run's start to its trace's last write (files only)
    finished: bool
    answer: str = ""  # the answer's first ANSWER_CHARS characters on one line; "" without one
    why: str = ""  # the decision's reason: the missing pieces, a conflict's slots
    missing: tuple[str, ...] = ()  # the kinds of the missing pieces, each once, in order
    earlier: tuple[str, ...] = ()  # a follow-up's earlier turns as asked (shortened), oldest first
    follows: tuple[str, ...] = ()  # the run ids of those turns that named one, oldest first

    @property
    def conversation(self) -> str:
        """The run the conversation is known by: the oldest earlier turn given by run id, else itself."""
        return self.follows[0] if self.follows else self.run_id


@dataclass(frozen=True, slots=True)
class Records:
    """The raw lines a row is read from; None for a record the trace does not have."""

    header: bytes
    last: bytes
    decided: bytes | None = None
    resolved: bytes | None = None


def names_step(line: bytes, step: bytes) -> bool:
    """Whether an event line holds the step ``step`` (read from its opening bytes only)."""
    return b'"step":"' + step + b'"' in line[:_STEP_AT]


def _head(file: BinaryIO) -> tuple[bytes, bytes | None]:
    """The header line and the ``resolved`` step's line, if the run has one."""
    first = file.readline()
    for _ in range(2):
        line = file.readline()
        if names_step(line, b"resolved"):
            return first, line
        if not names_step(line, b"embedded"):
            break
    return first, None


def _last_two(file: BinaryIO, size: int) -> tuple[bytes, bytes | None]:
    """The last line of a file and the one before it (None when it has one line only)."""
    take = min(size, _TAIL)
    while True:
        file.seek(size - take)
        lines = file.read(take).rstrip(b"\n").rsplit(b"\n", 2)
        if len(lines) == 3 or take == size:
            break
        take = min(size, take * 4)
    if take == size:
        lines = lines[-2:]
    return lines[-1], (lines[-2] if len(lines) > 1 else None)


def read_row(path: Path) -> RunRow | None:
    """The row of one trace file (None when it is gone): one open, a read of its head and one of its
    tail; a file whose header cannot be read is ``unreadable``."""
    try:
        with open(path, "rb") as file:
            first, resolved = _head(file)
            stat = os.fstat(file.fileno())
            last, before = _last_two(file, stat.st_size) if stat.st_size > len(first) else (b"{}", None)
    except FileNotFoundError:
        return None
    except OSError:
        return unreadable(path.stem)
    decided = before if before is not None and names_step(before, b"decided") else None
    return row_of(path.stem, Records(first, last, decided, resolved), stat.st_mtime)


def read_frame_row(journal: Path, run_id: str, offset: int | None, at: float | None) -> RunRow | None:
    """The row of a run in a journal: its frame at ``offset`` (found by a scan when that is not
    known or wrong); None when it is not there."""
    frame = read_frame(journal, offset, run_id) if offset is not None else None
    if frame is None:
        frame = next((f for f in scan_file(journal) if isinstance(f, Frame) and f.run_id == run_id), None)
    if frame is None:
        return None
    committed = frame.records[: frame.records.rfind(b"\n") + 1]  # a torn last line is left out
    lines = committed.rstrip(b"\n").split(b"\n")
    first = frame.records.split(b"\n", 1)[0]
    resolved = next((line for line in lines[1:3] if names_step(line, b"resolved")), None)
    decided = lines[-2] if len(lines) > 2 and names_step(lines[-2], b"decided") else None
    return row_of(run_id, Records(first, lines[-1] if len(lines) > 1 else b"{}", decided, resolved), at)


def row_of(run_id: str, records: Records, at: float | None) -> RunRow:
    """A row from a trace's records; ``at`` is when it was written last (None: not known)."""
    try:
        header, last = _loads(records.header), _loads(records.last)
    except ValueError:
        return unreadable(run_id)
    if not isinstance(header, dict) or header.get("type") != "header":
        return unreadable(run_id)
    finished = isinstance(last, dict) and last.get("type") == "footer"
    created = str(header.get("created_at", ""))
    try:
        latency = round((at - datetime.fromisoformat(created).timestamp()) * 1000) if at else None
    except ValueError:
        latency = None
    answer, why, missing = _decided(records.decided) if finished else ("", "", ())
    earlier, follows = _resolved(records.resolved)
    return RunRow(
        run_id=str(header.get("run_id", run_id)),
        created_at=created,
        status=str(last.get("outcome_status")) if finished else "incomplete",
        question=str(header.get("question", "")),
        groups=tuple(str(g) for g in header.get("groups") or ()),
        caller=header.get("caller"),
        latency_ms=latency if finished and latency is not None and latency >= 0 else None,
        finished=finished,
        answer=answer,
        why=why,
        missing=missing,
        earlier=earlier,
        follows=follows,
    )


def _loads(line: bytes) -> Any:
    """A record line's JSON: orjson, the fast path; what it refuses (a lone surrogate's escape, which
    a trace of before the doors were checked may hold), as ``json`` reads it."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _data(line: bytes | None) -> dict[str, Any]:
    """An event line's ``data``; {} when there is no line or it is not an event's."""
    if line is None:
        return {}
    try:
        event = _loads(line)
    except ValueError:
        return {}
    data = event.get("data") if isinstance(event, dict) else None
    return data if isinstance(data, dict) else {}


def _decided(line: bytes | None) -> tuple[str, str, tuple[str, ...]]:
    """The answer's text, the reason and the missing kinds a ``decided`` step records."""
    data = _data(line)
    outcome = data.get("outcome")
    if not isinstance(outcome, dict):
        return "", "", ()
    answer = outcome.get("answer")
    text = answer.get("text") if isinstance(answer, dict) else None
    kinds = [m.get("kind") for m in outcome.get("missing") or () if isinstance(m, dict)]
    why = data.get("why")
    return (
        _one_line(text, ANSWER_CHARS) if isinstance(text, str) else "",
        _one_line(why, WHY_CHARS) if isinstance(why, str) else "",
        tuple(dict.fromkeys(str(k) for k in kinds if isinstance(k, str))),
    )


def _resolved(line: bytes | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The earlier turns' questions and the run ids of those given by one, from a ``resolved`` step."""
    turns = [t for t in _data(line).get("history") or () if isinstance(t, dict)]
    texts = tuple(_one_line(str(t.get("text", "")), TURN_CHARS) for t in turns)
    return texts, tuple(str(t["run_id"]) for t in turns if isinstance(t.get("run_id"), str))


def unreadable(run_id: str) -> RunRow:
    return RunRow(run_id, "", "unreadable", "", (), None, None, False)
