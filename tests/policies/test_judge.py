"""The sufficiency judge: a logistic model over scaled signals, and the operating point it answers at."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from evidence_loop.policies.config import Policy, load_policy_file
from evidence_loop.policies.decision import pseudo
from evidence_loop.policies.decision.judge import judge
from evidence_loop.policies.decision.pseudo import distinct_drawable, opening, pseudo_questions
from evidence_loop.policies.judge_model import DEFAULT_JUDGE, JudgeModel
from evidence_loop.policies.question.analysis import content_terms
from evidence_loop.tools.store.calibration import CorpusScale
from evidence_loop.tools.types import Unit

MODEL = JudgeModel(
    features=("semantic_top", "coverage"),
    weights=(1.0, 0.5),
    bias=0.0,
    operating=((0.8, 1.0), (0.9, 0.0), (0.99, -2.0)),
    fitted_on=("a", "b"),
)
SCALE = CorpusScale((("coverage", 0.5, 0.25), ("semantic_top", 0.05, 0.01)), 100, 1, 50)


@pytest.mark.parametrize(
    ("rate", "threshold"), [(0.5, 1.0), (0.8, 1.0), (0.85, 0.5), (0.9, 0.0), (0.99, -2.0), (1.0, -2.0)]
)
def test_the_threshold_is_interpolated_between_the_fitted_operating_points(
    rate: float, threshold: float
) -> None:
    assert MODEL.threshold(rate) == pytest.approx(threshold)


def test_each_signal_enters_as_a_z_score_against_the_corpus_scale() -> None:
    assert SCALE.z("semantic_top", 0.07) == pytest.approx(2.0)
    assert SCALE.z("coverage", 0.25) == pytest.approx(-1.0)
    assert SCALE.z("unmeasured", 0.3) == 0.3


def test_evidence_well_above_the_held_out_scale_is_answered_and_evidence_at_it_refused() -> None:
    policy = Policy(judge=MODEL, answer_rate=0.9)
    strong = judge({"semantic_top": 0.08, "coverage": 1.0}, policy, SCALE)
    weak = judge({"semantic_top": 0.045, "coverage": 0.4}, policy, SCALE)
    assert strong is not None and strong.answer and strong.probability > 0.9
    assert weak is not None and not weak.answer


def test_a_refusal_bias_refuses_what_the_operating_point_alone_would_answer() -> None:
    signals = {"semantic_top": 0.055, "coverage": 0.5}  # logit 0.5
    policy = Policy(judge=MODEL, answer_rate=0.9)
    assert judge(signals, policy, SCALE).answer  # type: ignore[union-attr]
    assert not judge(signals, replace(policy, refusal_bias=1.0), SCALE).answer  # type: ignore[union-attr]
    assert not judge(signals, replace(policy, answer_rate=0.8), SCALE).answer  # type: ignore[union-attr]


def test_the_judge_does_not_sit_without_a_model_a_scale_or_signals() -> None:
    signals = {"semantic_top": 0.08, "coverage": 1.0}
    assert judge(signals, Policy(judge=None), SCALE) is None
    assert judge(signals, Policy(judge=MODEL), None) is None
    assert judge(None, Policy(judge=MODEL), SCALE) is None


def test_a_policy_file_brings_its_model_and_fields_and_its_hash_changes_the_policys(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"judge": MODEL.as_dict(), "policy": {"answer_rate": 0.97}}))
    loaded = load_policy_file(path)
    assert loaded.judge == MODEL and loaded.answer_rate == 0.97
    assert loaded.digest() != Policy().digest()
    assert Policy.from_dict(loaded.as_dict()) == loaded  # a trace's record rebuilds it exactly


@pytest.mark.parametrize(
    "text",
    [
        '{"judge": {"features": ["x"], "weights": [], "bias": 0, "operating": [[0.9, 0]]}}',
        "[",
        '{"policy": {"nope": 1}}',
    ],
)
def test_a_bad_policy_file_names_itself(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"bad\.json: not a usable policy file"):
        load_policy_file(path)


def test_old_policies_replay_with_the_judge_off() -> None:
    recorded = Policy().as_dict()
    del recorded["judge"]
    assert Policy.from_dict(recorded).judge is None
    assert Policy().judge == DEFAULT_JUDGE


def _unit(doc: str, ordinal: int, text: str) -> Unit:
    return Unit(doc, "1", ordinal, "sentence", 0, 0, len(text), text, None)


UNITS = [
    _unit("a", 0, "智能人事高级版申请开通需满足累计2个工作日登录率。"),
    _unit("a", 1, "标题"),
    _unit("b", 0, "Open Settings and choose the wireless network you want to join today."),
    _unit("c", 0, "Refunds are paid to the original card within five business days."),
]


def test_pseudo_questions_open_a_sentence_of_each_document_in_turn() -> None:
    drawn = pseudo_questions(UNITS, 3, seed=1)
    assert sorted(d for d, _ in drawn) == ["a", "b", "c"]
    for doc, question in drawn:
        source = next(u.text for u in UNITS if u.doc_id == doc and u.text.startswith(question[:4]))
        assert source.startswith(question)
    assert pseudo_questions(UNITS, 3, seed=1) == drawn  # deterministic


def test_a_small_corpus_gives_several_pseudo_questions_per_document() -> None:
    assert len(pseudo_questions(UNITS, 7)) == 7


def test_the_sentences_a_scale_could_be_drawn_from_are_counted_once_each_up_to_enough() -> None:
    # three sentences can open a question; the heading cannot, and a repeat counts once
    repeated = [*UNITS, _unit("d", 0, UNITS[3].text)]
    assert distinct_drawable(repeated, 20) == 3
    assert distinct_drawable(repeated, 2) == 2


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("智能人事高级版申请开通需满足累计2个工作日登录率。", 8, 16),
        ("Open Settings and choose the wireless network you want", 5, 9),
    ],
)
def test_an_opening_is_about_a_questions_length(text: str, low: int, high: int) -> None:
    rng = random.Random(3)
    for _ in range(20):
        piece = opening(text, rng)
        size = len(piece) if low == 8 else len(piece.split())
        assert low <= size <= high and text.startswith(piece)


def _every_sentence_read(units: list[Unit], count: int, seed: int) -> list[tuple[str, str]]:
    """Pseudo-questions as drawn when every sentence was analysed first (before issue 34)."""
    rng = random.Random(seed)
    by_doc: dict[str, list[Unit]] = {}
    for unit in units:
        if unit.kind == "sentence" and len(content_terms(unit.text)) >= 3:
            by_doc.setdefault(unit.doc_id, []).append(unit)
    docs = sorted(by_doc)
    rng.shuffle(docs)
    out: list[tuple[str, str]] = []
    while docs and len(out) < count:
        for doc_id in docs:
            if len(out) >= count:
                break
            out.append((doc_id, opening(rng.choice(by_doc[doc_id]).text, rng)))
    return out


@pytest.mark.parametrize(("count", "seed"), [(5, 0), (40, 3), (200, 0)])
def test_pseudo_questions_are_those_drawn_when_every_sentence_was_analysed(count: int, seed: int) -> None:
    corpus = [
        *UNITS,
        _unit("d", 0, "Hi."),  # a document without a sentence that could open a question
        _unit("e", 0, "Thanks!"),
        _unit("e", 1, "The hub pairs with up to sixteen cameras over its own radio."),
        *(
            _unit(f"f{n}", k, f"Camera model {n} records {k} days of video to the cloud.")
            for n in range(30)
            for k in range(3)
        ),
    ]
    assert pseudo_questions(corpus, count, seed) == _every_sentence_read(corpus, count, seed)


def test_a_documents_sentences_are_analysed_until_one_qualifies_unless_it_is_drawn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    analysed: list[str] = []

    def counted(text: str) -> tuple[str, ...]:
        analysed.append(text)
        return content_terms(text)

    monkeypatch.setattr(pseudo, "content_terms", counted)
    corpus = [
        _unit(f"d{n}", k, f"Router {n} keeps {k} logs of every session it opened.")
        for n in range(50)
        for k in range(20)
    ]
    pseudo_questions(corpus, 5)
    assert len(analysed) <= 50 + 5 * 20
