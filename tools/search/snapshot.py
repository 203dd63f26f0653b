"""An immutable, consistent view of the store at one generation, used by one question from start to end.

A snapshot holds in memory what recall needs (the live versions, their units in corpus order, the
BM25 index over the units and the one over their passages, see :mod:`tools.search.passages`) and asks a
:class:`VersionSource` for anything else (the parsed form, title or ACL of any stored version, old
ones included). Ingesting never changes a snapshot that exists: the store hands out a new one for
the new generation.

Everything a caller can observe is computed over what its groups can read: the words spelling
knows, the term weights, the BM25 scores of units and passages, the corpus fingerprint. A document
the caller may not read changes none of them (``scoped=False`` reads the whole corpus instead, as
runs recorded before this rule did). A snapshot without restricted documents takes the direct path.

With unit vectors (:mod:`tools.search.dense`), recall is hybrid: the BM25 ranking and the ranking by
cosine similarity to the question's vector are fused by reciprocal rank, the ACL and the units
already seen filtered out of both before anything is ranked.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from evidence_loop.tools.models.embedding import EmbedderIdentity, Vectors
from evidence_loop.tools.search.dense import DenseIndex, QuestionSimilarities, UnitCosines, rrf
from evidence_loop.tools.search.index import RecallIndex, Rows, Scores, top_k
from evidence_loop.tools.search.terms import ReadableTerms
from evidence_loop.tools.search.view import CorpusView as CorpusView
from evidence_loop.tools.search.view import Position, ViewFacts
from evidence_loop.tools.search.view import VersionInfo as VersionInfo
from evidence_loop.tools.search.view import can_read as can_read
from evidence_loop.tools.search.view import fingerprint as fingerprint
from evidence_loop.tools.tokenize import recall_tokens
from evidence_loop.tools.types import (
    DENSE_K,
    FUSION_WEIGHT,
    RRF_CONSTANT,
    TYPO_MIN_CHARS,
    Hit,
    ParsedDocument,
    Unit,
)

_PARSED_CACHE = 4096
_SCOPE_CACHE = 256


class VersionSource(Protocol):
    """Where a snapshot reads versions that are not in its view (thread-safe)."""

    def version_info(self, doc_id: str, version: str) -> VersionInfo:
        """Title, ACL and hash of a stored version; NotFoundError if there is none."""
        ...

    def parsed(self, doc_id: str, version: str) -> ParsedDocument:
        """Sections and units of a stored version as stored; NotFoundError if there is none."""
        ...


@dataclass(frozen=True, slots=True)
class _Scope:
    """What one group set may read of a snapshot with restricted documents: as float masks (for
    whole-corpus statistics) and as index rows (for statistics of its own), and its fingerprint."""

    unit_mask: Scores
    passage_mask: Scores
    units: Rows
    passages: Rows
    docs: npt.NDArray[np.bool_]  # which versions of the view it may read


class Snapshot:
    """A consistent view at one generation: recall, titles, ACLs and parsed versions."""

    def __init__(
        self,
        view: CorpusView,
        index: RecallIndex,
        passages: RecallIndex,
        source: VersionSource,
        dense: DenseIndex | None = None,
        hidden: frozenset[str] = frozenset(),
        facts: ViewFacts | None = None,
    ) -> None:
        """``facts``: those of ``view``, when another snapshot of it has them (:meth:`hiding`)."""
        if index.size != len(view.units):
            raise ValueError(f"index has {index.size} rows for {len(view.units)} units")
        if dense is not None and dense.size != len(view.units):
            raise ValueError(f"{dense.size} vectors for {len(view.units)} units")
        if passages.size != view.passages:
            raise ValueError(f"passage index has {passages.size} rows for {view.passages} passages")
        self._view = view
        self._index = index
        self._passages = passages
        self._facts = facts if facts is not None and facts.view is view else ViewFacts(view)
        self._source = source
        self._dense = dense
        self._hidden = hidden
        self._restricted = bool(hidden) or self._facts.restricted
        self._scopes: dict[frozenset[str], _Scope | None] = {}
        self._readable: dict[frozenset[str], str] = {}
        self._terms: dict[frozenset[str], ReadableTerms] = {}
        self._parsed: OrderedDict[tuple[str, str], ParsedDocument] = OrderedDict()
        self._infos: dict[tuple[str, str], VersionInfo] = {}
        self._lock = threading.Lock()

    @property
    def generation(self) -> int:
        """The committed generation this snapshot shows."""
        return self._view.generation

    @property
    def fingerprint(self) -> str:
        """Identifies the corpus content (versions, texts, ACLs) this snapshot searches."""
        return self._facts.fingerprint

    @property
    def unit_count(self) -> int:
        return len(self._view.units)

    def public_units(self) -> list[Unit]:
        """The live units of documents everyone may read, in corpus order."""
        docs = self._view.docs
        return [
            u for u, d in zip(self._view.units, self._view.unit_doc.tolist(), strict=True) if not docs[d].acl
        ]

    def hiding(self, doc_ids: Collection[str]) -> Snapshot:
        """The same generation as if ``doc_ids`` were not in it (the indexes are shared, not copied):
        what self-calibration asks a question whose document is missing against."""
        hidden = self._hidden | frozenset(doc_ids)
        return Snapshot(
            self._view, self._index, self._passages, self._source, self._dense, hidden, self._facts
        )

    def reading_from(self, source: VersionSource) -> Snapshot:
        """The same view reading its versions from ``source``: a write transaction's own connection,
        so that a generation can be measured before it is committed."""
        return Snapshot(
            self._view, self._index, self._passages, source, self._dense, self._hidden, self._facts
        )

    @property
    def unit_index(self) -> RecallIndex:
        return self._index

    @property
    def passage_index(self) -> RecallIndex:
        return self._passages

    @property
    def dense_index(self) -> DenseIndex | None:
        return self._dense

    @property
    def embedder(self) -> EmbedderIdentity | None:
        """Who made this snapshot's unit vectors; None when recall is lexical only."""
        return self._dense.identity if self._dense is not None else None

    def similarities(self, vector: Vectors, groups: Collection[str] = ()) -> QuestionSimilarities | None:
        """The cosine of a question vector with every unit ``groups`` may read (None: no vectors)."""
        if self._dense is None:
            return None
        scope = self._scope(groups)
        return self._dense.similarities(vector, None if scope is None else scope.unit_mask > 0)

    def cosines(self, vector: Vectors, groups: Collection[str] = ()) -> UnitCosines | None:
        """The question's cosines with the units ``groups`` may read, looked up by unit (None: no vectors)."""
        similarities = self.similarities(vector, groups)
        if similarities is None or self._dense is None:
            return None
        return UnitCosines(similarities, self._position_map(), self._dense.matrix)

    def position(self, doc_id: str, version: str, ordinal: int) -> int | None:
        """The corpus position of a live unit (its row in every index), None for a unit not live here."""
        return self._position_map().get((doc_id, version, ordinal))

    def current_versions(self) -> Mapping[str, str]:
        """doc_id -> the version live at this generation."""
        return self._facts.current

    def readable_fingerprint(self, groups: Collection[str]) -> str:
        """The fingerprint of the versions ``groups`` may read: all that a run with them depends on."""
        scope = self._scope(groups)
        if scope is None:
            return self._facts.fingerprint
        key = frozenset(groups)
        found = self._readable.get(key)
        if found is None:
            kept = [d for d, ok in zip(self._view.docs, scope.docs.tolist(), strict=True) if ok]
            found = self._readable[key] = fingerprint(kept)
        return found

    def spelled(
        self,
        terms: Sequence[str],
        groups: Collection[str] = (),
        *,
        scoped: bool = True,
        min_chars: int = TYPO_MIN_CHARS,
    ) -> list[str]:
        """The terms with each unknown English word of ``min_chars`` or more read as the known word
        one edit away (see ``RecallIndex.spelled``): users misspell, and recall and coverage should
        both see the word meant.

        Known means held by a unit ``groups`` may read (``scoped=False``: by any unit).
        """
        scope = self._scope(groups) if scoped else None
        return self._index.spelled(terms, scope.units if scope else None, min_chars)

    def term_weights(
        self, terms: Sequence[str], groups: Collection[str] = (), *, scoped: bool = True
    ) -> dict[str, float]:
        """BM25 inverse document frequency of each term over the passages ``groups`` may read (every
        passage with ``scoped=False``): how much finding it tells.

        A term no passage holds gets the highest weight, as if it occurred once.
        """
        scope = self._scope(groups) if scoped else None
        rows = scope.passages if scope else None
        n = max(rows.count if rows else self._passages.size, 1)
        out: dict[str, float] = {}
        for term in terms:
            df = max(self._passages.doc_freq(term, rows), 1)
            out[term] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        return out

    def terms_for(self, groups: Collection[str] = (), *, scoped: bool = True) -> ReadableTerms:
        """The passage statistics ``groups`` read (every passage with ``scoped=False``): what a
        question is read against (``tools.search.terms``)."""
        scope = self._scope(groups) if scoped else None
        if scope is None:
            return ReadableTerms(self._passages, None)
        key = frozenset(groups)
        with self._lock:
            terms = self._terms.get(key)
            if terms is None:
                if len(self._terms) >= _SCOPE_CACHE:
                    self._terms.clear()
                terms = self._terms[key] = ReadableTerms(self._passages, scope.passages)
        return terms

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        groups: Collection[str] = (),
        exclude: Collection[tuple[str, str, int]] = (),
        scoped: bool = True,
        similarities: QuestionSimilarities | None = None,
        dense_k: int = DENSE_K,
        rrf_constant: int = RRF_CONSTANT,
        fusion_weight: float = FUSION_WEIGHT,
        typo_min_chars: int = TYPO_MIN_CHARS,
    ) -> list[Hit]:
        """The k best units the caller may read for the query, best first (ties: corpus order).

        A unit's score is its BM25 score over units plus ``fusion_weight`` times its passage's BM25
        score over passages, each divided by the best one the caller may read, so it lies in
        (0, 1 + fusion_weight]; only units that match the query themselves are returned. The
        query's unknown English words of ``typo_min_chars`` or more are read as spelled (:meth:`spelled`).
        ``exclude`` holds (doc_id, version, ordinal) of units already seen; they score zero, as do
        units and passages of versions whose ACL shares no group with ``groups``. Both BM25 scores
        are those of an index over what ``groups`` may read (``scoped=False``: over every unit).

        With ``similarities`` (of this question, from :meth:`similarities` with the same groups)
        the ``dense_k`` best units by BM25 and by cosine are fused by reciprocal rank
        (``rrf_constant``); a unit found only by its vector has lexical score 0.
        """
        lexical = self._lexical(
            query,
            max(k, dense_k) if similarities else k,
            groups,
            exclude,
            scoped,
            fusion_weight=fusion_weight,
            typo_min_chars=typo_min_chars,
        )
        units = self._view.units
        if similarities is None:
            return [Hit(units[pos], score, rank) for rank, (pos, score) in enumerate(lexical)]
        seen = [p for p in (self.position(*key) for key in exclude) if p is not None]
        dense = similarities.top(dense_k, seen).tolist()
        scores = dict(lexical)
        fused = rrf([[pos for pos, _ in lexical], dense], k, rrf_constant)
        return [
            Hit(units[pos], scores.get(pos, 0.0), rank, float(similarities.values[pos]))
            for rank, (pos, _) in enumerate(fused)
        ]

    def _lexical(
        self,
        query: str,
        k: int,
        groups: Collection[str],
        exclude: Collection[tuple[str, str, int]],
        scoped: bool,
        *,
        fusion_weight: float,
        typo_min_chars: int,
    ) -> list[tuple[int, float]]:
        """The k best (position, fused BM25 score) pairs, best first."""
        scope = self._scope(groups)
        units, passages = (scope.units, scope.passages) if scope and scoped else (None, None)
        tokens = self._index.spelled(recall_tokens(query), units, typo_min_chars)
        if not tokens or k <= 0:
            return []
        scores = self._index.scores(tokens, units)
        if scores is None:
            return []
        if scope is not None and not scoped:
            np.multiply(scores, scope.unit_mask, out=scores)
        if exclude:
            self._zero_excluded(scores, exclude)
        candidates = np.flatnonzero(scores > 0)
        if candidates.size == 0:
            return []
        lift = self._passages.scores(tokens, passages) if fusion_weight > 0 else None
        if lift is not None and scope is not None and not scoped:
            # A passage the caller may not read must not set the scale for the ones it may.
            np.multiply(lift, scope.passage_mask, out=lift)
        fused = self._fuse(scores[candidates], candidates, lift, fusion_weight)
        # candidates are in corpus order, so top_k's tie-break by index is the corpus-order one.
        picked, values = top_k(fused, k)
        return list(zip(candidates[picked].tolist(), values.tolist(), strict=True))

    def _fuse(
        self,
        unit_scores: Scores,
        candidates: npt.NDArray[np.int64],
        passage_scores: Scores | None,
        weight: float,
    ) -> Scores:
        """Scaled unit scores of the candidates plus the weighted, scaled scores of their passages
        (the passages the caller may not read score 0)."""
        fused: Scores = unit_scores / unit_scores.max()
        if passage_scores is None:
            return fused
        best = float(passage_scores.max())
        if best > 0:
            lift = passage_scores[self._view.unit_passage[candidates]]
            fused += lift * np.float32(weight / best)
        return fused

    def version_info(self, doc_id: str, version: str) -> VersionInfo:
        """Title, ACL and recorded text sha256 of any stored version; NotFoundError if unknown."""
        return self._source.version_info(doc_id, version)

    def parsed(self, doc_id: str, version: str) -> ParsedDocument:
        """Sections and units of any stored version (old ones too); NotFoundError if unknown."""
        key = (doc_id, version)
        with self._lock:
            hit = self._parsed.get(key)
            if hit is not None:
                self._parsed.move_to_end(key)
                return hit
        doc = self._source.parsed(doc_id, version)
        with self._lock:
            self._parsed[key] = doc
            if len(self._parsed) > _PARSED_CACHE:
                self._parsed.popitem(last=False)
        return doc

    def acl(self, doc_id: str, version: str) -> tuple[str, ...]:
        """Groups allowed to read the version; empty = public."""
        return self._info(doc_id, version).acl

    def readable(self, doc_id: str, version: str, groups: Collection[str]) -> bool:
        """True when a caller in ``groups`` may read the version."""
        return can_read(self._info(doc_id, version).acl, groups)

    def title(self, doc_id: str, version: str) -> str:
        """The version's title."""
        return self._info(doc_id, version).title

    def _info(self, doc_id: str, version: str) -> VersionInfo:
        key = (doc_id, version)
        info = self._facts.live.get(key) or self._infos.get(key)
        if info is None:
            info = self._source.version_info(doc_id, version)
            self._infos[key] = info
        return info

    def _scope(self, groups: Collection[str]) -> _Scope | None:
        """What ``groups`` may read, or None when that is everything (the direct path). Cached."""
        if not self._restricted:
            return None
        key = frozenset(groups)
        if key in self._scopes:
            return self._scopes[key]
        docs = self._view.docs
        hidden = self._hidden
        doc_ok = np.array([can_read(d.acl, key) and d.doc_id not in hidden for d in docs], dtype=np.bool_)
        scope = None
        if not doc_ok.all():
            unit_ok, passage_ok = doc_ok[self._view.unit_doc], doc_ok[self._facts.passage_doc]
            unit_lengths, passage_lengths = self._facts.lengths()
            scope = _Scope(
                unit_ok.astype(np.float32),
                passage_ok.astype(np.float32),
                Rows.of(unit_ok, unit_lengths),
                Rows.of(passage_ok, passage_lengths),
                doc_ok,
            )
        with self._lock:
            if len(self._scopes) >= _SCOPE_CACHE:
                self._scopes.clear()
                self._readable.clear()
            self._scopes[key] = scope
        return scope

    def _position_map(self) -> dict[Position, int]:
        return self._facts.positions()

    def _zero_excluded(self, scores: Scores, exclude: Collection[tuple[str, str, int]]) -> None:
        positions = self._position_map()
        hits = [positions[key] for key in exclude if key in positions]
        if hits:
            scores[hits] = 0.0
