"""The earlier turns of a conversation as the front doors receive them, made into ``Turn`` values.

A turn is a question string, or an object with ``question`` (or ``text``) and optionally ``run_id``:
a run named by id is read back from the trace store (``Service.turn``) for the question it resolved
to and the documents its evidence came from, and only when the caller may read that run.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evidence_loop.policies.question.followup import Turn
from evidence_loop.tools.errors import InputError
from evidence_loop.traces import Trace
from evidence_loop.traces.steps import ResolvedStep

HistoryItem = str | Mapping[str, Any] | Turn
"""One earlier turn as a caller gives it: its question, or ``{"question": ..., "run_id": ...}``."""

ReadRun = Callable[[str, str | None], Turn]


def turns_of(history: Sequence[HistoryItem] | None, read_run: ReadRun) -> list[Turn]:
    """The turns, oldest first; ``read_run(run_id, text)`` reads a run back (and checks access)."""
    turns: list[Turn] = []
    for item in history or ():
        if isinstance(item, Turn):
            turns.append(item)
        elif isinstance(item, str):
            turns.append(Turn(item))
        elif isinstance(item, Mapping):
            turns.append(_from_mapping(item, read_run))
        else:
            raise InputError(f"a history turn is a question or an object with one, not {type(item).__name__}")
    return turns


def _from_mapping(item: Mapping[str, Any], read_run: ReadRun) -> Turn:
    text = item.get("question", item.get("text"))
    run_id = item.get("run_id")
    if text is not None and not isinstance(text, str):
        raise InputError("a history turn's question is text")
    if run_id is not None:
        if not isinstance(run_id, str):
            raise InputError("a history turn's run_id is text")
        return read_run(run_id, text)
    if text is None or not text.strip():
        raise InputError("a history turn needs its question or its run_id")
    return Turn(text)


def resolved_question(trace: Trace) -> str:
    """The question a traced run answered: the one its earlier turns completed, else the one asked."""
    for event in trace.events:
        if isinstance(event.data, ResolvedStep):
            return event.data.question
    return trace.header.question


def evidence_docs(trace: Trace) -> dict[str, str]:
    """doc_id -> version of the documents a finished run's evidence came from."""
    if trace.footer is not None and trace.footer.versions_read:
        return dict(trace.footer.versions_read)
    return dict(trace.header.corpus.versions_read)


def read_history_file(path: Path) -> list[HistoryItem]:
    """A history file: a JSON array of turns, or one turn a line (a JSON string or object, or the
    question as plain text); oldest first."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the history file ({exc.strerror})") from None
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, list):
        return [_item(t, path) for t in whole]
    return [_item(_line(line), path) for line in text.splitlines() if line.strip()]


def _line(line: str) -> object:
    try:
        value: object = json.loads(line)
    except ValueError:
        return line.strip()
    return value if isinstance(value, str | dict) else line.strip()


def _item(value: object, path: Path) -> HistoryItem:
    if isinstance(value, str | dict):
        return value
    raise InputError(f"{path}: a turn is a question or an object with one, not {type(value).__name__}")


@dataclass(frozen=True, slots=True)
class RunRecord:
    """What a later turn reads of a finished run: who could read it, what it asked and answered from."""

    groups: frozenset[str]
    question: str
    resolved: str
    doc_ids: tuple[str, ...]


class RunCache:
    """Finished runs read back by id, the most recent kept: a chat's every turn reads the runs before
    it again, and a finished trace does not change."""

    def __init__(self, size: int = 512) -> None:
        self._size = size
        self._runs: OrderedDict[str, RunRecord] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, run_id: str, read: Callable[[str], Trace]) -> RunRecord:
        """The run's record; ``read`` (which raises NotFoundError for an unknown run) on a miss."""
        with self._lock:
            hit = self._runs.get(run_id)
            if hit is not None:
                self._runs.move_to_end(run_id)
                return hit
        trace = read(run_id)
        header = trace.header
        record = RunRecord(
            frozenset(header.groups), header.question, resolved_question(trace), tuple(evidence_docs(trace))
        )
        if trace.complete:
            with self._lock:
                self._runs[run_id] = record
                if len(self._runs) > self._size:
                    self._runs.popitem(last=False)
        return record
