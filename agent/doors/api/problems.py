"""Every 4xx and 5xx as ``application/problem+json`` (RFC 9457): type, title, status, detail.

``type`` is ``about:blank`` for plain HTTP errors (the title is then the status phrase) and
``urn:evloop:problem:<slug>`` for ours. A 500 says nothing about its cause: the traceback goes to
the server log, never to the caller. No error closes the connection it came on (see ``KeepConnection``).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evidence_loop.tools.errors import (
    CitedVersionReplacedError,
    DeadlineExceeded,
    DecodeError,
    DiskError,
    DocIdNotWritableError,
    DocumentTooLargeError,
    EmbedderError,
    EmbedderUnavailableError,
    EvidenceLoopError,
    IndexStateError,
    InputError,
    JsonInputError,
    LLMError,
    MalformedRecordError,
    NotFoundError,
    PolicyError,
    QuestionTooLongError,
    RerankerError,
    RerankerUnavailableError,
    StoreStateError,
    StoreUnavailableError,
    TamperedTraceError,
    TraceError,
    TraceStoreUnavailableError,
    UnsupportedFormatError,
    UnwrittenTraceError,
    VersionClashError,
    WriteRefusedError,
)

PROBLEM_JSON = "application/problem+json"
log = logging.getLogger("evidence_loop.api")

# Every class of the error tree has its own row (tests/agent/test_api_problems.py walks the tree, so
# a new class without one fails there): class -> (status, slug, title). An error takes the row of the
# nearest class in its MRO.
ERRORS: dict[type[EvidenceLoopError], tuple[int, str, str]] = {
    EvidenceLoopError: (400, "bad-input", "Bad input"),
    InputError: (400, "bad-input", "Bad input"),
    MalformedRecordError: (400, "malformed-record", "Malformed document record"),
    UnsupportedFormatError: (415, "unsupported-format", "Unsupported document format"),
    DecodeError: (400, "not-utf8", "Document is not UTF-8"),
    JsonInputError: (422, "invalid-request", "Invalid request"),
    DocumentTooLargeError: (413, "document-too-large", "Document too large"),
    QuestionTooLongError: (422, "question-too-long", "Question too long"),
    VersionClashError: (409, "version-clash", "Version already stored with other text"),
    PolicyError: (400, "bad-policy", "Policy cannot be used"),
    NotFoundError: (404, "not-found", "Not found"),
    IndexStateError: (503, "index-unavailable", "Index unavailable"),
    StoreStateError: (503, "index-unavailable", "Index unavailable"),
    StoreUnavailableError: (503, "store-unavailable", "Store unavailable"),
    TraceError: (409, "trace-unreadable", "Trace cannot be read"),
    TamperedTraceError: (409, "trace-unreadable", "Trace cannot be read"),
    LLMError: (502, "adjudicator-failed", "Conflict adjudicator failed"),
    DeadlineExceeded: (504, "timeout", "Request timed out"),
    EmbedderError: (502, "embedder-failed", "Embedder failed"),
    EmbedderUnavailableError: (503, "embedder-unavailable", "Embedder unavailable"),
    RerankerError: (502, "reranker-failed", "Reranker failed"),
    RerankerUnavailableError: (503, "reranker-unavailable", "Reranker unavailable"),
    DocIdNotWritableError: (403, "doc-id-not-writable", "Document not writable"),
    WriteRefusedError: (403, "write-not-allowed", "Write not allowed"),
    DiskError: (503, "storage-unavailable", "Storage unavailable"),
    TraceStoreUnavailableError: (503, "trace-store-unavailable", "Trace store unavailable"),
    CitedVersionReplacedError: (409, "cited-version-replaced", "Cited version replaced"),
    UnwrittenTraceError: (404, "not-found", "Not found"),  # a run never recorded has no trace
}
# Messages of these name server paths, operator commands, endpoints' URLs or what an upstream
# replied: the log gets them, the caller gets the component's name only.
_OPERATOR_ONLY: tuple[type[EvidenceLoopError], ...] = (
    IndexStateError,
    LLMError,
    EmbedderError,
    RerankerError,
    DiskError,
    TraceStoreUnavailableError,
)


def problem_of(error: type[EvidenceLoopError]) -> tuple[int, str, str]:
    """(status, slug, title) of an error class: the row of the nearest class in its MRO that has one."""
    return next(ERRORS[cls] for cls in error.__mro__ if cls in ERRORS)


class Problem(BaseModel):
    """An RFC 9457 problem document; ``errors`` lists validation failures when there are several; a
    refused write (403) says which ``rule`` refused it and what key it would be ``allowed_by``."""

    model_config = ConfigDict(extra="allow")

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    errors: list[dict[str, object]] | None = None
    rule: str | None = None
    allowed_by: str | None = None


class ProblemResponse(JSONResponse):
    """problem+json whose text can always be sent: a detail may echo the caller's input, and a lone
    surrogate in it (JSON can spell one) would otherwise fail the reply's UTF-8 encoding."""

    media_type = PROBLEM_JSON

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8", errors="replace")


class ApiProblem(Exception):
    """Raised by the endpoints for a problem of our own: ``slug`` names it, ``detail`` explains it."""

    def __init__(
        self, status: int, slug: str, title: str, detail: str, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(detail)
        self.status, self.slug, self.title, self.detail = status, slug, title, detail
        self.headers = dict(headers or {})


def problem_response(
    status: int,
    detail: str,
    *,
    slug: str | None = None,
    title: str | None = None,
    headers: Mapping[str, str] | None = None,
    errors: list[dict[str, object]] | None = None,
    extra: Mapping[str, object] | None = None,
) -> JSONResponse:
    """A problem+json response; without a slug, ``about:blank`` with the status phrase as title;
    ``extra`` adds members of the problem's own (RFC 9457 extensions)."""
    body: dict[str, object] = {
        "type": f"urn:evloop:problem:{slug}" if slug else "about:blank",
        "title": title or _phrase(status),
        "status": status,
        "detail": detail,
        **(extra or {}),
    }
    if errors is not None:
        body["errors"] = errors
    return ProblemResponse(body, status_code=status, headers=dict(headers or {}))


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _validation_errors(exc: RequestValidationError) -> list[dict[str, object]]:
    """Where and what, without echoing the input back (it may be large, or another document's text)."""
    return [
        {
            "loc": [str(part) for part in err.get("loc", ())],
            "msg": str(err.get("msg", "")),
            "type": str(err.get("type", "")),
        }
        for err in exc.errors()
    ]


def unreadable_json(exc: ValueError | RecursionError) -> str:
    """Why ``json.loads`` could not read a body, for the caller (without the server-side remedies)."""
    if isinstance(exc, RecursionError):
        return "not valid JSON here: nested too deeply to be read"
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        return f"not valid JSON ({exc})"
    return f"not valid JSON here: a number longer than {sys.get_int_max_str_digits()} digits"


async def _on_http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    cause = exc.__cause__
    if exc.status_code == 400 and isinstance(cause, ValueError | RecursionError):
        # FastAPI's "There was an error parsing the body": say what was wrong with it.
        error = {"type": "json_invalid", "loc": ("body",), "msg": unreadable_json(cause), "input": None}
        return await _on_validation(request, RequestValidationError([error]))
    detail = exc.detail if isinstance(exc.detail, str) else _phrase(exc.status_code)
    return problem_response(exc.status_code, detail, headers=exc.headers)


async def _on_validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    raw = list(exc.errors())
    where = ".".join(str(part) for part in raw[0].get("loc", ())) if raw else ""
    message = str(raw[0].get("msg", "invalid request")) if raw else "invalid request"
    detail = f"{where}: {message}" if where else message
    errors = _validation_errors(exc)
    return problem_response(422, detail, slug="invalid-request", title="Invalid request", errors=errors)


async def _on_api_problem(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiProblem)
    return problem_response(exc.status, exc.detail, slug=exc.slug, title=exc.title, headers=exc.headers)


async def _on_project_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, EvidenceLoopError)
    status, slug, title = problem_of(type(exc))
    if isinstance(exc, _OPERATOR_ONLY):
        log.error("%s on %s %s: %s", type(exc).__name__, request.method, request.url.path, exc)
        detail = f"{title.lower()}; the server log has the details"
    else:
        detail = " ".join(str(exc).split()) or title
    extra = None
    if isinstance(exc, WriteRefusedError) and exc.rule:  # which rule refused, and who it would allow
        extra = {"rule": exc.rule, "allowed_by": exc.allowed_by}
    return problem_response(status, detail, slug=slug, title=title, extra=extra)


async def _on_crash(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    detail = "the server failed to handle this request; it has been logged"
    return problem_response(500, detail, slug="internal", title="Internal error")


class KeepConnection:
    """Outermost layer: an error whose 500 has been sent in full ends there, and the connection lives on.

    Starlette re-raises every unhandled error once its 500 is sent (for servers to log it; ours is
    logged by ``_on_crash``), and uvicorn then closes the connection, so that a client's next request
    on it was reset. Only a response cut short mid-body still closes it: nothing else can tell the
    client that the body it has is not all.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent = False

        async def watched(message: Message) -> None:
            nonlocal sent
            await send(message)
            sent = sent or (message["type"] == "http.response.body" and not message.get("more_body", False))

        try:
            await self.app(scope, receive, watched)
        except Exception:
            if not sent:
                raise


def install(app: FastAPI) -> None:
    """Register the problem+json handlers on ``app``."""
    app.add_exception_handler(StarletteHTTPException, _on_http)
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(ApiProblem, _on_api_problem)
    app.add_exception_handler(EvidenceLoopError, _on_project_error)
    app.add_exception_handler(Exception, _on_crash)


# The shared OpenAPI description of every error response.
PROBLEM_RESPONSES: dict[int | str, dict[str, object]] = {
    "4XX": {"model": Problem, "description": "Client error", "content": {PROBLEM_JSON: {}}},
    "5XX": {"model": Problem, "description": "Server error", "content": {PROBLEM_JSON: {}}},
}
