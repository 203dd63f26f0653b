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

from evidence_loop.agent.api.app import create_app
from evidence_loop.agent.api.auth import Caller, Keyring
from evidence_loop.agent.api.limits import Limits

__all__ = ["Caller", "Keyring", "Limits", "create_app"]
