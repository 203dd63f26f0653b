"""The earlier turns of a conversation as the front doors receive them, made into ``Turn`` values.

A turn is a question string, or an object with ``question`` (or ``text``) and optionally ``run_id``:
a run named by id is read back from the trace store (``Service.turn``) for the question it resolved
to and the documents its evidence came from, and only when the caller may read that run.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evidence_loop.policies.question.followup import Turn
from evidence_loop.tools.errors import InputError
from evidence_loop.tools.inputs import JsonInputError, check_unicode, decode_utf8, parse_json
from evidence_loop.traces import Trace
from evidence_loop.traces.records.steps import ResolvedStep

HistoryItem = str | Mapping[str, Any] | Turn
"""One earlier turn as a caller gives it: its question, or ``{"question": ..., "run_id": ...}``."""

ReadRun = Callable[[str, str | None], Turn]

MAX_HISTORY_TURNS = 32
"""The most earlier turns a run takes, at every door (HTTP, MCP, the CLI, ``Service``); more is the
caller's error. Of those, a follow-up reads the last ``Policy.followup_turns``, and only those reach
the loop and its trace."""


def history_fault(turns: int) -> str | None:
    """Why a history of ``turns`` turns is refused, or None."""
    if turns <= MAX_HISTORY_TURNS:
        return None
    return f"the history has {turns} turns; the limit is {MAX_HISTORY_TURNS} (a follow-up reads the last few)"


def taken_history(history: Sequence[HistoryItem] | None, keep: int) -> list[HistoryItem]:
    """The turns a run reads: every given turn checked (at most ``MAX_HISTORY_TURNS``, each a question
    or an object with one, Unicode text), then the last ``keep`` of them; ``InputError`` otherwise."""
    items = list(history or ())
    if (fault := history_fault(len(items))) is not None:
        raise InputError(fault)
    for number, item in enumerate(items, 1):
        _check_item(item, f"history turn {number}")
    return items[len(items) - keep :] if keep > 0 else []


def _check_item(item: object, what: str) -> None:
    if isinstance(item, Turn):
        check_unicode(item.text, what)
    elif isinstance(item, str):
        check_unicode(item, what)
    elif isinstance(item, Mapping):
        for key in ("question", "text", "run_id"):
            if isinstance(value := item.get(key), str):
                check_unicode(value, f"{what} {key}")
    else:
        raise InputError(f"a history turn is a question or an object with one, not {type(item).__name__}")


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
    question as plain text); oldest first. ``InputError`` naming the file (and the line) for bytes
    that are not UTF-8, JSON nested too deeply or holding a lone surrogate."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read the history file ({exc.strerror})") from None
    text = decode_utf8(data, str(path))
    whole = _json(text, f"{path}")
    if isinstance(whole, list):
        return [_item(t, path) for t in whole]
    lines = enumerate(text.splitlines(), 1)
    return [_item(_line(line, f"{path}:{number}"), path) for number, line in lines if line.strip()]


def _json(text: str, where: str) -> object:
    """The JSON value ``text`` holds, or None when it is not JSON (a line of plain text)."""
    try:
        return parse_json(text)
    except JsonInputError as exc:
        if exc.not_json:
            return None
        raise InputError(f"{where}: {exc}") from None


def _line(line: str, where: str) -> object:
    value = _json(line, where)
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
    owner: str | None = None  # the caller who asked it


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
            frozenset(header.groups),
            header.question,
            resolved_question(trace),
            tuple(evidence_docs(trace)),
            header.caller,
        )
        if trace.complete:
            with self._lock:
                self._runs[run_id] = record
                if len(self._runs) > self._size:
                    self._runs.popitem(last=False)
        return record
