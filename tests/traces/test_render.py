from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from evidence_loop.traces.reading.render import render_event, render_list, render_timeline
from evidence_loop.traces.records.schema import CHAINED_SCHEMA, TraceEvent
from evidence_loop.traces.records.steps import STEP_KINDS, TraceStep
from evidence_loop.traces.stores.store import TraceStore
from tests.traces.conftest import EXAMPLES, SAMPLE_STEPS


def _lines(step: TraceStep) -> list[str]:
    """The rendered lines, without the ``#seq step`` column."""
    lines = render_event(TraceEvent(seq=4, step=step.step, data=step, prev_hash="p", hash="h"))
    width = len(f"  #4   {step.step + ' ':<12}")
    return [line[width:] for line in lines]


def test_the_timeline_shows_every_step_of_the_run(store: TraceStore, write_run: Callable[..., Path]) -> None:
    text = render_timeline(store.read(write_run()))
    for seq, step in enumerate(SAMPLE_STEPS):
        assert f"#{seq:<3} {step.step}" in text


def test_the_timeline_opens_with_run_time_question_groups_corpus_and_policy(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    trace = store.read(write_run())
    head = render_timeline(trace).splitlines()[:6]
    assert head == [
        f"run       r-0001  (schema {CHAINED_SCHEMA}, code 0.1.0)",
        "time      2025-03-01T08:30:00Z",
        "question  课程开始前可以退款吗？",
        "groups    public",
        "corpus    generation 7, fingerprint c0ffeec0ffee, 1 version read",
        f"policy    {trace.header.policy_hash[:12]}",
    ]


FIRST_LINES = {
    "embedded": "fake:fake:64, 2 dimensions, digest d1d1d1d1d1d1",
    "resolved": '1 earlier turn, cue pronoun: "X200路由器是哪一年推出的"',
    "recalled": 'query "开课前 退款" round 1, k 12: 5 hits',
    "slid": "refund-faq@3 units 3-4 (2) left +sentence, score 0.610 -> 0.830",
    "checked": "score 0.610, relevance 0.800, slot_coverage 1.000, boundary 0.500, 1 window",
    "rerank_request": "http://127.0.0.1:8000/v1/rerank: 3 documents",
    "rerank_reply": "status 200, 3 scores, attempts 1",
    "llm_request": "model qwen2.5-7b call 1 attempt 1, 1 message",
    "llm_reply": "model qwen2.5-7b call 1 attempt 1, 812.5 ms",
    "conflict": "slot duration:7天: 7天 (refund-faq@3 [120:158]) vs 14天 (vip-rules@1 [10:44])",
    "conflict_scan": "1 candidates set aside, 0 went on to a verdict",
    "decided": "answered: 1 evidence windows cover the question",
    "aborted": "DeadlineExceeded: the run ran out of time before the rerank",
}


def test_every_kind_of_step_has_a_line_of_its_own() -> None:
    assert list(FIRST_LINES) == list(STEP_KINDS)


@pytest.mark.parametrize(("kind", "first_line"), FIRST_LINES.items())
def test_each_kind_of_step_says_what_happened_in_its_first_line(kind: str, first_line: str) -> None:
    assert _lines(EXAMPLES[kind])[0] == first_line


def test_recalled_hits_show_document_version_span_score_kind_and_text() -> None:
    lines = _lines(EXAMPLES["recalled"])
    assert len(lines) == 1 + 5
    assert lines[1].split() == [
        "refund-faq@3",
        "[120:158]",
        "7.250",
        "sentence",
        '"未开课的班级可在开课前申请全额退款，第0条。"',
    ]


def test_checked_shows_the_missing_pieces() -> None:
    assert _lines(EXAMPLES["checked"])[1:] == ["missing dangling_scope: 本节适用于"]


def test_slid_says_why() -> None:
    assert _lines(EXAMPLES["slid"])[1] == "why: dangling scope points left"


def test_a_rerank_request_and_reply_show_the_query_and_the_scores() -> None:
    assert _lines(EXAMPLES["rerank_request"])[1] == 'query: "退款多久到账？"'
    assert _lines(EXAMPLES["rerank_reply"])[1] == "scores: 0.900, 0.100, 0.250"


def test_an_llm_reply_shows_its_text_or_why_it_failed() -> None:
    final = "call 1 failed after 4 attempt(s): ModelHTTPError: boom"
    failed = EXAMPLES["llm_reply"].model_copy(
        update={
            "outcome": "error",
            "text": None,
            "model_response": None,
            "error": "boom",
            "final_error": final,
        }
    )
    assert _lines(EXAMPLES["llm_reply"])[1] == 'reply: "different scopes"'
    assert _lines(failed)[1] == "error: call 1 failed after 4 attempt(s): ModelHTTPError: boom"


def test_a_conflict_shows_its_verdict_who_gave_it_and_why() -> None:
    assert _lines(EXAMPLES["conflict"])[1] == (
        "verdict compatible by llm (scope: VIP members): VIP rules apply to a different scope"
    )


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
