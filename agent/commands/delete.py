"""``evloop delete DOC_ID``: take a document out of the index."""

from __future__ import annotations

import argparse

from evidence_loop.agent.commands.common import (
    Subparsers,
    add_command,
    add_index_option,
    open_store,
    resolve_location,
    shown,
)

DESCRIPTION = """\
Remove a document from search: none of its versions is found any more. The stored versions stay
in the database so that traces of earlier runs can still be replayed against them."""

EPILOG = """\
example:
  evloop delete shipping-zh"""


def register(subparsers: Subparsers) -> None:
    """Add the ``delete`` command."""
    parser = add_command(
        subparsers, "delete", summary="remove a document from search", description=DESCRIPTION, epilog=EPILOG
    )
    parser.add_argument("doc_id", metavar="DOC_ID", help="the document to remove (see `evloop docs`)")
    add_index_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Delete the document; an unknown doc_id is a NotFoundError (exit 1)."""
    index = resolve_location(args)
    with open_store(index) as store:
        store.delete(args.doc_id)
    print(f"deleted {args.doc_id} from {shown(index)}")
    return 0
