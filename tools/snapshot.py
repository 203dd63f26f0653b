"""An immutable, consistent view of the store at one generation, used by one question from start to end.

A snapshot holds in memory what recall needs (the live versions, their units in corpus order, the
BM25 index over the units and the one over their passages, see :mod:`tools.passages`) and asks a
:class:`VersionSource` for anything else (the parsed form, title or ACL of any stored version, old
ones included). Ingesting never changes a snapshot that exists: the store hands out a new one for
the new generation.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

import numpy as np
import numpy.typing as npt

from tools.index import RecallIndex, Scores, top_k
from tools.passages import PassageIds, passage_count
from tools.tokenize import recall_tokens
from tools.types import Hit, ParsedDocument, Unit

_PARSED_CACHE = 4096
_MASK_CACHE = 256
# Weight of the passage score against the unit score, both scaled to the best readable one:
# a sentence in the section about the question outranks the same sentence elsewhere. Measured on
# a Chinese help centre and an English manual (top-5 gold documents), 1.5 is near the best for both.
FUSION_WEIGHT = 1.5


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """What a snapshot needs to know about one stored document version besides its units."""

    doc_id: str
    version: str
    title: str
    acl: tuple[str, ...]
    sha256: str


@dataclass(frozen=True, slots=True)
class CorpusView:
    """The versions live at one generation (sorted by doc_id) and their units in corpus order.

    ``unit_doc[i]`` is the index in ``docs`` of the version that ``units[i]`` belongs to, and
    ``unit_passage[i]`` the passage it lies in (:func:`tools.passages.passage_ids`).
    """

    generation: int
    docs: tuple[VersionInfo, ...]
    units: tuple[Unit, ...]
    unit_doc: npt.NDArray[np.int32]
    unit_passage: PassageIds

    @property
    def passages(self) -> int:
        """How many passages the units form."""
        return passage_count(self.unit_passage)


class VersionSource(Protocol):
    """Where a snapshot reads versions that are not in its view (thread-safe)."""

    def version_info(self, doc_id: str, version: str) -> VersionInfo:
        """Title, ACL and hash of a stored version; NotFoundError if there is none."""
        ...

    def parsed(self, doc_id: str, version: str) -> ParsedDocument:
        """Sections and units of a stored version as stored; NotFoundError if there is none."""
        ...


def fingerprint(docs: Sequence[VersionInfo]) -> str:
    """sha256 over (doc_id, version, text sha256, acl) of the live versions, in doc_id order."""
    digest = hashlib.sha256()
    for doc in sorted(docs, key=lambda d: d.doc_id):
        line = json.dumps([doc.doc_id, doc.version, doc.sha256, list(doc.acl)], ensure_ascii=False)
        digest.update(line.encode("utf-8") + b"\n")
    return digest.hexdigest()


def can_read(acl: Collection[str], groups: Collection[str]) -> bool:
    """An empty ACL is public; otherwise the caller needs at least one of its groups."""
    return not acl or any(group in acl for group in groups)


class Snapshot:
    """A consistent view at one generation: recall, titles, ACLs and parsed versions."""

    def __init__(
        self, view: CorpusView, index: RecallIndex, passages: RecallIndex, source: VersionSource
    ) -> None:
        if index.size != len(view.units):
            raise ValueError(f"index has {index.size} rows for {len(view.units)} units")
        if passages.size != view.passages:
            raise ValueError(f"passage index has {passages.size} rows for {view.passages} passages")
        self._view = view
        self._index = index
        self._passages = passages
        self._passage_doc = np.zeros(view.passages, dtype=np.int32)
        self._passage_doc[view.unit_passage] = view.unit_doc
        self._source = source
        self._fingerprint = fingerprint(view.docs)
        self._live = {(d.doc_id, d.version): d for d in view.docs}
        self._current = MappingProxyType({d.doc_id: d.version for d in view.docs})
        self._restricted = any(d.acl for d in view.docs)
        self._masks: dict[frozenset[str], tuple[Scores, Scores]] = {}
        self._positions: dict[tuple[str, str, int], int] | None = None
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
        return self._fingerprint

    def current_versions(self) -> Mapping[str, str]:
        """doc_id -> the version live at this generation."""
        return self._current

    def spelled(self, terms: Sequence[str]) -> list[str]:
        """The terms with each unknown English word read as the known word one edit away (see
        ``RecallIndex.spelled``): users misspell, and recall and coverage should both see the word meant."""
        return self._index.spelled(terms)

    def term_weights(self, terms: Sequence[str]) -> dict[str, float]:
        """BM25 inverse document frequency of each term over passages: how much finding it tells.

        A term no passage holds gets the highest weight, as if it occurred once.
        """
        n = max(self._passages.size, 1)
        out: dict[str, float] = {}
        for term in terms:
            df = max(self._passages.doc_freq(term), 1)
            out[term] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        return out

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        groups: Collection[str] = (),
        exclude: Collection[tuple[str, str, int]] = (),
    ) -> list[Hit]:
        """The k best units the caller may read for the query, best first (ties: corpus order).

        A unit's score is its BM25 score over units plus ``FUSION_WEIGHT`` times its passage's BM25
        score over passages, each divided by the best one the caller may read, so it lies in
        (0, 1 + FUSION_WEIGHT]; only units that match the query themselves are returned.
        ``exclude`` holds (doc_id, version, ordinal) of units already seen; they score zero, as do
        units and passages of versions whose ACL shares no group with ``groups``.
        """
        tokens = self._index.spelled(recall_tokens(query))
        if not tokens or k <= 0:
            return []
        scores = self._index.scores(tokens)
        if scores is None:
            return []
        masks = self._mask(frozenset(groups)) if self._restricted else None
        if masks is not None:
            np.multiply(scores, masks[0], out=scores)
        if exclude:
            self._zero_excluded(scores, exclude)
        candidates = np.flatnonzero(scores > 0)
        if candidates.size == 0:
            return []
        fused = self._fuse(scores[candidates], candidates, tokens, masks)
        # candidates are in corpus order, so top_k's tie-break by index is the corpus-order one.
        picked, values = top_k(fused, k)
        units = self._view.units
        return [
            Hit(units[pos], float(score), rank)
            for rank, (pos, score) in enumerate(
                zip(candidates[picked].tolist(), values.tolist(), strict=True)
            )
        ]

    def _fuse(
        self,
        unit_scores: Scores,
        candidates: npt.NDArray[np.int64],
        tokens: list[str],
        masks: tuple[Scores, Scores] | None,
    ) -> Scores:
        """Scaled unit scores of the candidates plus the weighted, scaled scores of their passages."""
        fused: Scores = unit_scores / unit_scores.max()
        passage_scores = self._passages.scores(tokens) if FUSION_WEIGHT > 0 else None
        if passage_scores is None:
            return fused
        if masks is not None:
            # A passage the caller may not read must not set the scale for the ones it may.
            np.multiply(passage_scores, masks[1], out=passage_scores)
        best = float(passage_scores.max())
        if best > 0:
            lift = passage_scores[self._view.unit_passage[candidates]]
            fused += lift * np.float32(FUSION_WEIGHT / best)
        return fused

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
        info = self._live.get(key) or self._infos.get(key)
        if info is None:
            info = self._source.version_info(doc_id, version)
            self._infos[key] = info
        return info

    def _mask(self, groups: frozenset[str]) -> tuple[Scores, Scores]:
        """Per unit and per passage: 1.0 where its version is readable by ``groups``, else 0.0.

        Cached per group set.
        """
        masks = self._masks.get(groups)
        if masks is None:
            doc_ok = np.array([can_read(d.acl, groups) for d in self._view.docs], dtype=np.float32)
            masks = (doc_ok[self._view.unit_doc], doc_ok[self._passage_doc])
            if len(self._masks) >= _MASK_CACHE:
                self._masks.clear()
            self._masks[groups] = masks
        return masks

    def _zero_excluded(self, scores: Scores, exclude: Collection[tuple[str, str, int]]) -> None:
        positions = self._positions
        if positions is None:
            positions = {(u.doc_id, u.version, u.ordinal): i for i, u in enumerate(self._view.units)}
            self._positions = positions
        hits = [positions[key] for key in exclude if key in positions]
        if hits:
            scores[hits] = 0.0
