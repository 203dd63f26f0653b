"""Identifiers one character apart name different things: look-alikes are another subject, not a conflict."""

from __future__ import annotations

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.conflicts.candidates import ConflictRules, find_candidates
from evidence_loop.policies.evidence.slot_scope import about_other, look_alike
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.policies.types import EvidenceView


def view(evidence_id: str, text: str, section: tuple[str, ...] = ("Help",)) -> EvidenceView:
    return EvidenceView(evidence_id, f"doc-{evidence_id}", "1", True, section, 0, len(text), text)


@pytest.mark.parametrize(
    ("left", "right", "alike"),
    [
        ("quokka000x", "quokka001x", True),
        ("quokka001x", "quokka001y", True),  # one part differs
        ("lm-x201", "lm-x202", True),
        ("v2.1", "v3.0", True),  # only numbers differ
        ("第12条", "第13条", True),
        ("section4.2", "section4.3", True),
        ("lm-x200", "lm-s10", False),  # two parts differ, letters among them: another name
        ("v2.1", "v2.1.1", False),  # another pattern
        ("quokka001x", "quokka001x", False),  # the same identifier
    ],
)
def test_look_alikes_share_a_pattern_and_differ_in_numbers_or_one_part(
    left: str, right: str, alike: bool
) -> None:
    assert look_alike(left, right) is alike


@pytest.mark.parametrize(
    ("question", "text", "other"),
    [
        ("QUOKKA001X 的保修期是多久？", "QUOKKA000X 平板电脑的保修期为1年。", True),
        (
            "QUOKKA001X 的保修期是多久？",
            "QUOKKA001X 与 QUOKKA000X 的保修期相同。",
            False,
        ),  # names the asked one too
        ("QUOKKA001X 的保修期是多久？", "平板电脑的保修期为1年。", False),  # names no identifier
        ("QUOKKA001X 的保修期是多久？", "LM-S10 的保修期为3年。", False),  # another name, not a look-alike
        ("How long does a repair under clause 8 take?", "Repairs follow clause 7 of the terms.", True),
        (
            "第13条规定的期限是多少天？",
            "第十二条规定了退款期限。",
            True,
        ),  # Chinese numerals are read as numbers
        ("What changed in v2.2?", "Release notes for v2.2-beta.", False),  # the asked version, with a suffix
    ],
)
def test_a_text_naming_only_a_look_alike_of_the_asked_identifier_is_about_something_else(
    question: str, text: str, other: bool
) -> None:
    assert about_other(analyse(question).identifiers, [text]) is other


def test_two_pages_on_look_alike_models_are_no_conflict_about_the_asked_one() -> None:
    views = [
        view("e1", "The QUOKKA000X tablet is covered. The warranty period is 1 year from delivery."),
        view("e2", "The QUOKKA001X tablet is covered. The warranty period is 2 years from delivery."),
    ]

    scan = find_candidates(analyse("How long is the warranty period of the QUOKKA001X tablet?"), views)

    assert (scan.candidates, scan.resolved) == ((), ())


def test_a_page_about_a_look_alike_is_no_side_even_when_only_its_heading_names_it() -> None:
    views = [
        view("e1", "整机保修期为1年，自签收之日起计算。", section=("QUOKKA000X 保修说明",)),
        view("e2", "整机保修期为2年，自签收之日起计算。", section=("QUOKKA001X 保修说明",)),
    ]

    scan = find_candidates(analyse("QUOKKA001X 的整机保修期是多久？"), views)

    assert scan.candidates == ()


def test_with_the_rule_off_the_look_alikes_are_compared_as_before() -> None:
    views = [
        view("e1", "The QUOKKA000X tablet is covered. The warranty period is 1 year from delivery."),
        view("e2", "The QUOKKA001X tablet is covered. The warranty period is 2 years from delivery."),
    ]
    rules = ConflictRules.of(
        Policy(rival_ids=False, slot_values=False, attribute_values=False, conflict_scopes=False)
    )

    scan = find_candidates(analyse("How long is the warranty period of the QUOKKA001X tablet?"), views, rules)

    assert [(c.left.value, c.right.value) for c in scan.candidates] == [("000", "001")]
