"""Document parsing into a section tree and units with exact offsets.

``parse_document`` is the one entry point. A format reader turns the text into blocks
(``plain.py``, ``markdown.py``, ``html.py``; sentences come from ``sentences.py``), the section
tree is built from the heading blocks (``sections.py``), and the blocks are numbered into units
with their links (``assemble.py``). For every unit ``parsed.text[u.start:u.end] == u.text``.

The parsed text is what the store keeps as the version's text. For text and Markdown it is the
document's own text, and the units cover every non-whitespace character of it exactly once. An
HTML page is stored as its clean text (``html.py``: the main content's headings, paragraphs, list
items, table rows and code, no markup), whose format is "text": ``ParsedDocument.format`` says how
the stored text is written, and the store records the source's format, size and sha256 beside it.
"""

from __future__ import annotations

from collections.abc import Callable

from evidence_loop.tools.errors import UnsupportedFormatError
from evidence_loop.tools.parse.assemble import assemble_units
from evidence_loop.tools.parse.blocks import Block
from evidence_loop.tools.parse.html import read_html
from evidence_loop.tools.parse.markdown import scan_markdown
from evidence_loop.tools.parse.plain import scan_plain
from evidence_loop.tools.parse.sections import build_sections
from evidence_loop.tools.types import DocFormat, DocumentInput, ParsedDocument

_READERS: dict[str, Callable[[str], list[Block]]] = {
    "text": scan_plain,
    "markdown": scan_markdown,
}

__all__ = ["parse_document"]


def parse_document(doc: DocumentInput) -> ParsedDocument:
    """Split a document into sections and units; ``parsed.text[u.start:u.end] == u.text`` for every
    unit, where ``parsed.text`` is the text to store (an HTML page's clean text)."""
    text, fmt = doc.text, doc.format
    if fmt == "html":
        page = read_html(doc.text)
        text, fmt, found = page.text, "text", list(page.blocks)
    else:
        reader = _READERS.get(fmt)
        if reader is None:
            raise UnsupportedFormatError(f"unknown document format {fmt!r} for {doc.doc_id!r}")
        found = reader(text)
    blocks = [block for block in found if block.spans]
    sections, block_sections = build_sections(text, doc.title, blocks)
    units = assemble_units(doc.doc_id, doc.version, text, blocks, block_sections)
    stored: DocFormat = fmt
    return ParsedDocument(doc.doc_id, doc.version, doc.title, stored, text, sections, units)
