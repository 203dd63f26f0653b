"""The shape of a question: what kind of answer it wants, and so how much the loop reads for it.

A support question is often not one fact. "How do I pair the remote" wants every step of a procedure
with its intro; "which settings affect battery life" every item of a list; "what is the difference
between the two plans" evidence for each side; "why does the TV turn off" an explanation that may sit
in several passages; "how long is the warranty" one value; "can I return it after 30 days" a yes or a
no. The shape is read once from the analysed question and decides how far a window grows and how
many windows are read (``policies.evidence.reading``), not only a label in the trace.

The cues are words (``policies.lexicon``: ``SHAPE_*``), tried in a fixed order, first match wins:

    1. a measure ("how many", "多少", ...: ``Question.asks``)   -> fact: one value, whatever else it says
                                                               (not "哪几种", which names the kinds,
                                                               nor "when", as often a clause)
    2. named sides (``Question.sides``, policies.evidence.comparison), or a comparison cue (difference, vs,
       区别, 对比 ...: "what are the differences between the plans" names no two sides) -> comparison
    3. a procedure cue (how do I, steps, 如何, 怎么, 步骤 ...)      -> procedure
    4. a list cue (what are the, which ...s, 哪些, 有哪些 ...)      -> list
    5. an explanation cue (why, explain, 为什么, 介绍, 总结 ...)     -> explanation
    6. a yes/no question (``Question.kinds`` is a polarity)      -> yes_no
    7. anything else ("what is X", "X是什么", "who", "when")      -> fact

The order says how an ambiguous question is read: a measure is one value even inside "how do I
know how long ..."; "what are the differences" is a comparison, not a list; "what are the steps"
a procedure; "why ... 怎么办" wants the steps; "Can I reset the TV?" is a yes/no (the evidence
that says yes is the procedure's own section, which ``policies.evidence.reading`` reads for a yes/no); a
definition ("what is X") is a fact: one passage says what X is, and more documents only add noise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from evidence_loop.policies.lexicon import (
    SHAPE_COMPARISON_EN,
    SHAPE_COMPARISON_ZH,
    SHAPE_EXPLANATION_EN,
    SHAPE_EXPLANATION_ZH,
    SHAPE_LIST_EN,
    SHAPE_LIST_ZH,
    SHAPE_NOT_PROCEDURE_ZH,
    SHAPE_PROCEDURE_EN,
    SHAPE_PROCEDURE_ZH,
)
from evidence_loop.policies.question.analysis import Question

Shape = Literal["fact", "yes_no", "procedure", "list", "comparison", "explanation"]
SHAPES: tuple[Shape, ...] = ("fact", "yes_no", "procedure", "list", "comparison", "explanation")


@dataclass(frozen=True, slots=True)
class QuestionShape:
    """A question's shape and the cue that decided it (None: no cue, the default ``fact``)."""

    shape: Shape
    cue: str | None = None


def _english(phrases: Iterable[str]) -> re.Pattern[str]:
    """Phrases matched as whole words, any case, any run of spaces between words."""
    alternatives = sorted((r"\s+".join(map(re.escape, p.split())) for p in phrases), key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b", re.IGNORECASE)


# "which settings", "which of the apps": a plural after "which" asks for every one of them
_WHICH_PLURAL = re.compile(r"\bwhich\s+(?:[a-z-]+\s+){0,2}?[a-z-]{2,}(?<!s)s\b", re.IGNORECASE)
_COMPARISON_EN = _english(SHAPE_COMPARISON_EN)
_PROCEDURE_EN = _english(SHAPE_PROCEDURE_EN)
_LIST_EN = _english(SHAPE_LIST_EN)
_EXPLANATION_EN = _english(SHAPE_EXPLANATION_EN)
# "和 A 有什么不同", "A 跟 B 一样吗": two things set side by side
_SIDE_BY_SIDE_ZH = re.compile(r"[和与跟同].+?(?:不同|一样|相同|不一样)")


def _zh_cue(text: str, words: Iterable[str], unless: Iterable[str] = ()) -> str | None:
    """The first Chinese cue word in ``text`` that is not part of one of the ``unless`` words."""
    masked = text
    for word in unless:
        masked = masked.replace(word, "\0" * len(word))
    return next((w for w in words if w in masked), None)


def _en_cue(text: str, pattern: re.Pattern[str]) -> str | None:
    found = pattern.search(text)
    return found.group().lower() if found else None


def classify(question: Question) -> QuestionShape:
    """The shape of an analysed question (the order above decides between cues)."""
    text = question.text
    # "哪几种" counts kinds by naming them; "when" alone is as often a clause ("what to do when ...")
    quantity = question.asks - {"date"}
    if quantity and _zh_cue(text, SHAPE_LIST_ZH) is None:
        return QuestionShape("fact", "asks for a value: " + "/".join(sorted(quantity)))
    comparison = ", ".join(side.name for side in question.sides) or None  # policies.evidence.comparison's
    comparison = comparison or _en_cue(text, _COMPARISON_EN) or _zh_cue(text, SHAPE_COMPARISON_ZH)
    if comparison is None and (side := _SIDE_BY_SIDE_ZH.search(text)) is not None:
        comparison = side.group()
    if comparison is not None:
        return QuestionShape("comparison", comparison)
    procedure = _en_cue(text, _PROCEDURE_EN) or _zh_cue(text, SHAPE_PROCEDURE_ZH, SHAPE_NOT_PROCEDURE_ZH)
    if procedure is not None:
        return QuestionShape("procedure", procedure)
    listing = _en_cue(text, _LIST_EN) or _en_cue(text, _WHICH_PLURAL) or _zh_cue(text, SHAPE_LIST_ZH)
    if listing is not None:
        return QuestionShape("list", listing)
    explanation = _en_cue(text, _EXPLANATION_EN) or _zh_cue(text, SHAPE_EXPLANATION_ZH)
    if explanation is not None:
        return QuestionShape("explanation", explanation)
    if question.kinds == frozenset({"polarity"}):
        return QuestionShape("yes_no", "asks yes or no")
    return QuestionShape("fact")


def shape_of(question: Question) -> Shape:
    """The shape alone (``classify`` also says which cue decided it)."""
    return classify(question).shape
