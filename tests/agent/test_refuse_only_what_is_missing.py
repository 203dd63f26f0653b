"""Refuse only what is really missing (issue 31): the loop on a small help centre answers what customers
write informally, answers past a reference the answer does not need (and notes it), takes no everyday
token for a model number, and refuses a thing no document names by its name."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import ADDED_LATER, Policy
from evidence_loop.tools.types import DocumentInput

PAGES = [
    DocumentInput(
        "c100-zh",
        "# C100 使用手册\n\n## 充电\n\nC100 充满电约需2小时。充满电后可使用3个月。\n\n"
        "## 保修\n\nC100 整机保修1年。\n",
        title="C100 使用手册",
        format="markdown",
    ),
    DocumentInput(
        "two-step-en",
        "# Two-step verification\n\nTwo-step verification adds a 6-digit code from your phone when you sign "
        "in.\n\n## Turn it on\n\n1. Open Me > Account & security.\n2. Tap Two-step verification and follow "
        "the steps.\n",
        title="Two-step verification (2FA)",
        format="markdown",
    ),
    DocumentInput(
        "refunds-en",
        "# Refunds\n\nYou can ask for a refund within 45 days of purchase. The money is paid back within 5 "
        "business days. Accounts closed for abuse are governed by the Acceptable Use Policy.\n\n## Cameras"
        "\n\nThe cameras work with Google Home and Amazon Alexa.\n",
        title="Refunds",
        format="markdown",
    ),
]


@pytest.fixture(scope="module")
def lexical(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    index: Path = tmp_path_factory.mktemp("refuse") / "index"
    service = Service.open(index, create=True)
    service.ingest(PAGES)
    yield service
    service.close()


def ask(service: Service, question: str, policy: Policy | None = None) -> Outcome:
    return Controller(policy).ask(service.store.snapshot(), question, run_id="test")


INFORMAL = [
    "请问下 C100 冲电大概要多久的话",  # a filler, a typo (冲 for 充), another filler
    "我在商场买的C100，充满电能用多久？",  # context the answer does not depend on
    "How do I turn on 2FA?",  # an everyday token, no model number
]


@pytest.mark.parametrize("question", INFORMAL)
def test_a_question_written_the_way_customers_write_is_answered(lexical: Service, question: str) -> None:
    outcome = ask(lexical, question)
    assert (outcome.status, outcome.missing) == ("answered", [])


def test_a_reference_the_answer_does_not_need_is_noted_beside_the_answer(lexical: Service) -> None:
    outcome = ask(lexical, "How long do I have to ask for a refund?")
    assert outcome.status == "answered"
    assert outcome.answer is not None and "45 days" in outcome.answer.text
    assert [(n.kind, n.value) for n in outcome.notes] == [("unresolved_reference", "Acceptable Use Policy")]


def test_a_name_no_document_names_is_refused_by_its_name(lexical: Service) -> None:
    outcome = ask(lexical, "Do the cameras work with IFTTT?")
    assert outcome.status == "insufficient_evidence"
    assert [(m.kind, m.value) for m in outcome.missing] == [("uncovered_slot", "IFTTT")]


def test_under_a_policy_recorded_before_the_rules_the_runs_are_as_they_were(lexical: Service) -> None:
    later = (
        "identifier_slots",
        "informative_terms",
        "context_weight",
        "absent_things",
        "refuse_absent_names",
        "deferring_references",
        "value_signal",
    )
    recorded = Policy.from_dict({k: v for k, v in asdict(Policy()).items() if k not in later})
    assert all(ADDED_LATER[k] in (False, 1.0) for k in later)

    outcomes = [ask(lexical, q, recorded) for q in (*INFORMAL, "How long do I have to ask for a refund?")]

    assert all(o.status == "insufficient_evidence" and not o.notes for o in outcomes)
