"""A place a question names, in lower case or in Chinese, that no readable document names refuses
naming it (issue 31: "do u ship to canada" was answered with a Chinese shipping article that lists
where it delivers and does not name Canada)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import Policy
from evidence_loop.tools.types import DocumentInput

RETURNS = """# Returns and refunds

You can return any unopened item within 30 days of delivery. Opened items can be returned within 14 days if
they are faulty.

## How to start a return

1. Sign in and open **Orders**.
2. Choose the order and tap **Return item**.
3. Print the label and drop the parcel at any post office.

Refunds are paid back to the original card within 5 business days after we receive the parcel.
"""
SHIPPING_ZH = """# 配送说明

标准配送一般 3-5 个工作日送达，偏远地区可能需要 7 个工作日。

订单满 199 元免运费，不满 199 元收取 12 元运费。

港澳台地区暂不支持配送。
"""
REFUND_FAQ = """# Refund FAQ

**How long do refunds take?**
Refunds usually reach your card within 10 business days.
"""
PAGES = [
    DocumentInput(doc_id, text, title=text.splitlines()[0][2:], format="markdown")
    for doc_id, text in (("returns", RETURNS), ("shipping-zh", SHIPPING_ZH), ("refund-faq", REFUND_FAQ))
]


@pytest.fixture(scope="module")
def lexical(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    index: Path = tmp_path_factory.mktemp("places") / "index"
    service = Service.open(index, create=True)
    service.ingest(PAGES)
    yield service
    service.close()


def ask(service: Service, question: str, policy: Policy | None = None) -> Outcome:
    return Controller(policy).ask(service.store.snapshot(), question, run_id="test")


@pytest.mark.parametrize(
    ("question", "place", "message"),
    [
        ("do u ship to canada", "canada", "I couldn't find anything about canada in our help articles."),
        ("能寄到加拿大吗", "加拿大", "帮助文档里没有找到关于“加拿大”的内容。"),
        ("do you deliver to new zealand?", "new zealand", None),
    ],
)
def test_a_place_no_document_names_is_refused_by_its_name_in_any_case(
    lexical: Service, question: str, place: str, message: str | None
) -> None:
    outcome = ask(lexical, question)
    assert outcome.status == "insufficient_evidence"
    assert [(m.kind, m.value) for m in outcome.missing] == [("uncovered_slot", place)]
    assert f"the place '{place}'" in outcome.missing[0].detail
    if message is not None:
        assert outcome.missing[0].message == message


def test_a_place_a_region_of_the_corpus_holds_is_not_refused_as_absent(lexical: Service) -> None:
    outcome = ask(lexical, "can you ship to hong kong?")
    assert "hong kong" not in [m.value for m in outcome.missing]


def test_a_record_made_before_the_place_rule_does_not_refuse_by_the_place(lexical: Service) -> None:
    old = replace(Policy(), refuse_absent_places=False)
    assert "canada" not in [m.value for m in ask(lexical, "do u ship to canada", old).missing]
