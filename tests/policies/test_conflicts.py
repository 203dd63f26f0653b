"""Conflict candidates: which pairs of windows disagree on what the question asks, and which do not."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.conflicts.candidates import ConflictRules, find_candidates
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.policies.types import EvidenceView


def view(
    evidence_id: str,
    text: str,
    *,
    doc_id: str | None = None,
    version: str = "1",
    current: bool = True,
    prefix: str = "",
) -> EvidenceView:
    """A window over ``prefix + text`` that starts after the prefix, so offsets are absolute and non-zero."""
    return EvidenceView(
        evidence_id=evidence_id,
        doc_id=doc_id or f"doc-{evidence_id}",
        version=version,
        is_current=current,
        section=("FAQ",),
        start=len(prefix),
        end=len(prefix) + len(text),
        text=text,
    )


def pair(left: str, right: str) -> list[EvidenceView]:
    return [view("e1", left), view("e2", right)]


def values(question: str, views: Sequence[EvidenceView]) -> list[tuple[str, str, str]]:
    return [
        (c.kind, c.left.value, c.right.value) for c in find_candidates(analyse(question), views).candidates
    ]


FOUND = [
    pytest.param(
        "What movie won the Oscar for Best Animated Film?",
        "The Oscar for Best Animated Film went to Soul at the ceremony.",
        "The Oscar for Best Animated Film went to Toy Story 2 at the ceremony.",
        ("named", "Soul", "Toy Story 2"),
        id="a-number-inside-a-name-keeps-it-a-name",
    ),
    pytest.param(
        "香港第六届立法会选举有多少个议席？",
        "第六届立法会共有70个议席，经2016年9月4日的选举产生。",
        "第六届立法会共有170个议席，经2016年9月4日的选举产生。",
        ("count", "70个", "170个"),
        id="70-vs-170",
    ),
    pytest.param(
        "2018年中国城镇新增就业了多少人",
        "国家统计局介绍，2018年我国城镇新增就业1361万人，比上年多增10万人。",
        "国家统计局介绍，2018年我国城镇新增就业161万人，比上年多增10万人。",
        ("count", "1361万人", "161万人"),
        id="1361万-vs-161万",
    ),
    pytest.param(
        "中国2019年人口出生率是多少",
        "数据显示，2019年出生人口1465万人，人口出生率为10.48‰；死亡人口998万人。",
        "数据显示，2019年出生人口1465万人，人口出生率为5.48‰；死亡人口998万人。",
        ("percentage", "10.48‰", "5.48‰"),
        id="percentage",
    ),
    pytest.param(
        "退款多久到账？",
        "审核通过后，退款将在7个工作日内原路退回到您的账户。",
        "审核通过后，退款将在15个工作日内原路退回到您的账户。",
        ("duration", "7个", "15个"),
        id="duration",
    ),
    pytest.param(
        "How much did Google acquire YouTube for?",
        "In 2006 Google bought the video-sharing site YouTube for $1.65 billion in stock.",
        "In 2006 Google bought the video-sharing site YouTube for $10.65 billion in stock.",
        ("amount", "$1.65 billion", "$10.65 billion"),
        id="amount",
    ),
    pytest.param(
        "When was Splatoon 2 released?",
        "Splatoon 2 is a shooter game by Nintendo. It was released on July 21, 2017, for the Switch.",
        "Splatoon 2 is a shooter game by Nintendo. It was released on July 1, 2007, for the Switch.",
        ("date", "21, 2017", "1, 2007"),
        id="date-en",
    ),
    pytest.param(
        "神舟十一号发射时间？",
        "神舟十一号载人飞船于2016年10月17日在酒泉卫星发射中心发射升空。",
        "神舟十一号载人飞船于2006年1月17日在酒泉卫星发射中心发射升空。",
        ("date", "2016年10月", "2006年1月"),
        id="date-zh",
    ),
    pytest.param(
        "电影《头号玩家》的导演是谁",
        "电影《头号玩家》是史蒂文·斯皮尔伯格导演的一部科幻冒险片，影片将于3月30日公映。",
        "电影《头号玩家》是布莱恩·辛格导演的一部科幻冒险片，影片将于3月30日公映。",
        ("named", "史蒂文·斯皮尔伯格", "布莱恩·辛格"),
        id="named-zh",
    ),
    pytest.param(
        "Who won the women's singles Wimbledon in 2018?",
        "Angelique Kerber defeated Serena Williams in the final to win the title at the 2018 Wimbledon.",
        "Ashleigh Barty defeated Serena Williams in the final to win the title at the 2018 Wimbledon.",
        ("named", "Angelique Kerber", "Ashleigh Barty"),
        id="named-en",
    ),
    pytest.param(
        "未开课的班级可以退款吗？",
        "根据课程规定，未开课的班级可以申请全额退款，已开课的按课时折算。",
        "根据课程规定，未开课的班级不可以申请全额退款，已开课的按课时折算。",
        ("polarity", "可以", "不可以"),
        id="polarity-zh",
    ),
    pytest.param(
        "Are pets allowed in the cabin?",
        "On all domestic flights small pets are allowed in the cabin in an approved carrier.",
        "On all domestic flights small pets are not allowed in the cabin in an approved carrier.",
        ("polarity", "allowed", "not allowed"),
        id="polarity-negation-en",
    ),
    pytest.param(
        "Is standard shipping free for members?",
        "For members of the club, standard shipping is free on every order placed in the store.",
        "For members of the club, standard shipping is charged on every order placed in the store.",
        ("polarity", "free", "charged"),
        id="polarity-opposites-en",
    ),
]


@pytest.mark.parametrize(("question", "left", "right", "expected"), FOUND)
def test_near_identical_statements_that_differ_in_the_asked_value_are_a_candidate(
    question: str, left: str, right: str, expected: tuple[str, str, str]
) -> None:
    assert values(question, pair(left, right)) == [expected]


NOT_FOUND = [
    pytest.param(
        "香港第六届立法会选举有多少个议席？",
        "第六届立法会共有七十个议席，经2016年9月4日的选举产生。",
        "第六届立法会共有70个议席，经2016年9月4日的选举产生。",
        id="one-number-in-two-scripts",
    ),
    pytest.param(
        "When was Pixel 6 announced?",
        "Google officially announced its new Pixel 6 on Oct 19, 2021, and it starts at $599.",
        "Google officially announced its new Pixel 6 on October 19, 2021, and it starts at $599.",
        id="one-date-in-two-spellings",
    ),
    pytest.param(
        "中国2019年人口出生率是多少",
        "国家统计局公布，2018年全国人口出生率为10.94‰，创下新低，死亡率基本稳定。",
        "国家统计局公布，2019年全国人口出生率为10.48‰，创下新低，死亡率基本稳定。",
        id="another-year-is-another-scope",
    ),
    pytest.param(
        "Who won the women's singles Wimbledon in 2021?",
        "Ashleigh Barty defeated Karolina Pliskova in the final to win the title at the 2021 Wimbledon.",
        "Angelique Kerber defeated Serena Williams in the final to win the title at the 2018 Wimbledon.",
        id="another-final-is-another-statement",
    ),
    pytest.param(
        "电影《头号玩家》的导演是谁",
        "电影《头号玩家》是史蒂文·斯皮尔伯格导演的一部科幻冒险片，影片将于3月30日公映。",
        "电影《头号玩家》是史蒂文·斯皮尔伯格导演的一部科幻冒险片，影片将于4月30日公映。",
        id="a-value-the-question-does-not-ask-for",
    ),
    pytest.param(
        "如何申请退款？",
        "登录后进入订单页面，点击申请退款，退款将在7个工作日内原路退回。",
        "登录后进入订单页面，点击申请退款，退款将在15个工作日内原路退回。",
        id="a-how-to-question-asks-for-no-value",
    ),
    pytest.param(
        "香港第六届立法会选举有多少个议席？",
        "第六届立法会共有70个议席，经2016年9月4日的选举产生。",
        "立法会大楼位于香港中西区添马，于2011年启用，设有会议厅和多个委员会会议室。",
        id="unrelated-passages",
    ),
    pytest.param(
        "比赛在哪里举行？",
        "组委会宣布，所以男子比赛将在尼斯举行。",
        "组委会宣布，欧洲当地时间1月5日男子比赛将在尼斯举行。",
        id="a-date-on-one-side-only-is-no-value-of-one-kind",
    ),
]


@pytest.mark.parametrize(("question", "left", "right"), NOT_FOUND)
def test_passages_that_do_not_disagree_on_the_asked_value_are_no_candidate(
    question: str, left: str, right: str
) -> None:
    assert values(question, pair(left, right)) == []


def test_value_mentions_carry_absolute_offsets_into_the_document() -> None:
    prefix_left, prefix_right = "第一章 概况\n", "附录：历史资料。\n"
    left_text = "第六届立法会共有70个议席，经2016年9月4日的选举产生。"
    right_text = "第六届立法会共有170个议席，经2016年9月4日的选举产生。"
    docs = {"doc-e1": prefix_left + left_text, "doc-e2": prefix_right + right_text}
    views = [view("e1", left_text, prefix=prefix_left), view("e2", right_text, prefix=prefix_right)]
    (candidate,) = find_candidates(analyse("第六届立法会有多少个议席？"), views).candidates
    for mention in (candidate.left, candidate.right):
        assert docs[mention.doc_id][mention.start : mention.end] == mention.quote == mention.value
        assert mention.context_start is not None and mention.context_end is not None
        assert mention.quote in docs[mention.doc_id][mention.context_start : mention.context_end]


def test_two_versions_of_one_document_are_settled_by_rule_for_the_current_one() -> None:
    old = view(
        "e1",
        "会员每月可免费退货3次，超出部分按次收取运费，详见退货规则。",
        doc_id="returns",
        version="1",
        current=False,
    )
    new = view(
        "e2", "会员每月可免费退货5次，超出部分按次收取运费，详见退货规则。", doc_id="returns", version="2"
    )
    scan = find_candidates(analyse("会员每月可以免费退货几次？"), [old, new])
    assert scan.candidates == ()
    assert [(v.verdict, v.adjudicator, v.superseded_by) for v in scan.resolved] == [
        ("superseded", "rules", "e2")
    ]


def test_two_values_within_one_window_are_settled_by_rule_as_two_scopes() -> None:
    text = "会员每月可免费退货3次，超出部分收取运费。会员每月可免费退货5次，超出部分收取运费。"
    scan = find_candidates(analyse("会员每月可以免费退货几次？"), [view("e1", text)])
    assert scan.candidates == ()
    assert [
        (v.verdict, v.adjudicator, v.candidate.left.value, v.candidate.right.value) for v in scan.resolved
    ] == [("compatible", "rules", "3次", "5次")]


def test_one_document_in_two_sections_was_a_candidate_before_the_scope_rules() -> None:
    first = view("e1", "会员每月可免费退货3次，超出部分按次收取运费，详见退货规则。", doc_id="returns")
    second = view("e2", "会员每月可免费退货5次，超出部分按次收取运费，详见退货规则。", doc_id="returns")
    rules = ConflictRules.of(Policy.from_dict({}))  # a policy recorded before conflict_scopes
    scan = find_candidates(analyse("会员每月可以免费退货几次？"), [first, second], rules)
    assert [(c.kind, c.left.value, c.right.value) for c in scan.candidates] == [("count", "3次", "5次")]


def test_the_scan_is_the_same_whatever_order_the_windows_come_in() -> None:
    views = pair(
        "第六届立法会共有70个议席，经2016年9月4日的选举产生。",
        "第六届立法会共有170个议席，经2016年9月4日的选举产生。",
    )
    question = "第六届立法会有多少个议席？"
    assert find_candidates(analyse(question), views) == find_candidates(
        analyse(question), list(reversed(views))
    )
