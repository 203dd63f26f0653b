"""Follow-ups resolved by rule from earlier turns (policies.question.followup): one row per pattern, both
languages."""

from __future__ import annotations

import pytest

from evidence_loop.policies.question.followup import (
    Resolution,
    Turn,
    ambiguous_pieces,
    prior_first,
    resolve,
    unresolved_candidates,
)
from evidence_loop.policies.question.followup_cues import cue_of, subject_phrase
from evidence_loop.tools.types import Hit, Unit

# (earlier turns, asked, the question run, how it points back)
RESOLVED: list[tuple[list[str], str, str, str]] = [
    (["基础版会员每月多少钱？"], "专业版呢？", "专业版会员每月多少钱？", "ellipsis"),
    (
        ["Does the X300 router support Wi-Fi 6E?"],
        "How much does it weigh?",
        "How much does the X300 router weigh?",
        "pronoun",
    ),
    (
        ["When was the X200 router launched?"],
        "How long is its warranty?",
        "How long is the X200 router's warranty?",
        "pronoun",
    ),
    (["年假有多少天"], "如果没休完怎么办？", "年假有多少天 如果没休完怎么办？", "condition"),
    (
        ["How do I apply for retirement benefits?"],
        "What if I move abroad?",
        "How do I apply for retirement benefits? What if I move abroad?",
        "condition",
    ),
    (["X200路由器支持哪些频段"], "它是哪一年推出的", "X200路由器是哪一年推出的", "pronoun"),
    (["X200路由器支持哪些频段"], "这个产品是哪一年推出的", "X200路由器是哪一年推出的", "pronoun"),
    (["年假有多少天"], "它可以顺延到明年吗", "年假可以顺延到明年吗", "pronoun"),
    (["年假有多少天"], "可以顺延到明年吗", "年假可以顺延到明年吗", "zero"),
    (["基础版每月多少钱？"], "那企业版呢？", "企业版每月多少钱？", "ellipsis"),
    (["X200路由器的保修期多长？"], "X300呢？", "X300路由器的保修期多长？", "ellipsis"),
    (["X200路由器的保修期多长？"], "那退货政策呢？", "X200路由器退货政策", "ellipsis"),
    (["人力资源部在哪一层？"], "部门的负责人是谁", "人力资源部的负责人是谁", "generic"),
    (["X200和X300有什么区别"], "它们的保修期一样吗", "X200和X300的保修期一样吗", "pronoun"),
    (
        ["Does the X200 router support 5 GHz?"],
        "When was it launched?",
        "When was the X200 router launched?",
        "pronoun",
    ),
    (
        ["Does the X200 router support 5 GHz?"],
        "How long is its warranty?",
        "How long is the X200 router's warranty?",
        "pronoun",
    ),
    (
        ["How much does the Basic plan cost per month?"],
        "What about the Premium plan?",
        "How much does the Premium plan cost per month?",
        "ellipsis",
    ),
    (
        ["How much does the Basic plan cost per month?"],
        "What about Premium?",
        "How much does the Premium plan cost per month?",
        "ellipsis",
    ),
    (
        ["Does the X200 router support 5 GHz?"],
        "and for the X300?",
        "Does the X300 router support 5 GHz?",
        "ellipsis",
    ),
    (
        ["How do I install the Acme Notes app?"],
        "Does the app work offline?",
        "Does the Acme Notes app work offline?",
        "generic",
    ),
    (
        ["How do I apply for retirement benefits?"],
        "We are moving abroad next month.",
        "We are moving abroad next month. retirement benefits",
        "statement",
    ),
    (
        ["How long is the warranty on the X200?"],
        "Is that the same for the X300?",
        "Is the X200 the same for the X300?",
        "pronoun",
    ),
]


@pytest.mark.parametrize(("history", "asked", "expected", "cue"), RESOLVED, ids=[r[1] for r in RESOLVED])
def test_a_follow_up_is_run_as_the_question_its_earlier_turns_complete(
    history: list[str], asked: str, expected: str, cue: str
) -> None:
    resolution = resolve(asked, [Turn(t) for t in history])
    assert (resolution.text, resolution.cue) == (expected, cue)
    assert resolution.carried and all(c.turn == len(history) - 1 for c in resolution.carried)


# (earlier turns, a question that stands alone: nothing is carried)
LEFT_ALONE: list[tuple[list[str], str]] = [
    (["X200路由器支持哪些频段"], "会员积分怎么兑换？"),
    (["X200路由器支持哪些频段"], "X300路由器是哪一年推出的"),
    (["年假有多少天"], "年假有多少天呢"),
    (["How do I reset my password?"], "How do I contact support?"),
    (["Is it possible to pay by credit card?"], "Is it possible to get a refund?"),
    (["How long does shipping take?"], "How long does it take to get a refund?"),
    (["What is the refund policy?"], "Is it true that the Premium plan includes phone support?"),
    (["What plans do you offer this year?"], "What happens to my data this month?"),
]


@pytest.mark.parametrize(("history", "asked"), LEFT_ALONE, ids=[r[1] for r in LEFT_ALONE])
def test_a_question_that_names_its_own_subject_carries_nothing(history: list[str], asked: str) -> None:
    assert resolve(asked, [Turn(t) for t in history]) == Resolution(asked, asked)


def test_without_history_nothing_is_even_looked_for() -> None:
    assert resolve("它是哪一年推出的", []) == Resolution("它是哪一年推出的", "它是哪一年推出的")


@pytest.mark.parametrize(
    ("history", "asked", "candidates"),
    [
        (["X200和X300有什么区别"], "它支持5G吗", ("X200", "X300")),
        (
            ["What is the difference between the X200 and the X300?"],
            "Does it support Wi-Fi 6?",
            ("X200", "X300"),
        ),
    ],
)
def test_a_singular_pointer_after_a_comparison_is_ambiguous(
    history: list[str], asked: str, candidates: tuple[str, ...]
) -> None:
    resolution = resolve(asked, [Turn(t) for t in history])
    assert (resolution.text, resolution.candidates, resolution.carried) == (asked, candidates, ())


@pytest.mark.parametrize(
    ("history", "asked"), [(["你好"], "它的保修期多长"), (["thanks!"], "How long is its warranty?")]
)
def test_a_pointer_with_no_earlier_subject_is_unresolved(history: list[str], asked: str) -> None:
    resolution = resolve(asked, [Turn(t) for t in history])
    assert (resolution.text, resolution.unresolved) == (asked, True)


def test_the_nearest_earlier_turn_with_a_subject_is_the_source_and_its_documents_the_prior() -> None:
    history = [
        Turn("X300路由器支持哪些频段", doc_ids=("x300",)),
        Turn("X200路由器多重", doc_ids=("x200",)),
        Turn("谢谢"),
    ]
    resolution = resolve("它是哪一年推出的", history)
    assert (resolution.text, resolution.prior_docs) == ("X200路由器是哪一年推出的", ("x200",))
    assert [c.turn for c in resolution.carried] == [1]


def test_a_chain_of_follow_ups_keeps_the_first_subject() -> None:
    assert resolve("它多重", [Turn("X200路由器支持哪些频段")]).text == "X200路由器多重"
    assert (
        resolve("它是哪一年推出的", [Turn("X200路由器支持哪些频段"), Turn("它多重")]).text
        == "X200路由器是哪一年推出的"
    )


def test_an_earlier_run_s_resolved_question_is_read_as_it_resolved() -> None:
    history = [Turn("它多重", run_id="r-1", resolved="X500路由器多重")]
    assert resolve("它是哪一年推出的", history).text == "X500路由器是哪一年推出的"


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("X200路由器支持哪些频段", "X200路由器"),
        ("请问人力资源部在哪一层？", "人力资源部"),
        ("如何申请年假", "申请年假"),
        ("部门的负责人是谁", ""),
        ("How much does the Basic plan cost per month?", "Basic plan"),
        ("What is the refund policy for the Premium plan?", "Premium plan"),
        ("How do I reset my password?", "password"),
        ("Does the app work offline?", ""),
    ],
)
def test_the_subject_of_a_turn_is_the_phrase_that_names_a_thing(text: str, phrase: str) -> None:
    assert subject_phrase(text) == phrase


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("其他型号呢？", "ellipsis"),
        ("应该怎么办", None),
        ("因此要提前预约吗？", None),
        ("这个月有活动吗", None),
    ],
)
def test_words_that_only_hold_a_pointer_are_not_one(text: str, kind: str | None) -> None:
    cue = cue_of(text)
    assert (cue.kind if cue else None) == kind


def _hit(doc: str, score: float, rank: int) -> Hit:
    return Hit(Unit(doc, "1", rank, "sentence", 0, 0, 1, "x"), score, rank)


def test_the_earlier_documents_are_a_prior_never_a_filter() -> None:
    hits = [_hit("other", 10.0, 0), _hit("other", 6.0, 1), _hit("prior", 5.0, 2)]
    assert [h.score for h in prior_first(hits, {"prior"}, 0.5, 2)] == [10.0, 5.0]
    assert [h.unit.doc_id for h in prior_first(hits, set(), 0.5, 3)] == ["other", "other", "prior"]


def test_ambiguity_lists_each_candidate_with_its_document() -> None:
    pieces = ambiguous_pieces([("X200", "x200"), ("X300", "x300")])
    assert [(p.kind, p.value, p.doc_id) for p in pieces] == [
        ("ambiguous_subject", "X200", "x200"),
        ("ambiguous_subject", "X300", "x300"),
    ]
    assert ambiguous_pieces([("X200", "x200")]) == []
    unresolved = Resolution("它多重", "它多重", "pronoun", unresolved=True)
    assert unresolved_candidates(unresolved, [("A", "a"), ("A", "a"), ("B", "b")]) == [("A", "a"), ("B", "b")]
    assert unresolved_candidates(unresolved, [("A", "a")]) == []
