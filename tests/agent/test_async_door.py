"""`Service.aask`: the loop of `ask` awaited from asyncio, a bounded number at a time, its LLM conflict
check awaited on the caller's event loop, with the same outcomes and traces as `ask`."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.loop.async_door import AsyncDoor
from evidence_loop.agent.loop.conflict_check import ConflictChecker
from evidence_loop.agent.loop.llm_adjudicator import LLMAdjudicator
from evidence_loop.agent.loop.runtime import Deps
from evidence_loop.agent.service import Service
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import TraceStore
from tests.llm_support import REFUND_DOCS, REFUND_QUESTION, Script, answer, config, read, refund_verdict

ANSWERED = ("LM-S10 整机保修多久？", "How long is the LM-X200 warranty?")
REFUSED = ("LM-Z900 的整机保修期是多久？", "How long is the LM-Q77 warranty?")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    index = tmp_path_factory.mktemp("aask") / "index"
    with Service.open(index, create=True) as service:
        service.ingest(load_sample_kb())
    return index


@pytest.fixture(scope="module")
def sample(folder: Path) -> Iterator[Service]:
    with Service.open(folder) as service:
        yield service


def test_twenty_gathered_questions_each_get_their_own_outcome(sample: Service) -> None:
    questions = [q for _ in range(5) for q in (*ANSWERED, *REFUSED)]

    async def gathered() -> list[tuple[str, str, str]]:
        outcomes = await asyncio.gather(*(sample.aask(q) for q in questions))
        return [(o.question, o.status, o.run_id) for o in outcomes]

    seen = asyncio.run(gathered())
    assert [question for question, _, _ in seen] == questions
    expected = ["answered" if q in ANSWERED else "insufficient_evidence" for q in questions]
    assert [status for _, status, _ in seen] == expected
    assert len({run_id for _, _, run_id in seen}) == len(questions)


def test_aask_gives_the_outcome_ask_gives_and_its_run_replays_identical(sample: Service) -> None:
    for question in (*ANSWERED, *REFUSED):
        awaited = asyncio.run(sample.aask(question))
        direct = sample.ask(question)
        left = awaited.model_dump(exclude={"run_id", "latency_ms", "trace"})
        assert left == direct.model_dump(exclude={"run_id", "latency_ms", "trace"})
        assert sample.replay(awaited.run_id).identical


def test_no_more_than_the_running_bound_run_at_once() -> None:
    door = AsyncDoor(running=2)
    inside, most = 0, 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal inside, most
        with lock:
            inside += 1
            most = max(most, inside)
        time.sleep(0.05)
        with lock:
            inside -= 1

    async def many() -> None:
        await asyncio.gather(*(door.run(work) for _ in range(8)))

    try:
        asyncio.run(many())
    finally:
        door.close()
    assert most == 2


def test_the_event_loop_keeps_serving_while_a_question_runs(sample: Service) -> None:
    async def ticks_during_a_question() -> int:
        ticks = 0
        stop = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        await sample.aask(ANSWERED[0])
        stop.set()
        await task
        return ticks

    assert asyncio.run(ticks_during_a_question()) > 1


def test_the_llm_conflict_check_is_awaited_on_the_callers_event_loop(tmp_path: Path) -> None:
    threads: list[str] = []
    script = Script([read("e1", "e2"), answer(refund_verdict())])
    model = script.model()
    inner = model.function
    assert inner is not None

    async def turn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        threads.append(threading.current_thread().name)
        return inner(messages, info)  # type: ignore[return-value]

    model.function = turn
    store = Store.open(tmp_path / "index", create=True)
    store.ingest(REFUND_DOCS)
    check = ConflictChecker(LLMAdjudicator(model, config()))
    with Service(store, traces=TraceStore(tmp_path / "traces"), conflict_check=check) as service:
        outcome = asyncio.run(service.aask(REFUND_QUESTION))
        assert outcome.status == "conflicting_evidence" and outcome.conflicts[0].adjudicator == "llm"
        assert threads == [threading.main_thread().name] * 2  # the loop ran in a worker, the model here
        replayed = service.replay(outcome.run_id)
        # replay's run_sync leaves its event loop open in this thread: closed here, not dropped by the
        # next asyncio.run
        asyncio.get_event_loop_policy().get_event_loop().close()
        assert replayed.identical, replayed.describe()


def test_a_caller_that_stops_waiting_leaves_the_run_to_finish_with_its_trace(
    folder: Path, tmp_path: Path
) -> None:
    service = Service(Store.open(folder), traces=TraceStore(tmp_path), deps=Deps(new_run_id=lambda: "gone"))

    async def give_up() -> None:
        task = asyncio.create_task(service.aask(REFUSED[0]))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(give_up())
    service.close()  # waits for the question in flight
    traces = TraceStore(tmp_path)
    try:
        assert traces.read("gone").complete
    finally:
        traces.close()
