"""The loop writes its steps through the same types the reader reads: every step of every demo
question, in every mode, reads back from the trace file as the step that was written."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from evidence_loop.agent.commands.demo import DEMO_QUESTIONS
from evidence_loop.agent.controller import Controller
from evidence_loop.agent.runtime import Deps
from evidence_loop.agent.tracing import ListRecorder, TraceRecorder, header
from evidence_loop.policies.config import Policy
from evidence_loop.tools.snapshot import Snapshot
from evidence_loop.traces import TraceStep, TraceWriter, parse_trace


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
