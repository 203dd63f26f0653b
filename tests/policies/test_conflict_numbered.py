"""Sides naming different numbered things ("code 11" / "code 12", "Error 21" / "Error 34") or different
tiers of one product ("Shield Basic" / "Shield Plus") are about different subjects, and a thing's own
number is no value of it (policies.conflicts.numbered, read by policies.conflicts.screen)."""

from __future__ import annotations

from evidence_loop.policies.config import Policy
from evidence_loop.policies.conflicts.candidates import CandidateScan, ConflictRules, find_candidates
from evidence_loop.policies.conflicts.numbered import numbered_in
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.policies.types import EvidenceView

CODE_Q = "How long is a kestrel code valid?"
CODE_11 = "The kestrel code 11 is valid for 13 days after you receive it."
CODE_12 = "The kestrel code 12 is valid for 14 days after you receive it."


def view(evidence_id: str, text: str, lead: str = "") -> EvidenceView:
    return EvidenceView(evidence_id, f"doc-{evidence_id}", "1", True, (), 10, 10 + len(text), text, lead=lead)


def scan(question: str, *views: EvidenceView, policy: Policy | None = None) -> CandidateScan:
    return find_candidates(analyse(question), list(views), ConflictRules.of(policy or Policy()))


def test_numbered_things_and_tiers_are_read_with_their_series() -> None:
    text = "Error 21 means the cable is loose; 错误码34 表示过热; 第3步; Shield Plus costs more."

    assert [(n.series, n.number) for n in numbered_in(text)] == [
        ("error", "21"),
        ("错误码", "34"),
        ("步", "3"),
        ("shield", "plus"),
    ]


def test_two_documents_about_two_numbered_codes_are_set_aside() -> None:
    found = scan(CODE_Q, view("e1", CODE_11), view("e2", CODE_12))

    assert found.candidates == ()
    assert [d.reason for d in found.dropped] == [
        "the values are for different numbered things: 'code 11' / 'code 12'"
    ]


def test_before_the_rule_two_numbered_codes_were_one_attribute_with_two_values() -> None:
    old = Policy(conflict_numbered=False)  # the shipped policy as it was before the rule

    assert [
        (c.left.value, c.right.value)
        for c in scan(CODE_Q, view("e1", CODE_11), view("e2", CODE_12), policy=old).candidates
    ] == [("13 days", "14 days")]


def test_the_numbered_thing_named_earlier_on_the_line_scopes_the_statement() -> None:
    first = view(
        "e1",
        "Plug it back in and wait 2 minutes before restarting.",
        lead="Error 21 means the cable is loose. ",
    )
    second = view(
        "e2", "Unplug it and wait 10 minutes before restarting.", lead="Error 34 means it is too hot. "
    )

    found = scan("How long should I wait after error 21 before restarting?", first, second)

    assert found.candidates == ()
    assert [d.reason.split(":")[0] for d in found.dropped] == ["the values are for different numbered things"]


def test_two_tiers_of_one_product_are_two_subjects() -> None:
    row = "| Plan | Price |\n| --- | --- |\n| Shield Basic | $4.99 per month |"
    step = "Shield Plus is $9.99 a month."

    found = scan("How much is Shield Basic per month?", view("e1", row), view("e2", step))

    assert found.candidates == ()
    assert len(found.dropped) == 1


def test_a_codes_own_number_is_no_value_of_what_is_asked() -> None:
    weekly = "For the weekly pass, enter kestrel code {} at the gate within 7 days of purchase."
    question = "How many days is the weekly pass code valid?"

    found = scan(question, view("e1", weekly.format(11)), view("e2", weekly.format(12)))
    before = scan(
        question,
        view("e1", weekly.format(11)),
        view("e2", weekly.format(12)),
        policy=Policy(conflict_numbered=False),
    )

    assert found.candidates == ()
    assert [d.reason for d in found.dropped] == ["the value is the number of 'code 11', not a value of it"]
    assert [(c.left.value, c.right.value) for c in before.candidates] == [("11", "12")]
