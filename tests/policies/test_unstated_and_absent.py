"""What the evidence never states, and things no document names (issue 31, class 6 and the attribute
never stated): the judge's ``absent`` and ``unstated`` signals, and the refusals that name them."""

from __future__ import annotations

from evidence_loop.policies.config import Policy
from evidence_loop.policies.decision.judge import RAW_SIGNALS, JudgeVerdict, states_asked
from evidence_loop.policies.decision.missing import missing_pieces
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.completeness import check_window
from evidence_loop.policies.question.analysis import Question, Reading, analyse
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocumentInput
from evidence_loop.tools.windows import Window
from tests.policies.corpus_terms import PassageTerms

SPECS = "# Cam C200 Pro specs\n\nBattery: 6500 mAh. Resolution: 2K. Field of view: 130°.\n"
RESET = (
    "# Reset a camera\n\nHold the reset button on the C200 for 10 seconds.\n\n"
    "The Hub H10 restarts by itself after an update.\n"
)
CAMERAS = (
    "# Cameras\n\nThe cameras work with Google Home and Amazon Alexa. Annual plans get a 20% discount.\n"
)
CORPUS = PassageTerms([SPECS, RESET, CAMERAS])
READING = Reading(identifiers=True, absent=True, measures=True)


def _ask(question: str) -> Question:
    return analyse(question, corpus=CORPUS, reading=READING)


def _item(question: Question, text: str) -> Checked:
    doc = parse_document(DocumentInput("doc", text, format="markdown", title=text.split("\n")[0][2:]))
    window = Window(doc.doc_id, doc.version, tuple(range(len(doc.units))))
    return Checked(window, doc, check_window(question, window, doc, 5.0, Policy()), 5.0)


def test_a_weight_asked_of_evidence_that_states_no_weight_is_unstated() -> None:
    question = _ask("How much does the C200 Pro weigh?")
    assert not states_asked(question, [_item(question, SPECS)])


def test_a_weight_the_evidence_states_in_grams_is_stated() -> None:
    question = _ask("How much does the C200 Pro weigh?")
    assert states_asked(question, [_item(question, SPECS + "Weight: 320 g.\n")])


def test_a_duration_stated_for_another_model_is_no_duration_of_the_one_asked() -> None:
    question = _ask("How long do I hold the reset button on the Hub H10?")
    assert not states_asked(question, [_item(question, RESET)])
    asked_of_c200 = _ask("How long do I hold the reset button on the C200?")
    assert states_asked(asked_of_c200, [_item(asked_of_c200, RESET)])


def test_a_physical_measure_no_lead_window_states_refuses_naming_it() -> None:
    question = _ask("How much does the C200 Pro weigh?")
    pieces = missing_pieces(question, [_item(question, SPECS)], Policy())
    assert [(p.kind, p.value) for p in pieces] == [("uncovered_slot", "weight")]


def test_a_name_no_readable_document_names_refuses_whatever_the_evidence() -> None:
    question = _ask("Do the cameras work with IFTTT?")
    pieces = missing_pieces(question, [_item(question, CAMERAS)], Policy())
    assert [(p.kind, p.value, p.slot_kind) for p in pieces] == [("uncovered_slot", "IFTTT", "thing")]


def test_a_judge_refusal_names_the_absent_thing_first() -> None:
    question = _ask("Do you offer a student discount?")
    refused = JudgeVerdict(probability=0.2, logit=-1.4, threshold=0.0, answer=False)
    pieces = missing_pieces(question, [_item(question, CAMERAS)], Policy(), refused)
    assert (pieces[0].kind, pieces[0].value) == ("uncovered_slot", "student discount")
    assert pieces[-1].kind == "no_relevant_evidence"


def test_the_absent_and_unstated_signals_enter_the_judge_unscaled() -> None:
    assert set(RAW_SIGNALS) == {"absent", "unstated"}
