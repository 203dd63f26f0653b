"""Evidence about a neighbour of what is asked (issue 31: another model, place or plan than the one
the question names), a kind of value stated nowhere, and the refusals that name them."""

from __future__ import annotations

from evidence_loop.policies.config import Policy
from evidence_loop.policies.decision.judge import JudgeVerdict, judge, states_asked
from evidence_loop.policies.decision.messages import missing_messages
from evidence_loop.policies.decision.missing import missing_pieces
from evidence_loop.policies.decision.other_scope import other_scope
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.completeness import check_window
from evidence_loop.policies.judge_model import DEFAULT_JUDGE
from evidence_loop.policies.question.analysis import Question, Reading, analyse
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.store.calibration import CorpusScale
from evidence_loop.tools.types import DocumentInput
from evidence_loop.tools.windows import Window
from tests.policies.corpus_terms import PassageTerms

C200_SPECS = (
    "# Cam C200 Pro technical specifications\n\n"
    "Operating temperature: -20 to 50 °C. Works with the Hub H10 and the Doorbell D50.\n"
)
H10_GUIDE = "# Hub H10 user guide\n\nThe H10 connects up to 32 cameras. Keep it indoors.\n"
US_RETURNS = "# Returns & refunds (United States)\n\nYou can return an item within 30 days of delivery.\n"
BASIC_PLAN = "# Cloud plans\n\nOn the Basic plan, clips are kept for 7 days. On the Plus plan, 30 days.\n"
C100_MANUAL = "# Cam C100 使用手册\n\nC100 支持 2.4GHz Wi-Fi。充电接口为 USB-C。\n"
CORPUS = PassageTerms([C200_SPECS, H10_GUIDE, US_RETURNS, BASIC_PLAN, C100_MANUAL])
READING = Reading(identifiers=True, absent=True, measures=True)
REFUSED = JudgeVerdict(probability=0.3, logit=-0.8, threshold=0.0, answer=False)


def _ask(question: str) -> Question:
    return analyse(question, corpus=CORPUS, reading=READING)


def _item(question: Question, text: str) -> Checked:
    doc = parse_document(DocumentInput("doc", text, format="markdown", title=text.split("\n")[0][2:]))
    window = Window(doc.doc_id, doc.version, tuple(range(len(doc.units))))
    return Checked(window, doc, check_window(question, window, doc, 5.0, Policy()), 5.0)


def test_a_spec_table_of_another_model_is_about_a_neighbour_even_when_it_mentions_the_asked_one() -> None:
    question = _ask("What's the operating temperature range of the Hub H10?")
    assert other_scope(question, _item(question, C200_SPECS))


def test_the_asked_models_own_guide_is_no_neighbour() -> None:
    question = _ask("How many cameras does the Hub H10 connect?")
    assert not other_scope(question, _item(question, H10_GUIDE))


def test_a_rule_for_another_region_is_about_a_neighbour() -> None:
    question = _ask("How long is the return window in Canada?")
    assert other_scope(question, _item(question, US_RETURNS))


def test_an_informal_question_about_a_plan_the_evidence_covers_raises_neither_signal() -> None:
    question = _ask("hey so how long do u guys keep my clips on the basic plan??")
    item = _item(question, BASIC_PLAN)
    assert not other_scope(question, item)
    assert states_asked(question, [item])


def test_a_neighbour_model_is_refused_naming_the_asked_model() -> None:
    question = _ask("What's the operating temperature range of the Hub H10?")
    pieces = missing_pieces(question, [_item(question, C200_SPECS)], Policy(), REFUSED)
    named = [p for p in pieces if p.slot_kind == "scope"]
    assert [(p.kind, p.value) for p in named] == [("uncovered_slot", "H10")]
    assert "c200pro" in named[0].detail
    assert "H10" in missing_messages(named, "en")[0]


def test_an_attribute_stated_nowhere_is_refused_naming_it_in_the_questions_language() -> None:
    question = _ask("C100 充电要多久？")
    pieces = missing_pieces(question, [_item(question, C100_MANUAL)], Policy(), REFUSED)
    named = [p for p in pieces if p.slot_kind == "attribute"]
    assert [(p.kind, p.value) for p in named] == [("uncovered_slot", "duration")]
    assert missing_messages(named, "zh") == ["帮助文档里没有写明您问的时长。"]


def test_a_refusal_recorded_before_the_rule_names_no_neighbour() -> None:
    question = _ask("What's the operating temperature range of the Hub H10?")
    before = Policy(name_refusals=False)
    pieces = missing_pieces(question, [_item(question, C200_SPECS)], before, REFUSED)
    assert not [p for p in pieces if p.slot_kind in ("scope", "attribute")]


def test_the_shipped_judge_refuses_evidence_about_a_neighbour_that_it_answers_about_the_asked_thing() -> None:
    scale = CorpusScale((), 100, 1, 50)  # every signal at the corpus's own mean
    typical = dict.fromkeys(("semantic_top", "semantic_window", "coverage", "score", "slot_coverage"), 0.0)
    asked = judge({**typical, "absent": 0.0, "unstated": 0.0, "other_scope": 0.0}, Policy(), scale)
    neighbour = judge({**typical, "absent": 0.0, "unstated": 0.0, "other_scope": 1.0}, Policy(), scale)
    assert "other_scope" in DEFAULT_JUDGE.features
    assert asked is not None and asked.answer
    assert neighbour is not None and not neighbour.answer
