"""``evloop check``: say what is damaged in the index folder, one line per problem."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evidence_loop.agent.doors.cli.common import Subparsers, add_command, add_index_option, resolve_index
from evidence_loop.tools.store.integrity import CheckReport, check_index

DESCRIPTION = """\
Check the index folder without changing it. The database: SQLite's integrity_check over every
page and index, and the text of every stored version against the sha256 recorded at ingest. The
index files of the current generation: each one against the generation's manifest.json (present,
same size, same sha256) and no file the manifest does not list.

Prints one line per problem on stdout (where: what, and the repair) and exits 1 with the count;
prints one "ok" line and exits 0 when nothing is damaged. Damaged index files are rewritten from
the database by `evloop reindex`; a damaged database can only be restored from your sources:
delete the folder and `evloop ingest` them again.

Opening the index (any other command) checks less: the sizes of the index files, and their
sha256 when the index is loaded for a search or a question."""

EPILOG = """\
examples:
  evloop check
  evloop check --index /srv/kb || evloop reindex --index /srv/kb"""

_REPAIRS = {
    "reindex": "`evloop reindex --index {folder}` rewrites the index files from the database",
    "ingest": "the database is damaged: restore it from your sources, delete {folder} and "
    "`evloop ingest PATH --index {folder}`",
}


def register(subparsers: Subparsers) -> None:
    """Add the ``check`` command."""
    parser = add_command(
        subparsers,
        "check",
        summary="say what is damaged in the index",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    add_index_option(parser, store=False)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """0 when all is well; 1 with one line per problem and a count."""
    folder = resolve_index(args.index)
    report = check_index(folder)
    for damage in report.damage:
        print(f"{damage.where}: {damage.problem} (repair: evloop {damage.repair})")
    if not report.damage:
        print(
            f"ok: the database and {report.files} index files of generation {report.generation} in {folder}"
        )
        return 0
    print(_summary(report, folder), file=sys.stderr)
    return 1


def _summary(report: CheckReport, folder: Path) -> str:
    count = len(report.damage)
    repairs = sorted({damage.repair for damage in report.damage}, reverse=True)
    hint = "; ".join(_REPAIRS[repair].format(folder=folder) for repair in repairs)
    return f"evloop: error: {count} problem{'s' if count > 1 else ''} in {folder} (hint: {hint})"
