"""Document sources: files, folders and corpus.jsonl files read into ``DocumentInput`` values.

Reading is a separate phase from writing so that bad input never half-fills an index:
``collect`` reads and validates every path first and raises on the first bad one; only then does
the caller hand the documents to the store. Nothing here prints; warnings are returned.

Rules:

- ``.md``/``.markdown`` are markdown, ``.txt`` is text, ``.html``/``.htm`` is html, ``.jsonl`` is a
  corpus file in the evaluation format (``doc_id`` and ``text`` required; ``title``, ``version``
  (default "1"), ``format`` (default "text"), ``acl`` and ``metadata`` optional).
- Folders are walked recursively in sorted order. Hidden files and folders are skipped; files with
  other extensions are skipped with a warning. A file of another type named explicitly is an
  ``UnsupportedFormatError``.
- Inside a folder, a link to a file is read only when the file it points to is inside that folder
  too (``follow_symlinks`` reads links to anywhere); other links are skipped with a warning, and
  links to folders are never followed. A file named explicitly is read wherever it points.
  A file that cannot be read (a link loop, a dangling link, no permission) is an ``InputError``.
- A file whose name is not UTF-8 or holds a control character is an ``InputError``: its doc_id
  could not be stored (see ``tools.types.doc_id_fault``); so is such a doc_id in a corpus record.
- A file's doc_id is its path relative to the root it was found under (the folder given, or the
  file's own folder) without the extension, in posix form: ``help/returns.md`` -> ``help/returns``.
  Its title is its first heading (markdown ``#``; html: ``tools.parse.html.html_title``, the main
  content's ``<h1>``, then ``<title>`` without the site's name), else the stem.
- The caller's ``acl`` and ``version`` apply to every file. For corpus records they are defaults
  only: a record's own non-empty ``acl`` and its own ``version`` win, because the corpus file is
  the authority on its documents, and a default ACL can only narrow who reads a public record.
- Documents that are empty or whitespace are skipped with a warning. The same doc_id and version
  twice with different text is a ``VersionClashError``; an exact duplicate is dropped with a warning.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evidence_loop.tools.errors import (
    DocumentTooLargeError,
    InputError,
    MalformedRecordError,
    UnsupportedFormatError,
    VersionClashError,
)
from evidence_loop.tools.inputs import JsonInputError, decode_utf8, parse_json
from evidence_loop.tools.parse.html import html_title
from evidence_loop.tools.types import DOC_FORMATS, DocFormat, DocumentInput, doc_id_fault

__all__ = [
    "FILE_FORMATS",
    "SUPPORTED_SUFFIXES",
    "Collection",
    "collect",
    "html_title",
    "markdown_title",
    "read_corpus_jsonl",
]

FILE_FORMATS: Mapping[str, DocFormat] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
}
SUPPORTED_SUFFIXES: tuple[str, ...] = (*FILE_FORMATS, ".jsonl")

_ATX_RE = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")
_FENCE_RE = re.compile(r"^ {0,3}(```|~~~)")


@dataclass(frozen=True, slots=True)
class Collection:
    """What ``collect`` found: the documents in order, the warnings, and how many were skipped."""

    documents: tuple[DocumentInput, ...]
    warnings: tuple[str, ...]
    skipped: int


@dataclass(slots=True)
class _Collector:
    """Accumulates documents while remembering where each (doc_id, version) came from."""

    documents: list[DocumentInput] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: int = 0
    origins: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)

    def skip(self, warning: str) -> None:
        self.warnings.append(warning)
        self.skipped += 1

    def add(self, doc: DocumentInput, origin: str) -> None:
        key = (doc.doc_id, doc.version)
        seen = self.origins.get(key)
        if seen is not None:
            first_origin, first_text = seen
            if first_text != doc.text:
                raise VersionClashError(
                    f"{doc.doc_id}@{doc.version} is given twice with different text: "
                    f"{first_origin} and {origin}"
                )
            self.skip(f"{origin}: {doc.doc_id}@{doc.version} duplicates {first_origin}; skipped")
            return
        self.origins[key] = (origin, doc.text)
        self.documents.append(doc)


def collect(
    paths: Sequence[Path],
    *,
    acl: tuple[str, ...] | None = None,
    version: str | None = None,
    max_bytes: int | None = None,
    follow_symlinks: bool = False,
) -> Collection:
    """Read and validate every document under ``paths``; raise an ``InputError`` before anything is written.

    ``acl``/``version`` override every file's and default every corpus record's (see the module
    docstring). ``max_bytes`` rejects any single document larger than that many UTF-8 bytes.
    ``follow_symlinks`` also reads the links in a folder that point to files outside it.
    """
    out = _Collector()
    for path in paths:
        if not path.exists() and not path.is_symlink():
            raise InputError(f"{path}: no such file or directory")
        if path.is_dir():
            inside = None if follow_symlinks else Path(os.path.realpath(path))
            for file in _walk(path, inside, out):
                _collect_file(file, path, out, acl, version, max_bytes)
        else:
            if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                raise UnsupportedFormatError(
                    f"{path}: unsupported file type {path.suffix or '(none)'!r}; "
                    f"supported: {', '.join(SUPPORTED_SUFFIXES)}"
                )
            _collect_file(path, path.parent, out, acl, version, max_bytes)
    return Collection(tuple(out.documents), tuple(out.warnings), out.skipped)


def read_corpus_jsonl(
    path: Path, *, acl: tuple[str, ...] | None = None, version: str | None = None
) -> list[DocumentInput]:
    """Every document of one corpus file in the evaluation format, whatever its name; empty records dropped.

    Validation and errors are those of ``collect``; use ``collect`` to see the warnings too.
    """
    out = _Collector()
    for lineno, doc in _read_jsonl(path, acl, version, None, out):
        out.add(doc, f"{path}:{lineno}")
    return out.documents


def _walk(folder: Path, inside: Path | None, out: _Collector) -> Iterator[Path]:
    """Supported files under ``folder``, depth first in sorted name order, hidden entries skipped.

    A link is yielded only if it points to a file under ``inside`` (any file when ``inside`` is None).
    """
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            # Not following folder links keeps the walk finite and inside the folder given.
            if entry.is_symlink():
                out.warnings.append(f"{entry}: a link to a folder; not followed")
            else:
                yield from _walk(entry, inside, out)
        elif entry.suffix.lower() not in SUPPORTED_SUFFIXES:
            out.warnings.append(f"{entry}: unsupported file type {entry.suffix or '(none)'!r}; skipped")
        elif entry.is_symlink() and (target := _outside(entry, inside)) is not None:
            out.skip(f"{entry}: a link to {target}, outside {inside}; skipped (--follow-symlinks reads it)")
        else:
            yield entry


def _outside(link: Path, inside: Path | None) -> Path | None:
    """The file ``link`` points to when that is not under ``inside``; None when the walk may read it."""
    target = Path(os.path.realpath(link))
    return None if inside is None or target.is_relative_to(inside) else target


def _read(path: Path, max_bytes: int | None) -> bytes:
    """The file's bytes; a file over ``max_bytes`` or one that cannot be read is refused by name."""
    try:
        size = path.stat().st_size
        if max_bytes is not None and size > max_bytes:
            raise DocumentTooLargeError(f"{path}: {size} bytes is over the limit of {max_bytes}")
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror or exc})") from exc


def _collect_file(
    path: Path,
    root: Path,
    out: _Collector,
    acl: tuple[str, ...] | None,
    version: str | None,
    max_bytes: int | None,
) -> None:
    if path.suffix.lower() == ".jsonl":
        for lineno, doc in _read_jsonl(path, acl, version, max_bytes, out):
            out.add(doc, f"{path}:{lineno}")
        return
    doc_id = path.relative_to(root).with_suffix("").as_posix()
    if (fault := doc_id_fault(doc_id)) is not None:
        raise InputError(f"{str(path)!r}: {fault}; rename the file")
    text = _decode(path, _read(path, max_bytes))
    if not text.strip():
        out.skip(f"{path}: empty document; skipped")
        return
    fmt = FILE_FORMATS[path.suffix.lower()]
    title = _title(text, fmt) or path.stem
    # The file name relative to its root, not the path as typed: re-ingesting the same folder from
    # another working directory must leave the document unchanged.
    metadata = {"file": path.relative_to(root).as_posix()}
    doc = DocumentInput(doc_id, text, version or "1", title, fmt, acl or (), metadata)
    out.add(doc, str(path))


def _decode(path: Path, data: bytes) -> str:
    """UTF-8 text without a byte-order mark; DecodeError names the file and the line."""
    return decode_utf8(data, str(path))


def _read_jsonl(
    path: Path,
    acl: tuple[str, ...] | None,
    version: str | None,
    max_bytes: int | None,
    out: _Collector,
) -> list[tuple[int, DocumentInput]]:
    """Every record of a corpus file, validated; the first bad line raises with its line number."""
    text = _decode(path, _read(path, None))
    docs: list[tuple[int, DocumentInput]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:  # a lone surrogate is refused by the store, which names the document
            obj = parse_json(line, unicode=False)
        except JsonInputError as exc:
            raise MalformedRecordError(str(path), lineno, str(exc)) from None
        doc = _record(obj, str(path), lineno, acl, version)
        # surrogatepass: a lone surrogate is counted here and refused by the store, which names the doc.
        if max_bytes is not None and len(doc.text.encode("utf-8", "surrogatepass")) > max_bytes:
            raise DocumentTooLargeError(
                f"{path}:{lineno}: {doc.doc_id} is over the limit of {max_bytes} bytes"
            )
        if not doc.text.strip():
            out.skip(f"{path}:{lineno}: {doc.doc_id} is an empty document; skipped")
            continue
        docs.append((lineno, doc))
    return docs


def _record(
    obj: object, path: str, lineno: int, acl: tuple[str, ...] | None, version: str | None
) -> DocumentInput:
    """One corpus.jsonl record as a document; MalformedRecordError names the field at fault."""

    def bad(reason: str) -> MalformedRecordError:
        return MalformedRecordError(path, lineno, reason)

    if not isinstance(obj, dict):
        raise bad("expected a JSON object")
    for name in ("doc_id", "text"):
        if name not in obj:
            raise bad(f"missing required field {name!r}")
    for name in ("doc_id", "text", "title", "version"):
        if name in obj and not isinstance(obj[name], str):
            raise bad(f"field {name!r} must be a string")
    if (fault := doc_id_fault(obj["doc_id"])) is not None:
        raise bad(f"field 'doc_id': {fault}")
    fmt = obj.get("format", "text")
    if fmt not in DOC_FORMATS:
        raise bad(f"field 'format' must be one of {', '.join(DOC_FORMATS)}")
    acl_value = obj.get("acl", [])
    if not isinstance(acl_value, list) or not all(isinstance(g, str) for g in acl_value):
        raise bad("field 'acl' must be a list of strings")
    metadata = obj.get("metadata", {})
    if not isinstance(metadata, dict):
        raise bad("field 'metadata' must be an object")
    return DocumentInput(
        doc_id=obj["doc_id"],
        text=obj["text"],
        version=obj.get("version") or version or "1",
        title=obj.get("title", ""),
        format=fmt,
        acl=tuple(acl_value) or acl or (),
        metadata=metadata,
    )


def _title(text: str, fmt: DocFormat) -> str:
    if fmt == "markdown":
        return markdown_title(text)
    if fmt == "html":
        return html_title(text)
    return ""


def markdown_title(text: str) -> str:
    """The text of the first ATX heading outside fenced code, or "" when there is none."""
    in_fence = False
    for line in text.splitlines():
        if _FENCE_RE.match(line):
            in_fence = not in_fence
        elif not in_fence and (match := _ATX_RE.match(line)):
            return match.group(1).strip()
    return ""
