"""A plain conflict between two articles stops the run with both values cited and words for the user;
values for different things are set aside, and the trace records what was set aside and why; an LLM
adjudicates the candidates when one is configured; a policy recorded before the rules runs as it did."""

from __future__ import annotations

from pathlib import Path

from evidence_loop.agent.loop.conflict_check import ConflictChecker
from evidence_loop.agent.loop.llm_adjudicator import LLMAdjudicator
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import Policy
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import DocumentInput
from evidence_loop.traces import TraceStore
from evidence_loop.traces.records.steps import ConflictScanStep
from tests.llm_support import Script, answer, config, read

RETENTION = DocumentInput(
    "data-retention",
    "# Data retention\n\n## After you cancel\n\nWhen you cancel your subscription, we keep your workspace "
    "data for 90 days after cancellation. During this time you can reactivate and get everything back.\n",
    format="markdown",
)
CANCEL = DocumentInput(
    "cancel-subscription",
    "# Cancel your subscription\n\nYou can cancel at any time from Settings > Billing.\n\nYour workspace "
    "data is kept for 30 days after cancellation, then deleted for good.\n",
    format="markdown",
)
BAOLIU = DocumentInput(
    "shuju-baoliu",
    "# 数据保留\n\n取消订阅后，您的工作区数据将保留90天，期间可随时恢复。\n",
    format="markdown",
)
QUXIAO = DocumentInput(
    "quxiao-dingyue",
    "# 取消订阅\n\n取消订阅后，您的工作区数据将保留30天，之后永久删除。\n",
    format="markdown",
)
STARTER = DocumentInput(
    "starter-plan",
    "# The Starter plan\n\nOn the Starter plan your workspace data is kept for 30 days after cancellation.\n",
    format="markdown",
)
BUSINESS = DocumentInput(
    "business-plan",
    "# The Business plan\n\nOn the Business plan your workspace data is kept for 90 days after "
    "cancellation.\n",
    format="markdown",
)
QUESTION = "How long is my workspace data kept after cancellation?"


def service_over(tmp_path: Path, docs: list[DocumentInput], **options: object) -> Service:
    store = Store.open(tmp_path / "index", create=True)
    store.ingest(docs)
    return Service(store, traces=TraceStore(tmp_path / "traces"), **options)  # type: ignore[arg-type]


def test_two_articles_giving_different_retention_periods_stop_with_both_cited(tmp_path: Path) -> None:
    outcome = service_over(tmp_path, [RETENTION, CANCEL]).ask(QUESTION)

    assert outcome.status == "conflicting_evidence"
    (conflict,) = [c for c in outcome.conflicts if c.verdict == "conflict"]
    assert {side.value for side in conflict.values} == {"90 days", "30 days"}
    assert {side.citation.doc_id for side in conflict.values} == {"data-retention", "cancel-subscription"}
    assert conflict.message is not None and "90 days" in conflict.message and "30 days" in conflict.message


def test_a_chinese_conflict_tells_the_user_in_chinese(tmp_path: Path) -> None:
    outcome = service_over(tmp_path, [BAOLIU, QUXIAO]).ask("取消订阅后数据保留多久？")

    assert outcome.status == "conflicting_evidence"
    assert outcome.user_message() == (
        "帮助文档的说法不一致：一处写的是“90天”，另一处写的是“30天”。请联系客服确认。"
    )


def test_values_for_two_plans_are_answered_and_the_trace_says_why_they_are_no_conflict(
    tmp_path: Path,
) -> None:
    service = service_over(tmp_path, [STARTER, BUSINESS])
    outcome = service.ask(QUESTION)

    assert outcome.status == "answered"
    scans = [e.data for e in service.trace(outcome.run_id).events if isinstance(e.data, ConflictScanStep)]
    assert [d["dropped"] for scan in scans for d in scan.dropped] == [
        "the values are for different plans: 'business' / 'starter'"
    ]


def test_a_run_that_set_candidates_aside_replays_identical(tmp_path: Path) -> None:
    service = service_over(tmp_path, [STARTER, BUSINESS])
    outcome = service.ask(QUESTION)

    assert service.replay(outcome.run_id).identical


def test_with_an_llm_configured_it_adjudicates_the_candidate(tmp_path: Path) -> None:
    verdict = {
        "verdicts": [
            {
                "candidate": 0,
                "verdict": "compatible",
                "reason": "the 90 days are the reactivation window of the retention policy",
                "scope": None,
                "superseded_by": None,
                "quotes": [{"evidence_id": "e1", "text": "30 days after cancellation"}],
            }
        ]
    }
    script = Script([read("e1", "e2"), answer(verdict)])
    checker = ConflictChecker(LLMAdjudicator(script.model(), config()))

    outcome = service_over(tmp_path, [RETENTION, CANCEL], conflict_check=checker).ask(QUESTION)

    assert outcome.status == "answered"
    assert [(c.verdict, c.adjudicator) for c in outcome.conflicts] == [("compatible", "llm")]
    assert outcome.signals.llm_calls >= 1


def test_a_policy_recorded_before_the_rules_answers_with_both_values_as_it_did(tmp_path: Path) -> None:
    old = Policy.from_dict({k: v for k, v in Policy().as_dict().items() if k not in _LATER})

    outcome = service_over(tmp_path, [RETENTION, CANCEL], policy=old).ask(QUESTION)

    assert outcome.status == "answered" and outcome.conflicts == []


_LATER = {"attribute_values", "conflict_scopes"}
