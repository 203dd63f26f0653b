"""A follow-up naming another thing of a kind is answered with the earlier question's attribute for
that thing: "and the Starter one?" after "How much is the Enterprise plan per month?" gets the
Starter plan's monthly price, not a password-reset sentence."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent.service import Service
from evidence_loop.policies.config import Policy
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import DocumentInput
from evidence_loop.traces import TraceStore

PLANS = DocumentInput(
    "plans",
    "# Plans and prices\n\nEvery plan is billed monthly.\n\n"
    "| Plan | Price per month | Users |\n|---|---|---|\n| Starter | $9 | 3 |\n"
    "| Business | $29 | 25 |\n| Enterprise | $99 | unlimited |\n",
    format="markdown",
)
RESET = DocumentInput(
    "reset-password",
    "# Reset your password\n\n1. Click Forgot password on the sign-in page.\n"
    "2. Open the reset link in the email. The link expires after 60 minutes.\n",
    format="markdown",
)
EARLIER = "How much is the Enterprise plan per month?"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    store = Store.open(tmp_path / "index", create=True)
    store.ingest([PLANS, RESET])
    service = Service(store, traces=TraceStore(tmp_path / "traces"))
    yield service
    service.close()


def test_and_the_starter_one_is_answered_with_the_starter_plans_monthly_price(service: Service) -> None:
    outcome = service.ask("and the Starter one?", history=[EARLIER])

    assert outcome.resolved_question == "How much is the Starter plan per month?"
    assert outcome.answer is not None and "$9" in outcome.answer.text
    assert "reset" not in outcome.answer.text.lower()


def test_the_trace_records_the_attribute_carried_and_replays_identical(service: Service) -> None:
    outcome = service.ask("and the Starter one?", history=[EARLIER])
    resolved = next(e.data for e in service.trace(outcome.run_id).events if e.step == "resolved")

    assert [(c["kind"], c["text"]) for c in resolved.carried] == [
        ("attribute", "How much is the plan per month?")
    ]
    assert service.replay(outcome.run_id).identical


def test_a_policy_recorded_before_the_rule_resolves_as_it_did(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "index", create=True)
    store.ingest([PLANS, RESET])
    old = Service(store, policy=Policy(followup_kinds=False))

    assert (
        old.ask("and the Starter one?", history=[EARLIER]).resolved_question == "Enterprise plan Starter one"
    )
    old.close()
