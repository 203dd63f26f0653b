"""The sufficiency judge: does the gathered evidence answer the question, or only sit near its topic?

    judge_signals(question, selected)      the raw signals of the evidence, as named features
    judge(signals, policy, scale)          a JudgeVerdict: probability, threshold, answer or not

It replaces the lexical "covers half the question's words" rule when the loop has vectors and the
corpus has its own scale (``tools.store.calibration``); without either, the rule stands. The signals:

    semantic_top     the best cosine of any readable unit with the question, above the corpus mean
    semantic_window  the best cosine inside the selected evidence, above the corpus mean
    coverage         IDF-weighted share of the question's terms in the lead window
    score            the lead window's completeness score (relevance, coverage, slots, boundary)
    slot_coverage    share of the question's named slots the lead window mentions
    rerank           a cross-encoder's best 0..1 relevance of the selected windows (only when one
                     is configured: the shipped model has no weight for it, a fitted one may)
    absent           1 when the question's asking clause names a thing no readable passage names
                     ("student" in "student discount"; ``Policy.absent_things``), else 0
    unstated         1 when the question asks for a value (a duration, an amount, a date) and the lead
                     window states none of that kind beside its subject (``Policy.value_signal``), else 0

``absent`` and ``unstated`` enter as they are (``RAW_SIGNALS``): a corpus's held-out pseudo-questions
ask for no value and use the corpus's own words, so their spread says nothing about them.
The shipped model was fitted before them (its features are the first five); ``evloop calibrate``
fits a model that weighs them.

Each becomes a z-score against the corpus's held-out scale, then a logistic model (``JudgeModel``)
gives the log-odds that the evidence answers; the operating point (``Policy.answer_rate``, moved by
``Policy.refusal_bias``) sets the threshold.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.coverage import covered_terms
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.question.named import states_measure
from evidence_loop.policies.question.slots import slot_in_text
from evidence_loop.policies.question.values import ValueKind, states, window_states
from evidence_loop.tools.windows import units_of

if TYPE_CHECKING:
    from evidence_loop.tools.store.calibration import CorpusScale


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    """The judge's reading of one run's evidence."""

    probability: float
    logit: float
    threshold: float
    answer: bool


RAW_SIGNALS = ("absent", "unstated")


def judge_signals(
    question: Question,
    selected: Sequence[Checked],
    reranked_with: float | None = None,
    policy: Policy | None = None,
) -> dict[str, float] | None:
    """The raw signals the judge reads; None without vectors (lexical recall) or without evidence.

    ``reranked_with``: the weight a reranker's scores entered this check's window scores with, when
    one scored them; ``score`` is then read as it was without them (the signal a judge is fitted on)
    and the reranker's own score is the ``rerank`` signal."""
    if question.cosines is None or not selected:
        return None
    sims = question.cosines.similarities
    lead = selected[0].check
    signals = {
        "semantic_top": sims.best - sims.mean,
        "semantic_window": max(c.check.cosine for c in selected) - sims.mean,
        "coverage": lead.coverage,
        "score": lead.score,
        "slot_coverage": lead.slot_coverage,
    }
    if reranked_with is not None:
        signals["score"] = round(lead.score - reranked_with * (lead.rerank or 0.0), 6)
        signals["rerank"] = max(c.check.rerank or 0.0 for c in selected)
    if policy is not None and policy.absent_things:
        signals["absent"] = 1.0 if question.absent else 0.0
    if policy is not None and policy.value_signal:
        signals["unstated"] = 0.0 if states_asked(question, selected[: policy.lead_windows]) else 1.0
    return signals


def states_asked(question: Question, lead: Sequence[Checked]) -> bool:
    """Whether the lead windows state a value of the measure the question asks for beside its subject
    (True when it asks for none); for a physical measure, a value in one of its units. When the
    question names a model and a window's title and section do not, the value must sit beside a unit
    that names it: "10 seconds" under the C200 is no reset time of the H10."""
    if question.physical is not None:
        return states_measure(question.physical, [u.text for c in lead for u in units_of(c.window, c.doc)])
    asks = question.measures or question.asks
    return not asks or any(_states_for(question, asks, c) for c in lead)


def _states_for(question: Question, asks: frozenset[ValueKind], item: Checked) -> bool:
    doc, ids = item.doc, question.identifiers
    texts = [u.text for u in units_of(item.window, doc)]
    heads = (doc.title, *doc.sections[doc.units[item.window.first].section_id].path)
    if ids and not any(slot_in_text(s, h) for s in ids for h in heads):
        own = question.own_numbers
        return any(states(asks, own, t) and any(slot_in_text(s, t) for s in ids) for t in texts)

    def about(text: str) -> bool:
        return bool(covered_terms(question.terms, (text,)))

    return window_states(asks, question.own_numbers, texts, about)


def judge(signals: dict[str, float] | None, policy: Policy, scale: CorpusScale | None) -> JudgeVerdict | None:
    """The verdict on the evidence's signals, or None when the judge cannot sit (no model, vectors
    or scale)."""
    if policy.judge is None or scale is None or signals is None:
        return None
    model = policy.judge
    logit = model.logit({name: scale.z(name, value) for name, value in signals.items()})
    threshold = model.threshold(policy.answer_rate) + policy.refusal_bias
    return JudgeVerdict(probability(logit), round(logit, 6), round(threshold, 6), logit >= threshold)


def probability(logit: float) -> float:
    """The probability a log-odds stands for, rounded as outcomes and traces record it."""
    return round(1.0 / (1.0 + math.exp(-logit)), 6)


def __getattr__(name: str) -> object:
    """Names renamed in 0.2.0, kept through 0.2.x with a DeprecationWarning (docs/versioning.md)."""
    if name == "Verdict":  # deprecated alias
        message = f"{__name__}.{name} is renamed JudgeVerdict; the old name goes in 0.3.0"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return JudgeVerdict
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
