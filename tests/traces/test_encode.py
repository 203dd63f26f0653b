"""Schema 3 events: the data's bytes are encoded once, hashed as written, and verify re-encodes what it
reads to the very bytes that were written."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from evidence_loop.traces.records.hashing import compact_canonical
from evidence_loop.traces.records.reader import read_trace
from evidence_loop.traces.records.steps import CheckedStep, SlidStep
from evidence_loop.traces.stores.store import TraceStore
from evidence_loop.traces.verification.verify import verify
from tests.traces.conftest import SAMPLE_STEPS, HeaderFactory

TINY = SlidStep(
    doc_id="refund-faq",
    version="3",
    window=[4, 6],
    units=3,
    move="right",
    unit_kind="sentence",
    reason="退款期限在下一句",
    ordinals=[6],
    score_before=1e-07,
    score_after=2.5e-05,
)


def _data_bytes(line: bytes) -> bytes:
    """The data of an event line, as written (between "data": and ,"prev_hash")."""
    start = line.index(b'"data":') + len(b'"data":')
    return line[start : line.rindex(b',"prev_hash":')]


def test_what_verify_recomputes_is_the_bytes_written(store: TraceStore, make_header: HeaderFactory) -> None:
    with store.begin(make_header()) as writer:
        for step in [*SAMPLE_STEPS, TINY]:
            writer.append(step)
        writer.finish("answered")
    lines = store.path("r-0001").read_bytes().splitlines()[1:-1]
    for line in lines:
        assert compact_canonical(json.loads(line)["data"]) == _data_bytes(line)
    assert b'"score_before":1e-7' in lines[-1]  # orjson's float text, hashed as written
    assert verify(read_trace(store.path("r-0001"))).ok


def test_a_changed_float_text_that_reads_as_another_value_fails(
    store: TraceStore, make_header: HeaderFactory
) -> None:
    with store.begin(make_header()) as writer:
        writer.append(TINY)
        writer.finish("answered")
    path = store.path("r-0001")
    path.write_bytes(path.read_bytes().replace(b'"score_before":1e-7', b'"score_before":1e-6'))
    result = verify(read_trace(path))
    assert (result.ok, result.first_bad_seq) == (False, 0)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_step_holding_nan_or_an_infinity_is_refused_not_written_as_null(
    store: TraceStore, make_header: HeaderFactory, value: float
) -> None:
    step = CheckedStep(
        score=0.5,
        relevance=0.5,
        slot_coverage=1.0,
        boundary=1.0,
        windows=[],
        missing=[],
        signals={"bm25": value},
    )
    with store.begin(make_header()) as writer, pytest.raises(ValueError, match=r"data\.signals\.bm25"):
        writer.append(step)
    assert b"null" not in Path(store.path("r-0001")).read_bytes().split(b"\n", 1)[1]
