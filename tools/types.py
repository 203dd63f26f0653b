"""The corpus model as frozen values: documents in, sections and units out, hits from recall.

Offsets are character offsets into the exact document text of one version:
``text[unit.start:unit.end] == unit.text`` for every unit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

DocFormat = Literal["text", "markdown", "html"]
UnitKind = Literal["heading", "sentence", "list_item", "table_header", "table_row", "code"]

DOC_FORMATS: tuple[DocFormat, ...] = ("text", "markdown", "html")

# What a doc_id may not hold: control characters (NUL, newline, tab, escape, C1), lone surrogates (bytes
# that were not UTF-8), line and paragraph separators, and the direction marks and overrides that make an
# id display as another. Each would forge or hide a line where an id is printed or logged.
_UNSAFE_ID = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def doc_id_fault(doc_id: str) -> str | None:
    """Why ``doc_id`` cannot name a document (blank, or holding a character above), or None if it can."""
    if not doc_id.strip():
        return "a doc_id must not be empty"
    found = _UNSAFE_ID.search(doc_id)
    if found is None:
        return None
    shown = _UNSAFE_ID.sub(lambda m: ascii(m.group())[1:-1], doc_id)
    code = ord(found.group())
    if 0xD800 <= code <= 0xDFFF:
        return f"doc_id '{shown}' is not valid UTF-8 (U+{code:04X}); a doc_id must be printable text"
    return f"doc_id '{shown}' holds a control character (U+{code:04X}); a doc_id must be printable text"


@dataclass(frozen=True, slots=True)
class DocumentInput:
    """One document version as handed to ingestion."""

    doc_id: str
    text: str
    version: str = "1"
    title: str = ""
    format: DocFormat = "text"
    acl: tuple[str, ...] = ()
    metadata: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Section:
    """A node of a document's section tree. Section 0 is the root (the whole document)."""

    section_id: int
    parent_id: int | None
    level: int
    title: str
    start: int
    end: int
    path: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Unit:
    """The smallest thing recall can hit: a sentence, list item, table row, code block or heading.

    ``link`` is the ordinal of the unit this one depends on to be read: a list item's intro
    sentence, a table row's header row; ``None`` when there is none.
    """

    doc_id: str
    version: str
    ordinal: int
    kind: UnitKind
    section_id: int
    start: int
    end: int
    text: str
    link: int | None = None


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    """A document version split into its section tree and its units, in document order."""

    doc_id: str
    version: str
    title: str
    format: DocFormat
    text: str
    sections: tuple[Section, ...]
    units: tuple[Unit, ...]


@dataclass(frozen=True, slots=True)
class Hit:
    """A unit found by recall, with its lexical (BM25) score, rank (0 = best) and, with dense recall,
    the cosine similarity of its vector to the question's (None: lexical recall only)."""

    unit: Unit
    score: float
    rank: int
    similarity: float | None = None


# The recall settings, defined once: ``policies.config.Policy`` takes its defaults from here, the loop
# passes its policy's values to ``Snapshot.search``, and a search that names none (a test, a
# benchmark) runs with these.
DENSE_K = 50  # units taken by BM25 and by cosine before fusing
RRF_CONSTANT = 60  # reciprocal rank fusion's constant
FUSION_WEIGHT = 1.5  # a passage's BM25 share in its units' recall score
TYPO_MIN_CHARS = 5  # an unknown Latin word this long is read as the known word one edit away
