"""The MCP server of ``evloop mcp``: the five tools of ``agent.doors.api.toolkit`` on the official ``mcp``
SDK.

Imported only by ``evloop mcp`` (the ``[mcp]`` extra installs the SDK). Who calls: over streamable
HTTP with a keys file, the key in ``Authorization: Bearer <key>``, checked before the request reaches
the MCP layer (401 otherwise) and again by each tool for its groups and scopes; over HTTP without keys
(loopback only) and over stdio, the caller of :func:`stdio_caller`, from the environment.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import partial
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from starlette import types as asgi

from evidence_loop.agent.access.keys import LOCAL_CALLER, SCOPES, Caller, Keyring, Scope
from evidence_loop.agent.doors.api import toolkit
from evidence_loop.agent.doors.api.hosts import HostOriginMiddleware, HostRules
from evidence_loop.agent.doors.api.schemas import ReplayOut
from evidence_loop.agent.doors.cli.common import parse_groups
from evidence_loop.agent.loop.tracing import code_version
from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import EvidenceLoopError, InputError

KEY_ENV = "EVLOOP_API_KEY"
GROUPS_ENV = "EVLOOP_GROUPS"
INSTRUCTIONS = (
    "Answer support questions with the `ask` tool and quote its answer with its citations. When it "
    "returns a refusal (insufficient_evidence or conflicting_evidence), tell the user what is missing "
    "or that the sources disagree; do not answer from your own knowledge."
)
T = TypeVar("T")
_READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def stdio_caller(environ: Mapping[str, str], keyring: Keyring | None) -> Caller:
    """The caller of a stdio session: the key in ``$EVLOOP_API_KEY`` (checked against ``keyring``),
    else the local caller reading with ``$EVLOOP_GROUPS`` at most (unset: the public documents only,
    since the model writes the tools' arguments and must not grant itself groups)."""
    key = environ.get(KEY_ENV, "")
    if keyring is not None:
        found = keyring.authenticate(key) if key else None
        if found is None:
            raise InputError(f"--keys given: set ${KEY_ENV} to a key of that file")
        return found
    if key:
        raise InputError(f"${KEY_ENV} is set but no --keys file to check it against")
    groups = parse_groups(environ.get(GROUPS_ENV, ""))
    return Caller(LOCAL_CALLER, frozenset(groups), frozenset(SCOPES)) if groups else toolkit.PUBLIC


def bearer(headers: Mapping[str, str] | None) -> str:
    """The key in an ``Authorization: Bearer <key>`` header, or ``""``."""
    value = (headers or {}).get("authorization", "")
    scheme, _, key = value.partition(" ")
    return key.strip() if scheme.lower() == "bearer" else ""


class KeyGate:
    """ASGI middleware: a request without a key of the keyring gets a 401, as from ``evloop serve``."""

    def __init__(self, app: asgi.ASGIApp, keyring: Keyring) -> None:
        self.app = app
        self.keyring = keyring

    async def __call__(self, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            key = bearer(headers)
            if not key or self.keyring.authenticate(key) is None:
                body = json.dumps({"title": "Unauthenticated", "status": 401}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/problem+json"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def _described(name: str) -> Any:
    return Field(description=toolkit.AskArguments.model_fields[name].description)


class Tools:
    """The tools over one service; each call runs as the caller ``resolve`` names, in a worker thread."""

    def __init__(self, service: Service, resolve: Callable[[Context], Caller]) -> None:
        self.service = service
        self.resolve = resolve

    async def _run(self, ctx: Context, scope: tuple[Scope, ...], work: Callable[[Caller], T]) -> T:
        # The project's errors are the caller's to read (ToolError): a bad argument, an unknown
        # document, a missing scope; anything else is a crash whose text stays on the server.
        try:
            caller = self.resolve(ctx)
            if not any(caller.has(s) for s in scope):
                raise InputError(f"this key lacks the scope {' or '.join(repr(s) for s in scope)}")
            return await anyio.to_thread.run_sync(partial(work, caller))
        except EvidenceLoopError as exc:
            raise ToolError(str(exc)) from exc

    async def ask(
        self,
        question: Annotated[str, _described("question")],
        ctx: Context,
        groups: Annotated[list[str] | None, _described("groups")] = None,
        history: Annotated[list[str] | None, _described("history")] = None,
    ) -> Annotated[CallToolResult, Outcome]:
        outcome = await self._run(
            ctx, ("ask",), lambda c: toolkit.ask(self.service, c, question, groups, history)
        )
        return CallToolResult(
            content=[TextContent(type="text", text=toolkit.outcome_text(outcome))],
            structured_content=outcome.model_dump(mode="json"),
        )

    async def search(self, query: str, ctx: Context, k: int = 10) -> toolkit.SearchResult:
        return await self._run(ctx, ("ask",), lambda c: toolkit.search(self.service, c, query, k))

    async def get_document(
        self,
        doc_id: str,
        ctx: Context,
        version: str | None = None,
        start: int | None = None,
        end: int | None = None,
    ) -> toolkit.DocumentText:
        return await self._run(
            ctx, ("ask",), lambda c: toolkit.get_document(self.service, c, doc_id, version, start, end)
        )

    async def list_documents(self, ctx: Context) -> toolkit.DocumentListOut:
        return await self._run(ctx, ("ask", "ingest"), lambda c: toolkit.list_documents(self.service, c))

    async def replay(self, run_id: str, ctx: Context) -> ReplayOut:
        return await self._run(ctx, ("ask", "audit"), lambda c: toolkit.replay(self.service, c, run_id))


DESCRIPTIONS = {
    "ask": toolkit.ASK_DESCRIPTION,
    "search": "The raw recall step: the k best sentences, rows and items for a query, with doc_id, "
    "version and [start:end] offsets.",
    "get_document": "The text of a document version (its current one by default), or the [start:end] "
    "span of it that a citation names.",
    "list_documents": "The documents the caller may read, with their versions.",
    "replay": "Re-run a traced question from its trace and say whether it comes out identical "
    "(an audit check).",
}


def build_server(service: Service, resolve: Callable[[Context], Caller]) -> MCPServer:
    """The MCP server over ``service``; ``resolve`` names the caller of each tool call."""
    server = MCPServer("evidence-loop", version=code_version(), instructions=INSTRUCTIONS)
    tools = Tools(service, resolve)
    for name, description in DESCRIPTIONS.items():
        server.add_tool(getattr(tools, name), name=name, description=description, annotations=_READS)
    return server


def http_resolver(keyring: Keyring | None, keyless: Caller) -> Callable[[Context], Caller]:
    """Each call's caller over HTTP: the bearer key's (the gate let only valid keys in); without a
    keyring (loopback only), ``keyless``, the process's caller as over stdio."""

    def resolve(ctx: Context) -> Caller:
        if keyring is None:
            return keyless
        found = keyring.authenticate(bearer(ctx.headers))
        if found is None:
            raise InputError("send a valid API key as `Authorization: Bearer <key>`")
        return found

    return resolve


def fixed(caller: Caller) -> Callable[[Any], Caller]:
    """The resolver of a stdio session: one caller for the whole session."""
    return lambda _ctx: caller


def http_app(service: Service, keyring: Keyring | None, keyless: Caller, rules: HostRules) -> asgi.ASGIApp:
    """Streamable HTTP at ``/mcp``: the Host and Origin checks of ``evloop serve`` first
    (``agent.doors.api.hosts``, in place of the SDK's, which it turns off for any address but loopback),
    then with a keyring :class:`KeyGate`, then the MCP server."""
    server = build_server(service, http_resolver(keyring, keyless))
    ours = TransportSecuritySettings(enable_dns_rebinding_protection=False)  # checked before, by ours
    app: asgi.ASGIApp = server.streamable_http_app(transport_security=ours)
    if keyring is not None:
        app = KeyGate(app, keyring)
    return HostOriginMiddleware(app, rules)


def serve_http(
    service: Service, keyring: Keyring | None, keyless: Caller, address: tuple[str, int], rules: HostRules
) -> None:
    """Serve :func:`http_app` at ``address`` (host, port) until interrupted."""
    import uvicorn

    host, port = address
    uvicorn.run(http_app(service, keyring, keyless, rules), host=host, port=port, log_level="warning")
