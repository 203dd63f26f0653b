"""Comparisons: the sides a question names, which evidence speaks for each, and what the loop does
when one has none (pinned, searched for, named as missing, quoted in the answer)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.decision.answer import answer_units
from evidence_loop.policies.decision.missing import missing_pieces, should_widen, widened_query
from evidence_loop.policies.evidence.checked import Checked, WindowCheck
from evidence_loop.policies.evidence.comparison import covers, side_query, uncovered_sides
from evidence_loop.policies.evidence.selection import select_evidence
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.policies.question.sides import comparison_sides
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocumentInput, Hit, ParsedDocument
from evidence_loop.tools.windows import Window

SIDES = [
    # English: "difference between", "compare", "vs", "differ from", "which ..., A or B", lists
    ("What is the difference between the Standard and the Premium plan?", ["Standard", "Premium plan"]),
    ("What's the difference between Wi-Fi Direct, Bluetooth and NFC?", ["Wi-Fi Direct", "Bluetooth", "NFC"]),
    ("Compare the Standard plan with the Premium plan", ["Standard plan", "Premium plan"]),
    ("Standard vs Premium: which one has weekend support?", ["Standard", "Premium"]),
    ("Standard plan vs. Premium plan for a family of four", ["Standard plan", "Premium plan"]),
    ("How does the LM-X200 differ from the LM-S10?", ["LM-X200", "LM-S10"]),
    ("How does the LM-X200 compare to the LM-S10 in battery life?", ["LM-X200", "LM-S10"]),
    ("Which plan is cheaper, Standard or Premium?", ["Standard", "Premium"]),
    ("Standard or Premium, which is better for a family?", ["Standard", "Premium"]),
    # Chinese: 区别/不同/差异, 对比/比较/相比, 哪个, the framing and the aspect left out of a name
    ("基础会员和尊享会员有什么区别？", ["基础会员", "尊享会员"]),
    ("请问你们的基础会员与尊享会员的区别是什么", ["基础会员", "尊享会员"]),
    ("基础会员跟尊享会员有啥不同", ["基础会员", "尊享会员"]),
    ("基础会员和尊享会员哪个更划算？", ["基础会员", "尊享会员"]),
    ("对比一下基础会员和尊享会员的价格", ["基础会员", "尊享会员"]),
    ("基础会员与尊享会员相比，多了哪些权益", ["基础会员", "尊享会员"]),
    ("退货和换货的流程有什么差异", ["退货", "换货"]),
    ("离职员工的考勤证明和离职员工的月度汇总有什么区别？", ["考勤证明", "月度汇总"]),
    ("录播课、直播课和答疑有什么区别", ["录播课", "直播课", "答疑"]),
    ("Topic方式和GUID方式使用对比", ["Topic方式", "GUID方式"]),
    ("基础会员 vs 尊享会员？", ["基础会员", "尊享会员"]),
]
NOT_COMPARISONS = [
    "How long is the whole-unit warranty for the LM-S10?",
    "LM-S10 整机保修多久？",
    "满多少元可以免费配送？",
    "我的常规班已经开课了，还能免费改期一次吗？",
    "Which team won the 2022 final, and who scored?",
    "Can I pay by WeChat Pay or Alipay?",
    "How do I connect the tablet to Wi-Fi and Bluetooth?",
    "退款和发票怎么申请？",
    # one thing and its complement: the evidence about the one is the comparison
    "考勤专业版和非专业版的区别",
    "What is the difference between members and non-members?",
]


@pytest.mark.parametrize(("question", "names"), SIDES)
def test_a_comparison_question_names_its_sides(question: str, names: list[str]) -> None:
    sides = comparison_sides(question)
    assert [s.name for s in sides] == names
    assert all(s.name in question for s in sides)  # a name is cut from the question, so it can be searched


@pytest.mark.parametrize("question", NOT_COMPARISONS)
def test_a_question_that_compares_nothing_has_no_sides(question: str) -> None:
    assert comparison_sides(question) == ()


def test_the_words_every_side_shares_tell_nothing_apart() -> None:
    standard, family = comparison_sides(
        "What is the difference between the Standard plan and the Family plan?"
    )
    assert (standard.terms, family.terms) == (("standard",), ("famili",))
    assert standard.head == family.head == ("plan",)


def _doc(doc_id: str, title: str, text: str) -> ParsedDocument:
    return parse_document(DocumentInput(doc_id, text, format="markdown", title=title))


STANDARD = _doc(
    "standard",
    "Standard plan",
    "# Standard plan\n\nThe Standard plan costs $5 a month. Support runs on working days. "
    "Weekend support comes with the Premium plan.\n",
)
PREMIUM = _doc(
    "premium",
    "Premium plan",
    "# Premium plan\n\nThe Premium plan costs $10 a month. Support runs every day.\n",
)
TABLE = _doc(
    "compare",
    "Plans side by side",
    "# Plans side by side\n\nStandard costs $5 a month and Premium costs $10 a month.\n",
)
ZH_BASIC = _doc(
    "basic-zh", "基础会员服务说明", "# 基础会员服务说明\n\n基础会员月费30元。如需直播课，可升级为尊享会员。\n"
)
ZH_PREMIUM = _doc(
    "premium-zh", "尊享会员服务说明", "# 尊享会员服务说明\n\n尊享会员月费68元，家庭成员可共享录播课。\n"
)


def _whole(doc: ParsedDocument, score: float = 1.0) -> Checked:
    window = Window(doc.doc_id, doc.version, tuple(range(len(doc.units))), seeds=(Hit(doc.units[1], 1.0, 0),))
    return Checked(window, doc, WindowCheck(1.0, 1.0, 1.0, 1.0, score, (), (), ()), 1.0)


EN = "What is the difference between the Standard plan and the Premium plan?"
EN_MISSING = "What is the difference between the Standard plan and the Family plan?"
ZH_MISSING = "基础会员和家庭会员有什么区别？"


@pytest.mark.parametrize(
    ("question", "doc", "spoken"),
    [
        (EN, STANDARD, ["Standard plan"]),  # its title names it; "comes with the Premium plan" is a mention
        (EN, PREMIUM, ["Premium plan"]),
        ("What is the difference between Standard and Premium?", TABLE, ["Standard", "Premium"]),
        (EN_MISSING, PREMIUM, []),  # a page about another plan speaks for neither
        (ZH_MISSING, ZH_PREMIUM, []),  # "家庭成员" on a page about another 会员 is no 家庭会员
        (ZH_MISSING, ZH_BASIC, ["基础会员"]),
    ],
)
def test_a_window_speaks_for_the_sides_its_title_or_its_units_name(
    question: str, doc: ParsedDocument, spoken: list[str]
) -> None:
    sides = comparison_sides(question)
    item = _whole(doc)
    assert [s.name for s in sides if covers(s, sides, item.window, item.doc)] == spoken


def test_a_side_no_window_speaks_for_is_a_missing_slot_named_by_the_side() -> None:
    question = analyse(EN_MISSING)
    pieces = missing_pieces(
        question, [_whole(STANDARD), _whole(PREMIUM)], Policy(judge=None, min_coverage=0.0)
    )
    sided = [p for p in pieces if p.slot_kind == "side"]
    assert [(p.kind, p.value) for p in sided] == [("uncovered_slot", "Family plan")]
    assert should_widen(pieces, 1, Policy())
    both = missing_pieces(
        analyse(EN), [_whole(STANDARD), _whole(PREMIUM)], Policy(judge=None, min_coverage=0.0)
    )
    assert not [p for p in both if p.slot_kind == "side"]


def test_the_rule_off_lets_one_side_answer_as_it_did_before() -> None:
    pieces = missing_pieces(
        analyse(EN_MISSING), [_whole(STANDARD)], Policy(judge=None, min_coverage=0.0, compare_sides=False)
    )
    assert not [p for p in pieces if p.slot_kind == "side"]


def test_two_compared_models_need_not_sit_in_one_window() -> None:
    x200 = _doc("x200", "LM-X200", "# LM-X200\n\nThe LM-X200 battery lasts 10 hours.\n")
    s10 = _doc("s10", "LM-S10", "# LM-S10\n\nThe LM-S10 battery lasts 12 hours.\n")
    question = analyse("How does the LM-X200 differ from the LM-S10 in battery life?")
    items = [_whole(x200), _whole(s10)]
    assert missing_pieces(question, items, Policy(judge=None, min_coverage=0.0)) == []
    # without the rule, the models are slots judged on one window, as before
    off = missing_pieces(question, items, Policy(judge=None, min_coverage=0.0, compare_sides=False))
    assert [p.value for p in off] == ["LM-S10"]


def test_the_wider_query_for_a_missing_side_leaves_out_the_sides_found() -> None:
    question = analyse(EN_MISSING)
    pieces = missing_pieces(question, [_whole(STANDARD)], Policy(judge=None, min_coverage=0.0))
    query = widened_query(question, pieces)
    assert "Family plan" in query and "Standard" not in query and "difference" in query
    assert (
        side_query("基础会员和家庭会员有什么区别？", comparison_sides(ZH_MISSING), {"家庭会员"})
        == "和家庭会员有什么区别？"
    )


def test_selection_pins_a_window_for_the_side_the_close_ones_lack() -> None:
    question = analyse(EN)
    standard, extra, premium = _whole(STANDARD, 1.0), _whole(TABLE, 0.95), _whole(PREMIUM, 0.3)
    policy = Policy(window_keep_ratio=0.8)
    selected = select_evidence(question, [standard, extra], [standard, extra, premium], policy)
    assert premium in selected and standard in selected
    assert uncovered_sides(question.sides, selected) == ()
    off = select_evidence(
        question, [standard, extra], [standard, extra, premium], replace(policy, compare_sides=False)
    )
    assert premium not in off


def test_the_answer_quotes_each_side() -> None:
    question = analyse(EN)
    items = [_whole(STANDARD, 1.0), _whole(PREMIUM, 0.5)]
    one_unit = Policy(max_answer_sentences=1)
    cited = {items[i].doc.doc_id for i, _ in answer_units(question, items, one_unit)}
    assert cited == {"standard", "premium"}
    cited_off = {
        items[i].doc.doc_id for i, _ in answer_units(question, items, replace(one_unit, compare_sides=False))
    }
    assert cited_off == {"standard"}
