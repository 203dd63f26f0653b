"""``evloop delete DOC_ID``: take a document out of the index."""

from __future__ import annotations

import argparse

from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_index_option,
    configured_embedder,
    resolve_location,
    shown,
)
from evidence_loop.agent.doors.commands.progress import Progress
from evidence_loop.agent.doors.commands.session import measured_line, scale_keeper
from evidence_loop.tools.errors import EmbedderError
from evidence_loop.tools.store.location import open_store

DESCRIPTION = """\
Retire a document: none of its versions is found any more. The stored versions stay in the
database so that traces of earlier runs can still be verified and replayed against them.
(`evloop ingest FOLDER --prune` retires the documents whose files are gone.)

A delete that shrinks the corpus by a quarter measures the corpus's scale again, in the same
transaction, as an ingest does."""

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
    embedder = configured_embedder()
    with Progress("delete") as progress:
        keeper = scale_keeper(args, embedder, progress=progress.stage("measuring the scale", "question"))
        try:
            store = open_store(index, embedder=embedder, meter=keeper)
        except EmbedderError:
            # Vectors of another embedder (or none): delete all the same; `ask` says what decides.
            store = open_store(index)
        with store:
            store.delete(args.doc_id)
    print(f"deleted {args.doc_id} from {shown(index)}")
    if (line := measured_line(keeper)) is not None:
        print(line)
    return 0
