"""Pseudo-questions drawn from a corpus's own units, for self-calibration (``agent.loop.calibrate``).

A help-centre question is usually about as long as a title and opens where an article opens: "智能人事
高级版如何开通" beside "智能人事高级版申请开通需满足…". So a pseudo-question is the opening of one
of a document's sentences: 8 to 16 characters of Chinese, 5 to 9 words of English. Asked with its
document hidden, it meets what a real question meets when the article that answers it is missing:
on-topic neighbours. Sentences with fewer than three content terms (headings, fragments) are not drawn.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from evidence_loop.policies.question.analysis import content_terms
from evidence_loop.tools.tokenize import is_cjk
from evidence_loop.tools.types import Unit

MIN_TERMS = 3


def opening(text: str, rng: random.Random) -> str:
    """The start of a sentence, about a question's length."""
    cjk = sum(1 for c in text if is_cjk(c))
    if cjk > len(text) / 3:
        return text[: rng.randint(8, 16)]
    return " ".join(text.split()[: rng.randint(5, 9)])


def pseudo_questions(units: Sequence[Unit], count: int, seed: int = 0) -> list[tuple[str, str]]:
    """Up to ``count`` (doc_id, question) pairs, documents taken in turn in a seeded order.

    Deterministic for the same units and seed; a document gives several questions only when the
    corpus has fewer documents than ``count``. A document's sentences are analysed only until one
    has enough content terms, unless the document is drawn: a corpus of 100,000 units draws 200
    questions without analysing every sentence it holds.
    """
    rng = random.Random(seed)
    sentences: dict[str, list[Unit]] = {}
    for unit in units:
        if unit.kind == "sentence":
            sentences.setdefault(unit.doc_id, []).append(unit)
    docs = sorted(doc_id for doc_id, found in sentences.items() if any(map(_drawable, found)))
    rng.shuffle(docs)
    by_doc: dict[str, list[Unit]] = {}
    out: list[tuple[str, str]] = []
    while docs and len(out) < count:
        for doc_id in docs:
            if len(out) >= count:
                break
            if doc_id not in by_doc:
                by_doc[doc_id] = [u for u in sentences[doc_id] if _drawable(u)]
            out.append((doc_id, opening(rng.choice(by_doc[doc_id]).text, rng)))
    return out


def distinct_drawable(units: Sequence[Unit], enough: int) -> int:
    """How many distinct sentences could open a pseudo-question, counted up to ``enough``: a corpus
    of a few short articles draws its ``count`` questions from the same handful of sentences, and a
    spread measured over repeats of them says nothing of the corpus."""
    seen: set[str] = set()
    for unit in units:
        if unit.kind == "sentence" and unit.text not in seen and _drawable(unit):
            seen.add(unit.text)
            if len(seen) >= enough:
                break
    return len(seen)


def _drawable(unit: Unit) -> bool:
    """A sentence that can open a question: three content terms or more."""
    return len(content_terms(unit.text)) >= MIN_TERMS
