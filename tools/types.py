"""The corpus model as frozen values: documents in, sections and units out, hits from recall.

Offsets are character offsets into the exact document text of one version:
``text[unit.start:unit.end] == unit.text`` for every unit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

DocFormat = Literal["text", "markdown", "html"]
UnitKind = Literal["heading", "sentence", "list_item", "table_header", "table_row", "code"]

DOC_FORMATS: tuple[DocFormat, ...] = ("text", "markdown", "html")


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
    """A unit found by recall, with its BM25 score and rank (0 = best)."""

    unit: Unit
    score: float
    rank: int
