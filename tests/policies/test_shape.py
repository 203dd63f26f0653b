"""The shape of a question, in Chinese and English: what kind of answer it wants (policies.question.shape)."""

from __future__ import annotations

from typing import get_args

import pytest

from evidence_loop.policies.question.analysis import analyse
from evidence_loop.policies.question.shape import SHAPES, Shape, classify, shape_of
from evidence_loop.traces.records.steps import ShapeName

ENGLISH: list[tuple[str, Shape]] = [
    ("How do I pair the remote?", "procedure"),
    ("How to add channels to the favourite list?", "procedure"),
    ("What are the steps to change the PIN?", "procedure"),
    ("My TV is not receiving channels. What should I do?", "procedure"),
    ("Which settings affect battery life?", "list"),
    ("What are the advanced recording options available in my camera?", "list"),
    ("What kinds of payment do you accept?", "list"),
    ("What is the difference between the Basic and the Pro plan?", "comparison"),
    ("Compare the LM-S10 and the LM-S20", "comparison"),
    ("Basic vs Pro: which one has more storage?", "comparison"),
    ("Why does my TV turn off by itself?", "explanation"),
    ("Can you explain Ambient Mode briefly?", "explanation"),
    ("What is the use of Smart Security?", "explanation"),
    ("How long is the whole-unit warranty for the LM-S10?", "fact"),
    ("When was the store opened?", "fact"),
    ("Who acquired Instagram?", "fact"),
    ("What is Samsung Pay?", "fact"),
    ("Is the warranty transferable?", "yes_no"),
    ("Can I return an opened item?", "yes_no"),
]
CHINESE: list[tuple[str, Shape]] = [
    ("如何设置访客扫脸进门？", "procedure"),
    ("WiFi 连不上怎么办？", "procedure"),
    ("修改密码的步骤是什么？", "procedure"),
    ("怎样申请退款", "procedure"),
    ("会员有哪些权益？", "list"),
    ("群直播有哪几种模式？", "list"),
    ("支持哪些支付方式", "list"),
    ("基础版和专业版有什么区别？", "comparison"),
    ("年付与月付有什么不同", "comparison"),
    ("两种套餐对比一下", "comparison"),
    ("为什么无法连接 WiFi？", "explanation"),
    ("请介绍一下会员权益", "explanation"),
    ("这个功能怎么样？", "explanation"),
    ("总结一下退货政策", "explanation"),
    ("退款多久到账？", "fact"),
    ("LM-Z900 的整机保修期是多久？", "fact"),
    ("客服电话是多少", "fact"),
    ("退货地址在哪里？", "fact"),
    ("我的常规班已经开课了，还能免费改期一次吗？", "yes_no"),
    ("是否支持七天无理由退货", "yes_no"),
]


@pytest.mark.parametrize(("question", "shape"), ENGLISH + CHINESE, ids=[q for q, _ in ENGLISH + CHINESE])
def test_a_question_has_the_shape_of_the_answer_it_wants(question: str, shape: Shape) -> None:
    assert shape_of(analyse(question)) == shape


# Questions with cues of two shapes, the shape chosen, and why (policies.question.shape's order).
AMBIGUOUS: list[tuple[str, Shape, str]] = [
    # a measure is one value, even asked with "how do I" or "怎么"
    ("How do I know how many days the refund takes?", "fact", "a measure is one value"),
    ("怎么查询退款要多少天", "fact", "a measure is one value"),
    # "when" is a clause here, not a date asked for
    ("What should I do when the tablet cannot connect?", "procedure", "when is a clause"),
    # "what are the ..." lists, but the differences of two things are a comparison
    ("What are the differences between the two plans?", "comparison", "comparison before list"),
    # ... and the steps of something a procedure
    ("What are the steps to reset the TV?", "procedure", "procedure before list"),
    ("有哪些步骤可以重置电视？", "procedure", "procedure before list"),
    # "why ..., what should I do" wants the steps that fix it
    ("Why is there no sound and what should I do?", "procedure", "procedure before explanation"),
    ("为什么没有声音，怎么办？", "procedure", "procedure before explanation"),
    # "怎么样" asks what something is like, not how to do it
    ("新版会员怎么样？", "explanation", "怎么样 is no procedure"),
    # "哪几种" names kinds although "几" is a measure word
    ("退款有哪几种方式？", "list", "哪几种 names the kinds"),
    # a singular "which" asks for one thing
    ("Which year did the store open?", "fact", "a singular which is one value"),
    # a yes/no that names an action is still a yes/no: its evidence is the section that says yes
    ("Can I reset the picture settings?", "yes_no", "no procedure cue"),
    # a definition is a fact: one passage says what it is
    ("什么是会员积分？", "fact", "a definition is one passage"),
]


@pytest.mark.parametrize(
    ("question", "shape", "why"), AMBIGUOUS, ids=[f"{q} ({why})" for q, _, why in AMBIGUOUS]
)
def test_an_ambiguous_question_takes_the_shape_the_order_gives(question: str, shape: Shape, why: str) -> None:
    assert shape_of(analyse(question)) == shape, why


def test_the_cue_that_decided_is_named() -> None:
    assert classify(analyse("How do I pair the remote?")).cue == "how do"
    assert classify(analyse("基础版和专业版有什么区别？")).cue == "基础版, 专业版"  # the sides it names
    assert classify(analyse("两种套餐有什么区别？")).cue == "区别"  # no sides named: the word says it
    assert classify(analyse("What is Samsung Pay?")).cue is None


def test_every_shape_is_reached_in_both_languages() -> None:
    for table in (ENGLISH, CHINESE):
        assert {shape for _, shape in table} == set(SHAPES)


def test_the_trace_names_the_same_shapes() -> None:
    """traces may not import policies, so the checked step spells the shapes out itself."""
    assert get_args(ShapeName) == SHAPES
