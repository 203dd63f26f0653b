"""Shared fixtures for the trace tests: a header factory, a realistic run, a store in a temp folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evidence_loop.traces.records.schema import CorpusInfo, TraceHeader
from evidence_loop.traces.records.steps import (
    AbortedStep,
    CheckedStep,
    CohereRerankBody,
    ConflictScanStep,
    ConflictStep,
    DecidedStep,
    EmbeddedStep,
    HitRecord,
    LLMReplyStep,
    LLMRequestStep,
    MessageRecord,
    MissingRecord,
    RecalledStep,
    RerankReplyStep,
    RerankRequestStep,
    ResolvedStep,
    ScannedRecord,
    SlidStep,
    TraceStep,
    ValueRecord,
    WindowRecord,
)
from evidence_loop.traces.stores.store import TraceStore

HeaderFactory = Callable[..., TraceHeader]
RunWriter = Callable[..., Path]

HITS = [
    HitRecord(
        doc_id="refund-faq",
        version="3",
        ordinal=4 + i,
        kind="sentence",
        start=120 + 40 * i,
        end=158 + 40 * i,
        score=7.25 - i,
        text=f"未开课的班级可在开课前申请全额退款，第{i}条。",
    )
    for i in range(5)
]
MESSAGES = [MessageRecord(role="user", content="两处退款期限是否冲突？")]

# one step of every kind, in the shapes the loop writes them
EXAMPLES: dict[str, TraceStep] = {
    "embedded": EmbeddedStep(embedder="fake:fake:64", dim=2, digest="d1" * 32, vector="AACAPwAAAEA="),
    "resolved": ResolvedStep(
        history=[{"text": "X200路由器支持哪些频段", "run_id": "r-0000", "doc_ids": ["x200"]}],
        asked="它是哪一年推出的",
        question="X200路由器是哪一年推出的",
        cue="pronoun",
        carried=[{"kind": "subject", "text": "X200路由器", "turn": 0}],
        prior_docs=["x200"],
        candidates=[],
        unresolved=False,
        run_ids_read=["r-0000"],
    ),
    "recalled": RecalledStep(round=1, query="开课前 退款", k=12, hits=HITS),
    "slid": SlidStep(
        doc_id="refund-faq",
        version="3",
        window=[3, 4],
        units=2,
        move="left",
        unit_kind="sentence",
        reason="dangling scope points left",
        ordinals=[3],
        score_before=0.61,
        score_after=0.83,
    ),
    "checked": CheckedStep(
        score=0.61,
        relevance=0.8,
        slot_coverage=1.0,
        boundary=0.5,
        windows=[
            WindowRecord(
                doc_id="refund-faq",
                version="3",
                ordinals=[3, 4],
                score=0.61,
                relevance=0.8,
                coverage=0.75,
                slot_coverage=1.0,
                boundary=0.5,
                gaps=["dangling_scope:left:3"],
                references=[],
            )
        ],
        missing=[MissingRecord(kind="dangling_scope", detail="本节适用于", value=None)],
    ),
    "rerank_request": RerankRequestStep(
        url="http://127.0.0.1:8000/v1/rerank",
        body=CohereRerankBody(model="bge", query="退款多久到账？", documents=["a", "b", "c"], top_n=3),
    ),
    "rerank_reply": RerankReplyStep(status=200, attempts=1, body={"results": []}, scores=[0.9, 0.1, 0.25]),
    "llm_request": LLMRequestStep(
        call=1, attempt=1, model="qwen2.5-7b", messages=MESSAGES, http_request=None
    ),
    "llm_reply": LLMReplyStep(
        call=1,
        attempt=1,
        model="qwen2.5-7b",
        outcome="ok",
        status=200,
        text="different scopes",
        model_response={"parts": []},
        http_response=None,
        latency_ms=812.5,
    ),
    "conflict": ConflictStep(
        slot="duration:7天",
        kind="duration",
        values=[
            ValueRecord(value="7天", doc_id="refund-faq", version="3", start=120, end=158),
            ValueRecord(value="14天", doc_id="vip-rules", version="1", start=10, end=44),
        ],
        verdict="compatible",
        adjudicator="llm",
        reason="VIP rules apply to a different scope",
        scope="VIP members",
    ),
    "conflict_scan": ConflictScanStep(
        candidates=0,
        dropped=[
            ScannedRecord(
                slot="- From Apps, tap Galaxy …",
                kind="named",
                values=[
                    ValueRecord(value="Store", doc_id="s10-apps", version="1", start=4628, end=4633),
                    ValueRecord(value="Wearable", doc_id="s10-apps", version="1", start=4836, end=4844),
                ],
                dropped="one document (s10-apps) states both values",
            )
        ],
    ),
    "decided": DecidedStep(
        status="answered", why="1 evidence windows cover the question", outcome={"status": "answered"}
    ),
    "aborted": AbortedStep(error="DeadlineExceeded", message="the run ran out of time before the rerank"),
}
SAMPLE_STEPS: list[TraceStep] = [
    EXAMPLES[kind]
    for kind in ("embedded", "recalled", "slid", "checked", "llm_request", "llm_reply", "conflict", "decided")
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
    """An empty store under a temporary folder, writing one file per run (the layout before the day
    journal, still read and written with ``fsync_each``): the tests of the records, the reader and
    verify edit those files line by line. The journal's own tests use ``journal_store``."""
    return TraceStore(tmp_path / "traces", layout="files")


@pytest.fixture
def write_run(store: TraceStore, make_header: HeaderFactory) -> RunWriter:
    """Write SAMPLE_STEPS as one run; ``finish=None`` leaves it unfinished. Returns the file path."""

    def write(run_id: str = "r-0001", *, finish: str | None = "answered", **header: Any) -> Path:
        writer = store.begin(make_header(run_id=run_id, **header))
        for step in SAMPLE_STEPS:
            writer.append(step)
        if finish is not None:
            writer.finish(finish)
        writer.close()
        return writer.path

    return write


Tamper = Callable[[Path, int, bytes, bytes], None]


@pytest.fixture
def sample_steps() -> list[TraceStep]:
    """One realistic run of eight steps, in loop order."""
    return SAMPLE_STEPS


@pytest.fixture
def tamper() -> Tamper:
    """Change bytes on one line (1-based) of a file, exactly once: a tamperer's edit."""

    def edit(path: Path, line_number: int, old: bytes, new: bytes) -> None:
        lines = path.read_bytes().split(b"\n")
        assert lines[line_number - 1].count(old) == 1, "the edit must hit exactly one place"
        lines[line_number - 1] = lines[line_number - 1].replace(old, new)
        path.write_bytes(b"\n".join(lines))

    return edit
