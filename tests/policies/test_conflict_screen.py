"""The same attribute of the same thing with different values in two documents is a conflict candidate;
values of one document (items of one list or table) or of different scopes (plans, places, models,
customer groups, a dated change) are set aside with their reason (policies.conflicts.screen)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.conflicts.candidates import CandidateScan, ConflictRules, find_candidates
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.policies.types import EvidenceView

RETAIN_Q = "How long is my data kept after I cancel?"
KEPT_90 = "When you cancel, we keep your workspace data for 90 days after cancellation."
KEPT_30 = "Your workspace data is kept for 30 days after cancellation, then deleted for good."


def view(
    evidence_id: str, text: str, doc_id: str | None = None, section: tuple[str, ...] = ()
) -> EvidenceView:
    return EvidenceView(
        evidence_id, doc_id or f"doc-{evidence_id}", "1", True, section, 10, 10 + len(text), text
    )


def scan(question: str, *views: EvidenceView, policy: Policy | None = None) -> CandidateScan:
    return find_candidates(analyse(question), list(views), ConflictRules.of(policy or Policy()))


def pairs(found: CandidateScan) -> list[tuple[str, str]]:
    return [(c.left.value, c.right.value) for c in found.candidates]


@pytest.mark.parametrize(
    ("question", "left", "right", "values"),
    [
        (RETAIN_Q, KEPT_90, KEPT_30, ("90 days", "30 days")),
        (
            "取消订阅后数据保留多久？",
            "取消订阅后，您的数据将保留90天。",
            "数据在取消订阅后保留30天，之后永久删除。",
            ("90天", "30天"),
        ),
        (
            "How much is the Starter plan per month?",
            "| Plan | Price per month |\n| --- | --- |\n| Starter | $9 |",
            "The Starter plan costs $12 per month.",
            ("$9", "$12"),
        ),
    ],
    ids=["retention-en", "retention-zh", "table-row-vs-sentence"],
)
def test_two_documents_giving_the_asked_attribute_different_values_are_a_candidate(
    question: str, left: str, right: str, values: tuple[str, str]
) -> None:
    found = scan(question, view("e1", left), view("e2", right))

    assert pairs(found) == [values]
    assert found.dropped == ()


def test_before_the_rule_two_documents_worded_apart_gave_no_candidate() -> None:
    old = Policy.from_dict({})  # a policy recorded before attribute_values

    assert scan(RETAIN_Q, view("e1", KEPT_90), view("e2", KEPT_30), policy=old).candidates == ()


def test_items_of_one_list_in_one_document_are_set_aside() -> None:
    listing = "- Galaxy Store: From Apps, tap Galaxy Store to buy apps and games for your phone."
    other = "- Galaxy Wearable: From Apps, tap Galaxy Wearable to buy apps and games for your phone."
    found = scan("What is the Galaxy S10?", view("e1", listing, "s10-apps"), view("e2", other, "s10-apps"))

    assert found.candidates == () and found.resolved == ()
    assert [d.reason.split(":")[0] for d in found.dropped] == ["one document (s10-apps) states both values"]


@pytest.mark.parametrize(
    ("question", "left", "right", "kind"),
    [
        (
            RETAIN_Q,
            "On the Starter plan your data is kept for 30 days after you cancel.",
            "On the Business plan your data is kept for 90 days after you cancel.",
            "plans",
        ),
        (
            "How long do refunds take?",
            "Refunds in the EU take 14 days to reach your card.",
            "Refunds in the US take 30 days to reach your card.",
            "places",
        ),
        ("退货期限是多久？", "企业用户的退货期限为30天。", "个人用户的退货期限为7天。", "groups"),
    ],
    ids=["plans", "places", "groups"],
)
def test_values_for_different_things_of_one_kind_are_set_aside(
    question: str, left: str, right: str, kind: str
) -> None:
    found = scan(question, view("e1", left), view("e2", right))

    assert found.candidates == ()
    assert [d.reason.startswith(f"the values are for different {kind}") for d in found.dropped] == [True]


def test_values_under_the_headings_of_two_models_are_set_aside() -> None:
    x200 = view("e1", "The warranty of the router lasts 2 years.", "x200", ("X200 router", "Warranty"))
    x300 = view("e2", "The warranty of the router lasts 3 years.", "x300", ("X300 router", "Warranty"))

    found = scan("How long is the warranty of the router?", x200, x300)

    assert found.candidates == ()
    assert [d.reason for d in found.dropped] == ["the values are for different models: 'x200' / 'x300'"]


GENERAL = "You can return an item within 30 days of delivery for a full refund."
LOCAL = "You can return an item within 7 days of delivery for a full refund."


def test_a_rule_for_the_asked_place_beside_the_general_rule_is_set_aside() -> None:
    general = view("e1", GENERAL, "returns")
    local = view("e2", LOCAL, "returns-hk", ("Returns in Hong Kong",))

    found = scan("How many days do I have to return an item in Hong Kong?", general, local)

    assert found.candidates == ()
    assert found.dropped[0].reason == (
        "one side is about 'hong kong', which the question names; the other is general"
    )


def test_a_rule_for_one_place_beside_a_general_rule_stays_a_candidate_when_no_place_is_asked() -> None:
    """The general rule may be the one the place's rule contradicts: an adjudicator decides."""
    general = view("e1", GENERAL, "returns")
    local = view("e2", LOCAL, "returns-hk", ("Returns in Hong Kong",))

    found = scan("How many days do I have to return an item?", general, local)

    assert len(found.candidates) == 1 and found.dropped == ()


def test_a_side_about_another_thing_than_the_question_names_is_set_aside() -> None:
    starter = view("e1", "Data on the Starter plan is kept for 30 days after cancellation.")
    business = view("e2", "Data on the Business plan is kept for 90 days after cancellation.")

    found = scan("How long is data kept on the Starter plan after cancellation?", starter, business)

    assert found.candidates == ()
    assert "the question asks about 'starter'" in found.dropped[0].reason


def test_a_value_dated_from_when_it_applies_supersedes_the_undated_one() -> None:
    dated = view("e2", "From 1 March 2026, your workspace data is kept for 60 days after cancellation.")

    found = scan(RETAIN_Q, view("e1", KEPT_30), dated)

    assert found.candidates == ()
    assert [(v.verdict, v.superseded_by) for v in found.resolved] == [("superseded", "e2")]


def test_of_two_dated_values_the_later_one_supersedes() -> None:
    older = view("e1", "自2025年1月1日起，标准配送运费调整为8元。")
    newer = view("e2", "自2026年3月1日起，标准配送运费调整为10元。")

    found = scan("标准配送运费是多少钱？", older, newer)

    assert [(v.verdict, v.superseded_by) for v in found.resolved] == [("superseded", "e2")]


def test_values_of_the_two_things_a_question_compares_are_set_aside() -> None:
    x200, x300 = (
        view(
            f"e{n}",
            f"# {model} Router\n\n## Warranty\nThe {model} router comes with a {years} warranty from "
            f"the date of purchase.\n\n## Specifications\nThe {model} router weighs {grams} grams.\n",
            model.lower(),
            (f"{model} Router",),
        )
        for n, model, years, grams in ((1, "X200", "two-year", 450), (2, "X300", "three-year", 520))
    )

    found = scan("How much do X200 and X300 router weigh?", x200, x300)

    assert found.candidates == ()
    assert [d.reason.startswith("the question compares 'x200', 'x300'") for d in found.dropped] == [True]


def test_a_number_inside_a_model_s_name_is_no_value_of_it() -> None:
    x200 = view("e1", "路由器X200于2021年推出，整机保修期为两年。", "x200")
    x300 = view("e2", "路由器X300于2021年推出，整机保修期为两年。", "x300")

    found = scan("路由器是哪一年推出的？", x200, x300)

    assert found.candidates == ()
    assert [d.reason for d in found.dropped] == ["the value is part of the name 'x200', not a value of it"]


def test_the_end_of_a_range_is_no_value_to_compare() -> None:
    offered = view("e1", "微软计划以每股95美元的价格全现金收购动视暴雪。")
    asked = view("e2", "动视暴雪希望微软将收购价格提高到每股90-105美元。")

    assert scan("微软花了多少钱收购动视暴雪", offered, asked).candidates == ()


def test_an_faq_answer_is_read_with_the_question_in_the_window_above_it() -> None:
    asked = view("e1", "**收不到短信验证码怎么办？", "faq", ("常见问题", "账号"))
    answer = replace(
        view("e2", "验证码有效期为10分钟，超时请重新获取。", "faq", ("常见问题", "账号")), start=60, end=80
    )
    steps = view("e3", "3. 输入收到的6位短信验证码。验证码5分钟内有效，过期需重新获取。", "reset")

    assert pairs(scan("找回密码的短信验证码多久过期？", asked, answer, steps)) == [("10分钟", "5分钟")]


def test_a_model_number_the_page_names_is_a_term_both_statements_share() -> None:
    faq = replace(view("e1", "问：D50 充一次电能用多久？\n答：正常使用情况下约6个月。"), title="D50 常见问题")
    manual = replace(view("e2", "续航：默认设置下充满一次约可使用3个月。"), title="Doorbell D50 使用手册")

    assert pairs(scan("D50 门铃充满一次电能用多久？", faq, manual)) == [("6个月", "3个月")]


@pytest.mark.parametrize(
    "question", ["What's the battery capacity of the C200 Pro?", "C200 Pro 电池容量多大？"], ids=["en", "zh"]
)
def test_a_unit_that_names_its_attribute_compares_it_across_languages(question: str) -> None:
    english = replace(
        view("e1", "| Power | Built-in 6500 mAh rechargeable battery |"), title="Cam C200 Pro specifications"
    )
    chinese = replace(view("e2", "| 电池 | 内置5200mAh可充电锂电池 |"), title="Cam C200 Pro 规格参数")

    found = scan(question, english, chinese)

    assert sorted(v for pair in pairs(found) for v in pair) == ["5200mAh", "6500 mAh"]
    assert found.dropped == ()
