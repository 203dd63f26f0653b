"""``evloop tool-schema``: the OpenAI function-calling schema of the ``ask`` tool."""

from __future__ import annotations

import argparse
import json

from evidence_loop.agent.doors.api.toolkit import ask_tool_schema
from evidence_loop.agent.doors.cli.common import Subparsers, add_command

DESCRIPTION = """\
Print the `ask` tool as an OpenAI function-calling tool (one JSON object, for `tools=[...]` of a
chat completion). Answer the model's calls with evidence_loop.agent.doors.api.toolkit.run_ask_tool, which
returns the cited answer or the refusal with what is missing, as text the model can quote.
--strict gives the form of OpenAI's strict mode ("strict": true: every object closed with
additionalProperties false, every property required, the optional ones nullable)."""

EPILOG = """\
examples:
  evloop tool-schema > ask_tool.json
  evloop tool-schema --strict > ask_tool.json   for "strict": true"""


def register(subparsers: Subparsers) -> None:
    """Add the ``tool-schema`` command."""
    parser = add_command(
        subparsers,
        "tool-schema",
        summary="print the function-calling schema of the ask tool",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    parser.add_argument(
        "--strict", action="store_true", help='the form of OpenAI\'s strict mode ("strict": true)'
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    print(json.dumps(ask_tool_schema(strict=args.strict), ensure_ascii=False, indent=2))
    return 0
