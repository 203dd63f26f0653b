"""An ellipsis ("and the X one?", "X 的呢？", "what about X", "那 X 呢", "how about in Hong Kong?") asks the
earlier question again of X: the thing of X's kind (plan for plan, model for model, place for place) is
swapped and the attribute asked is kept (policies.question.followup_swap)."""

from __future__ import annotations

import pytest

from evidence_loop.policies.question.followup import Turn, resolve
from evidence_loop.policies.question.followup_swap import read_named

# (earlier question, follow-up, the question run)
SWAPPED: list[tuple[str, str, str]] = [
    (
        "How much is the Enterprise plan per month?",
        "and the Starter one?",
        "How much is the Starter plan per month?",
    ),
    (
        "How much is the Enterprise plan per month?",
        "what about Starter?",
        "How much is the Starter plan per month?",
    ),
    (
        "How much is the Enterprise plan per month?",
        "and for Business?",
        "How much is the Business plan per month?",
    ),
    (
        "How many users does the Business plan include?",
        "And the Starter one?",
        "How many users does the Starter plan include?",
    ),
    ("What is the battery life of the X200?", "and the X300 one?", "What is the battery life of the X300?"),
    (
        "How long does shipping take in Singapore?",
        "how about in Hong Kong?",
        "How long does shipping take in Hong Kong?",
    ),
    ("How long do refunds take in the EU?", "what about the UK?", "How long do refunds take in the UK?"),
    ("How long does shipping take?", "how about in Hong Kong?", "How long does shipping take in Hong Kong?"),
    ("企业版每月多少钱？", "入门版的呢？", "入门版每月多少钱？"),
    ("Enterprise 套餐每月多少钱？", "那 Starter 呢", "Starter 套餐每月多少钱？"),
    ("Enterprise 套餐每月多少钱？", "Starter 的呢？", "Starter 套餐每月多少钱？"),
    ("在新加坡退款需要多久？", "香港的呢？", "在香港退款需要多久？"),
    ("新加坡的运费是多少？", "那香港呢", "香港的运费是多少？"),
    ("新加坡的运费是多少？", "在香港呢？", "香港的运费是多少？"),
    ("退款需要多久？", "香港的呢？", "香港退款需要多久？"),
    (
        "How much is Halvio Cloud Plus per month in the US?",
        "and Basic?",
        "How much is Halvio Cloud Basic per month in the US?",
    ),
    ("企业工作台商业版每个账号一个月多少钱", "入门版呢", "企业工作台入门版每个账号一个月多少钱"),
    (
        "Does the C200 Pro support 5 GHz Wi-Fi?",
        "what about the regular C200?",
        "Does the C200 support 5 GHz Wi-Fi?",
    ),
    ("What's the warranty in the US?", "what about in Europe?", "What's the warranty in Europe?"),
]


@pytest.mark.parametrize(("earlier", "asked", "run"), SWAPPED)
def test_an_ellipsis_swaps_the_thing_of_its_kind_and_keeps_the_attribute(
    earlier: str, asked: str, run: str
) -> None:
    resolution = resolve(asked, [Turn(earlier)])

    assert resolution.text == run
    assert resolution.cue == "ellipsis"
    assert [c.kind for c in resolution.carried] == ["attribute"]


@pytest.mark.parametrize(
    ("earlier", "asked", "run"),
    [
        (
            "How long is the warranty of the X200 router?",
            "what about the return policy?",
            "X200 router return policy",
        ),
        ("X200路由器的保修期多长？", "那退货政策呢？", "X200路由器退货政策"),
    ],
)
def test_an_ellipsis_naming_an_attribute_asks_it_of_the_earlier_subject(
    earlier: str, asked: str, run: str
) -> None:
    assert resolve(asked, [Turn(earlier)]).text == run


def test_runs_recorded_before_the_rule_add_the_named_thing_to_the_earlier_subject() -> None:
    """A policy recorded without ``followup_kinds`` replays as it ran."""
    resolution = resolve(
        "and the Starter one?", [Turn("How much is the Enterprise plan per month?")], kinds=False
    )

    assert resolution.text == "Enterprise plan Starter one"


@pytest.mark.parametrize(
    ("named", "before", "text", "preposition", "entity"),
    [
        ("the Starter one", "and ", "Starter", "", True),
        ("in Hong Kong", "how about ", "Hong Kong", "in", True),
        ("Canada", "and in ", "Canada", "in", True),
        ("入门版的", "", "入门版", "", True),
        ("在香港", "", "香港", "在", True),
        ("the warranty", "what about ", "warranty", "", False),
        ("售价", "那", "售价", "", False),
    ],
)
def test_what_an_ellipsis_names_is_read_without_its_framing(
    named: str, before: str, text: str, preposition: str, entity: bool
) -> None:
    read = read_named(named, before)

    assert (read.text, read.preposition, read.entity) == (text, preposition, entity)


def test_a_condition_asks_the_earlier_question_on_that_condition() -> None:
    resolution = resolve("and if I pay yearly?", [Turn("How much is Plus per month in the US?")])

    assert resolution.text == "How much is Plus per month in the US? and if I pay yearly?"


def test_runs_recorded_before_the_rule_read_a_condition_with_the_earlier_subject_only() -> None:
    resolution = resolve("and if I pay yearly?", [Turn("How much is Plus per month in the US?")], kinds=False)

    assert resolution.text == "and if I pay yearly? Plus"


def test_a_question_opening_with_na_that_names_nothing_new_asks_of_the_earlier_model() -> None:
    resolution = resolve("那充满能用多久呢", [Turn("D50 充满电要多久？")])

    assert resolution.text == "那充满能用多久呢 D50"
    assert [(c.kind, c.text) for c in resolution.carried] == [("identifier", "D50")]


@pytest.mark.parametrize("asked", ["那企业版多少钱呢", "那退货要几天呢"])
def test_a_question_opening_with_na_that_names_a_thing_of_its_own_carries_nothing(asked: str) -> None:
    assert resolve(asked, [Turn("C200 Pro 充满电要多久？")]).text == asked


def test_runs_recorded_before_the_rule_leave_a_question_opening_with_na_alone() -> None:
    assert resolve("那充满能用多久呢", [Turn("D50 充满电要多久？")], kinds=False).text == "那充满能用多久呢"
