"""A corpus view: the versions live at one generation and their units, and what follows from them alone.

    VersionInfo, CorpusView   the live versions (by doc_id) and their units in corpus order
    fingerprint(docs)         sha256 over the versions' ids, texts' hashes and ACLs
    can_read(acl, groups)     whether a caller in ``groups`` may read a version
    ViewFacts(view)           the lookups a snapshot derives from its view (fingerprint, live versions,
                              each unit's position, each passage's document, row lengths), made once
                              per view and shared by every snapshot of it

A snapshot that hides documents (self-calibration asks 200 questions, each with its document
hidden) or reads through a write transaction shows the same view: it shares that view's facts
instead of deriving them again, which cost a pass over every unit and document of the corpus.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from evidence_loop.tools.search.passages import PassageIds, passage_count
from evidence_loop.tools.types import Unit

Position = tuple[str, str, int]  # (doc_id, version, ordinal) of a unit


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

    ``unit_doc[i]`` is the index in ``docs`` of the version that ``units[i]`` belongs to,
    ``unit_passage[i]`` the passage it lies in (:func:`tools.search.passages.passage_ids`) and
    ``unit_tokens[i]`` how many BM25 tokens it has.
    """

    generation: int
    docs: tuple[VersionInfo, ...]
    units: tuple[Unit, ...]
    unit_doc: npt.NDArray[np.int32]
    unit_passage: PassageIds
    unit_tokens: npt.NDArray[np.int32]

    @property
    def passages(self) -> int:
        """How many passages the units form."""
        return passage_count(self.unit_passage)


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


class ViewFacts:
    """What a view says about itself, derived once; the position map and row lengths when first asked
    (two threads asking at once both derive them, one keeps its own: the same values)."""

    __slots__ = (
        "_lengths",
        "_positions",
        "current",
        "fingerprint",
        "live",
        "passage_doc",
        "restricted",
        "view",
    )

    def __init__(self, view: CorpusView) -> None:
        self.view = view
        self.fingerprint = fingerprint(view.docs)
        self.live = {(d.doc_id, d.version): d for d in view.docs}
        self.current: Mapping[str, str] = MappingProxyType({d.doc_id: d.version for d in view.docs})
        self.passage_doc = np.zeros(view.passages, dtype=np.int32)
        self.passage_doc[view.unit_passage] = view.unit_doc
        self.restricted = any(d.acl for d in view.docs)
        self._positions: dict[Position, int] | None = None
        self._lengths: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None

    def positions(self) -> dict[Position, int]:
        """Each live unit's corpus position (its row in every index)."""
        if self._positions is None:
            self._positions = {(u.doc_id, u.version, u.ordinal): i for i, u in enumerate(self.view.units)}
        return self._positions

    def lengths(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Token count of each unit's and each passage's BM25 row (a row without tokens counts 1)."""
        if self._lengths is None:
            tokens = self.view.unit_tokens.astype(np.int64)
            per_passage = np.zeros(self.view.passages, dtype=np.int64)
            np.add.at(per_passage, self.view.unit_passage, tokens)
            self._lengths = (np.maximum(tokens, 1), np.maximum(per_passage, 1))
        return self._lengths
