"""The question read against its corpus: which tokens are model numbers, which words weigh in coverage,
which things it asks about no readable passage names (issue 31, classes 1, 3 and 6)."""

from __future__ import annotations

import pytest

from evidence_loop.policies.question.analysis import Reading, analyse
from evidence_loop.policies.question.named import asking_clause, identifier_slot
from evidence_loop.policies.question.slots import extract_slots
from tests.policies.corpus_terms import PassageTerms

HELP_CENTRE = PassageTerms(
    [
        "Cam C200 setup. The Cam C200 connects to 2.4 GHz Wi-Fi only. Hold the reset button for 10 seconds.",
        "Cam C200 Pro specs. Battery 6500 mAh. The C200 Pro supports 5 GHz and 2.4 GHz Wi-Fi.",
        "Two-step verification adds a 6-digit code when you sign in. Trusted devices skip it for 30 days.",
        "Discounts. Annual billing gets a 20% discount on every plan. Workspace Business costs $29 per user.",
        "Pay by credit card or PayPal.",
        "TV models: the 55Q80T and the 65Q90T support HDR. Export links stay valid for 7 days.",
        "C100 充电约需2小时，充满电可使用3个月。保修期为1年。",
    ]
)
EVERYDAY = Reading(identifiers=True)


def models(question: str) -> list[str]:
    """The model numbers a question names, read against the help centre."""
    slots = analyse(question, corpus=HELP_CENTRE, reading=EVERYDAY).slots
    return [s.norm for s in slots if s.kind == "model"]


NOT_MODELS = [
    "How do I turn on 2FA?",
    "I'm stuck at step 3 of the setup",
    "Does the camera record in 4K?",
    "My router is 5G, will it connect?",
    "Does it support Wi-Fi 6?",
    "Is the charging cable USB-C?",
    "Which codec does it use, H.264?",
    "Is setup really just 3 steps?",
    "Does it stream 1080p?",
    "Is support open 24h?",
    "How does the 3-step verification work?",
]


@pytest.mark.parametrize("question", NOT_MODELS)
def test_an_everyday_token_mixing_letters_and_digits_is_no_model_number(question: str) -> None:
    assert models(question) == []


MODELS = [
    ("How long is the warranty of the C200?", ["c200"]),
    ("Does the Hub H20 support more cameras?", ["h20"]),  # product-code shape, named nowhere
    ("What is the battery of the LM-S10?", ["lm-s10"]),
    ("Does the 75Q90T support HDR?", ["75q90t"]),  # digit-led, but its family is in the corpus
    ("What's the battery capacity of the C200 Pro?", ["c200pro"]),  # a variant is another model
]


@pytest.mark.parametrize(("question", "expected"), MODELS, ids=[q for q, _ in MODELS])
def test_a_token_the_corpus_uses_as_an_identifier_is_a_model_number(
    question: str, expected: list[str]
) -> None:
    assert models(question) == expected


def test_a_digit_led_token_whose_family_the_corpus_does_not_name_is_no_model_number() -> None:
    (slot,) = extract_slots("Does the 870EVO fit?")
    assert not identifier_slot(slot, HELP_CENTRE.mixed_tokens())


def test_without_the_reading_every_letters_and_digits_token_stays_a_model_number() -> None:
    assert [s.norm for s in analyse("How do I turn on 2FA?").slots] == ["2fa"]


def durations(question: str, reading: Reading = EVERYDAY) -> list[str]:
    """The durations a question names as slots, read against the help centre."""
    slots = analyse(question, corpus=HELP_CENTRE, reading=reading).slots
    return [s.value for s in slots if s.kind == "duration"]


@pytest.mark.parametrize("question", ["基础版在香港多少钱一个月？", "How much for one month of Plus?"])
def test_one_unit_of_time_right_after_a_price_asked_is_the_rate_period_and_no_slot(question: str) -> None:
    assert durations(question) == []


NAMED_DURATIONS = [("三个月多少钱？", "三个月"), ("多少钱三个月？", "三个月"), ("保修一年吗？", "一年")]


@pytest.mark.parametrize(("question", "named"), NAMED_DURATIONS)
def test_a_duration_that_is_no_rate_period_stays_a_slot(question: str, named: str) -> None:
    assert durations(question) == [named]


def test_without_the_reading_a_rate_period_stays_a_slot() -> None:
    assert durations("基础版多少钱一个月？", Reading()) == ["一个月"]


ASKING = [
    ("I bought it at a mall last week, how long is the warranty?", " how long is the warranty"),
    ("How long is the warranty? I bought it at a mall.", "How long is the warranty"),
    ("我们公司用的是企业版，提了工单一般多久有人响应？", "提了工单一般多久有人响应"),
    ("How long is the warranty", "How long is the warranty"),
]


@pytest.mark.parametrize(("question", "clause"), ASKING, ids=[q for q, _ in ASKING])
def test_the_asking_clause_leaves_the_context_a_customer_adds_out(question: str, clause: str) -> None:
    assert asking_clause(question) == clause


def weights(question: str) -> dict[str, float]:
    analysed = analyse(
        question,
        weigh=lambda terms: dict.fromkeys(terms, 2.0),
        corpus=HELP_CENTRE,
        reading=Reading(informative=True, context_weight=0.25),
    )
    return dict(zip(analysed.terms, analysed.weights, strict=True))


def test_a_filler_weighs_nothing_in_coverage() -> None:
    assert weights("C100 大概充电要多久的话")["大概"] == 0.0


def test_a_word_no_readable_passage_holds_weighs_nothing_in_coverage() -> None:
    assert weights("C100冲电要冲多久才满")["冲电"] == 0.0  # a typo for 充电


def test_a_slip_of_a_function_word_weighs_nothing_in_coverage() -> None:
    assert weights("What are teh features of the C200?")["teh"] == 0.0


def test_an_english_word_no_readable_passage_holds_stays_uncovered() -> None:
    assert weights("Why does the C200 smell of plastic?")["plastic"] == 2.0  # maybe what the corpus lacks


def test_a_word_of_the_context_around_the_asking_clause_weighs_a_quarter() -> None:
    weighed = weights("I have the Business plan, how long does a trusted device skip the code?")
    assert (weighed["busi"], weighed["trust"]) == (0.5, 2.0)


def absent(question: str) -> list[tuple[str, bool]]:
    analysed = analyse(question, corpus=HELP_CENTRE, reading=Reading(absent=True))
    return [(t.phrase, t.proper) for t in analysed.absent]


ABSENT = [
    ("Do you offer a student discount?", [("student discount", False)]),
    ("Do the cameras work with IFTTT?", [("IFTTT", True)]),
    ("Can I buy a Halvio gift card?", [("Halvio", True), ("gift card", False)]),
    ("请问有学生优惠吗？", [("学生", False)]),
    ("Do you offer an annual discount?", []),
    ("How long do I hold the reset button on the C200?", []),
]


@pytest.mark.parametrize(("question", "expected"), ABSENT, ids=[q for q, _ in ABSENT])
def test_a_thing_the_asking_clause_names_that_no_passage_names_is_absent(
    question: str, expected: list[tuple[str, bool]]
) -> None:
    assert absent(question) == expected
