"""Shared fixtures for the trace tests: a header factory, a realistic run, a store in a temp folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from traces.schema import CorpusInfo, TraceHeader
from traces.store import TraceStore

HeaderFactory = Callable[..., TraceHeader]
RunWriter = Callable[..., Path]

HITS = [
    {
        "doc_id": "refund-faq",
        "version": "3",
        "start": 120 + 40 * i,
        "end": 158 + 40 * i,
        "score": 7.25 - i,
        "kind": "sentence",
        "text": f"未开课的班级可在开课前申请全额退款，第{i}条。",
    }
    for i in range(5)
]

SAMPLE_EVENTS: list[tuple[str, dict[str, Any]]] = [
    ("recalled", {"query": "开课前 退款", "round": 1, "hits": HITS}),
    (
        "checked",
        {
            "score": 0.61,
            "relevance": 0.8,
            "slot_coverage": 1.0,
            "boundary": 0.5,
            "missing": [{"kind": "dangling_scope", "detail": "本节适用于", "value": None}],
        },
    ),
    (
        "slid",
        {
            "window": {"doc_id": "refund-faq", "version": "3", "start": 80, "end": 158},
            "direction": "left",
            "unit_kind": "sentence",
            "score_before": 0.61,
            "score_after": 0.83,
            "reason": "dangling scope points left",
        },
    ),
    (
        "llm_request",
        {
            "model": "qwen2.5-7b",
            "attempt": 1,
            "messages": [{"role": "user", "content": "两处退款期限是否冲突？"}],
        },
    ),
    ("llm_reply", {"model": "qwen2.5-7b", "attempt": 1, "text": "different scopes", "latency_ms": 812.5}),
    (
        "conflict",
        {
            "slot": "duration:7天",
            "values": [
                {"value": "7天", "doc_id": "refund-faq", "version": "3", "start": 120, "end": 158},
                {"value": "14天", "doc_id": "vip-rules", "version": "1", "start": 10, "end": 44},
            ],
            "verdict": "compatible",
            "adjudicator": "llm",
            "reason": "VIP rules apply to a different scope",
        },
    ),
    ("decided", {"status": "answered", "why": "score 0.83 >= 0.75, all slots covered"}),
    ("outcome", {"status": "answered", "evidence": 1, "latency_ms": 930.1}),
]


@pytest.fixture
def make_header() -> HeaderFactory:
    """A factory of valid headers; keyword arguments override fields."""

    def make(**overrides: Any) -> TraceHeader:
        fields: dict[str, Any] = {
            "run_id": "r-0001",
            "created_at": "2025-03-01T08:30:00Z",
            "code_version": "0.1.0",
            "policy": {"accept_score": 0.75, "max_slides": 6},
            "corpus": CorpusInfo(generation=7, fingerprint="c0ffee" * 4, versions_read={"refund-faq": "3"}),
            "question": "课程开始前可以退款吗？",
            "groups": ["public"],
            "llm": {
                "model": "qwen2.5-7b",
                "base_url": "http://127.0.0.1:8000/v1",
                "quirks": ["no_tool_choice"],
            },
        }
        fields.update(overrides)
        return TraceHeader(**fields)

    return make


@pytest.fixture
def store(tmp_path: Path) -> TraceStore:
    """An empty store under a temporary folder."""
    return TraceStore(tmp_path / "traces")


@pytest.fixture
def write_run(store: TraceStore, make_header: HeaderFactory) -> RunWriter:
    """Write SAMPLE_EVENTS as one run; ``finish=None`` leaves it unfinished. Returns the file path."""

    def write(run_id: str = "r-0001", *, finish: str | None = "answered", **header: Any) -> Path:
        writer = store.begin(make_header(run_id=run_id, **header))
        for step, data in SAMPLE_EVENTS:
            writer.append(step, data)
        if finish is not None:
            writer.finish(finish)
        writer.close()
        return writer.path

    return write


Tamper = Callable[[Path, int, bytes, bytes], None]


@pytest.fixture
def sample_events() -> list[tuple[str, dict[str, Any]]]:
    """One realistic run: every known step once, in loop order."""
    return SAMPLE_EVENTS


@pytest.fixture
def tamper() -> Tamper:
    """Change bytes on one line (1-based) of a file, exactly once: a tamperer's edit."""

    def edit(path: Path, line_number: int, old: bytes, new: bytes) -> None:
        lines = path.read_bytes().split(b"\n")
        assert lines[line_number - 1].count(old) == 1, "the edit must hit exactly one place"
        lines[line_number - 1] = lines[line_number - 1].replace(old, new)
        path.write_bytes(b"\n".join(lines))

    return edit
