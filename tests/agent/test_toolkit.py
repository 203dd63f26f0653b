"""The tools a model calls (agent.doors.api.toolkit), on the sample help centre: what each shows a caller,
and the text a model reads for each of the three outcomes."""

from __future__ import annotations

import pytest

from evidence_loop.agent.access.keys import LOCAL_CALLER, Caller
from evidence_loop.agent.doors.api import toolkit
from evidence_loop.agent.outcome import Citation, Conflict, ConflictSide, Missing, Outcome, Signals
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import InputError, NotFoundError

STAFF = Caller("staff-bot", frozenset({"staff"}), frozenset({"ask"}))
SIGNALS = Signals(relevance=0, bm25=0, coverage=0, slot_coverage=0, boundary=1, score=0, recalls=1, slides=0)


def test_get_document_returns_the_exact_span_a_citation_names(service: Service) -> None:
    whole = toolkit.get_document(service, toolkit.PUBLIC, "warranty-zh")
    span = toolkit.get_document(service, toolkit.PUBLIC, "warranty-zh", "1", 179, 212)
    assert span.text == whole.text[179:212] and (span.start, span.end, span.length) == (
        179,
        212,
        whole.length,
    )
    with pytest.raises(InputError, match=r"\[300:200\]"):
        toolkit.get_document(service, toolkit.PUBLIC, "warranty-zh", None, 300, 200)


def test_a_hidden_document_is_not_found_like_an_absent_one(service: Service) -> None:
    with pytest.raises(NotFoundError) as hidden:
        toolkit.get_document(service, toolkit.PUBLIC, "staff-discount-zh")
    with pytest.raises(NotFoundError) as absent:
        toolkit.get_document(service, toolkit.PUBLIC, "no-such-page")
    assert str(hidden.value).replace("staff-discount-zh", "X") == str(absent.value).replace(
        "no-such-page", "X"
    )
    assert toolkit.get_document(service, STAFF, "staff-discount-zh").text


def test_list_documents_and_search_show_only_what_the_caller_may_read(service: Service) -> None:
    public = {d.doc_id for d in toolkit.list_documents(service, toolkit.PUBLIC).documents}
    staff = {d.doc_id for d in toolkit.list_documents(service, STAFF).documents}
    assert staff - public == {"staff-discount-zh"}
    found = toolkit.search(service, toolkit.PUBLIC, "员工购机优惠", 10).hits
    assert found and all(hit.doc_id != "staff-discount-zh" for hit in found)
    assert any(
        hit.doc_id == "staff-discount-zh" for hit in toolkit.search(service, STAFF, "员工购机优惠", 10).hits
    )
    with pytest.raises(InputError, match="k must be"):
        toolkit.search(service, toolkit.PUBLIC, "warranty", 0)


def test_a_caller_may_narrow_its_groups_but_never_widen_them(service: Service) -> None:
    narrowed = toolkit.ask(service, STAFF, "员工购买学习设备打几折？", groups=[])
    assert narrowed.status == "insufficient_evidence"
    with pytest.raises(InputError, match="sales"):
        toolkit.ask(service, STAFF, "员工购买学习设备打几折？", groups=["staff", "sales"])
    local = Caller(LOCAL_CALLER, frozenset({"staff"}), frozenset({"ask"}))
    assert toolkit.ask(service, local, "员工购买学习设备打几折？").status == "answered"


def _cite(n: int, doc_id: str, quote: str) -> Citation:
    return Citation(
        n=n, evidence_id="e1", doc_id=doc_id, version="2", section=["S"], start=5, end=9, quote=quote
    )


@pytest.mark.parametrize(
    ("outcome", "says"),
    [
        (
            Outcome(
                run_id="r1",
                status="insufficient_evidence",
                question="q",
                signals=SIGNALS,
                missing=[Missing(kind="uncovered_slot", detail="no warranty period")],
            ),
            ["status: insufficient_evidence", "REFUSED", "- uncovered_slot: no warranty period"],
        ),
        (
            Outcome(
                run_id="r2",
                status="conflicting_evidence",
                question="q",
                signals=SIGNALS,
                conflicts=[
                    Conflict(
                        slot="duration",
                        values=[
                            ConflictSide(value="1年", citation=_cite(1, "a", "保修1年")),
                            ConflictSide(value="2年", citation=_cite(2, "b", "保修2年")),
                        ],
                        verdict="conflict",
                        adjudicator="rules",
                        reason="different values",
                    )
                ],
            ),
            [
                "status: conflicting_evidence",
                "REFUSED",
                "'1年' in a@2 [5:9]: 保修1年",
                "'2年' in b@2 [5:9]: 保修2年",
            ],
        ),
    ],
)
def test_a_model_reads_every_refusal_as_a_refusal_never_as_nothing(outcome: Outcome, says: list[str]) -> None:
    text = toolkit.outcome_text(outcome)
    assert all(part in text for part in says), text
    assert f"run_id: {outcome.run_id}" in text
