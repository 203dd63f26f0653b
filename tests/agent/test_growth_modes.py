"""Growing seed windows by mode on a real store: seed, window (±radius), parent (section), adaptive."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.loop.growth import Grower
from evidence_loop.agent.outcome import Evidence, Outcome
from evidence_loop.policies.config import Policy
from evidence_loop.policies.presets import Mode
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import DocumentInput, Hit, ParsedDocument
from evidence_loop.tools.windows import Step, Window, char_count, section_ordinals, seed_window
from evidence_loop.traces.records.steps import SlidStep, TraceStep

REFUND_ZH = """# 退款政策

## 适用范围

本政策仅适用于线上订单。线下门店订单请联系门店。会员订单另有规定。

## 退款时效

退款申请提交后，我们会在1个工作日内审核。审核通过后，款项在7个工作日内退回原支付账户。如遇节假日顺延。退款到账后会短信通知。银行处理时间以银行为准。
"""
ONLINE_ZH = """# 线上订单

## 退款申请

本节规定仅适用于尚未发货的线上订单。线上订单可在下单后7天内申请退款。退款申请须在订单页提交。
审核通过后，款项在3个工作日内原路退回。运费不予退还。

## 发票

发票在订单完成后开具。
"""
FEES_V1 = "# Fees\n\nThe annual fee is 10 dollars. It is charged every January.\n"
FEES_V2 = (
    "# Fees\n\nMembership is yearly. The annual fee is 12 dollars. "
    "It is charged every January. Students pay half.\n"
)

REFUND_Q = "退款多久能退回原支付账户？"
ONLINE_Q = "线上订单几天内可以申请退款？"
FEE_Q = "What is the annual fee?"
QUESTIONS = (REFUND_Q, ONLINE_Q, FEE_Q)


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Snapshot]:
    store = Store.open(tmp_path_factory.mktemp("growth") / "index", create=True)
    store.ingest(
        [
            DocumentInput("refund", REFUND_ZH, format="markdown", title="退款政策"),
            DocumentInput("online", ONLINE_ZH, format="markdown", title="线上订单"),
            DocumentInput("fees", FEES_V1, format="markdown", title="Fees"),
        ]
    )
    store.ingest([DocumentInput("fees", FEES_V2, version="2", format="markdown", title="Fees")])
    yield store.snapshot()
    store.close()


class StepLog:
    """A recorder that keeps the slid steps."""

    def __init__(self) -> None:
        self.slides: list[SlidStep] = []

    def record(self, step: TraceStep) -> None:
        if isinstance(step, SlidStep):
            self.slides.append(step)


def _ask(snapshot: Snapshot, question: str, policy: Policy, recorder: StepLog | None = None) -> Outcome:
    return Controller(policy).ask(snapshot, question, recorder=recorder, run_id="test")


def _ordinals(e: Evidence, doc: ParsedDocument) -> list[int]:
    """Ordinals of the units an evidence item spans."""
    return [u.ordinal for u in doc.units if e.start <= u.start and u.end <= e.end]


def _only(outcome: Outcome) -> Evidence:
    assert len(outcome.evidence) == 1, outcome.evidence
    return outcome.evidence[0]


def _seed_ordinal(e: Evidence, doc: ParsedDocument) -> int:
    (seed,) = e.seeds
    return next(u.ordinal for u in doc.units if (u.start, u.end) == (seed.start, seed.end))


def _grower(snapshot: Snapshot, doc: ParsedDocument, question: str, policy: Policy) -> Grower:
    return Grower(analyse(question), doc, 1.0, policy, lambda window, step: None)


def _seed(doc: ParsedDocument, ordinal: int) -> Window:
    return seed_window(Hit(doc.units[ordinal], 1.0, 0))


def test_seed_mode_hands_back_only_the_seed_units(snapshot: Snapshot) -> None:
    outcome = _ask(snapshot, REFUND_Q, Policy(mode="seed"))
    for e in outcome.evidence:
        doc = snapshot.parsed(e.doc_id, e.version)
        inside = {(doc.units[o].start, doc.units[o].end) for o in _ordinals(e, doc)}
        assert inside == {(s.start, s.end) for s in e.seeds}


def test_window_mode_takes_the_fixed_radius_either_side_of_the_seed(snapshot: Snapshot) -> None:
    e = _only(_ask(snapshot, REFUND_Q, Policy(mode="window", seed_k=1, fixed_radius=2)))
    doc = snapshot.parsed(e.doc_id, e.version)
    seed = _seed_ordinal(e, doc)
    assert _ordinals(e, doc) == list(range(seed - 2, seed + 3))


def test_window_mode_stops_at_the_end_of_the_document(snapshot: Snapshot) -> None:
    doc = snapshot.parsed("fees", "1")
    last = len(doc.units) - 1
    grown = _grower(snapshot, doc, FEE_Q, Policy(mode="window")).grow(_seed(doc, last))
    assert grown.window.ordinals == tuple(range(last - 2, last + 1))


def test_parent_mode_takes_the_whole_section_of_the_seed(snapshot: Snapshot) -> None:
    e = _only(_ask(snapshot, REFUND_Q, Policy(mode="parent", seed_k=1)))
    doc = snapshot.parsed(e.doc_id, e.version)
    section = doc.units[_seed_ordinal(e, doc)].section_id
    assert _ordinals(e, doc) == list(section_ordinals(doc, section))


@pytest.mark.parametrize("question", QUESTIONS)
def test_adaptive_growth_stays_within_the_window_budget(snapshot: Snapshot, question: str) -> None:
    policy = Policy(mode="adaptive", window_budget=60)
    for hit in snapshot.search(question, 8):
        doc = snapshot.parsed(hit.unit.doc_id, hit.unit.version)
        grown = _grower(snapshot, doc, question, policy).grow(seed_window(hit))
        assert char_count(grown.window, doc) <= max(60, hit.unit.end - hit.unit.start)


def test_adaptive_growth_takes_in_the_scope_sentence_before_the_seed(snapshot: Snapshot) -> None:
    e = _only(_ask(snapshot, ONLINE_Q, Policy(mode="adaptive", seed_k=1, window_budget=60)))
    assert e.text.startswith("本节规定仅适用于尚未发货的线上订单。")


def test_recall_finds_only_the_current_version_of_a_document(snapshot: Snapshot) -> None:
    outcome = _ask(snapshot, FEE_Q, Policy(mode="parent"))
    assert {(e.doc_id, e.version) for e in outcome.evidence} == {("fees", "2")}


@pytest.mark.parametrize("mode", ["window", "parent", "adaptive"])
def test_growth_on_an_old_version_never_leaves_that_version(snapshot: Snapshot, mode: Mode) -> None:
    old = snapshot.parsed("fees", "1")
    grown = _grower(snapshot, old, FEE_Q, Policy(mode=mode)).grow(_seed(old, 1))
    assert grown.window.key == ("fees", "1")
    assert set(grown.window.ordinals) <= set(range(len(old.units)))


@pytest.mark.parametrize("mode", ["window", "parent", "adaptive"])
def test_growth_at_a_documents_last_unit_never_reaches_the_next_document(
    snapshot: Snapshot, mode: Mode
) -> None:
    doc = snapshot.parsed("refund", "1")
    last = len(doc.units) - 1
    grown = _grower(snapshot, doc, REFUND_Q, Policy(mode=mode)).grow(_seed(doc, last))
    assert grown.window.doc_id == "refund" and grown.window.last == last


@pytest.mark.parametrize("mode", ["seed", "window", "parent", "adaptive"])
@pytest.mark.parametrize("question", QUESTIONS)
def test_evidence_text_is_always_the_document_text_between_its_offsets(
    snapshot: Snapshot, mode: Mode, question: str
) -> None:
    outcome = _ask(snapshot, question, Policy(mode=mode))
    assert outcome.evidence
    for e in outcome.evidence:
        assert e.text == snapshot.parsed(e.doc_id, e.version).text[e.start : e.end]


def test_every_kept_slide_raised_the_score_and_a_parent_step_did_not_lower_it(snapshot: Snapshot) -> None:
    log = StepLog()
    for question in QUESTIONS:
        _ask(snapshot, question, Policy(mode="adaptive", seed_k=1, window_budget=60), log)
    moves = [s.move for s in log.slides]
    assert any(m != "parent" for m in moves), moves  # the small budget forces real slides
    for slide in log.slides:
        before, after = slide.score_before, slide.score_after
        assert after >= before if slide.move == "parent" else after > before, slide


def test_the_step_history_is_carried_on_the_grown_window(snapshot: Snapshot) -> None:
    doc = snapshot.parsed("online", "1")
    seed = next(u.ordinal for u in doc.units if u.text.startswith("线上订单可在"))
    reported: list[Step] = []
    grower = Grower(analyse(ONLINE_Q), doc, 1.0, Policy(window_budget=60), lambda w, s: reported.append(s))
    grown = grower.grow(_seed(doc, seed))
    assert grown.window.steps == tuple(reported) and reported
    assert reported[0].move == "left" and reported[0].score_before < reported[0].score_after


def test_seed_window_mode_and_parent_modes_record_no_steps(snapshot: Snapshot) -> None:
    modes: tuple[Mode, ...] = ("seed", "window", "parent")
    for mode in modes:
        outcome = _ask(snapshot, REFUND_Q, Policy(mode=mode))
        assert all(e.steps == [] for e in outcome.evidence), mode
