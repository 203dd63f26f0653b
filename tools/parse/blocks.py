"""The intermediate form every format reader produces: blocks with their unit spans.

A reader (plain text, Markdown, HTML) turns a document into blocks in document order. Each block
already carries the spans of the units it yields, so the assembly step
(:func:`tools.parse.assemble`) is the same for every format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

BlockKind = Literal["heading", "paragraph", "list_item", "table_header", "table_row", "code"]

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class HeadingMark:
    """What a heading block contributes to the section tree.

    ``family`` names a numbering scheme ("atx", "html", "numbered", "cn_legal", "cn_outline");
    ``rank`` orders headings within one family (1 = outermost). Families are not compared with
    each other: a heading of a new family nests under the current one (see ``sections.py``).
    ``anchor`` is where the section starts (the heading's first character, or its ``<hN`` tag).
    """

    family: str
    rank: int
    title: str
    anchor: int


@dataclass(frozen=True, slots=True)
class Block:
    """A heading, paragraph, list item, table row or code block, with the spans of its units.

    A paragraph yields one sentence unit per span; a long list item may yield several spans, each
    still a list item. ``depth`` is a list item's nesting depth (0 = top level).
    """

    kind: BlockKind
    spans: tuple[Span, ...]
    heading: HeadingMark | None = None
    depth: int = 0
