"""Document parsing into a section tree and units with exact offsets.

PLACEHOLDER: one unit per non-empty line, one root section. Replaced by the real parser.
"""

from __future__ import annotations

from tools.types import DocumentInput, ParsedDocument, Section, Unit


def parse_document(doc: DocumentInput) -> ParsedDocument:
    """Split a document into sections and units; ``text[u.start:u.end] == u.text`` for every unit."""
    text = doc.text
    units: list[Unit] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped:
            start = pos + line.index(stripped)
            end = start + len(stripped)
            units.append(Unit(doc.doc_id, doc.version, len(units), "sentence", 0, start, end, text[start:end]))
        pos += len(line)
    root = Section(0, None, 0, doc.title, 0, len(text), ())
    return ParsedDocument(doc.doc_id, doc.version, doc.title, doc.format, text, (root,), tuple(units))
