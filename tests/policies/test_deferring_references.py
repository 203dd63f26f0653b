"""A reference the corpus lacks refuses only when the unit that answers defers to it (issue 31, class 2);
otherwise the answer stands and the reference is a note beside it."""

from __future__ import annotations

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.decision.missing import answer_notes, missing_pieces
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.completeness import check_window
from evidence_loop.policies.evidence.references import names_a_document, referenced_document
from evidence_loop.policies.question.analysis import Question, Reading, analyse
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocumentInput
from evidence_loop.tools.windows import Window

REFUNDS_EN = (
    "You can ask for a refund within 45 days of purchase. The money is paid back within 5 business days. "
    "Accounts closed for abuse are governed by the Acceptable Use Policy.\n"
)
RESTOCKING_EN = (
    "Select the order and click Return items. A restocking fee applies to opened items returned without a "
    "defect; the amount is listed in the Price List.\n"
)
REPAIR_ZH = "保修期外的设备可以付费维修。具体费用详见《维修收费标准》。维修过的部件享有90天保修。\n"
MEASURED = Reading(measures=True)


def _item(question: Question, text: str, policy: Policy) -> Checked:
    doc = parse_document(DocumentInput("doc", text))
    window = Window(doc.doc_id, doc.version, tuple(range(len(doc.units))))
    return Checked(window, doc, check_window(question, window, doc, 5.0, policy), 5.0)


DEFERRED = [
    ("How much is the restocking fee for an opened item?", RESTOCKING_EN),
    ("保修期外维修要多少钱？", REPAIR_ZH),
]


@pytest.mark.parametrize(("question", "text"), DEFERRED, ids=[q for q, _ in DEFERRED])
def test_a_reference_the_answering_unit_defers_to_refuses(question: str, text: str) -> None:
    asked = analyse(question, reading=MEASURED)
    pieces = missing_pieces(asked, [_item(asked, text, Policy())], Policy())
    assert [p.kind for p in pieces] == ["unresolved_reference"]


def test_a_reference_the_answer_does_not_need_is_a_note_not_a_refusal() -> None:
    asked = analyse("How long do I have to ask for a refund?", reading=MEASURED)
    items = [_item(asked, REFUNDS_EN, Policy())]
    assert missing_pieces(asked, items, Policy()) == []
    assert [(p.kind, p.value) for p in answer_notes(asked, items, Policy())] == [
        ("unresolved_reference", "Acceptable Use Policy")
    ]


WIFI_EN = (
    "Wi-Fi problems\n\n- Turn on the 2.4 GHz band of your router. The C200 works with 2.4 GHz Wi-Fi "
    "only, not 5 GHz. For your router's settings, see the Home Network Guide.\n"
    "- Restart the router and try again.\n"
)
WIFI_ZH = (
    "连不上 Wi-Fi 怎么办\n\n- 确保路由器已开启2.4GHz频段。C200仅支持2.4GHz Wi-Fi，不支持5GHz。"
    "路由器的详细设置方法详见《家庭网络配置指南》。\n- 重启路由器后再试。\n"
)
BESIDE = [
    ("Can the C200 connect to 5 GHz Wi-Fi?", WIFI_EN, "Home Network Guide"),
    ("C200 能连 5GHz 的 Wi-Fi 吗？", WIFI_ZH, "家庭网络配置指南"),
]


@pytest.mark.parametrize(("question", "text", "name"), BESIDE, ids=[q for q, _, _ in BESIDE])
def test_a_reference_beside_the_answering_sentence_of_its_list_item_is_a_note(
    question: str, text: str, name: str
) -> None:
    asked = analyse(question, reading=MEASURED)
    items = [_item(asked, text, Policy())]
    assert missing_pieces(asked, items, Policy()) == []
    notes = answer_notes(asked, items, Policy())
    assert [(p.kind, p.value) for p in notes] == [("unresolved_reference", name)]


def test_without_the_rule_every_unresolved_reference_refuses() -> None:
    policy = Policy(deferring_references=False)
    asked = analyse("How long do I have to ask for a refund?")
    items = [_item(asked, REFUNDS_EN, policy)]
    assert [p.kind for p in missing_pieces(asked, items, policy)] == ["unresolved_reference"]
    assert answer_notes(asked, items, policy) == []


DOCUMENTS = [
    ("the amount is listed in the Price List.", "Price List"),
    ("Express shipping fees are shown in the Shipping Rate Table.", "Shipping Rate Table"),
    ("Mount it at the height recommended in the Outdoor Mounting Guide.", "Outdoor Mounting Guide"),
    ("偏远地区的运费按《偏远地区运费标准》收取。", "偏远地区运费标准"),
]


@pytest.mark.parametrize(("text", "name"), DOCUMENTS, ids=[n for _, n in DOCUMENTS])
def test_a_document_a_unit_says_holds_what_it_leaves_out_is_a_reference(text: str, name: str) -> None:
    assert referenced_document(text) == name
    assert names_a_document(name)


@pytest.mark.parametrize("name", ["Guide", "Mobile Playing", "2021中国电影年度调查报告"])
def test_a_link_or_a_report_is_no_document_the_answer_defers_to(name: str) -> None:
    assert not names_a_document(name)
