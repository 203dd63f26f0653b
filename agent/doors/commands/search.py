"""``evloop search QUERY``: the raw recall step, the hit units BM25 finds for a query."""

from __future__ import annotations

import argparse
import json
import sys

from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_index_option,
    configured_embedder,
    hit_line,
    hit_record,
    open_location,
    parse_groups,
)
from evidence_loop.agent.doors.commands.session import add_policy_option, policy_from_args, policy_line
from evidence_loop.policies.config import Policy
from evidence_loop.tools.errors import InputError

DESCRIPTION = """\
Show the hit units (sentences, list items, table rows...) that recall finds for a query, best
first, from the current version of each document the caller may read. This is the first step of
answering a question, without the context around the hits: use it to check what the index holds."""

EPILOG = """\
examples:
  evloop search "开课前可以免费改期几次"
  evloop search "LM-S10 warranty" -k 3 --json
  evloop search "员工优惠码" --groups staff"""


def register(subparsers: Subparsers) -> None:
    """Add the ``search`` command."""
    parser = add_command(
        subparsers,
        "search",
        summary="show the units recall finds for a query",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    parser.add_argument("query", metavar="QUERY", help="the words to look for, Chinese or English")
    add_index_option(parser)
    parser.add_argument("-k", type=int, default=10, metavar="N", help="how many hits to show (default: 10)")
    parser.add_argument(
        "--groups",
        type=parse_groups,
        default=(),
        metavar="G1,G2",
        help="the caller's groups; documents with an ACL are searched only if one matches (default: none)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON object a line: doc_id, version, section, kind, start, end, text, score",
    )
    add_policy_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Search the current snapshot and print the hits; prints nothing (exit 0) when none match."""
    if args.k <= 0:
        raise InputError(f"-k must be positive, not {args.k}")
    from evidence_loop.agent.service import Service

    policy = policy_from_args(args)
    embedder = configured_embedder()
    with open_location(args, embedder=embedder) as store:
        snapshot = store.snapshot()
        service = Service(store, policy=policy, embedder=embedder)  # untraced: a search decides nothing
        hits = service.search(args.query, args.k, args.groups, snapshot=snapshot)
        if policy != Policy():  # the shipped policy goes without saying (`evloop config show` says it)
            print(f"evloop: {policy_line(policy)}", file=sys.stderr)
        for hit in hits:
            if args.json:
                print(json.dumps(hit_record(snapshot, hit), ensure_ascii=False))
            else:
                print(hit_line(snapshot, hit))
    return 0
