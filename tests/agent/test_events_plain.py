"""The loop's trace data is plain JSON with string keys: the trace writer encodes it once on that word."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

from agent.commands.demo import DEMO_QUESTIONS
from agent.controller import Controller
from policies.config import Policy
from tools.snapshot import Snapshot


def _not_plain(value: object, path: str) -> Iterator[str]:
    """Paths of values a JSON round trip would change: non-string keys, tuples, sets, objects."""
    if value is None or isinstance(value, str | bool | int | float):
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield from _not_plain(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                yield f"{path} key {key!r}"
            yield from _not_plain(item, f"{path}.{key}")
    else:
        yield f"{path} is a {type(value).__name__}"


class CheckingRecorder:
    def __init__(self) -> None:
        self.problems: list[str] = []
        self.steps: list[str] = []

    def record(self, step: str, data: Mapping[str, object]) -> None:
        self.steps.append(step)
        self.problems.extend(_not_plain(dict(data), step))


@pytest.mark.parametrize("mode", ["seed", "window", "parent", "adaptive"])
def test_every_step_of_every_demo_question_is_plain_json(sample_snapshot: Snapshot, mode: str) -> None:
    controller = Controller(Policy(mode=mode, window_budget=300))  # a tight budget makes windows slide
    for question, groups in DEMO_QUESTIONS:
        recorder = CheckingRecorder()
        controller.ask(sample_snapshot, question, groups, recorder=recorder)
        assert recorder.problems == [], question
        assert recorder.steps[0] == "recalled" and recorder.steps[-1] == "decided"
