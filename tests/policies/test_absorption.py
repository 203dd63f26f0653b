"""Adding a grown window to a run's windows: windows of one document that touch or overlap merge."""

from __future__ import annotations

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.absorption import absorb
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.completeness import check_window
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocumentInput, Hit, ParsedDocument
from evidence_loop.tools.windows import Window

FILLER = " ".join(f"Sentence number {i:02d}." for i in range(10)) + "\n"
QUESTION = analyse("Which sentence number?")


@pytest.fixture(scope="module")
def filler() -> ParsedDocument:
    return parse_document(DocumentInput("f", FILLER, title="F"))


@pytest.fixture(scope="module")
def other() -> ParsedDocument:
    return parse_document(DocumentInput("g", FILLER, title="G"))


def _grown(doc: ParsedDocument, *ordinals: int, best: float = 1.0) -> Checked:
    window = Window(doc.doc_id, doc.version, ordinals, (Hit(doc.units[ordinals[0]], best, 0),))
    return Checked(window, doc, check_window(QUESTION, window, doc, best, Policy()), best)


def _spans(items: list[Checked]) -> list[tuple[str, tuple[int, ...]]]:
    return [(c.window.doc_id, c.window.ordinals) for c in items]


def test_a_window_apart_from_the_others_is_added_as_it_is(filler: ParsedDocument) -> None:
    assert _spans(absorb(QUESTION, [_grown(filler, 0, 1)], _grown(filler, 5, 6), Policy())) == [
        ("f", (0, 1)),
        ("f", (5, 6)),
    ]


def test_overlapping_windows_of_one_document_merge_and_are_checked_again(filler: ParsedDocument) -> None:
    merged = absorb(QUESTION, [_grown(filler, 0, 1, 2)], _grown(filler, 2, 3, best=2.0), Policy())
    assert _spans(merged) == [("f", (0, 1, 2, 3))]
    assert merged[0].best == 2.0
    assert merged[0].check == check_window(QUESTION, merged[0].window, filler, 2.0, Policy())


def test_a_window_that_bridges_two_others_merges_all_three(filler: ParsedDocument) -> None:
    items = [_grown(filler, 0, 1), _grown(filler, 4, 5)]
    assert _spans(absorb(QUESTION, items, _grown(filler, 2, 3), Policy())) == [("f", (0, 1, 2, 3, 4, 5))]


def test_windows_of_two_documents_never_merge(filler: ParsedDocument, other: ParsedDocument) -> None:
    assert _spans(absorb(QUESTION, [_grown(filler, 0, 1)], _grown(other, 1, 2), Policy())) == [
        ("f", (0, 1)),
        ("g", (1, 2)),
    ]
