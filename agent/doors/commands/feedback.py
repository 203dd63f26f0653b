"""``evloop feedback list|export``: the reviewers' verdicts on runs, from the trace store."""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path

from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_index_option,
    open_location,
    parse_groups,
)
from evidence_loop.agent.doors.commands.trace import trace_store
from evidence_loop.agent.loop.tracing import stored_texts
from evidence_loop.agent.tuning.review_set import CORPUS_CHOICES, notes, review_set, write_set
from evidence_loop.tools.errors import InputError
from evidence_loop.tools.printable import printable
from evidence_loop.traces import TraceStore
from evidence_loop.traces.feedback.feedback import FeedbackRecord, by_run, since_only, standing
from evidence_loop.traces.feedback.feedback_chain import check_log
from evidence_loop.traces.verification.citations import resolve

DESCRIPTION = """\
Read the verdicts reviewers posted on runs (POST /v1/runs/{run_id}/feedback, or the buttons of
the /audit console). They are kept append-only beside the traces, each linked to the final hash
of the run it judges and to the verdict before it; a later verdict on a run supersedes an
earlier one of the same reviewer. list prints the verdict that stands for each run (--all: every
verdict), then whether the chain verifies (a changed, dropped or re-ordered verdict, a dropped last
one, fails it: exit 2); export writes every verdict as JSON Lines, in the order they were posted,
and checks the chain first (a log that fails is not exported).

export --as-eval DIR writes the reviewed runs as an evaluation set instead (questions.jsonl,
corpus.jsonl, README.md; the set folder `evloop eval --help` describes): each run's question, history and
groups, the outcome its standing verdict expects, the reviewer's doc_id as gold_doc_ids, and the
answer as it was; the corpus is the stored text of every document the export may read (--corpus
cited: only those the runs read and the reviewers named; none: no corpus). --groups exports as a
key with those groups would: only runs asked with groups among them, only documents they may
read. `evloop eval DIR` then runs the team's reviews as its regression test."""

EPILOG = """\
examples:
  evloop feedback list --since 2026-11-01
  evloop feedback export > reviews.jsonl
  evloop feedback export --as-eval reviewed-2026-11 --groups support
  evloop eval reviewed-2026-11
  evloop calibrate --feedback --out policy.json"""


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "feedback",
        summary="list and export reviewers' verdicts",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    for name, helptext in (
        ("list", "the standing verdict of each run"),
        ("export", "every verdict as JSON Lines, or (--as-eval) the reviewed runs as an evaluation set"),
    ):
        sub = actions.add_parser(name, help=helptext, description=helptext)
        add_index_option(sub)
        sub.add_argument(
            "--traces", type=Path, metavar="DIR", default=None, help="trace folder (default INDEX/traces)"
        )
        sub.add_argument(
            "--since", metavar="DAY", default=None, help="only verdicts posted on or after DAY (UTC)"
        )
        if name == "list":
            sub.add_argument("--all", action="store_true", help="every verdict, superseded ones too")
        else:
            _add_eval_options(sub)
        sub.set_defaults(run=_list if name == "list" else _export)


def since_day(text: str | None) -> date | None:
    """``--since DAY`` as a date (InputError naming the format otherwise)."""
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InputError(f"--since {text!r} is not a day (YYYY-MM-DD)") from None


def _list(args: argparse.Namespace) -> int:
    with trace_store(args) as store:
        read = store.feedback.read_log()
    records = since_only(read, since_day(args.since))
    histories = by_run(records).values()
    shown = records if args.all else [history[-1] for history in histories]
    for record in sorted(shown, key=lambda r: r.seq):
        print(_line(record))
    differ = sum(len({r.verdict for r in standing(history)}) > 1 for history in histories)
    apart = f"; reviewers' latest verdicts differ on {differ} runs" if differ else ""
    kind = "verdicts" if args.all else "runs reviewed"
    print(f"{len(shown)} {kind} ({len(records)} verdicts posted{apart})")
    chain = check_log(read)
    if not chain.ok:
        raise InputError(chain.summary())
    print(chain.summary())
    return 0


def _line(record: FeedbackRecord) -> str:
    """One verdict on one line: what a reviewer wrote is escaped (``tools.printable``), a note of
    several lines included."""
    extra = "".join(f"  {k}={printable(v)}" for k, v in (("doc", record.doc_id), ("note", record.note)) if v)
    reviewer = printable(record.reviewer or "-")
    return f"{record.created_at[:19]}  {record.run_id}  {record.verdict:<21} {reviewer}{extra}"


def _add_eval_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--as-eval", type=Path, metavar="DIR", default=None, help="write an evaluation set into DIR (new)"
    )
    sub.add_argument(
        "--groups",
        metavar="G1,G2",
        default=None,
        help="with --as-eval: export as a key of these groups (default: everything, as the CLI reads)",
    )
    sub.add_argument(
        "--corpus",
        choices=CORPUS_CHOICES,
        default=None,
        help="with --as-eval: every readable document (all, the default), those the runs read (cited), none",
    )


def _export(args: argparse.Namespace) -> int:
    with trace_store(args) as store:
        read = store.feedback.read_log()
        chain = check_log(read)
        if not chain.ok:
            raise InputError(chain.summary())
        if args.as_eval is not None:
            return _export_set(args, store)
    if args.groups is not None or args.corpus is not None:
        raise InputError(f"{'--groups' if args.groups is not None else '--corpus'} goes with --as-eval")
    day = since_day(args.since)
    for record in since_only(read, None):
        if day is None or record.created_at[:10] >= day.isoformat():
            print(json.dumps(record.model_dump(), ensure_ascii=False))
    return 0


def _export_set(args: argparse.Namespace, traces: TraceStore) -> int:
    """``--as-eval DIR``: the reviewed runs as an evaluation set."""
    from evidence_loop.agent.access.keys import LOCAL, Caller  # the one rule of who may read what

    reader = (
        LOCAL if args.groups is None else Caller("cli", frozenset(parse_groups(args.groups)), frozenset())
    )
    with open_location(args) as store:
        texts = stored_texts(store)
        reviewed = review_set(
            traces,
            store.snapshot(),
            lambda trace: resolve(trace, texts),
            reader,
            since=since_day(args.since),
            corpus=args.corpus or "all",
        )
    write_set(args.as_eval, reviewed)
    print(f"{len(reviewed.questions)} reviewed runs -> {args.as_eval}")
    for line in notes(reviewed):
        print(line)
    print(f"run it: evloop eval {args.as_eval}")
    return 0
