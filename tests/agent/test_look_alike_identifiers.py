"""Pages one character apart in a model, clause or version: a question about one is answered from its page.

Each pair is two short pages that say the same thing of two identifiers with different values; asked
about the second, the loop used to stop with a conflict on the identifier itself ('000' vs '001').
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from evidence_loop.agent.loop.controller import Controller
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import DocumentInput


class Pair(NamedTuple):
    other: str
    asked: str
    page: str  # {id} and {value} are filled in per page
    values: tuple[str, str]
    question: str


PAIRS = [
    Pair("QUOKKA000X", "QUOKKA001X",
         "# {id} warranty\n\nThe {id} tablet is covered. The warranty period is {value} from delivery.",
         ("1 year", "2 years"), "How long is the warranty period of the QUOKKA001X tablet?"),
    Pair("LM-X201", "LM-X202",
         "# {id} charging\n\nThe {id} tablet is covered. A full charge of the battery takes {value}.",
         ("3 hours", "4 hours"), "How long does a full charge of the LM-X202 battery take?"),
    Pair("Section 4.2", "Section 4.3",
         "# {id} refunds\n\n{id} covers refunds. A refund request is accepted for {value} after delivery.",
         ("14 days", "30 days"), "How many days after delivery is a refund accepted under Section 4.3?"),
    Pair("clause 7", "clause 8",
         "# Repairs\n\nRepairs follow {id} of the terms. A repair takes {value} after the device arrives.",
         ("5 days", "9 days"), "How long does a repair under clause 8 take?"),
    Pair("firmware v2.1", "firmware v2.2",
         "# Calibration\n\nThese notes cover {id}. The battery calibration runs for {value} after updating.",
         ("2 hours", "6 hours"), "How long does the battery calibration run after updating firmware v2.2?"),
    Pair("QUOKKA000X", "QUOKKA001X",
         "{id} 平板电脑的保修期说明如下。整机保修期为{value}，自签收之日起计算。",
         ("1年", "2年"), "QUOKKA001X 平板电脑的保修期是多久？"),
    Pair("第12条", "第13条",
         "{id} 退款申请的期限说明如下。退款申请期限为签收后{value}，逾期不予受理。",
         ("7天", "15天"), "第13条 退款申请的期限是多少天？"),
    Pair("V3.0.1", "V3.0.2",
         "系统版本 {id} 的电池校准时间说明如下。电池校准时间为{value}，请保持充电。",
         ("2小时", "5小时"), "系统版本 V3.0.2 的电池校准时间是多久？"),
    Pair("TX-88A", "TX-88B",
         "{id} 路由器的保修期说明如下。整机保修期为{value}，自购买之日起计算。",
         ("1年", "3年"), "TX-88B 路由器的保修期是什么？"),
    Pair("第3.1.4节", "第3.1.5节",
         "{id} 偏远地区配送时间说明如下。偏远地区配送时间为{value}，节假日顺延。",
         ("5天", "8天"), "第3.1.5节 偏远地区配送时间是多少天？"),
]  # fmt: skip


@pytest.fixture
def snapshot_of(tmp_path: Path) -> Iterator[Callable[[Pair], Snapshot]]:
    stores: list[Store] = []

    def build(pair: Pair) -> Snapshot:
        store = Store.open(tmp_path / f"index-{len(stores)}", create=True)
        stores.append(store)
        store.ingest(
            [
                DocumentInput(doc_id=doc_id, version="1", title="Help page", format="markdown", text=text)
                for doc_id, text in (
                    ("other", pair.page.format(id=pair.other, value=pair.values[0])),
                    ("asked", pair.page.format(id=pair.asked, value=pair.values[1])),
                )
            ]
        )
        return store.snapshot()

    yield build
    for store in stores:
        store.close()


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{p.other}-vs-{p.asked}" for p in PAIRS])
def test_a_question_about_one_of_two_look_alike_identifiers_is_answered_from_its_own_page(
    snapshot_of: Callable[[Pair], Snapshot], pair: Pair
) -> None:
    snapshot = snapshot_of(pair)

    outcome = Controller().ask(snapshot, pair.question, run_id="test")

    assert outcome.status == "answered", outcome.conflicts
    assert outcome.answer is not None and pair.values[1] in outcome.answer.text
    assert {c.doc_id for c in outcome.answer.citations} == {e.doc_id for e in outcome.evidence} == {"asked"}
