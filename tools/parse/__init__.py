"""Document parsing into a section tree and units with exact offsets.

``parse_document`` is the one entry point. A format reader turns the text into blocks
(``plain.py``, ``markdown.py``, ``html.py``; sentences come from ``sentences.py``), the section
tree is built from the heading blocks (``sections.py``), and the blocks are numbered into units
with their links (``assemble.py``). For every unit ``doc.text[u.start:u.end] == u.text``; for text
and Markdown the units cover every non-whitespace character exactly once, for HTML every
non-whitespace character of the visible text.
"""

from __future__ import annotations

from collections.abc import Callable

from evidence_loop.tools.errors import UnsupportedFormatError
from evidence_loop.tools.parse.assemble import assemble_units
from evidence_loop.tools.parse.blocks import Block
from evidence_loop.tools.parse.html import scan_html
from evidence_loop.tools.parse.markdown import scan_markdown
from evidence_loop.tools.parse.plain import scan_plain
from evidence_loop.tools.parse.sections import build_sections
from evidence_loop.tools.types import FIRST_VERSION, DocumentInput, ParsedDocument

_READERS: dict[str, Callable[[str], list[Block]]] = {
    "text": scan_plain,
    "markdown": scan_markdown,
    "html": scan_html,
}

__all__ = ["parse_document"]


def parse_document(doc: DocumentInput) -> ParsedDocument:
    """Split a document into sections and units; ``text[u.start:u.end] == u.text`` for every unit.

    A document without a version label is parsed as its first version (the store labels it before
    parsing it)."""
    version = doc.version if doc.version is not None else FIRST_VERSION
    reader = _READERS.get(doc.format)
    if reader is None:
        raise UnsupportedFormatError(f"unknown document format {doc.format!r} for {doc.doc_id!r}")
    blocks = [block for block in reader(doc.text) if block.spans]
    sections, block_sections = build_sections(doc.text, doc.title, blocks)
    units = assemble_units(doc.doc_id, version, doc.text, blocks, block_sections)
    return ParsedDocument(doc.doc_id, version, doc.title, doc.format, doc.text, sections, units)
