"""Dense recall over unit vectors, and reciprocal-rank fusion with the lexical ranking.

    DenseIndex(matrix, identity)      the unit vectors of one generation (float32, unit length)
    index.similarities(vector, ok)    the cosine of a question with every unit; unreadable units NaN
    QuestionSimilarities              those cosines plus what they say about the corpus for this question
    UnitCosines                       the same cosines looked up by unit, for scoring grown windows
    rrf(rankings, k, constant)        positions by reciprocal-rank fusion, ties in corpus order

Filtering comes first, as for BM25: a unit the caller may not read (or has already seen) is NaN
before anything is ranked or summarised, so it can neither be returned nor set a scale.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evidence_loop.tools.models.embedding import EmbedderIdentity, Vectors
from evidence_loop.tools.types import Unit

Cosines = npt.NDArray[np.float32]
Positions = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class QuestionSimilarities:
    """The cosine of one question vector with every unit of a snapshot (NaN: not readable).

    ``mean`` and ``std`` summarise the readable units: how similar the question is to the corpus in
    general, the scale against which a passage's similarity says something (e5 cosines sit high
    and close together, differently in Chinese and English).
    """

    values: Cosines
    mean: float
    std: float
    best: float

    def top(self, k: int, exclude: Sequence[int] = ()) -> Positions:
        """The k most similar readable units not in ``exclude``, best first (ties: corpus order)."""
        values = self.values
        if len(exclude):
            values = values.copy()
            values[list(exclude)] = np.nan
        candidates = np.flatnonzero(~np.isnan(values))
        if k <= 0 or candidates.size == 0:
            return np.empty(0, dtype=np.int64)
        scores = values[candidates]
        if candidates.size > k:
            kth = np.partition(scores, candidates.size - k)[candidates.size - k]
            keep = scores >= kth
            candidates, scores = candidates[keep], scores[keep]
        order = np.lexsort((candidates, -scores))[:k]
        picked: Positions = candidates[order]
        return picked

    def relative(self, cosine: float) -> float:
        """A cosine on the question's own scale: 0 at the corpus mean, 1 at the best readable unit."""
        span = self.best - self.mean
        return 0.0 if span <= 0 else float(np.clip((cosine - self.mean) / span, 0.0, 1.0))


class DenseIndex:
    """The unit vectors of one generation, rows in corpus order, and the embedder that made them."""

    __slots__ = ("identity", "matrix")

    def __init__(self, matrix: Vectors, identity: EmbedderIdentity) -> None:
        if matrix.ndim != 2 or matrix.shape[1] != identity.dim:
            raise ValueError(f"vectors of shape {matrix.shape} for a {identity.dim}-dimensional embedder")
        self.matrix = matrix
        self.identity = identity

    @property
    def size(self) -> int:
        return int(self.matrix.shape[0])

    def similarities(self, vector: Vectors, readable: npt.NDArray[np.bool_] | None) -> QuestionSimilarities:
        """Cosines of ``vector`` with every unit; units outside ``readable`` (None: all) are NaN."""
        values: Cosines = self.matrix @ vector.astype(np.float32).reshape(-1)
        if readable is not None:
            values[~readable] = np.nan
        kept = values if readable is None else values[readable]
        if kept.size == 0:
            return QuestionSimilarities(values, 0.0, 0.0, 0.0)
        return QuestionSimilarities(values, float(kept.mean()), float(kept.std()), float(kept.max()))


def rrf(rankings: Sequence[Sequence[int]], k: int, constant: int) -> list[tuple[int, float]]:
    """The k best positions by reciprocal-rank fusion: each ranking adds 1 / (constant + rank + 1).

    Ties are broken by corpus position, so the same rankings always fuse the same way.
    """
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, position in enumerate(ranking):
            fused[position] = fused.get(position, 0.0) + 1.0 / (constant + rank + 1)
    best = sorted(fused.items(), key=lambda item: (-item[1], item[0]))
    return best[:k]


class UnitCosines:
    """One question's cosine with any live unit of a snapshot, looked up by the unit's identity.

    What the completeness check reads to score a window semantically: the best cosine among its
    units, and that cosine on the question's own scale (:meth:`QuestionSimilarities.relative`).
    """

    __slots__ = ("_matrix", "_positions", "similarities")

    def __init__(
        self,
        similarities: QuestionSimilarities,
        positions: Mapping[tuple[str, str, int], int],
        matrix: Vectors | None = None,
    ) -> None:
        self.similarities = similarities
        self._positions = positions
        self._matrix = matrix

    def best(self, units: Iterable[Unit]) -> float | None:
        """The highest cosine among ``units`` (None when none of them is a readable live unit)."""
        values = self.similarities.values
        found = [
            values[p]
            for u in units
            if (p := self._positions.get((u.doc_id, u.version, u.ordinal))) is not None
        ]
        kept = [float(v) for v in found if not np.isnan(v)]
        return max(kept) if kept else None

    def between(self, one: tuple[str, str, int], other: tuple[str, str, int]) -> float | None:
        """The cosine of two units' own vectors, each named (doc_id, version, ordinal); None when
        either is not a live unit or the vectors are not at hand."""
        a, b = self._positions.get(one), self._positions.get(other)
        if self._matrix is None or a is None or b is None:
            return None
        return float(self._matrix[a] @ self._matrix[b])

    def of(self, doc_id: str, version: str, ordinal: int) -> float | None:
        """One unit's cosine (None when it is not a readable live unit)."""
        position = self._positions.get((doc_id, version, ordinal))
        value = None if position is None else float(self.similarities.values[position])
        return None if value is None or np.isnan(value) else value
