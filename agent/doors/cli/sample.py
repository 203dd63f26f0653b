"""The bundled sample knowledge base: a fictional bilingual help centre for the demo and the tests.

The documents live in ``agent/sample_kb/`` next to ``manifest.json``, which lists every file with
its doc_id, version, title, format and ACL, in ingestion order (so a later version of a document
comes after the earlier one and ends up current). Two flags select subsets:

- ``default``: whether ``evloop demo`` ingests the document (a draft is shipped but left out);
- ``optional_for_tests``: a document that tests may leave out to see what the loop does without it
  (the enrolled-student rescheduling rules that the course policy refers to).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable

from pydantic import BaseModel, ConfigDict, Field

from evidence_loop.tools.types import DocFormat, DocumentInput

__all__ = ["SampleEntry", "load_sample_kb", "sample_kb_dir", "sample_manifest"]


class _EntryModel(BaseModel):
    """One manifest line as written on disk; validated once, then turned into a frozen value."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    doc_id: str = Field(min_length=1)
    version: str = Field(min_length=1)
    title: str
    format: DocFormat
    acl: list[str]
    default: bool
    optional_for_tests: bool = False


class _ManifestModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    documents: list[_EntryModel]


@dataclass(frozen=True, slots=True)
class SampleEntry:
    """One document version of the sample knowledge base, as listed in the manifest."""

    file: str
    doc_id: str
    version: str
    title: str
    format: DocFormat
    acl: tuple[str, ...]
    default: bool
    optional_for_tests: bool


def sample_kb_dir() -> Traversable:
    """The packaged folder holding the sample documents and their manifest."""
    return files("evidence_loop.agent") / "sample_kb"


def sample_manifest() -> tuple[SampleEntry, ...]:
    """Every manifest entry, in ingestion order; raises pydantic's ValidationError on a broken manifest."""
    raw = json.loads((sample_kb_dir() / "manifest.json").read_text(encoding="utf-8"))
    manifest = _ManifestModel.model_validate(raw)
    return tuple(
        SampleEntry(
            file=e.file,
            doc_id=e.doc_id,
            version=e.version,
            title=e.title,
            format=e.format,
            acl=tuple(e.acl),
            default=e.default,
            optional_for_tests=e.optional_for_tests,
        )
        for e in manifest.documents
    )


def _document(entry: SampleEntry) -> DocumentInput:
    text = (sample_kb_dir() / entry.file).read_text(encoding="utf-8")
    return DocumentInput(
        doc_id=entry.doc_id,
        text=text,
        version=entry.version,
        title=entry.title,
        format=entry.format,
        acl=entry.acl,
        metadata={"source": f"sample_kb/{entry.file}"},
    )


def load_sample_kb(
    include_optional: bool = True, *, include_non_default: bool = False
) -> list[DocumentInput]:
    """The sample documents in manifest order.

    By default these are the documents the demo ingests (``default: true``). ``include_optional=False``
    leaves out the ones marked ``optional_for_tests``; ``include_non_default=True`` adds the drafts.
    """
    return [
        _document(entry)
        for entry in sample_manifest()
        if (entry.default or include_non_default) and (include_optional or not entry.optional_for_tests)
    ]
