"""Cross-references: where a unit sends the reader, which names are rules, and which the evidence resolves."""

from __future__ import annotations

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.completeness import check_window
from evidence_loop.policies.evidence.references import (
    cross_reference,
    names_a_rule,
    reference_resolved,
    window_references,
)
from evidence_loop.policies.question.analysis import Question, analyse
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocFormat, DocumentInput, ParsedDocument
from evidence_loop.tools.windows import Window

COURSE_ZH = (
    "本节规定仅适用于尚未开课的常规班报名。学员可免费改期一次。"
    "已开课的学员须按另一份《在读学员改期规则》处理。\n"
)
ENROLLED_OTHER_TITLE_ZH = "在读学员改期规则：已开课学员可改期一次，须提前3天申请。\n"
WARRANTY_ZH = "LM-S10 整机保修期为3年。电池保修期为1年。\n"
RESCHEDULE = "常规班可以免费改期吗？"


def _parse(text: str, fmt: DocFormat = "text", doc_id: str = "d", title: str = "T") -> ParsedDocument:
    return parse_document(DocumentInput(doc_id, text, format=fmt, title=title))


def _w(*ordinals: int) -> Window:
    return Window("d", "1", tuple(ordinals))


def _item(question: Question, doc: ParsedDocument) -> Checked:
    window = Window(doc.doc_id, doc.version, tuple(range(len(doc.units))))
    return Checked(window, doc, check_window(question, window, doc, 5.0, Policy()), 5.0)


REFERENCES = [
    ("须按另一份《在读学员改期规则》处理。", "在读学员改期规则"),
    ("须按照在读学员改期规则处理。", "在读学员改期规则"),
    ("详见第3条。", "第3条"),
    ("见第三条。", "第三条"),
    ("具体请参见退款政策。", "退款政策"),
    ("详见《会员服务协议》。", "会员服务协议"),
    ("适用《消费者权益保护法》相关规定。", "消费者权益保护法"),
    ("以《用户协议》为准。", "用户协议"),
    ("详情请参考开放平台文档：", "开放平台文档"),
    ("See Wireless PowerShare .", "Wireless PowerShare"),
    ("For more information, see Transfer data from an old device .", "Transfer data from an old device"),
    ("see section 3.2 for details", "section 3.2"),
    ("Please refer to the refund policy.", "refund policy"),
    ("Fees are as described in the Terms of Service.", "Terms of Service"),
    ("Refunds are governed by the Returns Policy.", "Returns Policy"),
    ("Students must see the rules for enrolled students.", "rules for enrolled students"),
    ("Refunds are handled according to the Refund Policy.", "Refund Policy"),
    ("(see §4)", "§4"),
]


@pytest.mark.parametrize(("text", "expected"), REFERENCES, ids=[t for t, _ in REFERENCES])
def test_cross_reference_returns_a_searchable_name(text: str, expected: str) -> None:
    assert cross_reference(text) == expected


NO_REFERENCE = [
    "See your carrier for more information.",
    "- Analyze storage : See what’s taking up space in your storage.",
    "Tap See all to open the complete list of apps.",
    "Tap Payment to see the default payment app.",
    "See if Sleep Timer has been enabled.",
    "See how to list the channels available on your TV.",
    "See below for some useful tips about your camera.",
    "For more information, visit samsung.com/us/support/frp .",
    "Settings are restored as described above.",
    "Videos are played according to the TV settings.",
    "Prices are subject to change.",
    "供您参考。",
    "请参考以下步骤检查。",
    "可参考上方配置步骤。",
    "请按照以下步骤注册沙箱账号。",
    "按照页面提示操作即可。",
    "员工按照考勤规则打卡即可。",
    "请参考：",  # the link text was stripped
    "开放平台支持的签名算法，详见由于计算能力的飞速发展，新增了签名算法。",  # the next sentence ran on
    "验签详见同步通知参数和同步响应参数是不一样的。",
    "按照“设置”-“通用”操作。",  # UI labels, not documents
    "以“会员日”为例。",
    "梁冠华在《相逢时节》中演的谁",  # a title, but nothing sends the reader to it
    "而根据网传的数字计算，《三体》动画的制作成本更高。",  # 根据 governs another clause
    "具体详见正文。",
    "请参考第1点群文件的批量删除方法。",  # a point of the same article
    "按照有关规定执行。",  # names no rule
    "详情参考小程序建议将页面栈深度控制在10层以内。",
]


@pytest.mark.parametrize("text", NO_REFERENCE)
def test_cross_reference_ignores_pointers_that_name_no_other_rule(text: str) -> None:
    assert cross_reference(text) is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("在读学员改期规则", True),
        ("第3条", True),
        ("退款政策", True),
        ("Refund Policy", True),
        ("section 3.2", True),
        ("Terms of Service", True),
        ("Wireless PowerShare", False),
        ("设置页面", False),
        ("the settings screen", False),
    ],
)
def test_a_reference_counts_only_when_it_names_a_rule_policy_or_section(name: str, expected: bool) -> None:
    assert names_a_rule(name) is expected


def test_window_references_lists_the_rules_its_units_send_the_reader_to() -> None:
    assert window_references(_parse(COURSE_ZH), _w(0, 1, 2)) == ("在读学员改期规则",)


def test_window_references_ignores_pointers_that_name_no_rule() -> None:
    doc = _parse("Wireless charging works on the back. See Wireless PowerShare.\n")
    assert window_references(doc, _w(0, 1)) == ()


def test_english_rules_that_apply_count_as_a_reference() -> None:
    doc = _parse("Enrolled students are different. The Enrolled Student Rules apply.\n")
    assert window_references(doc, _w(0, 1)) == ("Enrolled Student Rules",)


def test_a_reference_is_resolved_by_another_window_whose_text_carries_the_rule() -> None:
    question = analyse(RESCHEDULE)
    course = _item(question, _parse(COURSE_ZH, doc_id="course"))
    enrolled = _item(question, _parse(ENROLLED_OTHER_TITLE_ZH, doc_id="enrolled", title="常见问题"))
    assert reference_resolved("在读学员改期规则", course, [course, enrolled], Policy()) is True


def test_a_window_never_resolves_its_own_reference() -> None:
    course = _item(analyse(RESCHEDULE), _parse(COURSE_ZH, doc_id="course"))
    assert reference_resolved("在读学员改期规则", course, [course], Policy()) is False


def test_a_window_about_something_else_does_not_resolve_the_reference() -> None:
    question = analyse(RESCHEDULE)
    course = _item(question, _parse(COURSE_ZH, doc_id="course"))
    other = _item(question, _parse(WARRANTY_ZH, doc_id="w", title="保修政策"))
    assert reference_resolved("在读学员改期规则", course, [course, other], Policy()) is False
