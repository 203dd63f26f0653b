"""Comparisons on the sample help centre, in Chinese and English: two plans compared are both cited and
their evidence is grouped by document; a plan without a page is refused, named as the missing side;
the side the first recall missed is searched for; the trace records the sides and replays identical."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.loop.render import render_outcome
from evidence_loop.agent.loop.runtime import Deps
from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import Policy
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces.records.steps import CheckedStep, DecidedStep
from tests.fake_embedder import FakeEmbedder

PLANS_EN = ("care-essential-en", "care-premium-en")
PLANS_ZH = ("member-basic-zh", "member-premium-zh")
BOTH = [
    ("What is the difference between the Essential and the Premium plan?", PLANS_EN),
    ("Lumen Care Essential vs Premium: which one covers accidental damage?", PLANS_EN),
    ("基础会员和尊享会员有什么区别？", PLANS_ZH),
    ("对比一下基础会员和尊享会员的价格", PLANS_ZH),
]
# (question, the plan with no page, the plan with one)
ONE_MISSING = [
    ("What is the difference between the Essential plan and the Family plan?", "Family plan", PLANS_EN[0]),
    ("基础会员和企业会员有什么区别？", "企业会员", PLANS_ZH[0]),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    store = Store.open(tmp_path_factory.mktemp("plans") / "index", create=True)
    store.ingest(load_sample_kb())
    yield store
    store.close()


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory: pytest.TempPathFactory, measured_sample: Path) -> Iterator[Service]:
    """The sample help centre with unit vectors and the judge sitting (the shipped loop's shape)."""
    root = tmp_path_factory.mktemp("plans-hybrid")
    index = shutil.copytree(measured_sample, root / "index")  # ingested with FakeEmbedder()
    service = Service.open(index, embedder=FakeEmbedder(), traces=root / "traces")
    yield service
    service.close()


def _ask(snapshot: Snapshot, question: str, policy: Policy | None = None) -> Outcome:
    return Controller(policy).ask(snapshot, question, run_id="test")


def _exact(outcome: Outcome, store: Store) -> None:
    """Every evidence text and quote is its document version's text at its offsets."""
    snapshot = store.snapshot()
    for e in outcome.evidence:
        assert snapshot.parsed(e.doc_id, e.version).text[e.start : e.end] == e.text
    for c in outcome.answer.citations if outcome.answer else []:
        assert snapshot.parsed(c.doc_id, c.version).text[c.start : c.end] == c.quote


@pytest.mark.parametrize(("question", "plans"), BOTH)
def test_a_comparison_of_two_plans_cites_both(store: Store, question: str, plans: tuple[str, str]) -> None:
    outcome = _ask(store.snapshot(), question)
    assert outcome.status == "answered", outcome.missing
    assert outcome.answer is not None
    assert set(plans) <= {c.doc_id for c in outcome.answer.citations}
    _exact(outcome, store)
    # the evidence, grouped by document: each plan's page speaks for its own side
    groups = {d.doc_id: d for d in outcome.documents}
    assert set(plans) <= set(groups)
    assert [len(groups[p].sides) for p in plans] == [1, 1] and groups[plans[0]].sides != groups[
        plans[1]
    ].sides
    assert sorted(i for d in outcome.documents for i in d.evidence_ids) == sorted(
        e.evidence_id for e in outcome.evidence
    )


@pytest.mark.parametrize(("question", "missing", "found"), ONE_MISSING)
def test_a_comparison_where_one_plan_has_no_page_is_refused_naming_it(
    store: Store, hybrid: Service, question: str, missing: str, found: str
) -> None:
    for outcome in (_ask(store.snapshot(), question), hybrid.ask(question)):
        assert outcome.status == "insufficient_evidence"
        assert outcome.answer is None
        sides = [m for m in outcome.missing if m.kind == "uncovered_slot" and m.value == missing]
        assert sides and missing in sides[0].detail
        # what was found is kept and said to be the other side's, not passed off as the whole answer
        assert any(d.doc_id == found and d.sides for d in outcome.documents)
        assert outcome.signals.recalls == 2  # the missing side was searched for


def test_without_the_rule_the_judge_answers_from_one_plan(hybrid: Service) -> None:
    question = ONE_MISSING[0][0]
    snapshot, scale = hybrid.store.snapshot(), hybrid.store.scale()
    embedder = FakeEmbedder()
    off = Controller(Policy(compare_sides=False), embedder=embedder).ask(snapshot, question, scale=scale)
    assert off.status == "answered"  # the rule is what refuses the half answer


def test_the_side_the_first_recall_missed_is_searched_for(store: Store) -> None:
    outcome = _ask(store.snapshot(), BOTH[0][0], Policy(seed_k=1))
    assert outcome.signals.recalls == 2
    assert outcome.status == "answered", outcome.missing
    assert outcome.answer is not None
    assert set(PLANS_EN) <= {c.doc_id for c in outcome.answer.citations}


def test_the_trace_records_the_sides_and_replays_identical(hybrid: Service) -> None:
    deps = Deps(new_run_id=lambda: "compare-run")
    service = Service(hybrid.store, traces=hybrid.traces, deps=deps, embedder=hybrid.embedder)
    outcome = service.ask(ONE_MISSING[1][0])
    trace = hybrid.traces.read(outcome.run_id)
    checks = [e.data for e in trace.events if isinstance(e.data, CheckedStep)]
    assert checks[-1].sides == [{"name": "基础会员", "covered": True}, {"name": "企业会员", "covered": False}]
    decided = next(e.data for e in trace.events if isinstance(e.data, DecidedStep))
    assert "documents" not in decided.outcome  # a view of the evidence, not recorded
    assert service.replay(outcome.run_id).identical


def test_a_question_that_compares_nothing_records_no_sides(hybrid: Service) -> None:
    outcome = hybrid.ask("How long is the whole-unit warranty for the LM-S10?")
    trace = hybrid.traces.read(outcome.run_id)
    assert all(e.data.sides is None for e in trace.events if isinstance(e.data, CheckedStep))
    assert [d.doc_id for d in outcome.documents] == list(dict.fromkeys(e.doc_id for e in outcome.evidence))


def test_the_cli_lists_the_evidence_under_its_documents(store: Store) -> None:
    outcome = _ask(store.snapshot(), BOTH[2][0])
    text = render_outcome(outcome)
    lines = text.splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("  document ")]
    assert len(headers) == len(outcome.documents) >= 2
    assert "(for: 基础会员)" in lines[headers[0]] or "(for: 基础会员)" in lines[headers[1]]
    assert lines[headers[0] + 1].startswith("  evidence ")


def test_an_outcome_written_before_the_grouping_still_reads(store: Store) -> None:
    outcome = _ask(store.snapshot(), BOTH[0][0])
    old = outcome.model_dump(mode="json", exclude={"documents"})
    assert Outcome.model_validate(old).documents == []
