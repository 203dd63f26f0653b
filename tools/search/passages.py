"""Passages: the reading-sized pieces whose BM25 score lifts the units inside them.

A unit is a sentence or a row: too short to tell on its own whether its neighbourhood is about the
question. Recall therefore also scores *passages* and fuses each unit's score with its passage's.

A passage is a run of consecutive units of one document version that lie directly in the same
section. Units always belong to the deepest section around them, so for a leaf section (one without
subsections) that is the whole section, heading included; for a document without headings it is the
whole document; for a section with subsections it is the text before its first subsection. A passage
that would span more than ``PASSAGE_MAX_CHARS`` characters is cut before the unit that crosses the
limit, so one long section becomes several passages of consecutive units.

Passages are derived from the units alone (their order, version, section and offsets), so the
same units always give the same passages: a past generation rebuilt from stored rows gets exactly
the passages it had.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from evidence_loop.tools.types import Unit

# About a long help-centre article; a longer section is cut so that one dense manual chapter does
# not lift every unit in it.
PASSAGE_MAX_CHARS = 4000

PassageIds = npt.NDArray[np.int32]


def _starts_passage(prev: Unit, unit: Unit, passage_start: int, max_chars: int) -> bool:
    """True when ``unit`` cannot join the passage that ``prev`` ends."""
    return (
        unit.doc_id != prev.doc_id
        or unit.version != prev.version
        or unit.section_id != prev.section_id
        or unit.end - passage_start > max_chars
    )


def passage_ids(units: Sequence[Unit], max_chars: int = PASSAGE_MAX_CHARS) -> PassageIds:
    """The passage of every unit (units in corpus order): 0, 0, 1, 1, 1, 2, ... never decreasing."""
    ids = np.zeros(len(units), dtype=np.int32)
    current = 0
    passage_start = units[0].start if units else 0
    for i in range(1, len(units)):
        prev, unit = units[i - 1], units[i]
        if _starts_passage(prev, unit, passage_start, max_chars):
            current += 1
            passage_start = unit.start
        ids[i] = current
    return ids


def passage_count(ids: PassageIds) -> int:
    """How many passages ``ids`` (from :func:`passage_ids`) describe."""
    return int(ids[-1]) + 1 if ids.size else 0


def passage_tokens(ids: PassageIds, unit_tokens: Sequence[Sequence[str]]) -> list[list[str]]:
    """Each passage's BM25 tokens: the tokens of its units, in order (no second tokenisation)."""
    out: list[list[str]] = [[] for _ in range(passage_count(ids))]
    for passage, tokens in zip(ids.tolist(), unit_tokens, strict=True):
        out[passage].extend(tokens)
    return out
