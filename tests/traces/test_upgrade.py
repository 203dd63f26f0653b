"""Old trace files are read in the current shape, and still verify as written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tools.errors import TraceError
from traces.hashing import digest, event_hash, record_hash
from traces.reader import read_trace
from traces.schema import SCHEMA_VERSION, UPGRADERS
from traces.upgrade import UpgradeChain, default_chain
from traces.verify import verify


def _schema0_to_1(record: dict[str, Any]) -> dict[str, Any]:
    """A fake upgrader: schema 0 called the question "query" and kept groups as a comma string."""
    if record["type"] == "header":
        record["question"] = record.pop("query")
        record["groups"] = record["groups"].split(",")
    return record


def _header0() -> dict[str, Any]:
    header: dict[str, Any] = {
        "type": "header",
        "schema_version": 0,
        "run_id": "r-legacy",
        "created_at": "2024-01-02T03:04:05Z",
        "code_version": "0.0.1",
        "policy": {},
        "policy_hash": digest({}),
        "corpus": {"generation": 1, "fingerprint": "f", "versions_read": {}},
        "query": "退款要多久？",
        "groups": "public,staff",
        "llm": {},
    }
    header["hash"] = record_hash(header)
    return header


def _write_schema0(path: Path) -> None:
    header = _header0()
    data = {"query": "退款"}
    event = {"type": "event", "seq": 0, "step": "recalled", "data": data, "prev_hash": header["hash"]}
    event["hash"] = event_hash(header["hash"], 0, "recalled", data)
    lines = [json.dumps(record, ensure_ascii=False) for record in (header, event)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


CHAIN0 = UpgradeChain(first=0, steps=(_schema0_to_1,))


def test_the_released_upgraders_reach_the_current_schema() -> None:
    assert default_chain().target == SCHEMA_VERSION == 1 + len(UPGRADERS)


def test_a_schema_0_trace_is_read_in_the_current_shape(tmp_path: Path) -> None:
    path = tmp_path / "legacy.jsonl"
    _write_schema0(path)
    trace = read_trace(path, chain=CHAIN0)
    assert (trace.header.question, trace.header.groups) == ("退款要多久？", ["public", "staff"])
    assert (trace.header.schema_version, trace.written_schema) == (1, 0)


def test_an_upgraded_trace_verifies_against_its_records_as_written(tmp_path: Path) -> None:
    path = tmp_path / "legacy.jsonl"
    _write_schema0(path)
    result = verify(read_trace(path, chain=CHAIN0))
    assert (result.ok, result.events) == (True, 1)


def test_without_the_upgrader_a_schema_0_trace_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "legacy.jsonl"
    _write_schema0(path)
    with pytest.raises(TraceError, match="older than any upgrader"):
        read_trace(path)


def test_upgrading_leaves_the_raw_record_untouched() -> None:
    raw = _header0()
    upgraded = CHAIN0.upgrade(raw, 0)
    assert ("query" in raw, "question" in upgraded, raw["schema_version"]) == (True, True, 0)


def test_a_record_already_current_passes_through() -> None:
    record = {"type": "event", "seq": 0}
    assert CHAIN0.upgrade(record, 1) is record


def test_a_schema_version_that_is_not_an_integer_is_refused() -> None:
    with pytest.raises(TraceError, match="not an integer"):
        CHAIN0.check("1")
