"""Relevance: a recall score as 0..1, so that a weak best hit stays weak.

The question's content terms are ``policies.question.analysis``'s; how many of them a text covers is
``policies.evidence.coverage``'s.
"""

from __future__ import annotations


def lexical_relevance(score: float, best: float, half_score: float) -> float:
    """A recall score mapped to 0..1: ``score / (best + half_score)``, ``best`` the query's best.

    For the best hit of a query this is the saturation ``best / (best + half_score)``; any other hit
    gets that scaled by its share of the best. Non-positive scores give 0; ``best`` below ``score``
    is treated as ``score``.

    ``half_score`` (``Policy.relevance_half_score``, 5) was chosen for raw BM25 scores, whose tops
    sat between 4 and 10 on the help-centre sets, so that a top of 5 gave 0.5. Recall scores are
    fused now (``tools.search.snapshot.Snapshot.search``): a unit's BM25 over the best unit's plus
    ``fusion_weight`` times its passage's over the best passage's, so at most 1 + ``fusion_weight``
    (2.5). The best hit of a query therefore maps to at most 2.5 / 7.5 = 1/3, and the signal mostly
    says how close a window's seed came to the query's best. The score weights and the judge were
    set with it as it is: another ``half_score`` changes outcomes.
    """
    if score <= 0:
        return 0.0
    return score / (max(best, score) + half_score)
