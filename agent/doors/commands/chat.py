"""``evloop chat``: an interactive conversation on the command line; each question is read with the
turns before it (policies.question.followup), and each outcome shown as ``evloop ask`` shows it."""

from __future__ import annotations

import argparse
import io
import sys

from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_index_option,
    add_otel_options,
    error_line,
    parse_groups,
)
from evidence_loop.agent.doors.commands.session import add_policy_option, add_trace_options, open_service
from evidence_loop.agent.loop.history import MAX_HISTORY_TURNS, HistoryItem
from evidence_loop.agent.loop.render import render_outcome
from evidence_loop.tools.errors import InputError

DESCRIPTION = """\
Ask questions one after another, as a chatbot's user would: a follow-up ("它是哪一年推出的", "what
about the Premium plan?") is read with the earlier turns of the session, by rule, and each outcome
shows the question it was read as. Each turn is passed on with its run id, so a traced run's
documents guide the next turn's recall. Ctrl-D (end of input) ends the session."""

EPILOG = """\
examples:
  evloop chat
  evloop chat --groups staff --no-evidence"""

PROMPT = "> "


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers, "chat", summary="ask questions in a conversation", description=DESCRIPTION, epilog=EPILOG
    )
    add_index_option(parser)
    add_otel_options(parser)
    add_trace_options(parser)
    add_policy_option(parser)
    parser.add_argument(
        "--groups", type=parse_groups, default=(), metavar="G1,G2", help="the asking user's groups"
    )
    parser.add_argument("--no-evidence", action="store_true", help="leave the evidence windows out")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    service = open_service(args)
    turns: list[HistoryItem] = []
    _keep_undecodable(sys.stdin)
    try:
        while True:
            try:
                question = input(PROMPT)
            except EOFError:
                print()
                return 0
            if not question.strip():
                continue
            try:
                outcome = service.ask(question, args.groups, history=turns[-MAX_HISTORY_TURNS:])
            except InputError as exc:  # the session goes on: the user types the next question
                error_line(str(exc))
                continue
            print(render_outcome(outcome, show_evidence=not args.no_evidence), flush=True)
            traced = outcome.trace is not None
            turns.append({"question": question, "run_id": outcome.run_id} if traced else question)
    finally:
        service.close()


def _keep_undecodable(stream: object) -> None:
    """Bytes typed that are not UTF-8 reach the question as lone surrogates, which ``Service.ask``
    refuses with its message, instead of ending the session with a UnicodeDecodeError."""
    if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
        stream.reconfigure(errors="surrogateescape")
