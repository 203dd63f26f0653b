"""render_timeline / render_list: what an auditor reads in a terminal."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from traces.render import render_event, render_list, render_timeline
from traces.schema import KNOWN_STEPS, TraceEvent
from traces.store import TraceStore


def _event(step: str, data: dict[str, Any]) -> TraceEvent:
    return TraceEvent(seq=4, step=step, data=data, prev_hash="p", hash="h")


def test_the_timeline_mentions_every_step(
    store: TraceStore, write_run: Callable[..., Path], sample_events: list[tuple[str, dict[str, Any]]]
) -> None:
    text = render_timeline(store.read(write_run()))
    assert {step for step, _ in sample_events} == set(KNOWN_STEPS)
    for seq, (step, _) in enumerate(sample_events):
        assert f"#{seq:<3} {step}" in text


def test_the_timeline_opens_with_run_time_question_groups_corpus_and_policy(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    trace = store.read(write_run())
    head = render_timeline(trace).splitlines()[:6]
    assert head == [
        "run       r-0001  (schema 1, code 0.1.0)",
        "time      2025-03-01T08:30:00Z",
        "question  课程开始前可以退款吗？",
        "groups    public",
        "corpus    generation 7, fingerprint c0ffeec0ffee, 1 version read",
        f"policy    {trace.header.policy_hash[:12]}",
    ]


def test_recalled_hits_show_document_version_span_score_and_text() -> None:
    lines = render_event(
        _event(
            "recalled",
            {
                "query": "退款",
                "round": 2,
                "hits": [
                    {"doc_id": "faq", "version": "3", "start": 5, "end": 9, "score": 7.25, "text": "可以退款"}
                ],
            },
        )
    )
    assert lines[0].endswith('query "退款" round 2: 1 hit')
    assert lines[1].split() == ["faq@3", "[5:9]", "7.250", '"可以退款"']


def test_checked_shows_the_score_and_the_missing_pieces() -> None:
    lines = render_event(_event("checked", {"score": 0.5, "missing": [{"kind": "slot", "value": "X-200"}]}))
    assert (lines[0].split()[-2:], lines[1].strip()) == (["score", "0.500"], "missing slot: X-200")


def test_slid_shows_window_direction_unit_and_score_before_and_after() -> None:
    data = {
        "window": {"evidence_id": "e1", "start": 0, "end": 40},
        "direction": "up",
        "unit_kind": "table_header",
        "score_before": 0.4,
        "score_after": 0.9,
        "reason": "orphaned row",
    }
    lines = render_event(_event("slid", data))
    assert lines[0].endswith("e1 [0:40] up +table_header, score 0.400 -> 0.900")
    assert lines[1].strip() == "why: orphaned row"


def test_a_rerank_request_and_reply_show_the_endpoint_the_documents_and_the_scores() -> None:
    body = {"model": "bge", "query": "退款多久到账？", "documents": ["a", "b", "c"], "top_n": 3}
    request = render_event(_event("rerank_request", {"url": "http://127.0.0.1:8000/v1/rerank", "body": body}))
    reply = render_event(_event("rerank_reply", {"status": 200, "attempts": 1, "scores": [0.9, 0.1, 0.25]}))
    assert request[0].endswith("http://127.0.0.1:8000/v1/rerank: 3 documents")
    assert request[1].strip() == 'query: "退款多久到账？"'
    assert reply[0].endswith("status 200, 3 scores, attempts 1")
    assert reply[1].strip() == "scores: 0.900, 0.100, 0.250"


def test_decided_shows_status_and_why() -> None:
    [line] = render_event(_event("decided", {"status": "insufficient_evidence", "why": "rule missing"}))
    assert line.endswith("insufficient_evidence: rule missing")


def test_an_unknown_step_is_rendered_generically() -> None:
    [line] = render_event(_event("cache_hit", {"key": "abc", "n": [1, 2]}))
    assert line.endswith("cache_hit   key=abc, n=[1, 2]")


@pytest.mark.parametrize("step", KNOWN_STEPS)
@pytest.mark.parametrize(
    "data", [{}, {"hits": "not a list", "window": 3, "messages": None, "values": [1, "x"]}]
)
def test_known_steps_with_missing_or_odd_fields_still_render(step: str, data: dict[str, Any]) -> None:
    lines = render_event(_event(step, data))
    assert lines[0].startswith(f"  #4   {step}")


def test_an_incomplete_interrupted_run_says_so(store: TraceStore, write_run: Callable[..., Path]) -> None:
    path = write_run(finish=None)
    with path.open("ab") as file:
        file.write(b'{"type":"ev')
    tail = render_timeline(store.read("r-0001")).splitlines()[-2:]
    assert tail == [
        "end       INCOMPLETE: no footer after 8 events (run did not finish)",
        "          a torn last line (interrupted write) was ignored",
    ]


def test_a_finished_run_ends_with_its_outcome_and_final_hash(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    trace = store.read(write_run())
    last = render_timeline(trace).splitlines()[-1]
    assert last == f"end       complete: answered, 8 events, final hash {trace.final_hash[:12]}"


def test_render_list_is_a_table_with_one_row_per_run(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    write_run("r-1")
    write_run("r-22", finish=None)
    lines = render_list(store.list()).splitlines()
    assert [line.split()[:5] for line in lines] == [
        ["CREATED", "RUN", "TRACE", "OUTCOME", "EVENTS"],
        ["2025-03-01T08:30:00Z", "r-1", "complete", "answered", "8"],
        ["2025-03-01T08:30:00Z", "r-22", "incomplete", "-", "8"],
    ]
    assert lines[0].index("TRACE") == lines[1].index("complete") == lines[2].index("incomplete")


def test_render_list_of_nothing_says_so() -> None:
    assert render_list([]) == "no traces\n"
