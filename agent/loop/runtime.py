"""What a run depends on from outside, injected: clock, run ids, the trace recorder, the conflict seam,
and where a run that came through the async door awaits its model calls (``awaited``).

Tests and replays pass their own; nothing in the loop reads the wall clock or makes ids itself.
"""

from __future__ import annotations

import gc
import time
import uuid
from collections.abc import Callable, Coroutine, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from evidence_loop.agent.outcome import Conflict
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.types import EvidenceView
from evidence_loop.traces.records.steps import AnyStep, TraceStep


class Recorder(Protocol):
    """Where the loop reports each step (the trace writer, or nothing)."""

    def record(self, step: TraceStep) -> None: ...


class PlainRecorder:
    """A recorder that takes the steps the loop makes as plain data (``traces.records.steps.Made``) as they
    are, to encode them (the trace writer's); any other recorder is handed typed steps."""

    def record(self, step: AnyStep) -> None:
        raise NotImplementedError


class NullRecorder:
    """Records nothing: tracing off."""

    def record(self, step: TraceStep) -> None:
        return None


@dataclass(frozen=True, slots=True)
class ConflictReport:
    """What the conflict check found: adjudicated conflicts, LLM calls made, and whether they block."""

    conflicts: tuple[Conflict, ...] = ()
    blocking: bool = False
    llm_calls: int = 0


class ConflictCheck(Protocol):
    """The seam between sliding and the decision: it reads the question as the run analysed it."""

    def __call__(
        self, question: Question, views: Sequence[EvidenceView], recorder: Recorder
    ) -> ConflictReport: ...


def no_conflict_check(
    question: Question, views: Sequence[EvidenceView], recorder: Recorder
) -> ConflictReport:
    """A conflict check that finds nothing (the loop's ablation modes use it)."""
    return ConflictReport()


def _new_run_id() -> str:
    return uuid.uuid4().hex[:16]


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Deps:
    """Clock, wall time and run ids; replays and tests inject fixed ones."""

    clock: Callable[[], float] = time.perf_counter
    now: Callable[[], datetime] = _now
    new_run_id: Callable[[], str] = _new_run_id


def freeze_heap() -> None:
    """Move every object alive now (the loaded index, its units, caches) out of the collector's way.

    A long-running process (a server worker, a batch, an evaluation) calls this once after opening
    its index: full collections then stop re-walking the corpus's hundreds of thousands of objects
    (``gc.freeze``). Frozen objects are still freed by reference counting; only cycles among them
    would stay, and the store's values hold none.
    """
    gc.collect()
    gc.freeze()


T = TypeVar("T")


class LoopBridge(Protocol):
    """Awaits a coroutine on the event loop of ``Service.aask``'s caller, from the run's worker thread."""

    def __call__(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T: ...


LOOP_BRIDGE: ContextVar[LoopBridge | None] = ContextVar("evloop_loop_bridge", default=None)
"""Set in the worker thread of a run that came through ``Service.aask`` (``agent.loop.async_door``)."""


def awaited(make: Callable[[], Coroutine[Any, Any, T]], blocking: Callable[[], T]) -> T:
    """What ``make()`` returns, awaited on the caller's event loop when the run came through the async
    door; else ``blocking()``, the thread's own way of running it (pydantic-ai's ``run_sync``). Either
    way the run waits for it: the result is the same, only where the waiting happens differs."""
    bridge = LOOP_BRIDGE.get()
    return bridge(make) if bridge is not None else blocking()
