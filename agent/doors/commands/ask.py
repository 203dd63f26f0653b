"""``evloop ask QUESTION``: run the evidence loop for one question."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_index_option,
    add_otel_options,
    parse_groups,
)
from evidence_loop.agent.doors.commands.session import (
    add_policy_option,
    add_trace_options,
    open_service,
    policy_line,
)
from evidence_loop.agent.loop.history import read_history_file
from evidence_loop.agent.loop.render import render_outcome

DESCRIPTION = """\
Gather evidence for a question and print the outcome: a grounded answer with numbered citations
(doc_id@version [start:end]), an insufficient_evidence refusal listing what is missing, or a
conflicting_evidence stop citing both sides. The evidence windows and how each one slid are shown
below. Every run writes a trace (see `evloop trace`)."""

EPILOG = """\
examples:
  evloop ask "LM-S10 的整机保修期是多久？"
  evloop ask "员工购机优惠是多少？" --groups staff --json
  evloop ask "它的整机保修期是多久？" --history-file turns.json   # ["LM-S10 支持哪些功能？"]"""


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers, "ask", summary="answer one question", description=DESCRIPTION, epilog=EPILOG
    )
    parser.add_argument("question", help="the user's question")
    add_index_option(parser)
    add_otel_options(parser)
    add_trace_options(parser)
    add_policy_option(parser)
    parser.add_argument(
        "--groups",
        type=parse_groups,
        default=(),
        metavar="G1,G2",
        help="the asking user's groups (default: none)",
    )
    parser.add_argument("--json", action="store_true", help="print the outcome as one JSON object")
    parser.add_argument(
        "--history-file",
        type=Path,
        metavar="FILE",
        default=None,
        help="the conversation's earlier turns, oldest first: a JSON array of questions or "
        '{"question": ..., "run_id": ...} objects, or one a line; a follow-up is read with them',
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    history = read_history_file(args.history_file) if args.history_file is not None else None
    service = open_service(args)
    try:
        outcome = service.ask(args.question, args.groups, history=history)
    finally:
        service.close()
    if args.json:
        print(json.dumps(outcome.model_dump(mode="json"), ensure_ascii=False))
    else:
        print(render_outcome(outcome))
        print(f"  {policy_line(service.policy)}")
    return 0
