"""Follow-ups through the loop and its front doors: resolved by rule, traced, replayed, access-checked."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.service import Service
from evidence_loop.agent.tuning.evaluate import answer_all, read_questions
from evidence_loop.tools.errors import NotFoundError
from evidence_loop.tools.parse.sources import collect
from evidence_loop.tools.types import DocumentInput
from evidence_loop.traces.reading.render import render_timeline
from evidence_loop.traces.records.steps import ResolvedStep
from tests.agent.api_support import PUBLIC, STAFF, api_client

CONVERSATIONS = Path(__file__).resolve().parent.parent / "data" / "conversations"
STAFF_NOTE = DocumentInput(
    doc_id="router-x500-staff",
    title="X500 路由器（内部）",
    text="# X500 路由器\n\nX500路由器于2025年推出，仅供内部测试。\n",
    acl=("staff",),
)


def _open(folder: Path) -> Service:
    service = Service.open(folder, create=True, embedder=None, reranker=None, llm=None)
    service.ingest([*collect([CONVERSATIONS / "corpus.jsonl"]).documents, STAFF_NOTE])
    return service


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    service = _open(tmp_path_factory.mktemp("conversations") / "index")
    yield service
    service.close()


def _resolved_step(service: Service, run_id: str) -> ResolvedStep:
    steps = [e.data for e in service.trace(run_id).events if isinstance(e.data, ResolvedStep)]
    assert len(steps) == 1
    return steps[0]


def test_a_pronoun_is_answered_from_the_earlier_turns_product(service: Service) -> None:
    alone = service.ask("它是哪一年推出的？")
    followed = service.ask("它是哪一年推出的？", history=["X300路由器支持哪些频段？"])

    assert followed.status == "answered" and followed.answer is not None
    assert followed.question == "它是哪一年推出的？"
    assert followed.resolved_question == "X300路由器是哪一年推出的？"
    assert {c.doc_id for c in followed.answer.citations} == {"router-x300-zh"}
    assert alone.resolved_question is None
    assert alone.answer is None or {c.doc_id for c in alone.answer.citations} != {"router-x300-zh"}


def test_what_about_keeps_the_attribute_and_swaps_the_plan(service: Service) -> None:
    outcome = service.ask(
        "What about the Premium plan?", history=["How much does the Basic plan cost per month?"]
    )
    assert outcome.resolved_question == "How much does the Premium plan cost per month?"
    assert outcome.answer is not None and "$12 per month" in outcome.answer.text


def test_the_trace_records_the_history_what_was_carried_and_replays_identical(service: Service) -> None:
    outcome = service.ask("部门的负责人是谁？", history=["你好", "人力资源部在哪一层？"])
    step = _resolved_step(service, outcome.run_id)

    assert [t["text"] for t in step.history] == ["你好", "人力资源部在哪一层？"]
    assert (step.asked, step.question, step.cue) == (
        "部门的负责人是谁？",
        "人力资源部的负责人是谁？",
        "generic",
    )
    assert step.carried == [{"kind": "subject", "text": "人力资源部", "turn": 1}]
    assert service.replay(outcome.run_id).identical
    shown = render_timeline(service.trace(outcome.run_id)).splitlines()
    assert shown[2:4] == ["question  部门的负责人是谁？", "resolved  人力资源部的负责人是谁？"]


def test_without_history_a_run_records_no_resolution_and_runs_as_before(service: Service) -> None:
    question = "X300路由器重多少克？"
    plain, empty = service.ask(question), service.ask(question, history=[])
    for outcome in (plain, empty):
        assert not any(isinstance(e.data, ResolvedStep) for e in service.trace(outcome.run_id).events)
    assert plain.model_dump(exclude={"run_id", "latency_ms", "trace"}) == empty.model_dump(
        exclude={"run_id", "latency_ms", "trace"}
    )
    assert "resolved_question" not in service.trace(plain.run_id).events[-1].data.trace_data()["outcome"]


def test_a_topic_switch_carries_nothing(service: Service) -> None:
    outcome = service.ask("退货后多久能收到退款？", history=["X200路由器是哪一年推出的？"])
    step = _resolved_step(service, outcome.run_id)
    assert (outcome.resolved_question, step.cue, step.carried) == (None, None, [])
    assert outcome.answer is not None and "3个工作日" in outcome.answer.text


def test_a_pointer_after_a_comparison_asks_which_one(service: Service) -> None:
    outcome = service.ask("它是哪一年推出的？", history=["X200和X300路由器有什么区别？"])
    pieces = [(m.kind, m.value, m.doc_id) for m in outcome.missing if m.kind == "ambiguous_subject"]
    assert outcome.status == "insufficient_evidence" and outcome.answer is None
    assert pieces == [
        ("ambiguous_subject", "X200", "router-x200-zh"),
        ("ambiguous_subject", "X300路由器", "router-x300-zh"),
    ]
    assert service.replay(outcome.run_id).identical


def test_a_statement_is_read_with_its_history(service: Service) -> None:
    outcome = service.ask(
        "We are moving abroad next month.", history=["How do I apply for retirement benefits?"]
    )
    assert outcome.status == "answered" and outcome.answer is not None
    assert "30 days before you leave" in outcome.answer.text


def test_a_run_read_back_by_id_lends_its_documents_and_is_named_in_the_trace(service: Service) -> None:
    first = service.ask("X300路由器支持哪些频段？")
    outcome = service.ask(
        "它多重？", history=[{"question": "X300路由器支持哪些频段？", "run_id": first.run_id}]
    )
    step = _resolved_step(service, outcome.run_id)
    assert step.run_ids_read == [first.run_id]
    assert step.history[0].get("doc_ids") == sorted({e.doc_id for e in first.evidence})
    assert "router-x300-zh" in step.prior_docs
    assert service.replay(outcome.run_id).identical


def test_a_run_the_caller_could_not_read_is_not_found(service: Service) -> None:
    staff_run = service.ask("X500路由器是哪一年推出的？", ["staff"])
    with pytest.raises(NotFoundError):
        service.ask("它多重？", history=[{"run_id": staff_run.run_id}])
    with pytest.raises(NotFoundError):
        service.ask("它多重？", history=[{"run_id": "0000000000000000"}])
    assert service.ask("它多重？", ["staff"], history=[{"run_id": staff_run.run_id}]).run_id


def test_a_read_back_run_lends_only_documents_the_caller_may_read_now(tmp_path: Path) -> None:
    with _open(tmp_path / "index") as service:
        staff_run = service.ask("X500路由器是哪一年推出的？", ["staff"])
        assert "router-x500-staff" in service.turn(staff_run.run_id, ["staff"]).doc_ids
        closed = DocumentInput(
            doc_id=STAFF_NOTE.doc_id,
            title=STAFF_NOTE.title,
            text=STAFF_NOTE.text,
            version="2",
            acl=("managers",),
        )
        service.ingest([closed])
        assert "router-x500-staff" not in service.turn(staff_run.run_id, ["staff"]).doc_ids


# --- the HTTP API -----------------------------------------------------------------------------------


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    service = _open(tmp_path / "index")
    yield api_client(service)
    service.close()


def test_the_api_reads_a_follow_up_with_its_history(client: TestClient) -> None:
    first = client.post(
        "/v1/ask", json={"question": "X300路由器支持哪些频段？"}, headers=PUBLIC.headers
    ).json()
    body = {
        "question": "它是哪一年推出的？",
        "history": [{"question": "X300路由器支持哪些频段？", "run_id": first["run_id"]}],
    }
    reply = client.post("/v1/ask", json=body, headers=PUBLIC.headers)
    assert reply.status_code == 200, reply.text
    assert reply.json()["resolved_question"] == "X300路由器是哪一年推出的？"
    plain = client.post(
        "/v1/ask",
        json={"question": "它是哪一年推出的？", "history": ["X200路由器支持哪些频段？"]},
        headers=PUBLIC.headers,
    )
    assert plain.json()["resolved_question"] == "X200路由器是哪一年推出的？"


def test_the_api_answers_another_keys_run_id_with_the_trace_routes_404(client: TestClient) -> None:
    theirs = client.post(
        "/v1/ask", json={"question": "X300路由器支持哪些频段？"}, headers=STAFF.headers
    ).json()
    body = {"question": "它是哪一年推出的？", "history": [{"run_id": theirs["run_id"]}]}
    hidden = client.post("/v1/ask", json=body, headers=PUBLIC.headers)
    unknown = client.post(
        "/v1/ask",
        json={"question": "它是哪一年推出的？", "history": [{"run_id": "0000000000000000"}]},
        headers=PUBLIC.headers,
    )
    trace_route = client.get(f"/v1/traces/{theirs['run_id']}", headers=PUBLIC.headers)
    assert (hidden.status_code, unknown.status_code, trace_route.status_code) == (404, 404, 404)
    assert hidden.json()["type"] == trace_route.json()["type"]


def test_the_api_refuses_a_turn_with_neither_question_nor_run(client: TestClient) -> None:
    reply = client.post("/v1/ask", json={"question": "它多重？", "history": [{}]}, headers=PUBLIC.headers)
    assert reply.status_code in {400, 422}


# --- the command line -------------------------------------------------------------------------------


def test_ask_reads_its_history_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _open(tmp_path / "index").close()
    history = tmp_path / "turns.json"
    history.write_text(json.dumps(["How much does the Basic plan cost per month?"]), encoding="utf-8")
    code = main(
        [
            "ask",
            "What about the Premium plan?",
            "--index",
            str(tmp_path / "index"),
            "--history-file",
            str(history),
            "--json",
        ]
    )
    outcome = json.loads(capsys.readouterr().out)
    assert code == 0 and outcome["resolved_question"] == "How much does the Premium plan cost per month?"


def test_batch_asks_with_the_history_field_unless_told_not_to(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _open(tmp_path / "index").close()
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps(
            {"id": "a", "question": "它是哪一年推出的？", "history": ["X300路由器支持哪些频段？"]},
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    for flag, out in (([], tmp_path / "with.jsonl"), (["--no-history"], tmp_path / "without.jsonl")):
        assert (
            main(
                [
                    "batch",
                    str(questions),
                    "--out",
                    str(out),
                    "--index",
                    str(tmp_path / "index"),
                    "--no-progress",
                    *flag,
                ]
            )
            == 0
        )
    capsys.readouterr()
    with_history = json.loads((tmp_path / "with.jsonl").read_text(encoding="utf-8"))
    without = json.loads((tmp_path / "without.jsonl").read_text(encoding="utf-8"))
    assert {e["doc_id"] for e in with_history["evidence"]} == {"router-x300-zh"}
    assert {e["doc_id"] for e in without["evidence"]} != {"router-x300-zh"}


def test_a_history_that_is_not_a_list_of_questions_is_an_input_error(
    tmp_path: Path, service: Service
) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"id": "a", "question": "它多重？", "history": "X300"}) + "\n", encoding="utf-8"
    )
    with pytest.raises(Exception, match="history"):
        list(answer_all(service.ask, read_questions(questions)))


def _read_until(fd: int, marker: str, seen: bytearray, within_s: float = 180.0) -> str:
    """Read the terminal until ``marker`` shows (generous: the process imports and loads an index)."""
    deadline = time.monotonic() + within_s
    while marker not in seen.decode("utf-8", "replace"):
        left = deadline - time.monotonic()
        assert left > 0, f"no {marker!r} on the terminal; it shows:\n{seen.decode('utf-8', 'replace')}"
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if ready:
            try:
                seen.extend(os.read(fd, 4096))
            except OSError:  # the other end closed
                break
    return seen.decode("utf-8", "replace")


def test_chat_keeps_the_turns_on_a_terminal_and_ends_on_ctrl_d(tmp_path: Path) -> None:
    _open(tmp_path / "index").close()
    controller, terminal = os.openpty()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "OMP_NUM_THREADS": "1"}
    chat = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evidence_loop.agent.doors.cli.app",
            "chat",
            "--index",
            str(tmp_path / "index"),
            "--no-evidence",
        ],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=env,
        close_fds=True,
    )
    os.close(terminal)
    seen = bytearray()
    try:
        _read_until(controller, "> ", seen)
        os.write(controller, "X300路由器支持哪些频段？\n".encode())
        _read_until(controller, "[answered] X300路由器支持哪些频段？", seen)
        os.write(controller, "它是哪一年推出的？\n".encode())
        shown = _read_until(controller, "read as: X300路由器是哪一年推出的？", seen)
        _read_until(controller, "2023", seen)
        os.write(controller, b"\x04")
        assert chat.wait(timeout=120) == 0, shown
    finally:
        if chat.poll() is None:
            chat.kill()
            chat.wait()
        os.close(controller)


def test_an_earlier_turn_given_as_text_lends_its_best_documents_to_a_statement(service: Service) -> None:
    outcome = service.ask(
        "We are moving abroad next month.", history=["How do I apply for retirement benefits?"]
    )
    step = _resolved_step(service, outcome.run_id)
    assert step.prior_docs == ["retirement-en"] and step.run_ids_read == []
    assert service.replay(outcome.run_id).identical
    pronoun = service.ask("它多重？", history=["X300路由器支持哪些频段？"])
    assert _resolved_step(service, pronoun.run_id).prior_docs == []
