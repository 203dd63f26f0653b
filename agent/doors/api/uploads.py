"""Reading the body of POST /v1/documents into documents: JSON, JSON Lines, or uploaded files.

    application/json        one document, or {"documents": [...]}, in the corpus.jsonl shape
    application/x-ndjson    corpus.jsonl itself: one document a line (also application/jsonl)
    multipart/form-data     "file" parts (.md .markdown .txt .html .htm); optional fields
                            "acl" (comma-separated), "version", and "doc_id" for a single file

A file's doc_id is its name without the extension and its title its first heading, as for
``evloop ingest``. Bad input raises before anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from starlette.datastructures import UploadFile

from evidence_loop.agent.doors.api.problems import ApiProblem, unreadable_json
from evidence_loop.agent.doors.api.schemas import DocumentBatch, DocumentIn
from evidence_loop.tools.errors import DecodeError, UnsupportedFormatError
from evidence_loop.tools.parse.sources import FILE_FORMATS, html_title, markdown_title
from evidence_loop.tools.types import DocumentInput

JSON_TYPES = ("application/json",)
LINES_TYPES = ("application/x-ndjson", "application/jsonl", "application/json-lines")
FORM_TYPE = "multipart/form-data"
FORM_FIELDS = ("file", "acl", "version", "doc_id")


async def read_documents(request: Request, batch_limit: int) -> list[DocumentInput]:
    """The documents a request carries, validated; 415 for a content type we do not read."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media in JSON_TYPES:
        records = _from_json(await request.body())
    elif media in LINES_TYPES:
        records = _from_lines(await request.body())
    elif media == FORM_TYPE:
        return _checked(await _from_form(request, batch_limit), batch_limit)
    else:
        raise ApiProblem(
            415,
            "unsupported-media-type",
            "Unsupported media type",
            f"send application/json, application/x-ndjson or multipart/form-data, not {media or 'nothing'!r}",
        )
    return _checked([r.as_input() for r in records], batch_limit)


def _checked(docs: list[DocumentInput], batch_limit: int) -> list[DocumentInput]:
    if not docs:
        raise ApiProblem(422, "empty-batch", "No documents", "the request carries no documents")
    if len(docs) > batch_limit:
        raise ApiProblem(
            413,
            "batch-too-large",
            "Batch too large",
            f"the batch has {len(docs)} documents; the limit is {batch_limit}; send it in several requests",
        )
    return docs


def _json(data: bytes, where: tuple[str | int, ...]) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:  # bad JSON or UTF-8, a number too long, nesting too deep
        raise RequestValidationError(
            [{"type": "json_invalid", "loc": where, "msg": unreadable_json(exc), "input": None}]
        ) from None


def _validated(model: type[DocumentIn] | type[DocumentBatch], raw: Any, where: tuple[str | int, ...]) -> Any:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        errors = [{**err, "loc": (*where, *err["loc"])} for err in exc.errors()]
        raise RequestValidationError(errors) from None


def _from_json(data: bytes) -> list[DocumentIn]:
    raw = _json(data, ("body",))
    if isinstance(raw, dict) and "documents" in raw:
        batch: DocumentBatch = _validated(DocumentBatch, raw, ("body",))
        return batch.documents
    return [_validated(DocumentIn, raw, ("body",))]


def _from_lines(data: bytes) -> list[DocumentIn]:
    docs: list[DocumentIn] = []
    for lineno, line in enumerate(data.splitlines(), start=1):
        if line.strip():
            where = ("body", f"line {lineno}")
            docs.append(_validated(DocumentIn, _json(line, where), where))
    return docs


async def _from_form(request: Request, batch_limit: int) -> list[DocumentInput]:
    # The context closes the spooled upload files, on errors too.
    async with request.form(max_files=batch_limit + 1, max_fields=len(FORM_FIELDS) + batch_limit) as form:
        unknown = sorted({key for key in form if key not in FORM_FIELDS})
        if unknown:
            raise _bad_form(f"unknown form fields: {', '.join(unknown)}; known: {', '.join(FORM_FIELDS)}")
        files = [part for part in form.getlist("file") if isinstance(part, UploadFile)]
        if len(files) != len(form.getlist("file")):
            raise _bad_form('each "file" part must be a file upload')
        acl = tuple(g.strip() for g in _text_field(form.getlist("acl")).split(",") if g.strip())
        version = _text_field(form.getlist("version")) or None
        doc_id = _text_field(form.getlist("doc_id"))
        if doc_id and len(files) != 1:
            raise _bad_form("doc_id names one file only; send several files without it")
        return [_upload(await part.read(), part.filename or "", doc_id, acl, version) for part in files]


def _bad_form(detail: str) -> ApiProblem:
    return ApiProblem(422, "bad-form-field", "Bad form field", detail)


def _text_field(values: Sequence[object]) -> str:
    if len(values) > 1 or any(not isinstance(v, str) for v in values):
        raise _bad_form("acl, version and doc_id are single text fields")
    return str(values[0]).strip() if values else ""


def _upload(
    data: bytes, filename: str, doc_id: str, acl: tuple[str, ...], version: str | None
) -> DocumentInput:
    name = PurePosixPath(filename.replace("\\", "/")).name
    suffix = PurePosixPath(name).suffix.lower()
    fmt = FILE_FORMATS.get(suffix)
    if fmt is None:
        raise UnsupportedFormatError(
            f"{name or 'the upload'}: unsupported file type {suffix or '(none)'!r}; "
            f"send {', '.join(FILE_FORMATS)} files, or JSON for corpus records"
        )
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DecodeError(f"{name}:{line}: not valid UTF-8 (byte {exc.start})") from None
    title = markdown_title(text) if fmt == "markdown" else html_title(text) if fmt == "html" else ""
    stem = PurePosixPath(name).stem
    record = {
        "doc_id": doc_id or stem,
        "text": text,
        "title": title or stem,
        "version": version,
        "format": fmt,
        "acl": list(acl),
        "metadata": {"file": name},
    }
    doc: DocumentIn = _validated(DocumentIn, record, ("body", "file", name))
    return doc.as_input()
