"""Reading imperfect files: a kill's torn line is not corruption; a bad committed line is."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from evidence_loop.tools.errors import NotFoundError, TraceError
from evidence_loop.traces.records.hashing import event_hash
from evidence_loop.traces.records.reader import parse_trace, read_trace
from evidence_loop.traces.records.steps import DecidedStep
from evidence_loop.traces.stores.store import TraceStore
from evidence_loop.traces.verification.verify import verify

TORN = b'{"type":"event","seq":8,"step":"decided","data":{"sta'


def _interrupt(path: Path) -> None:
    """What a kill mid-write leaves: committed lines, then half a line with no newline."""
    with path.open("ab") as file:
        file.write(TORN)


def test_an_interrupted_run_reads_as_incomplete(store: TraceStore, write_run: Callable[..., Path]) -> None:
    path = write_run(finish=None)
    _interrupt(path)
    trace = store.read("r-0001")
    assert (trace.complete, trace.torn, trace.damage, len(trace.events)) == (False, True, None, 8)


def test_an_interrupted_run_verifies_up_to_its_last_complete_event(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    path = write_run(finish=None)
    _interrupt(path)
    result = verify(store.read("r-0001"))
    assert (result.ok, result.complete, result.first_bad_seq, result.events) == (True, False, None, 8)
    assert "torn" in result.reason


def test_a_torn_footer_leaves_the_run_incomplete_not_corrupt(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    path = write_run()
    path.write_bytes(path.read_bytes()[:-20])  # the kill hit while the footer was being written
    trace = store.read("r-0001")
    assert (trace.complete, trace.torn, trace.footer, trace.damage) == (False, True, None, None)
    assert verify(trace).ok


def test_an_unfinished_run_without_torn_line_is_incomplete_but_whole(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    write_run(finish=None)
    trace = store.read("r-0001")
    assert (trace.complete, trace.torn, len(trace.events)) == (False, False, 8)


def test_a_committed_line_that_is_not_json_is_damage(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    path = write_run()
    lines = path.read_bytes().split(b"\n")
    lines[3] = lines[3][:40]  # a cut line that still ends in a newline: not a kill, a corruption
    path.write_bytes(b"\n".join(lines))
    trace = store.read("r-0001")
    assert (len(trace.events), trace.complete, trace.torn) == (2, False, False)
    assert trace.damage is not None and trace.damage.startswith("line 4: not a JSON line")


def test_a_record_after_the_footer_is_damage(store: TraceStore, write_run: Callable[..., Path]) -> None:
    path = write_run()
    with path.open("ab") as file:
        file.write(b'{"type":"event"}\n')
    trace = store.read("r-0001")
    assert trace.damage == "line 11: a record after the footer"
    assert not trace.complete


def test_nan_in_a_committed_line_is_damage(store: TraceStore, write_run: Callable[..., Path]) -> None:
    path = write_run(finish=None)
    with path.open("ab") as file:
        file.write(b'{"type":"event","seq":8,"step":"aborted","data":{"s":NaN},"prev_hash":"","hash":""}\n')
    assert "NaN is not allowed" in str(store.read("r-0001").damage)


def test_an_event_whose_data_is_not_the_step_it_names_is_damage_though_its_hash_holds(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    path = write_run(finish=None)
    last = store.read(path).events[-1]
    data = {"status": "answered", "because": "rewritten"}  # a decided step has a why, and no because
    hashed = event_hash(last.hash, 8, "decided", data)
    with path.open("a", encoding="utf-8") as file:
        file.write(
            json.dumps(
                {
                    "type": "event",
                    "seq": 8,
                    "step": "decided",
                    "data": data,
                    "prev_hash": last.hash,
                    "hash": hashed,
                }
            )
            + "\n"
        )
    trace = store.read(path)
    assert (len(trace.events), trace.damage) == (8, "line 10: data.decided.why: Field required")


def test_an_event_naming_a_step_that_does_not_exist_is_damage(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    path = write_run(finish=None)
    with path.open("ab") as file:
        file.write(b'{"type":"event","seq":8,"step":"cache_hit","data":{},"prev_hash":"","hash":""}\n')
    assert str(store.read(path).damage).startswith("line 10: data: Input tag 'cache_hit' found using 'step'")


def test_a_file_killed_before_its_header_was_committed_cannot_be_read(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"type":"header","schema_ver')
    with pytest.raises(TraceError, match="no complete header"):
        read_trace(path)


def test_a_trace_from_a_newer_schema_is_refused(write_run: Callable[..., Path]) -> None:
    content = write_run().read_bytes().replace(b'"schema_version":3', b'"schema_version":99', 1)
    with pytest.raises(TraceError, match="schema 99 is newer"):
        parse_trace(content)


def test_a_missing_file_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        read_trace(tmp_path / "nope.jsonl")


def test_raw_records_are_kept_as_written(store: TraceStore, write_run: Callable[..., Path]) -> None:
    trace = store.read(write_run())
    assert len(trace.records) == 10
    assert trace.records[1] == trace.events[0].model_dump()


def test_each_event_reads_as_its_typed_step(store: TraceStore, write_run: Callable[..., Path]) -> None:
    trace = store.read(write_run(finish=None))
    assert isinstance(trace.events[-1].data, DecidedStep)
    assert trace.events[-1].data.why == "1 evidence windows cover the question"
