"""Boundary signals on one unit's text: cut sentences, scopes, dangling openings, exceptions."""

from __future__ import annotations

import pytest

from evidence_loop.policies.evidence.boundary import (
    exception_clause,
    heading_like,
    is_cut_sentence,
    opens_dangling,
    scope_condition,
)
from evidence_loop.tools.types import UnitKind

CUT: list[tuple[str, UnitKind, bool]] = [
    ("保修期为三年，", "sentence", True),
    ("退款将在三个工作日内到账，以及", "sentence", True),
    ("支持的颜色包括红色、", "sentence", True),
    ("You can return it within 30 days, and", "sentence", True),
    ("Refunds are issued to the original payment method of the customer who paid", "sentence", True),
    ("若员工未加入考勤组，则按照默认的加班规则计算", "sentence", True),
    ("苹果和", "sentence", True),
    ("- 登录后台，", "list_item", True),
    ("保修期为三年。", "sentence", False),
    ("他说：“好的。”", "sentence", False),  # closing quotes after the end mark
    ("（详见第3条。）", "sentence", False),
    ("You can return it within 30 days.", "sentence", False),
    ("Tap Save .", "sentence", False),
    ("参数如下：", "sentence", False),
    ("Follow the steps as follows:", "sentence", False),
    ("请稍等……", "sentence", False),
    ("Manually connect to a Wi-Fi network", "sentence", False),  # a title
    ("HDMI IN", "sentence", False),  # an upper-case label, not the word "in"
    ("用户参与", "sentence", False),  # "参与" ends with 与 but is not the connective
    ("退款规则", "heading", False),
    ("| 套餐 | 价格", "table_row", False),
    ("| 套餐 | 价格 |", "table_header", False),
    ("for i in range(3):", "code", False),
    ("- Tap Save", "list_item", False),  # a list item needs no end punctuation
    ("", "sentence", False),
]


@pytest.mark.parametrize(("text", "kind", "expected"), CUT, ids=[f"{k}:{t}" for t, k, _ in CUT])
def test_is_cut_sentence_spots_units_that_stop_mid_sentence(
    text: str, kind: UnitKind, expected: bool
) -> None:
    assert is_cut_sentence(text, kind) is expected


HEADINGS = [
    ("退款规则", True),
    ("Manually connect to a Wi-Fi network", True),
    ("## Access Settings", True),
    ("保修期为三年，", False),
    ("保修期为三年。", False),
    ("Refunds are issued to the original payment method within 30 days of the request", False),
]


@pytest.mark.parametrize(("text", "expected"), HEADINGS)
def test_heading_like_tells_titles_from_sentences(text: str, expected: bool) -> None:
    assert heading_like(text) is expected


SCOPES = [
    ("本节适用于尚未开课的班级。", "本节适用于尚未开课的班级"),
    ("本条仅适用于企业版用户；", "本条仅适用于企业版用户"),
    ("以下情况不予退款：", "以下情况不予退款"),
    ("下列人员可以申请：", "下列人员可以申请"),
    ("仅限新用户参与。", "仅限新用户参与"),
    ("本活动仅限新用户参与，老用户不可参加。", "本活动仅限新用户参与"),
    ("您好，如果您无法打卡，可以根据以下几点来检查一下哦：", "如果您无法打卡"),
    ("若订单已发货：", "若订单已发货"),
    ("当订单已发货时", "当订单已发货时"),
    ("在课程开始前，请注意以下事项：", "在课程开始前"),
    (
        "This section applies to classes that have not started.",
        "this section applies to classes that have not started",
    ),
    (
        "The warranty applies only to devices bought in the US.",
        "the warranty applies only to devices bought in the us",
    ),
    ("The following conditions apply:", "the following conditions apply"),
    ("If you paid by card, follow these steps:", "if you paid by card"),
    ("For business customers, invoices are monthly.", "for business customers"),
    ("Only for members who joined before 2020.", "only for members who joined before 2020"),
]


@pytest.mark.parametrize(("text", "expected"), SCOPES, ids=[t for t, _ in SCOPES])
def test_scope_condition_returns_the_scope_a_unit_sets(text: str, expected: str) -> None:
    assert scope_condition(text) == expected


NO_SCOPE = [
    "您好，考勤打卡是钉钉专门针对企业员工上下班打卡的一款考勤应用。",
    "如何设置访客扫脸进门",
    "当前仅支持Android设备。",  # 当前 = "currently"
    "若干用户反馈无法登录。",  # 若干 = "several"
    "以下是操作步骤：",  # a list intro, not a scope
    "在线课堂结束后，会自动保存一份录像。",  # 在线 = "online"
    "若员工未加入考勤组，则按照默认规则计算。",  # the condition governs its own sentence only
    "当订单已发货时，无法取消订单。",
    "If your TV is not found, turn both devices off and on.",
    "For more information, see Location .",
    "Check if the TV is on.",
    "对于“年下恋”你能接受吗？",  # a question, not a condition
    "如果没有这些缺点这款游戏真的要拿100分了",
]


@pytest.mark.parametrize("text", NO_SCOPE)
def test_scope_condition_ignores_units_that_set_no_scope(text: str) -> None:
    assert scope_condition(text) is None


DANGLING = [
    ("该功能仅对管理员开放。", "该"),
    ("您好，该功能暂不支持。", "该"),
    ("此外，还可以设置提醒。", "此外"),
    ("此功能需要开通会员。", "此"),
    ("上述操作完成后即可。", "上述"),
    ("以上方法均可。", "以上"),
    ("但是需要管理员审批。", "但是"),
    ("其中，年假不计入。", "其中"),
    ("另外，可以设置提醒。", "另外"),
    ("因此无法退款。", "因此"),
    ("否则无法打卡。", "否则"),
    ("它会自动同步。", "它"),
    ("这些数据会保留30天。", "这些"),
    ("This feature requires a plan.", "this"),
    ("These settings are saved.", "these"),
    ("It is recommended that you update.", "it"),
    ("It’s on by default.", "it"),
    ("However, you can turn it off.", "however"),
    ("In this case, tap Retry.", "in this case"),
    ("In addition, apps may close.", "in addition"),
    ("Otherwise the TV restarts.", "otherwise"),
    ("They are listed below.", "they"),
    ("- It also works offline.", "it"),
]


@pytest.mark.parametrize(("text", "expected"), DANGLING, ids=[t for t, _ in DANGLING])
def test_opens_dangling_returns_the_word_that_needs_what_came_before(text: str, expected: str) -> None:
    assert opens_dangling(text) == expected


NOT_DANGLING = [
    "应该如何设置？",  # 应该 is not 该
    "该如何设置？",  # 该 as "should"
    "这边建议您联系管理员。",  # 这边 = "we"
    "其他组件不能绑定变量。",
    "管理员可以设置该功能。",  # 该 not at the start
    "Items are listed by date.",  # "It" inside "Items"
    "Theme settings are saved.",
    "This section applies to new users.",  # points at its section, not the sentence before
    "Tap Settings.",
]


@pytest.mark.parametrize("text", NOT_DANGLING)
def test_opens_dangling_ignores_ordinary_openings(text: str) -> None:
    assert opens_dangling(text) is None


EXCEPTIONS = [
    ("节假日除外。", "除外"),
    ("特殊商品例外。", "例外"),
    ("除法定节假日外，均可办理。", "除…外"),
    ("除节假日以外均可办理。", "除…以外"),
    ("除了管理员，其他人都无法查看。", "除了"),
    ("本规则不适用于企业版。", "不适用"),
    ("费用不包括运费。", "不包括"),
    ("价格不含税。", "不含"),
    ("除非另有约定。", "除非"),
    ("不在保修范围内。", "不在…范围"),
    ("All devices except the X200.", "except"),
    ("Refunds are final unless the item is faulty.", "unless"),
    ("Prices excluding tax.", "excluding"),
    ("This does not apply to refurbished units.", "does not apply"),
    ("Water damage is not covered.", "not covered"),
    ("除节假日外，不适用于团购订单。", "除…外"),  # the first marker wins
]


@pytest.mark.parametrize(("text", "expected"), EXCEPTIONS, ids=[t for t, _ in EXCEPTIONS])
def test_exception_clause_returns_the_marker(text: str, expected: str) -> None:
    assert exception_clause(text) == expected


NO_EXCEPTION = [
    "删除后无法恢复。",
    "排除故障的方法。",
    "点击删除外部联系人。",
    "移除外部成员。",
    "除了钉钉，还可以用邮箱登录。",  # additive "besides"
    "除此之外，还应设置过期时间。",
    "除夕当天照常发货。",
    "除了余额宝、花呗，还可选择其他冻结渠道。",  # "还" adds to the list
    "可用金额是扣除了订单运费后的卖家所得，其他费用另计。",  # 扣除 is a verb
    "Exceptional service every day.",
    "Unlimited data on all plans.",
]


@pytest.mark.parametrize("text", NO_EXCEPTION)
def test_exception_clause_ignores_look_alikes(text: str) -> None:
    assert exception_clause(text) is None
