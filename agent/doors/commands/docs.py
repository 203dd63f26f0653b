"""``evloop docs``: the documents in the index, with their versions and unit counts."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from evidence_loop.agent.doors.cli.common import Subparsers, add_command, add_index_option, resolve_location
from evidence_loop.tools.printable import printable
from evidence_loop.tools.store.listing import list_documents
from evidence_loop.tools.types import shown_doc_id

DESCRIPTION = """\
List the documents in the index: doc_id, current version, every stored version, the number of
units of the current version, the ACL groups (- for public) and the title. A doc_id character
that does not print as itself (one that prints nothing, a control, a combining mark of an id not
in NFC, a Cyrillic or Greek letter among Latin ones) is shown as its escape, such as \\u200b;
--json gives the doc_ids exactly."""

EPILOG = """\
examples:
  evloop docs
  evloop docs --index /tmp/kb --json"""


def register(subparsers: Subparsers) -> None:
    """Add the ``docs`` command."""
    parser = add_command(
        subparsers, "docs", summary="list the documents in the index", description=DESCRIPTION, epilog=EPILOG
    )
    add_index_option(parser)
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON object a line: doc_id, title, current_version, versions, units, acl",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print one line (or one JSON object) per document, in doc_id order."""
    documents = list_documents(resolve_location(args))  # the database alone, not the indexes
    if args.json:
        for info in documents:
            print(json.dumps(asdict(info), ensure_ascii=False))
        return 0
    rows = [("doc_id", "current", "versions", "units", "acl", "title")]
    rows += [
        (
            shown_doc_id(d.doc_id),
            d.current_version,
            ",".join(d.versions),
            str(d.units),
            printable(",".join(d.acl)) or "-",
            printable(d.title),
        )
        for d in documents
    ]
    widths = [max(len(row[col]) for row in rows) for col in range(5)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[5])
    return 0
