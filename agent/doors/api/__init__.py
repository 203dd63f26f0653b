"""The HTTP API for support chatbots (FastAPI), over :class:`agent.service.Service`.

Where things are:

    app.py               create_app(service, keys, limits): routers, handlers, OpenAPI document
    auth.py              KEYS.json, key hashes, scopes, narrowing a request's groups
    context.py           the shared context, the caller dependency, worker threads with a timeout
    limits.py            Limits, and the body-size middleware
    hosts.py             the Host and Origin headers answered (HostRules and its middleware)
    problems.py          every error as application/problem+json
    schemas.py           request and response bodies (answers are agent.outcome.Outcome)
    uploads.py           reading POST /v1/documents: JSON, JSON Lines, multipart files
    routes_ask.py        POST /v1/ask, GET /healthz, GET /readyz
    routes_documents.py  POST/GET /v1/documents, DELETE /v1/documents/{doc_id}
    routes_traces.py     GET /v1/traces/{run_id}, .../verify, POST .../replay
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evidence_loop.agent.access.keys import Caller, Keyring
    from evidence_loop.agent.doors.api.app import create_app
    from evidence_loop.agent.doors.api.limits import Limits

# Imported when first read: `evloop keys` reads auth.py without importing the web app.
_NAMES = {
    "create_app": "evidence_loop.agent.doors.api.app",
    "Caller": "evidence_loop.agent.access.keys",
    "Keyring": "evidence_loop.agent.access.keys",
    "Limits": "evidence_loop.agent.doors.api.limits",
}

__all__ = ["Caller", "Keyring", "Limits", "create_app"]


def __getattr__(name: str) -> object:
    if (module := _NAMES.get(name)) is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
