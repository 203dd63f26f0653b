"""TraceWriter under failure: nothing is ever written after a footer or after a half-written line."""

from __future__ import annotations

import errno
import io
from collections.abc import Callable
from pathlib import Path

import pytest

from evidence_loop.tools.errors import TraceError, TraceStoreUnavailableError
from evidence_loop.traces.records.hashing import canonical_json
from evidence_loop.traces.records.schema import TraceHeader
from evidence_loop.traces.records.steps import CheckedStep, TraceStep
from evidence_loop.traces.records.writer import TraceWriter
from evidence_loop.traces.stores.store import TraceStore
from tests.traces.conftest import EXAMPLES

RECALLED, CHECKED = EXAMPLES["recalled"], EXAMPLES["checked"]


class DiskFullAfter(io.BytesIO):
    """A file that accepts ``n`` writes, then half of the next one, then fails like a full disk."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.left = n
        self.final = b""

    def write(self, data: bytes) -> int:  # type: ignore[override]
        if self.left == 0:
            super().write(bytes(data)[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        self.left -= 1
        return super().write(data)

    def close(self) -> None:
        self.final = self.getvalue()
        super().close()


def test_a_failed_write_leaves_the_half_line_last(
    make_header: Callable[..., TraceHeader], tmp_path: Path
) -> None:
    file = DiskFullAfter(2)
    with (
        pytest.raises(TraceStoreUnavailableError),
        TraceWriter(file, tmp_path / "r.jsonl", make_header()) as writer,
    ):
        writer.append(RECALLED)
        writer.append(CHECKED)
    assert file.final.count(b"\n") == 2, "header and first event committed, no aborted event after the tear"
    assert not file.final.endswith(b"\n")


def test_no_event_is_taken_after_a_failed_write(
    make_header: Callable[..., TraceHeader], tmp_path: Path
) -> None:
    writer = TraceWriter(DiskFullAfter(1), tmp_path / "r.jsonl", make_header())
    with pytest.raises(TraceStoreUnavailableError):
        writer.append(RECALLED)
    with pytest.raises(TraceError, match="closed without a footer"):
        writer.append(RECALLED)


def test_a_failing_fsync_at_finish_raises_and_nothing_follows_the_footer(
    tmp_path: Path, make_header: Callable[..., TraceHeader]
) -> None:
    def broken_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "I/O error")

    store = TraceStore(tmp_path, fsync=broken_fsync, layout="files")
    with pytest.raises(TraceStoreUnavailableError), store.begin(make_header()) as writer:
        writer.append(RECALLED)
        writer.finish("answered")
    trace = store.read("r-0001")
    assert (trace.damage, [e.step for e in trace.events]) == (None, ["recalled"])
    assert not store.index_path.exists(), "a run not known to be durable is not indexed"


def test_the_data_written_is_the_steps_trace_data(
    tmp_path: Path, make_header: Callable[..., TraceHeader], sample_steps: list[TraceStep]
) -> None:
    store = TraceStore(tmp_path)
    with store.begin(make_header()) as writer:
        for step in sample_steps:
            writer.append(step)
    written = [e.data for e in store.read("r-0001").events]
    assert [canonical_json(s.trace_data()) for s in written] == [
        canonical_json(s.trace_data()) for s in sample_steps
    ]


def test_a_step_with_nan_is_refused_naming_the_value(
    tmp_path: Path, make_header: Callable[..., TraceHeader]
) -> None:
    broken = CHECKED.model_copy(update={"score": float("nan")})
    assert isinstance(broken, CheckedStep)
    with (
        TraceStore(tmp_path, layout="files").begin(make_header()) as writer,
        pytest.raises(ValueError, match=r"data\.score"),
    ):
        writer.append(broken)


def test_a_step_with_nan_is_refused_naming_the_value_when_a_journal_run_is_written(
    tmp_path: Path, make_header: Callable[..., TraceHeader]
) -> None:
    broken = CHECKED.model_copy(update={"score": float("nan")})
    store = TraceStore(tmp_path)
    with store.begin(make_header()) as writer, pytest.raises(ValueError, match=r"data\.score"):
        writer.append(broken)
        writer.finish("answered")
    assert not store.read("r-0001").complete, "the run reads as one that did not finish"
