"""The stdio wire of ``evloop mcp``: every line reaches the MCP SDK, save those it would drop unanswered.

The SDK (mcp 2.x) reads each line with pydantic's JSON parser, which refuses a lone surrogate
escape (``"\\ud800"``); its stdio transport then hands the parse error to the session, which logs it
and sends nothing back, so the client waits for a reply that never comes (over HTTP the SDK answers
400). It also decodes stdin with ``errors="replace"``, so bytes that are not UTF-8 would reach a tool
as U+FFFD, silently. Here stdin is read first: a line holding a lone surrogate, a byte that is not
UTF-8 or JSON nested deeper than ``MAX_JSON_DEPTH`` levels is answered with a JSON-RPC error for its
id (``-32602``, invalid params, in the words every door uses: ``tools.inputs``; the id is null when
the line is too deep to read it) and is not passed on; every other line goes to the SDK as it came.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import AsyncIterable, AsyncIterator
from contextlib import suppress
from io import TextIOWrapper
from typing import Any, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_PARAMS, ErrorData, JSONRPCError

from evidence_loop.tools.inputs import MAX_JSON_DEPTH, json_fault, unicode_fault

log = logging.getLogger("evidence_loop.mcp")
# Where a line may hold what the SDK drops: a \uD8xx..\uDFxx escape, or a byte stdin could not decode.
_SUSPECT = re.compile(r"\\u[dD][89a-fA-F]|[\udc80-\udcff]")
_UNDECODED = re.compile("[\udc80-\udcff]")


def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` over stdin and stdout until the client closes stdin (``MCPServer.run("stdio")``
    with the guard of this module in front of the SDK's reader)."""
    anyio.run(_serve, server)


async def _serve(server: MCPServer) -> None:
    # MCPServer.run_stdio_async opens the SDK's transport with no streams of our own: run its
    # low-level server the same way, with stdin read through GuardedLines (stdout stays the SDK's).
    lowlevel = server._lowlevel_server
    stdin = _UnownedText(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")
    lines = GuardedLines(anyio.wrap_file(stdin))
    async with stdio_server(stdin=cast(Any, lines)) as (read, write):
        lines.replies = write
        lines.ready.set()
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


class _UnownedText(TextIOWrapper):
    """Text over stdin's buffer that leaves the buffer open when it is collected."""

    def close(self) -> None:
        with suppress(ValueError):
            self.detach()


class GuardedLines:
    """The lines of ``lines``, less those :func:`refusal` answers; the answers go to ``replies`` (the
    SDK's write stream, set once the transport is open: one writer, so no reply tears another)."""

    def __init__(self, lines: AsyncIterable[str]) -> None:
        self._lines = lines
        self.replies: Any = None
        self.ready = anyio.Event()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._guarded()

    async def _guarded(self) -> AsyncIterator[str]:
        async for line in self._lines:
            refused, reply = refusal(line)
            if not refused:
                yield line
            elif reply is not None:
                await self.ready.wait()
                await self.replies.send(SessionMessage(reply))


def refusal(line: str) -> tuple[bool, JSONRPCError | None]:
    """Whether the SDK must not read ``line``, and the error that answers it (None for a notification,
    which gets no reply: the refusal is logged)."""
    deep = line.count("[") + line.count("{") > MAX_JSON_DEPTH
    if not deep and not _SUSPECT.search(line):
        return False, None
    fault: str | None
    try:
        message = json.loads(line)
    except RecursionError:
        message, fault = None, f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
    except ValueError:
        return False, None  # not JSON at all: the SDK's own parse error, as before
    else:
        fault = _fault(line, message)
    if fault is None:
        return False, None
    request = message if isinstance(message, dict) else {}
    if "method" in request and "id" not in request:
        log.warning("an MCP notification was dropped: %s", fault)
        return True, None
    error = ErrorData(code=INVALID_PARAMS, message=fault)
    return True, JSONRPCError(jsonrpc="2.0", id=_id(request.get("id")), error=error)


def _fault(line: str, message: object) -> str | None:
    undecoded = _UNDECODED.search(line)
    if undecoded is not None:
        return f"the message is not UTF-8 (byte 0x{ord(undecoded.group()) - 0xDC00:02x}); send UTF-8 text"
    return json_fault(message)


def _id(value: object) -> str | int | None:
    """The request's id as a reply may echo it (null when it cannot be: JSON-RPC's "id unknown")."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and unicode_fault(value) is None:
        return value
    return None
