"""The run page marks each cited sentence inside its evidence window: exactly the citation's offsets,
and only text whose sha256 the trace recorded (a citation resolved against it)."""

from __future__ import annotations

from typing import Any

from evidence_loop.agent.doors.api.audit_marks import Part, evidence_view, marked_parts

DOCUMENT = (
    "Intro line.\nThe LM-S10 is covered for 3 years. Batteries for 1 year. Chargers for 3 months.\nEnd."
)
WINDOW = {"evidence_id": "e1", "doc_id": "warranty", "version": "2", "start": 12, "end": 91}


def cite(n: int, text: str, **change: Any) -> dict[str, Any]:
    start = DOCUMENT.index(text)
    citation = {"n": n, "evidence_id": "e1", "doc_id": "warranty", "version": "2"}
    return {**citation, "start": start, "end": start + len(text), "quote": text, **change}


def window_text() -> str:
    return DOCUMENT[WINDOW["start"] : WINDOW["end"]]


def test_each_citation_inside_the_window_is_a_part_holding_exactly_its_offsets_text() -> None:
    citations = [cite(2, "Batteries for 1 year."), cite(1, "The LM-S10 is covered for 3 years.")]

    parts = marked_parts(WINDOW, window_text(), citations)

    cited = [p for p in parts if p.n is not None]
    assert [(p.n, p.text) for p in cited] == [
        (1, "The LM-S10 is covered for 3 years."),
        (2, "Batteries for 1 year."),
    ]
    assert all(p.text == DOCUMENT[p.start : p.end] for p in parts)
    assert "".join(p.text for p in parts) == window_text()


def test_a_citation_whose_text_was_not_resolved_against_its_sha256_is_not_marked() -> None:
    unresolved = cite(1, "Batteries for 1 year.")
    del unresolved["quote"]
    unresolved["unresolved"] = "the store holds other text there"

    parts = marked_parts(WINDOW, window_text(), [unresolved])

    assert parts == (Part(window_text(), 12, 91),)


def test_a_citation_whose_resolved_text_differs_from_the_window_is_not_marked() -> None:
    parts = marked_parts(
        WINDOW, window_text(), [cite(1, "Batteries for 1 year.", quote="Batteries for 9 years")]
    )

    assert [p.n for p in parts] == [None]


def test_a_citation_of_another_window_or_version_is_not_marked_here() -> None:
    other_window = cite(1, "Batteries for 1 year.", evidence_id="e2")
    other_version = cite(2, "Chargers for 3 months.", version="1")

    assert [p.n for p in marked_parts(WINDOW, window_text(), [other_window, other_version])] == [None]


def test_a_citation_reaching_outside_the_window_is_not_marked() -> None:
    assert [p.n for p in marked_parts(WINDOW, window_text(), [cite(1, "months.\nEnd.")])] == [None]


def test_of_two_overlapping_citations_the_first_is_marked() -> None:
    parts = marked_parts(
        WINDOW, window_text(), [cite(1, "covered for 3 years."), cite(2, "3 years. Batteries")]
    )

    assert [p.n for p in parts if p.n is not None] == [1]


def test_an_evidence_view_whose_text_is_gone_marks_nothing() -> None:
    item = {**WINDOW, "unresolved": "the store does not hold warranty@2"}

    view = evidence_view(item, None, [cite(1, "Batteries for 1 year.")])

    assert view.gone and view.parts == () and view.cited == ()


def test_an_evidence_view_of_a_rewritten_version_still_marks_inside_the_span_the_run_read() -> None:
    item = {**WINDOW, "text": window_text()}

    view = evidence_view(item, "rewritten since", [cite(1, "Batteries for 1 year.")], replaced=True)

    assert view.note and view.before == "" and view.cited == (1,)
