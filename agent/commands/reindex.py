"""``evloop reindex``: rebuild the BM25 index files from the database."""

from __future__ import annotations

import argparse

from agent.commands.common import Store, Subparsers, add_command, add_index_option, resolve_index

DESCRIPTION = """\
Rebuild the current generation's BM25 index files from the tokens stored in the database, for
when the index folder was damaged or deleted. Documents, versions and traces are untouched."""

EPILOG = """\
example:
  evloop reindex --index .evloop"""


def register(subparsers: Subparsers) -> None:
    """Add the ``reindex`` command."""
    parser = add_command(
        subparsers, "reindex", summary="rebuild the index files", description=DESCRIPTION, epilog=EPILOG
    )
    add_index_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    index = resolve_index(args.index)
    with Store.open(index, create=False, rebuild_index=True) as store:
        print(f"rebuilt the index of generation {store.generation} in {index}")
    return 0
