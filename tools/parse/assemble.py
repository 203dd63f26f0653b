"""Blocks and sections into numbered units with their links.

Links (``Unit.link``):

- a list item links to its list's intro: the last sentence unit before the list in the same
  section; when the section has no sentence before the list, the section's heading unit; ``None``
  when the list opens the document before any heading or sentence. A nested item links to the
  (first unit of the) item it is nested in. Every part of a long item split into several units
  carries the same link.
- a table row links to its table's header unit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evidence_loop.tools.parse.blocks import Block
from evidence_loop.tools.types import Unit, UnitKind


@dataclass(slots=True)
class _Links:
    """What the link rules remember while walking the blocks in order."""

    last_sentence: tuple[int, int] | None = None  # (section id, ordinal)
    headings: dict[int, int] = field(default_factory=dict)  # section id -> heading ordinal
    intro: int | None = None
    parents: list[int] = field(default_factory=list)  # first ordinal of the open item per depth
    header: int | None = None
    previous: str = ""

    def list_link(self, block: Block, section_id: int, ordinal: int) -> int | None:
        """The link of a list item block whose first unit gets ``ordinal``."""
        if self.previous != "list_item":
            self.intro = self._intro(section_id)
            self.parents = []
        del self.parents[block.depth :]
        link = self.parents[-1] if self.parents else self.intro
        self.parents.append(ordinal)
        return link

    def _intro(self, section_id: int) -> int | None:
        if self.last_sentence is not None and self.last_sentence[0] == section_id:
            return self.last_sentence[1]
        return self.headings.get(section_id)


_UNIT_KIND: dict[str, UnitKind] = {
    "heading": "heading",
    "paragraph": "sentence",
    "list_item": "list_item",
    "table_header": "table_header",
    "table_row": "table_row",
    "code": "code",
}


def assemble_units(
    doc_id: str, version: str, text: str, blocks: list[Block], block_sections: list[int]
) -> tuple[Unit, ...]:
    """One unit per block span of ``text``, in document order, with ordinals, sections and links."""
    units: list[Unit] = []
    links = _Links()
    for block, section_id in zip(blocks, block_sections, strict=True):
        ordinal = len(units)
        link = _block_link(links, block, section_id, ordinal)
        kind = _UNIT_KIND[block.kind]
        for start, end in block.spans:
            units.append(
                Unit(doc_id, version, len(units), kind, section_id, start, end, text[start:end], link)
            )
        _remember(links, block, section_id, len(units) - 1)
    return tuple(units)


def _block_link(links: _Links, block: Block, section_id: int, ordinal: int) -> int | None:
    if block.kind == "list_item":
        return links.list_link(block, section_id, ordinal)
    if block.kind == "table_row":
        return links.header
    return None


def _remember(links: _Links, block: Block, section_id: int, last_ordinal: int) -> None:
    """Update the link state after a block's units were numbered."""
    if block.kind == "paragraph":
        links.last_sentence = (section_id, last_ordinal)
    elif block.kind == "heading":
        links.headings[section_id] = last_ordinal
    if block.kind == "table_header":
        links.header = last_ordinal
    elif block.kind != "table_row":
        links.header = None
    links.previous = block.kind
