"""A run keeps the judge it was recorded under: a trace made under the judge shipped before issue 31's
refit (no other_scope signal, answer rate 0.97) replays identical under today's code, with that judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import Policy
from evidence_loop.policies.judge_model import DEFAULT_JUDGE, JudgeModel
from tests.fake_embedder import FakeEmbedder

PREVIOUS = Path(__file__).parents[1] / "policies" / "judge_before_scope.json"
QUESTIONS = ["LM-S10 整机保修多久？", "员工买设备打几折", "What is the refund policy for tablets?"]


def _previous_policy() -> Policy:
    """The shipped policy as a run before the refit recorded it."""
    record = {k: v for k, v in Policy().as_dict().items() if k not in ("scope_signal", "name_refusals")}
    judge = json.loads(PREVIOUS.read_text(encoding="utf-8"))["judge"]
    return Policy.from_dict({**record, "judge": judge, "answer_rate": 0.97})


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    index = tmp_path_factory.mktemp("judges") / "index"
    with Service.open(index, create=True, embedder=FakeEmbedder(), policy=_previous_policy()) as service:
        service.ingest(load_sample_kb())
        return index, [service.ask(q).run_id for q in QUESTIONS]


def test_the_previous_judge_is_another_model_than_the_shipped_one() -> None:
    assert _previous_policy().judge != DEFAULT_JUDGE
    assert "other_scope" in DEFAULT_JUDGE.features


@pytest.mark.parametrize("n", range(len(QUESTIONS)))
def test_a_run_recorded_under_the_previous_judge_replays_identical_with_it(
    recorded: tuple[Path, list[str]], n: int
) -> None:
    index, run_ids = recorded
    with Service.open(index, embedder=FakeEmbedder()) as today:
        trace = today.trace(run_ids[n])
        report = today.replay(run_ids[n])
    assert JudgeModel.from_dict(trace.named("policy")["judge"]) == _previous_policy().judge
    assert trace.named("policy")["scope_signal"] is False
    assert report.identical, report.describe()
