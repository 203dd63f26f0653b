"""``evloop batch QUESTIONS.jsonl --out RESULTS.jsonl``: answer a file of questions, one result line each."""

from __future__ import annotations

import argparse
from pathlib import Path

from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_index_option,
    add_otel_options,
)
from evidence_loop.agent.doors.commands.progress import Progress, add_progress_option
from evidence_loop.agent.doors.commands.session import (
    add_policy_option,
    add_trace_options,
    open_service,
    policy_line,
)
from evidence_loop.agent.tuning.evaluate import answer_all, read_questions, write_jsonl

DESCRIPTION = """\
Answer every question of a questions.jsonl file (one JSON object a line with `id`, `question`, and
optional `groups` and `history`, the earlier questions of its conversation oldest first, as
`evloop eval` reads them) and write one result line per question to --out: id, status, answer, evidence
(doc_id, version, start, end, text), missing, latency_ms, plus conflicts, run_id and signals. The results file
appears only when complete."""

EPILOG = """\
examples:
  evloop batch questions.jsonl --out results.jsonl
  evloop batch evals/my-help-centre/questions.jsonl --out /tmp/results.jsonl --index /srv/kb-index"""


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers, "batch", summary="answer a questions.jsonl file", description=DESCRIPTION, epilog=EPILOG
    )
    parser.add_argument("questions", type=Path, help="questions.jsonl")
    parser.add_argument("--out", type=Path, required=True, help="results.jsonl to write")
    add_index_option(parser)
    add_otel_options(parser)
    add_trace_options(parser)
    add_policy_option(parser)
    add_progress_option(parser)
    parser.add_argument(
        "--no-history",
        action="store_true",
        help="ask each question alone, ignoring its `history` field (to measure what the context is worth)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    questions = read_questions(args.questions)
    service = open_service(args)
    service.settle()
    try:
        with Progress("batch", show=not args.no_progress) as progress:
            advance = progress.counter("answering", "question", len(questions))
            answers = answer_all(service.ask, questions, advance, with_history=not args.no_history)
            count = write_jsonl(args.out, answers)
    finally:
        service.close()
    print(f"answered {count} questions -> {args.out} ({policy_line(service.policy)})")
    return 0
