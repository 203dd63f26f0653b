"""Where a stored text came from, when it is not the document as given.

An HTML page is stored as its clean text (``tools.parse``). Its version's ``sha256`` is that of the
clean text, as for every version, and its metadata keeps the source under ``parsed_from``: the
source's format, its size in bytes and its sha256. ``parsed_from`` is the store's, not the
writer's: the ingest rules compare a version's metadata without it (``own_metadata``).
"""

from __future__ import annotations

import hashlib
import json

from evidence_loop.tools.types import DocumentInput, ParsedDocument

PARSED_FROM = "parsed_from"


def sha256_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def with_provenance(doc: DocumentInput, parsed: ParsedDocument, source: bytes) -> dict[str, object]:
    """The metadata to store: the writer's, plus ``parsed_from`` when the stored text is not the source."""
    metadata = dict(doc.metadata)
    if (parsed.text, parsed.format) != (doc.text, doc.format):
        sha = hashlib.sha256(source).hexdigest()
        metadata[PARSED_FROM] = {"format": doc.format, "bytes": len(source), "sha256": sha}
    return metadata


def own_metadata(metadata_json: str) -> object:
    """A version's metadata without ``parsed_from``: what its writer gave."""
    metadata = json.loads(metadata_json)
    return {k: v for k, v in metadata.items() if k != PARSED_FROM} if isinstance(metadata, dict) else metadata


def own_json(metadata_json: str) -> str:
    """``own_metadata`` as stored JSON."""
    return json.dumps(own_metadata(metadata_json), ensure_ascii=False, sort_keys=True)
