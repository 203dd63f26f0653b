"""Window arithmetic: runs and spans, neighbours inside a section, merging, growing."""

from __future__ import annotations

import pytest

from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocumentInput, Hit, ParsedDocument
from evidence_loop.tools.windows import (
    Step,
    Window,
    char_count,
    merge_windows,
    neighbour,
    own_ordinals,
    runs,
    section_ordinals,
    seed_window,
    seeds_of,
    spans,
    with_units,
)

GUIDE = """# Refunds

This policy applies only to online orders. Refunds are paid within 7 days. This is done by the bank.

## Exceptions

Custom items are not covered. Gift cards are final.
"""
# ordinals: 0 "# Refunds", 1..3 sentences of Refunds, 4 "## Exceptions", 5..6 sentences of Exceptions


@pytest.fixture(scope="module")
def doc() -> ParsedDocument:
    return parse_document(DocumentInput("guide", GUIDE, format="markdown", title="Guide"))


def _window(*ordinals: int, doc_id: str = "guide", version: str = "1") -> Window:
    return Window(doc_id, version, tuple(ordinals))


def _step(move: str) -> Step:
    return Step(move, "sentence", "test", (0,), 0.1, 0.2)


def test_the_fixture_has_the_units_the_tests_name(doc: ParsedDocument) -> None:
    kinds = [u.kind for u in doc.units]
    assert kinds == ["heading", "sentence", "sentence", "sentence", "heading", "sentence", "sentence"]


@pytest.mark.parametrize(
    ("ordinals", "expected"),
    [
        ((2,), [(2, 2)]),
        ((1, 2, 3), [(1, 3)]),
        ((1, 2, 5), [(1, 2), (5, 5)]),
        ((1, 3, 5), [(1, 1), (3, 3), (5, 5)]),
    ],
)
def test_runs_are_the_maximal_consecutive_ordinal_ranges(
    ordinals: tuple[int, ...], expected: list[tuple[int, int]]
) -> None:
    assert runs(_window(*ordinals)) == expected


def test_spans_run_from_a_runs_first_unit_start_to_its_last_unit_end(doc: ParsedDocument) -> None:
    u = doc.units
    assert spans(_window(1, 2, 5), doc) == [(u[1].start, u[2].end), (u[5].start, u[5].end)]


def test_char_count_adds_up_the_spans_and_skips_the_text_between_runs(doc: ParsedDocument) -> None:
    u = doc.units
    expected = (u[2].end - u[1].start) + (u[5].end - u[5].start)
    assert char_count(_window(1, 2, 5), doc) == expected


def test_a_single_unit_window_hands_back_exactly_that_units_text(doc: ParsedDocument) -> None:
    ((start, end),) = spans(_window(2), doc)
    assert doc.text[start:end] == doc.units[2].text


@pytest.mark.parametrize(
    ("ordinal", "direction", "expected"),
    [
        (2, -1, 1),  # inside a section
        (2, +1, 3),
        (1, -1, 0),  # a section's own heading is let in
        (5, -1, 4),
        (3, +1, None),  # the next section's heading is a boundary
        (4, -1, None),  # a heading's left is the previous section
        (0, -1, None),  # start of the document
        (6, +1, None),  # end of the document
    ],
)
def test_neighbour_stays_inside_the_section_but_lets_its_heading_in(
    doc: ParsedDocument, ordinal: int, direction: int, expected: int | None
) -> None:
    found = neighbour(doc, ordinal, direction)
    assert (found.ordinal if found else None) == expected


def test_overlapping_windows_of_one_version_merge() -> None:
    merged = merge_windows([_window(1, 2), _window(2, 3)])
    assert [w.ordinals for w in merged] == [(1, 2, 3)]


def test_touching_windows_of_one_version_merge() -> None:
    merged = merge_windows([_window(1, 2), _window(3)])
    assert [w.ordinals for w in merged] == [(1, 2, 3)]


def test_windows_with_a_unit_between_them_stay_apart() -> None:
    merged = merge_windows([_window(1), _window(3)])
    assert [w.ordinals for w in merged] == [(1,), (3,)]


def test_windows_of_different_documents_never_merge() -> None:
    merged = merge_windows([_window(1, 2, doc_id="a"), _window(2, 3, doc_id="b")])
    assert [(w.doc_id, w.ordinals) for w in merged] == [("a", (1, 2)), ("b", (2, 3))]


def test_windows_of_different_versions_never_merge() -> None:
    merged = merge_windows([_window(1, 2, version="1"), _window(2, 3, version="2")])
    assert [(w.version, w.ordinals) for w in merged] == [("1", (1, 2)), ("2", (2, 3))]


def test_a_window_that_bridges_two_others_merges_all_three() -> None:
    merged = merge_windows([_window(1), _window(5), _window(2, 3, 4)])
    assert [w.ordinals for w in merged] == [(1, 2, 3, 4, 5)]


def test_merging_keeps_the_seeds_and_steps_of_both_windows(doc: ParsedDocument) -> None:
    a = seed_window(Hit(doc.units[1], 3.0, 0))
    b = with_units(seed_window(Hit(doc.units[2], 2.0, 1)), [3], _step("right"))
    (merged,) = merge_windows([a, b])
    assert [h.unit.ordinal for h in merged.seeds] == [1, 2]
    assert [s.move for s in merged.steps] == ["right"]


def test_merging_keeps_the_input_order_of_the_first_window() -> None:
    merged = merge_windows([_window(5), _window(1), _window(6)])
    assert [w.ordinals for w in merged] == [(5, 6), (1,)]


def test_with_units_keeps_ordinals_sorted_and_distinct() -> None:
    grown = with_units(_window(3, 4), [5, 1, 3, 1])
    assert grown.ordinals == (1, 3, 4, 5)


def test_with_units_appends_the_step_after_earlier_steps() -> None:
    grown = with_units(with_units(_window(3), [2], _step("left")), [4], _step("right"))
    assert [s.move for s in grown.steps] == ["left", "right"]


def test_with_units_without_a_step_keeps_the_history_unchanged() -> None:
    before = with_units(_window(3), [2], _step("left"))
    assert with_units(before, [4]).steps == before.steps


def test_a_seed_window_holds_its_hit_and_nothing_else(doc: ParsedDocument) -> None:
    hit = Hit(doc.units[2], 1.5, 0)
    window = seed_window(hit)
    assert (window.key, window.ordinals, window.seeds, window.steps) == (("guide", "1"), (2,), (hit,), ())


def test_seeds_of_shrinks_a_grown_window_back_to_its_seed_hits() -> None:
    doc = parse_document(DocumentInput("d", "第一句。第二句。第三句。第四句。"))
    hit = Hit(doc.units[1], 1.0, 0)
    grown = with_units(
        seed_window(hit), (0, 1, 2, 3), Step("parent", "section", "fits", (0, 1, 2, 3), 0.1, 0.2)
    )
    shrunk = seeds_of(grown)
    assert shrunk.ordinals == (1,) and shrunk.steps == () and shrunk.seeds == (hit,)


def test_own_ordinals_are_a_sections_units_without_its_subsections(doc: ParsedDocument) -> None:
    top, sub = doc.units[0].section_id, doc.units[4].section_id
    assert own_ordinals(doc, top) == (0, 1, 2, 3)
    assert section_ordinals(doc, top) == (0, 1, 2, 3, 4, 5, 6)
    assert own_ordinals(doc, sub) == (4, 5, 6)


def test_own_ordinals_of_a_version_replaced_in_place_are_read_from_its_new_text() -> None:
    first = parse_document(DocumentInput("same", "# A\n\nOne. Two.\n", format="markdown"))
    again = parse_document(DocumentInput("same", "# A\n\nOne.\n\n## B\n\nTwo.\n", format="markdown"))
    assert own_ordinals(first, first.units[0].section_id) == (0, 1, 2)
    assert own_ordinals(again, again.units[0].section_id) == (0, 1)
