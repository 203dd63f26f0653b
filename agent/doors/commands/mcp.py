"""``evloop mcp``: the tools ask, search, get_document, list_documents and replay for MCP clients."""

from __future__ import annotations

import argparse
from pathlib import Path

from evidence_loop.agent import settings
from evidence_loop.agent.access.keys import Keyring
from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_index_option,
    add_otel_options,
    resolve_location,
    shown,
)
from evidence_loop.agent.doors.commands.listen import add_listen_options, listening
from evidence_loop.agent.doors.commands.session import open_service
from evidence_loop.tools.errors import InputError

DESCRIPTION = """\
Serve the knowledge base to an LLM agent over the Model Context Protocol (needs the `mcp` extra:
pip install 'evidence-loop[mcp]'). Tools: ask(question, groups?, history?) returns the outcome as
structured content and a short text with the citations a model can quote (a refusal says what is
missing); search(query, k); get_document(doc_id, version?, start?, end?); list_documents; replay(run_id).

Over stdio (the default) the caller is whoever started the process: $EVLOOP_API_KEY checked
against --keys, else the local caller reading with $EVLOOP_GROUPS (comma-separated; unset: the
public documents only; the model's `groups` may narrow them, never widen). Over --http, each
request sends `Authorization: Bearer <key>` for a key in --keys, as with `evloop serve`; without
--keys the server listens on loopback only and every request is the process's caller. Over --http
the Host and Origin headers are checked as `evloop serve` checks them (--allow-host, --allow-origin).

Over stdio a message that is not Unicode (a "\\ud800" escape, bytes that are not UTF-8) is answered
with a JSON-RPC error naming it; the MCP SDK itself would drop it without a reply."""

EPILOG = """\
examples:
  evloop mcp --index .evloop                              stdio, for a desktop agent's config
  evloop mcp --http --port 8765                           streamable HTTP at http://127.0.0.1:8765/mcp
  evloop mcp --http --keys keys.json --host 0.0.0.0       keys as for `evloop serve`"""


def register(subparsers: Subparsers) -> None:
    """Add the ``mcp`` command."""
    parser = add_command(
        subparsers, "mcp", summary="serve the tools to MCP clients", description=DESCRIPTION, epilog=EPILOG
    )
    add_index_option(parser)
    add_otel_options(parser)
    parser.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    add_listen_options(parser, port=8765, what=" with --http")
    parser.add_argument("--keys", type=Path, metavar="KEYS.json", default=None, help="API keys file")
    parser.add_argument(
        "--traces", type=Path, metavar="DIR", default=None, help="trace folder (default: INDEX/traces)"
    )
    parser.add_argument("--no-trace", action="store_true", help="write no traces")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Check the settings, open the index, then serve until the client leaves or the process ends."""
    try:
        from evidence_loop.agent.doors.api import mcp_server, mcp_stdio
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] not in {"mcp", "mcp_types"}:
            raise
        raise InputError("`evloop mcp` needs the MCP SDK: pip install 'evidence-loop[mcp]'") from None

    keyring = Keyring.load(args.keys) if args.keys is not None else None
    if args.http:
        host, rules = listening(args, keyring)  # the rules of `serve`: no keys, loopback only
        with open_service(args, create=True) as service:
            print(
                f"evloop: MCP for {shown(resolve_location(args))} on http://{host}:{args.port}/mcp",
                flush=True,
            )
            keyless = mcp_server.stdio_caller(settings.current().environ(), None)
            mcp_server.serve_http(service, keyring, keyless, (host, args.port), rules)
        return 0
    caller = mcp_server.stdio_caller(settings.current().environ(), keyring)
    with open_service(args, create=True) as service:
        mcp_stdio.serve_stdio(mcp_server.build_server(service, mcp_server.fixed(caller)))
    return 0
