"""The rule-based adjudicator: conservative conflicts, supersession only when a source settles it."""

from __future__ import annotations

from evidence_loop.policies.conflicts.adjudication import adjudicate_by_rules, conflict_outcome
from evidence_loop.policies.conflicts.candidates import find_candidates
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.policies.types import ConflictCandidate, ConflictVerdict, EvidenceView, ValueMention

QUESTION = "会员每月可以免费退货几次？"
OLD_RULE = "会员每月可免费退货3次，超出部分按次收取运费，详见退货规则。"
NEW_RULE = "会员每月可免费退货5次，超出部分按次收取运费，详见退货规则。"


def view(
    evidence_id: str, text: str, *, doc_id: str, version: str = "1", current: bool = True
) -> EvidenceView:
    return EvidenceView(evidence_id, doc_id, version, current, ("退货",), 0, len(text), text)


def mention(source: EvidenceView, value: str) -> ValueMention:
    """Where ``value`` stands in a window, its sentence being the whole window."""
    start = source.start + source.text.index(value)
    return ValueMention(
        evidence_id=source.evidence_id,
        doc_id=source.doc_id,
        version=source.version,
        value=value,
        norm=value,
        start=start,
        end=start + len(value),
        quote=value,
        context_start=source.start,
        context_end=source.end,
    )


def only_candidate(views: list[EvidenceView], question: str = QUESTION) -> ConflictCandidate:
    (candidate,) = find_candidates(analyse(question), views).candidates
    return candidate


def test_different_values_from_different_sources_are_a_conflict_quoting_both() -> None:
    views = [view("e1", OLD_RULE, doc_id="faq"), view("e2", NEW_RULE, doc_id="terms")]
    verdict = adjudicate_by_rules(only_candidate(views), views)
    assert (verdict.verdict, verdict.adjudicator, verdict.quotes) == ("conflict", "rules", ("3次", "5次"))


def test_the_current_version_of_one_document_supersedes_its_older_version() -> None:
    views = [
        view("e1", OLD_RULE, doc_id="returns", version="1", current=False),
        view("e2", NEW_RULE, doc_id="returns", version="2", current=True),
    ]
    candidate = ConflictCandidate("可免费退货 …", "count", mention(views[0], "3次"), mention(views[1], "5次"))
    verdict = adjudicate_by_rules(candidate, views)
    assert (verdict.verdict, verdict.superseded_by) == ("superseded", "e2")


def test_a_source_that_says_it_replaces_the_rule_supersedes_the_other() -> None:
    newer = "自2024年1月1日起，会员每月可免费退货次数调整为5次，超出部分按次收取运费。"
    older = "自2023年起，会员每月可免费退货次数为3次，超出部分按次收取运费。"
    views = [view("e1", older, doc_id="faq"), view("e2", newer, doc_id="notice")]
    candidate = ConflictCandidate(
        "免费退货次数 …",
        "count",
        left=mention(views[0], "3次"),
        right=mention(views[1], "5次"),
    )
    verdict = adjudicate_by_rules(candidate, views)
    assert (verdict.verdict, verdict.superseded_by) == ("superseded", "e2")


def test_english_replaces_wording_supersedes_too() -> None:
    older = "Standard delivery takes 5 business days."
    newer = "This policy replaces the March notice: standard delivery takes 3 business days."
    views = [view("e1", older, doc_id="faq"), view("e2", newer, doc_id="policy")]
    candidate = ConflictCandidate("takes …", "duration", mention(views[0], "5"), mention(views[1], "3"))
    assert adjudicate_by_rules(candidate, views).superseded_by == "e2"


def test_when_both_sources_claim_to_replace_the_rule_it_stays_a_conflict() -> None:
    first = "自2024年1月1日起，会员每月可免费退货次数调整为3次。"
    second = "自2024年2月1日起，会员每月可免费退货次数调整为5次。"
    views = [view("e1", first, doc_id="a"), view("e2", second, doc_id="b")]
    candidate = ConflictCandidate("调整为 …", "count", mention(views[0], "3次"), mention(views[1], "5次"))
    assert adjudicate_by_rules(candidate, views).verdict == "conflict"


def test_a_single_confirmed_conflict_decides_the_outcome() -> None:
    views = [view("e1", OLD_RULE, doc_id="faq"), view("e2", NEW_RULE, doc_id="terms")]
    candidate = only_candidate(views)
    compatible = ConflictVerdict(
        candidate, "compatible", "llm", "different member tiers", scope="member tier"
    )
    superseded = ConflictVerdict(candidate, "superseded", "rules", "v2 is current", superseded_by="e2")
    conflict = ConflictVerdict(candidate, "conflict", "rules", "different values")
    assert (conflict_outcome([]), conflict_outcome([compatible, superseded])) == (False, False)
    assert conflict_outcome([compatible, conflict]) is True
