"""A window checked: its signals, the score they combine into, and the gaps at its edges.

The types the completeness check produces and every later step reads (sliding, references,
selection, the judge, the decision): below the check itself, so that a module that reads a
``Checked`` needs not import the module that makes one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from evidence_loop.policies.types import MissingKind, Slot
from evidence_loop.tools.types import ParsedDocument
from evidence_loop.tools.windows import Window

Direction = Literal["left", "right", "anchor", "none"]


@dataclass(frozen=True, slots=True)
class Gap:
    """Something a window lacks at its edge, and the unit that would close it."""

    kind: MissingKind
    direction: Direction
    target: int | None
    detail: str
    value: str | None = None


@dataclass(frozen=True, slots=True)
class WindowCheck:
    """The signals of one window and the score they combine into."""

    relevance: float
    coverage: float
    slot_coverage: float
    boundary: float
    score: float
    gaps: tuple[Gap, ...]
    uncovered: tuple[Slot, ...]
    references: tuple[str, ...]
    # the best cosine of the window's units with the question, raw and on the question's scale
    # (0 at the corpus mean, 1 at the best readable unit); both 0 with lexical recall only
    cosine: float = 0.0
    semantic: float = 0.0
    # a cross-encoder's relevance of the grown window, 0..1 (tools.models.reranker); None when none scored it
    rerank: float | None = None


@dataclass(frozen=True, slots=True)
class Checked:
    """A window with its document, its latest check, and the best score of the recall that found it."""

    window: Window
    doc: ParsedDocument
    check: WindowCheck
    best: float = 0.0
