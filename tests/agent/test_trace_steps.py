"""The loop writes its steps through the same types the reader reads: every step of every demo
question, in every mode, reads back from the trace file as the step that was written."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from evidence_loop.agent.doors.commands.demo import DEMO_QUESTIONS
from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.loop.runtime import Deps, PlainRecorder
from evidence_loop.agent.loop.tracing import ListRecorder, TraceRecorder, header
from evidence_loop.policies.config import Policy
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.traces import TraceStep, TraceWriter, parse_trace
from evidence_loop.traces.records.steps import AnyStep, Made


class Both:
    """Writes each step to a trace and keeps it as written."""

    def __init__(self, writer: TraceWriter) -> None:
        self.file, self.kept = TraceRecorder(writer), ListRecorder()

    def record(self, step: TraceStep) -> None:
        self.file.record(step)
        self.kept.record(step)


@pytest.mark.parametrize("mode", ["seed", "window", "parent", "adaptive"])
def test_every_step_of_every_demo_question_reads_back_as_it_was_written(
    sample_snapshot: Snapshot, mode: str
) -> None:
    policy = Policy(mode=mode, window_budget=300)  # a tight budget makes windows slide
    controller = Controller(policy, deps=Deps(new_run_id=lambda: "r"))
    for question, groups in DEMO_QUESTIONS:
        file = io.BytesIO()
        head = header("r", question, groups, sample_snapshot, policy, controller.deps)
        with TraceWriter(file, Path("r.jsonl"), head) as writer:
            both = Both(writer)
            controller.ask(sample_snapshot, question, groups, recorder=both)
            content = file.getvalue()
        steps = [e.data for e in parse_trace(content).events]
        assert steps == both.kept.steps, question
        assert steps[0].step == "recalled" and steps[-1].step == "decided"


class Plain(PlainRecorder):
    """Takes the steps as the loop makes them for the trace writer: writes each, keeps it as made."""

    def __init__(self, writer: TraceWriter) -> None:
        self.file, self.made = TraceRecorder(writer), list[AnyStep]()

    def record(self, step: AnyStep) -> None:
        self.file.record(step)
        self.made.append(step)


@pytest.mark.parametrize("mode", ["window", "adaptive"])
def test_steps_made_as_plain_data_hold_what_their_typed_steps_hold_and_read_back_as_them(
    sample_snapshot: Snapshot, mode: str
) -> None:
    policy = Policy(mode=mode, window_budget=300)
    controller = Controller(policy, deps=Deps(new_run_id=lambda: "r"))
    for question, groups in DEMO_QUESTIONS:
        file = io.BytesIO()
        head = header("r", question, groups, sample_snapshot, policy, controller.deps)
        with TraceWriter(file, Path("r.jsonl"), head) as writer:
            plain = Plain(writer)
            controller.ask(sample_snapshot, question, groups, recorder=plain)
            content = file.getvalue()
        made = [step for step in plain.made if isinstance(step, Made)]
        assert {step.step for step in made} >= {"recalled", "checked", "decided"}, question
        assert all(step.data == step.typed().trace_data() for step in made), question
        typed = [step.typed() if isinstance(step, Made) else step for step in plain.made]
        assert [e.data for e in parse_trace(content).events] == typed, question
