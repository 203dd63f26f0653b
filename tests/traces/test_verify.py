"""verify(): the chain holds for an untouched trace and breaks exactly where a trace was changed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from evidence_loop.traces.records.hashing import event_hash, record_hash
from evidence_loop.traces.records.reader import read_trace
from evidence_loop.traces.records.schema import Trace, TraceHeader
from evidence_loop.traces.records.writer import TraceWriter
from evidence_loop.traces.stores.store import TraceStore
from evidence_loop.traces.verification.verify import HEADER_SEQ, verify

Tamper = Callable[[Path, int, bytes, bytes], None]

# (event seq, a byte string found once in that event's line, its replacement: one changed byte)
DATA_EDITS = [
    (0, b'"dim":2', b'"dim":3'),
    (1, "开课前 退款".encode(), "开课前 退款".encode()[:-1] + b"\xbf"),
    (2, b'"move":"left"', b'"move":"lefT"'),
    (3, b'"coverage":0.75', b'"coverage":0.76'),
    (4, b'"attempt":1', b'"attempt":2'),
    (5, b"different scopes", b"different scopeS"),
    (6, b'"verdict":"compatible"', b'"verdict":"compatiblE"'),
    (7, b"cover the question", b"cover the questioN"),
]


def test_an_untouched_trace_verifies(store: TraceStore, write_run: Callable[..., Path]) -> None:
    trace = store.read(write_run())
    result = verify(trace)
    assert (result.ok, result.complete, result.first_bad_seq, result.events) == (True, True, None, 8)
    assert result.final_hash == trace.final_hash


def test_a_trace_built_in_memory_verifies_from_its_models(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    read = store.read(write_run())
    rebuilt = Trace(header=read.header, events=read.events, footer=read.footer)
    assert verify(rebuilt).ok


@pytest.mark.parametrize(("seq", "old", "new"), DATA_EDITS)
def test_a_changed_byte_in_event_data_fails_at_that_event(
    store: TraceStore, write_run: Callable[..., Path], tamper: Tamper, seq: int, old: bytes, new: bytes
) -> None:
    path = write_run()
    tamper(path, seq + 2, old, new)
    result = verify(store.read("r-0001"))
    assert (result.ok, result.first_bad_seq) == (False, seq)
    assert "changed" in result.reason


def test_a_changed_header_fails_at_the_header(
    store: TraceStore, write_run: Callable[..., Path], tamper: Tamper
) -> None:
    path = write_run()
    tamper(path, 1, b'"generation":7', b'"generation":8')
    result = verify(store.read("r-0001"))
    assert (result.ok, result.first_bad_seq) == (False, HEADER_SEQ)
    assert result.reason.startswith("header changed")


def test_a_header_rewritten_with_a_fresh_hash_still_fails_at_the_header(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    path = write_run()
    lines = path.read_text(encoding="utf-8").split("\n")
    header = json.loads(lines[0])
    header["groups"] = ["staff"]
    header["hash"] = record_hash(header)
    lines[0] = json.dumps(header, ensure_ascii=False)
    path.write_text("\n".join(lines), encoding="utf-8")
    result = verify(store.read("r-0001"))
    assert (result.ok, result.first_bad_seq) == (False, HEADER_SEQ)


def test_a_policy_that_no_longer_matches_its_hash_fails_at_the_header(
    store: TraceStore, make_header: Callable[..., TraceHeader], tmp_path: Path
) -> None:
    path = tmp_path / "r-0001.jsonl"  # a bare writer keeps the policy in the header (no store for it)
    with TraceWriter(path.open("xb"), path, make_header()) as writer:
        writer.finish("answered")
    lines = path.read_text(encoding="utf-8").split("\n")
    header = json.loads(lines[0])
    header["policy"]["accept_score"] = 0.5
    header["hash"] = record_hash(header)
    lines[0] = json.dumps(header, ensure_ascii=False)
    path.write_text("\n".join(lines), encoding="utf-8")
    result = verify(read_trace(path))
    assert (result.first_bad_seq, result.reason) == (
        HEADER_SEQ,
        "header changed: policy_hash does not match the policy",
    )


def _rewrite_lines(path: Path, edit: Callable[[list[str]], list[str]]) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    path.write_text("\n".join(edit(lines)), encoding="utf-8")


def test_a_deleted_event_is_caught_where_it_was(store: TraceStore, write_run: Callable[..., Path]) -> None:
    _rewrite_lines(write_run(), lambda lines: lines[:4] + lines[5:])  # event 3 removed
    result = verify(store.read("r-0001"))
    assert (result.ok, result.first_bad_seq) == (False, 3)
    assert "removed" in result.reason


def test_a_deleted_and_renumbered_event_is_caught_by_the_broken_link(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    def drop_and_renumber(lines: list[str]) -> list[str]:
        kept = lines[:4] + lines[5:]
        for i in range(4, 4 + 4):
            record = json.loads(kept[i])
            record["seq"] -= 1
            kept[i] = json.dumps(record, ensure_ascii=False)
        return kept

    _rewrite_lines(write_run(), drop_and_renumber)
    result = verify(store.read("r-0001"))
    assert (result.ok, result.first_bad_seq) == (False, 3)


def test_reordered_events_are_caught(store: TraceStore, write_run: Callable[..., Path]) -> None:
    _rewrite_lines(write_run(), lambda lines: [*lines[:3], lines[4], lines[3], *lines[5:]])
    result = verify(store.read("r-0001"))
    assert (result.ok, result.first_bad_seq) == (False, 2)


def _rehashed(line: str, **changes: object) -> str:
    """An event line with its data changed and its hash recomputed: a tamperer who knows the chain."""
    record = json.loads(line)
    record["data"].update(changes)
    record["hash"] = event_hash(record["prev_hash"], record["seq"], record["step"], record["data"])
    return json.dumps(record, ensure_ascii=False)


def test_an_event_rewritten_with_a_recomputed_hash_breaks_the_next_link(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    _rewrite_lines(write_run(), lambda lines: [*lines[:3], _rehashed(lines[3], move="right"), *lines[4:]])
    result = verify(store.read("r-0001"))
    assert (result.ok, result.first_bad_seq) == (False, 3)
    assert "does not link" in result.reason


def test_a_changed_footer_fails_after_the_last_event(
    store: TraceStore, write_run: Callable[..., Path], tamper: Tamper
) -> None:
    path = write_run()
    tamper(path, 10, b'"outcome_status":"answered"', b'"outcome_status":"answereD"')
    result = verify(store.read("r-0001"))
    assert (result.ok, result.first_bad_seq) == (False, 8)
    assert "footer changed" in result.reason


def test_a_damaged_line_fails_where_the_event_should_be(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    _rewrite_lines(write_run(), lambda lines: [*lines[:6], "{oops", *lines[7:]])
    result = verify(store.read("r-0001"))
    assert (result.ok, result.first_bad_seq, result.events) == (False, 5, 5)


def test_an_edit_that_breaks_an_events_shape_fails_as_a_change_at_that_event(
    store: TraceStore, write_run: Callable[..., Path], tamper: Tamper
) -> None:
    tamper(write_run(), 4, b'"move":"left"', b'"move":"left","by":"hand"')
    result = verify(store.read("r-0001"))
    assert (result.ok, result.first_bad_seq, result.reason) == (
        False,
        2,
        "event 2 (slid) changed: its hash does not match its content",
    )


def test_an_event_chained_correctly_but_not_the_step_it_names_fails_as_damage(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    _rewrite_lines(write_run(), lambda lines: [*lines[:3], _rehashed(lines[3], by="hand"), ""])
    result = verify(store.read("r-0001"))
    assert (result.ok, result.first_bad_seq) == (False, 2)
    assert result.reason == (
        "a damaged record where event 2 should be: line 4: data.slid.by: Extra inputs are not permitted"
    )


def test_a_trace_cut_back_to_look_incomplete_fails_against_the_index(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    _rewrite_lines(write_run(), lambda lines: [*lines[:6], ""])  # footer and last events removed
    assert verify(store.read("r-0001")).ok, "on its own a cut trace looks merely incomplete"
    result = store.verify("r-0001")
    assert (result.ok, result.first_bad_seq) == (False, 5)
    assert result.reason.startswith("truncated")


def test_store_verify_accepts_an_untouched_finished_run(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    write_run()
    assert store.verify("r-0001").ok
