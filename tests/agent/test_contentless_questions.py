"""A question that names nothing ("?", "the", "请问？") is refused with what to ask, never answered with
whatever passage recall happened to find (sample help centre, hybrid recall and the judge)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import ADDED_LATER, Policy
from tests.fake_embedder import FakeEmbedder

CONTENTLESS = [
    "?",
    "the",
    "a",
    "???",
    "what?",
    "How long?",
    "hi",
    "请问？",
    "什么？",
    "为什么",
    "你好",
    "？？",
]


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory: pytest.TempPathFactory, measured_sample: Path) -> Iterator[Service]:
    """Dense recall finds a nearest passage for any text at all, and the judge weighs it."""
    index = shutil.copytree(measured_sample, tmp_path_factory.mktemp("hybrid") / "index")
    service = Service.open(index, embedder=FakeEmbedder())  # the sample, ingested with FakeEmbedder()
    yield service
    service.close()


def ask(service: Service, question: str, policy: Policy | None = None) -> Outcome:
    controller = Controller(policy, embedder=service.embedder)
    return controller.ask(service.store.snapshot(), question, run_id="test", scale=service.store.scale())


@pytest.mark.parametrize("question", CONTENTLESS)
def test_a_question_with_no_content_is_refused_with_what_to_ask(hybrid: Service, question: str) -> None:
    outcome = ask(hybrid, question)

    assert outcome.status == "insufficient_evidence"
    assert outcome.answer is None
    assert [m.kind for m in outcome.missing] == ["no_question_content"]
    assert "ask about" in outcome.missing[0].detail and "请写明" in outcome.missing[0].detail


@pytest.mark.parametrize("question", ["LM-S10 保修多久？", "refund?", "How do I reschedule a class?"])
def test_a_question_naming_something_is_not_taken_for_one_with_no_content(
    hybrid: Service, question: str
) -> None:
    outcome = ask(hybrid, question)

    assert "no_question_content" not in [m.kind for m in outcome.missing]


def test_under_a_policy_recorded_before_the_rule_the_runs_are_as_they_were(hybrid: Service) -> None:
    recorded = Policy.from_dict({k: v for k, v in asdict(Policy()).items() if k != "refuse_contentless"})
    assert ADDED_LATER["refuse_contentless"] is False

    outcomes = [ask(hybrid, question, recorded) for question in CONTENTLESS]

    assert all("no_question_content" not in [m.kind for m in o.missing] for o in outcomes)
    assert any(o.status == "answered" for o in outcomes)  # what the rule is for
