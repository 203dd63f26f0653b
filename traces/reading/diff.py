"""Where a replay first differs from its recording: the step, the dotted field path, both values.

Steps are compared in order, by step name and then by their trace data, depth first in the order the
step's fields are declared (keys only the replay has come after). Fields named in ``ignore`` are
skipped at any depth: they change from run to run without meaning anything (latencies, clocks, ids,
hashes). Numbers are compared exactly by default, because replay is meant to be deterministic;
``tolerance`` allows an absolute difference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from evidence_loop.traces.records.hashing import child_path
from evidence_loop.traces.records.steps import TraceStep

DEFAULT_VOLATILE: Final = frozenset(
    {
        "latency_ms",
        "elapsed_ms",
        "duration_ms",
        "timestamp",
        "created_at",
        "started_at",
        "finished_at",
        "run_id",
        "hash",
        "prev_hash",
    }
)
"""Field names that differ between a run and its replay by nature."""


class _Absent:
    """The value on the side where a field, list item or step does not exist."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Final = _Absent()


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first difference: at event ``seq`` (``step``), field ``path``, ``recorded`` vs ``replayed``."""

    seq: int
    step: str
    path: str
    recorded: object
    replayed: object
    reason: str

    def describe(self) -> str:
        """One line for a terminal."""
        return (
            f"event {self.seq} ({self.step}): {self.path}: recorded {self.recorded!r}, "
            f"replayed {self.replayed!r} ({self.reason})"
        )


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class _Options:
    ignore: frozenset[str]
    tolerance: float


Found = tuple[str, object, object, str]
"""(path, recorded value, replayed value, reason)."""


def _compare_maps(a: Mapping[str, Any], b: Mapping[str, Any], path: str, opts: _Options) -> Found | None:
    keys = [k for k in a if k not in opts.ignore] + [k for k in b if k not in a and k not in opts.ignore]
    for key in keys:
        where = child_path(path, key)
        if key not in b:
            return where, a[key], ABSENT, "only in the recording"
        if key not in a:
            return where, ABSENT, b[key], "only in the replay"
        found = _compare(a[key], b[key], where, opts)
        if found is not None:
            return found
    return None


def _compare_lists(a: Sequence[Any], b: Sequence[Any], path: str, opts: _Options) -> Found | None:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        found = _compare(x, y, child_path(path, i), opts)
        if found is not None:
            return found
    if len(a) == len(b):
        return None
    at = min(len(a), len(b))
    old = a[at] if len(a) > at else ABSENT
    new = b[at] if len(b) > at else ABSENT
    return child_path(path, at), old, new, f"the recording has {len(a)} items, the replay {len(b)}"


def _compare(a: object, b: object, path: str, opts: _Options) -> Found | None:
    """The first difference between two JSON values, depth first, or None."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return _compare_maps(a, b, path, opts)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return _compare_lists(a, b, path, opts)
    if _is_number(a) and _is_number(b):
        gap = abs(a - b)  # type: ignore[operator]
        return None if gap <= opts.tolerance else (path, a, b, f"numbers differ by {gap!r}")
    if type(a) is not type(b):
        return path, a, b, f"a {type(a).__name__} became a {type(b).__name__}"
    return None if a == b else (path, a, b, "value differs")


def first_divergence(
    recorded: Sequence[TraceStep],
    replayed: Sequence[TraceStep],
    *,
    ignore: frozenset[str] | set[str] = DEFAULT_VOLATILE,
    tolerance: float = 0.0,
) -> Divergence | None:
    """The first step at which ``replayed`` differs from ``recorded``, or None when they agree.

    A different step name is reported at path ``step``; one side running longer is reported at the
    first extra step, path ``""``.
    """
    opts = _Options(ignore=frozenset(ignore), tolerance=tolerance)
    for seq, (old, new) in enumerate(zip(recorded, replayed, strict=False)):
        if old.step != new.step:
            return Divergence(seq, old.step, "step", old.step, new.step, "a different step")
        found = _compare_maps(old.trace_data(), new.trace_data(), "data", opts)
        if found is not None:
            return Divergence(seq, old.step, *found)
    return _length_divergence(recorded, replayed)


def _length_divergence(recorded: Sequence[TraceStep], replayed: Sequence[TraceStep]) -> Divergence | None:
    if len(recorded) == len(replayed):
        return None
    seq = min(len(recorded), len(replayed))
    reason = f"the recording has {len(recorded)} steps, the replay {len(replayed)}"
    if len(recorded) > seq:
        step = recorded[seq].step
        return Divergence(seq, step, "", step, ABSENT, reason)
    step = replayed[seq].step
    return Divergence(seq, step, "", ABSENT, step, reason)
