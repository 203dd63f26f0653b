"""Aligning evidence texts: which pairs are worth aligning, and where two texts differ."""

from __future__ import annotations

import pytest

from evidence_loop.policies.conflicts.align import prepare, regions, share_context, text_pairs
from evidence_loop.policies.types import EvidenceView

RUN = 4


def _view(evidence_id: str, text: str) -> EvidenceView:
    return EvidenceView(evidence_id, evidence_id, "1", True, (), 0, len(text), text)


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        (
            "The warranty lasts 3 years from the date of delivery.",
            "The warranty lasts 2 years from the date of delivery.",
            True,
        ),
        ("The warranty lasts 3 years.", "Shipping takes five working days to most cities.", False),
        ("整机保修期为3年，自交付之日起计算。", "整机保修期为2年，自交付之日起计算。", True),
        ("整机保修期为3年。", "退货须在七天内申请。", False),
    ],
)
def test_texts_share_context_only_with_a_common_run_of_atoms(left: str, right: str, expected: bool) -> None:
    a, b = prepare(_view("a", left), frozenset(), RUN), prepare(_view("b", right), frozenset(), RUN)
    assert share_context(a, b) is expected


def test_a_region_is_the_differing_run_with_the_aligned_atoms_around_it() -> None:
    left = "the warranty lasts 3 years from delivery".split()
    right = "the warranty lasts 2 years from delivery".split()
    (region,) = regions(left, right, gap=2)
    assert (left[region.i1 : region.i2], right[region.j1 : region.j2]) == (["3"], ["2"])
    assert (region.before, region.after) == (3, 3)


def test_differences_a_few_atoms_apart_are_one_region() -> None:
    left = "born in Tampa , Florida in 1970".split()
    right = "born in Miami , Ohio in 1970".split()
    (region,) = regions(left, right, gap=2)
    assert left[region.i1 : region.i2] == ["Tampa", ",", "Florida"]


def test_differences_far_apart_are_two_regions() -> None:
    left = "a 1 b c d e f 2 g".split()
    right = "a 9 b c d e f 8 g".split()
    assert len(regions(left, right, gap=2)) == 2


def test_near_identical_sentences_of_one_window_are_paired_before_the_windows() -> None:
    text = "Returns are accepted within 30 days of delivery. Returns are accepted within 15 days of delivery."
    one, other = (
        prepare(_view("a", text), frozenset(), RUN),
        prepare(_view("b", "Unrelated."), frozenset(), RUN),
    )
    pairs = list(text_pairs([one, other], RUN, 0.6))
    assert len(pairs) == 2
    first, second = pairs[0]
    assert (first.view.evidence_id, len(first.sentences), len(second.sentences)) == ("a", 1, 1)
    assert {pairs[1][0].view.evidence_id, pairs[1][1].view.evidence_id} == {"a", "b"}
