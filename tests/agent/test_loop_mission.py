"""The mission's own cases on the bundled sample knowledge base, in Chinese and English."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.outcome import Outcome
from evidence_loop.policies.config import Policy
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.folder import Store

RESCHEDULE_ZH = "我的常规班已经开课了，还能免费改期一次吗？"
SCOPE_ZH = "本节规定仅适用于尚未开课的常规班报名。"
RULE_ZH = "学员可免费改期一次"
REFERENCE_ZH = "在读学员改期规则"


def _snapshot(tmp: Path, include_optional: bool) -> Iterator[Snapshot]:
    store = Store.open(tmp / "index", create=True)
    store.ingest(load_sample_kb(include_optional=include_optional))
    yield store.snapshot()
    store.close()


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Snapshot]:
    yield from _snapshot(tmp_path_factory.mktemp("full"), include_optional=True)


@pytest.fixture(scope="module")
def without_rule(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Snapshot]:
    yield from _snapshot(tmp_path_factory.mktemp("partial"), include_optional=False)


def _texts(outcome: Outcome) -> str:
    return "\n".join(e.text for e in outcome.evidence)


def _ask(snapshot: Snapshot, question: str) -> Outcome:
    return Controller().ask(snapshot, question, run_id="test")


def test_reschedule_evidence_holds_the_scope_before_and_the_reference_after(without_rule: Snapshot) -> None:
    outcome = _ask(without_rule, RESCHEDULE_ZH)
    course = [e for e in outcome.evidence if e.doc_id == "course-policy-zh"]
    assert course, outcome
    text = course[0].text
    assert SCOPE_ZH in text and RULE_ZH in text and REFERENCE_ZH in text
    assert text.index(SCOPE_ZH) < text.index(RULE_ZH) < text.index(REFERENCE_ZH)


def test_reschedule_without_the_enrolled_rule_is_refused_naming_it(without_rule: Snapshot) -> None:
    outcome = _ask(without_rule, RESCHEDULE_ZH)
    assert outcome.status == "insufficient_evidence"
    refs = [m for m in outcome.missing if m.kind == "unresolved_reference"]
    assert refs and REFERENCE_ZH in (refs[0].value or "")


def test_reschedule_with_the_enrolled_rule_is_answered_with_the_scope_and_the_enrolled_rule(
    full: Snapshot,
) -> None:
    """The free reschedule is quoted only with the scope that limits it to classes not yet started,
    and the answer leads to the enrolled students' rule (quoting it, or the sentence that sends there)."""
    outcome = _ask(full, RESCHEDULE_ZH)
    assert outcome.status == "answered", outcome.missing
    assert outcome.answer is not None
    cited = {c.doc_id for c in outcome.answer.citations}
    assert "course-policy-zh" in cited
    assert RULE_ZH not in outcome.answer.text or SCOPE_ZH in outcome.answer.text
    assert "enrolled-reschedule-zh" in cited or REFERENCE_ZH in outcome.answer.text


def test_the_wider_retrieval_finds_the_referenced_rule_the_seed_missed(full: Snapshot) -> None:
    outcome = Controller(Policy(seed_k=1)).ask(full, RESCHEDULE_ZH, run_id="test")
    assert outcome.signals.recalls == 2
    assert outcome.status == "answered", outcome.missing
    assert {e.doc_id for e in outcome.evidence} >= {"course-policy-zh", "enrolled-reschedule-zh"}


def test_warranty_question_in_chinese_cites_three_years(full: Snapshot) -> None:
    outcome = _ask(full, "LM-S10 的整机保修期是多久？")
    assert outcome.status == "answered", outcome.missing
    assert outcome.answer is not None
    assert any("3年" in c.quote and "LM-S10" in c.quote for c in outcome.answer.citations)


def test_warranty_question_in_english_cites_three_years(full: Snapshot) -> None:
    outcome = _ask(full, "How long is the whole-unit warranty for the LM-S10?")
    assert outcome.status == "answered", outcome.missing
    assert outcome.answer is not None
    assert any("3 years" in c.quote for c in outcome.answer.citations)


def test_a_model_the_corpus_does_not_cover_is_refused_naming_it(full: Snapshot) -> None:
    outcome = _ask(full, "LM-Z900 的整机保修期是多久？")
    assert outcome.status == "insufficient_evidence"
    assert any(m.kind == "uncovered_slot" and m.value == "LM-Z900" for m in outcome.missing)


def test_a_table_row_answer_carries_its_header(full: Snapshot) -> None:
    outcome = _ask(full, "LM-S10 的整机保修期是多久？")
    warranty = [e for e in outcome.evidence if e.doc_id == "warranty-zh"]
    assert any("| 型号 | 整机保修 |" in e.text for e in warranty)
    assert any("LM-S10" in e.text for e in warranty)


def test_a_list_item_answer_carries_its_intro(full: Snapshot) -> None:
    outcome = _ask(full, "私自拆机的设备还能免费保修吗？")
    warranty = _texts(outcome)
    assert "私自拆机" in warranty
    assert "以下情况不在免费保修范围内" in warranty


def test_evidence_never_crosses_a_document_or_version_boundary(full: Snapshot) -> None:
    for question in (RESCHEDULE_ZH, "免费配送的门槛是多少？", "How do I return a device?"):
        for e in _ask(full, question).evidence:
            text = full.parsed(e.doc_id, e.version).text
            assert text[e.start : e.end] == e.text


def test_the_current_version_of_a_document_is_the_one_recalled(full: Snapshot) -> None:
    outcome = _ask(full, "满多少元可以免费配送？")
    assert all(e.version == "2" for e in outcome.evidence if e.doc_id == "shipping-zh")


def test_the_loop_is_deterministic(full: Snapshot) -> None:
    first = _ask(full, RESCHEDULE_ZH).model_dump(exclude={"latency_ms"})
    second = _ask(full, RESCHEDULE_ZH).model_dump(exclude={"latency_ms"})
    assert first == second


def test_a_restricted_document_is_never_evidence_for_the_public(full: Snapshot) -> None:
    outcome = _ask(full, "员工内部购机优惠是多少？")
    assert all(e.doc_id != "staff-discount-zh" for e in outcome.evidence)


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("What is the waranty period?", "What is the warranty period?"),
        ("How do I retrun a device?", "How do I return a device?"),
        ("Is the battery coverd by the waranty?", "Is the battery covered by the warranty?"),
    ],
)
def test_a_misspelled_english_question_is_read_as_the_words_meant(
    full: Snapshot, typo: str, meant: str
) -> None:
    read, right = _ask(full, typo), _ask(full, meant)
    assert read.status == right.status == "answered"
    assert [(e.doc_id, e.start, e.end) for e in read.evidence] == [
        (e.doc_id, e.start, e.end) for e in right.evidence
    ]
