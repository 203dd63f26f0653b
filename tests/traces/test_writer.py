"""TraceWriter under failure: nothing is ever written after a footer or after a half-written line."""

from __future__ import annotations

import errno
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tools.errors import TraceError
from traces.schema import TraceHeader
from traces.store import TraceStore
from traces.writer import TraceWriter


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
    with pytest.raises(OSError), TraceWriter(file, tmp_path / "r.jsonl", make_header()) as writer:
        writer.append("recalled", {"query": "a"})
        writer.append("checked", {"score": 0.5})
    assert file.final.count(b"\n") == 2, "header and first event committed, no aborted event after the tear"
    assert not file.final.endswith(b"\n")


def test_no_event_is_taken_after_a_failed_write(
    make_header: Callable[..., TraceHeader], tmp_path: Path
) -> None:
    writer = TraceWriter(DiskFullAfter(1), tmp_path / "r.jsonl", make_header())
    with pytest.raises(OSError):
        writer.append("recalled", {})
    with pytest.raises(TraceError, match="closed without a footer"):
        writer.append("recalled", {})


def test_a_failing_fsync_at_finish_raises_and_nothing_follows_the_footer(
    tmp_path: Path, make_header: Callable[..., TraceHeader]
) -> None:
    def broken_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "I/O error")

    store = TraceStore(tmp_path, fsync=broken_fsync)
    with pytest.raises(OSError), store.begin(make_header()) as writer:
        writer.append("recalled", {})
        writer.finish("answered")
    trace = store.read("r-0001")
    assert (trace.damage, [e.step for e in trace.events]) == (None, ["recalled"])
    assert not store.index_path.exists(), "a run not known to be durable is not indexed"


def test_plain_events_hash_and_read_back_as_normalised_ones(
    tmp_path: Path, make_header: Callable[..., TraceHeader], sample_events: list[tuple[str, dict[str, Any]]]
) -> None:
    hashes = []
    for plain in (False, True):
        store = TraceStore(tmp_path / str(plain))
        with store.begin(make_header()) as writer:
            for step, data in sample_events:
                writer.append(step, data, plain=plain)
            hashes.append(writer.finish("answered"))
        assert store.verify("r-0001").ok
    assert hashes[0] == hashes[1]


def test_a_plain_event_with_nan_is_refused_naming_the_value(
    tmp_path: Path, make_header: Callable[..., TraceHeader]
) -> None:
    with (
        TraceStore(tmp_path).begin(make_header()) as writer,
        pytest.raises(ValueError, match=r"data\.hits\[0\]"),
    ):
        writer.append("recalled", {"hits": [float("nan")]}, plain=True)
