"""``evloop ingest PATH...``: make the index hold what the files, folders and corpus.jsonl files hold."""

from __future__ import annotations

import argparse
import math
import tempfile
from contextlib import ExitStack
from pathlib import Path

from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_embed_workers_option,
    add_index_option,
    configured_embedder,
    dry_run_lines,
    parse_groups,
    resolve_location,
    summary_line,
    warn,
)
from evidence_loop.agent.doors.commands.progress import add_progress_option, ingest_progress
from evidence_loop.agent.doors.commands.session import measured_line, scale_keeper
from evidence_loop.tools.errors import InputError
from evidence_loop.tools.parse.sources import SUPPORTED_SUFFIXES, collect, source_name
from evidence_loop.tools.store.location import Location, open_store
from evidence_loop.tools.store.schema import DB_NAME

DESCRIPTION = """\
Make the index hold what the paths hold: run it again after editing, adding or removing files.
Every path is read and checked first; if any input is bad (malformed JSON line, unsupported file
type, bytes that are not UTF-8, a document over the size limit, a version clash) nothing is
written and the error names the file and line. The whole run is one write: interrupted, it leaves
the index as it was before, never half of it.

Per document:
  new doc_id              added, as version "1"
  text changed            a new version, labelled with the next integer ("1" -> "2"); the old one
                          stays stored, so that earlier answers still replay and verify
  text unchanged          left alone: no new version, nothing embedded again
  text of an older version
                          that version becomes current again (a reverted edit, a restored file)
  gone from PATH          still answered, unless --prune: then retired (no longer answered; its
                          versions stay stored for replay and audit). Only documents that an
                          earlier run synced from the same PATH (or --source) are retired.

--version V labels this run's new versions V instead of the next integer (an unchanged document
keeps its label; V already stored with another text is an error, unless --replace rewrites it).
A .jsonl record's own "version" is such a label. --dry-run prints what would happen and writes
nothing.

Files: .md/.markdown (markdown), .txt (text), .html/.htm (html), .jsonl (one document per line:
doc_id and text required; title, version, format, acl, metadata optional). Folders are read
recursively; hidden files are skipped, other file types are skipped with a warning. A link in a
folder is read only if it points to a file inside that folder (--follow-symlinks: anywhere);
other links, and links to folders, are skipped with a warning.
A file's doc_id is its path below the folder given, without the extension. A doc_id must be
printable text: a file name that is not UTF-8, or a doc_id with a control character (NUL,
newline, tab, escape, direction overrides), is refused.

With an embedder (the default), only new versions are embedded. The first ingest, and any that
grows or shrinks the corpus by a quarter, also measures the corpus's own scale for the
answer-or-refuse judge (self-calibration, seconds), in the same write: later `ask`, `batch` and
`serve` decide with the calibrated judge, as `evloop eval` does."""

EPILOG = """\
examples:
  evloop ingest help-centre/                      add, or sync after edits
  evloop ingest help-centre/ --prune --dry-run    what a sync that retires deleted files would do
  evloop ingest help-centre/ --prune              ... and do it
  evloop ingest internal/ --acl staff --version 2024-10
  evloop ingest /builds/$CI_JOB_ID/kb --source kb --prune   a checkout whose path changes
  evloop ingest corpus.jsonl --index /tmp/kb --max-mb 50"""


def register(subparsers: Subparsers) -> None:
    """Add the ``ingest`` command."""
    parser = add_command(
        subparsers,
        "ingest",
        summary="add documents to the index, or sync it with changed files",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    parser.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help=f"a file or folder ({', '.join(SUPPORTED_SUFFIXES)})",
    )
    add_index_option(parser)
    parser.add_argument(
        "--acl",
        type=parse_groups,
        metavar="G1,G2",
        default=None,
        help="groups allowed to read these documents (default: everyone); for .jsonl records, "
        "only those without their own acl",
    )
    parser.add_argument(
        "--version",
        metavar="V",
        default=None,
        help='label this run\'s new versions V (default: the next integer, "1" for a new document); '
        "for .jsonl records, only those without one",
    )
    parser.add_argument(
        "--prune",
        action="store_true",
        help="retire the documents synced from these paths before that are no longer there",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would be added, changed and retired; write nothing"
    )
    parser.add_argument(
        "--source",
        metavar="NAME",
        default=None,
        help="record the documents as coming from NAME, not from each PATH's absolute path "
        "(for a folder whose path changes from run to run)",
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="rewrite a stored version's text in place instead of storing a new version (old traces "
        "that cite it no longer replay pinned)",
    )
    parser.add_argument(
        "--max-mb",
        type=float,
        metavar="MB",
        default=20.0,
        help="largest single document, in MB (default: 20)",
    )
    parser.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="in folders, also read links to files outside the folder (default: skip them with a warning)",
    )
    add_progress_option(parser)
    add_embed_workers_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Collect every document, then write them in one batch and print the summary line."""
    index = resolve_location(args)
    if not 0 < args.max_mb < math.inf:
        raise InputError(f"--max-mb must be a positive number, not {args.max_mb}")
    if args.source is not None and (not args.source.strip() or not args.source.isprintable()):
        raise InputError(f"--source needs a name of printable characters, not {args.source!r}")
    max_bytes = int(args.max_mb * 1_000_000)
    found = collect(
        args.paths,
        acl=args.acl,
        version=args.version,
        max_bytes=max_bytes,
        follow_symlinks=args.follow_symlinks,
    )
    for message in found.warnings:
        warn(message)
    if not found.documents and not args.prune:
        raise InputError(f"no documents to ingest in {', '.join(map(str, args.paths))}")
    sources = {doc_id: args.source or source for doc_id, source in found.sources.items()}
    pruned = _pruned(args) if args.prune else ()
    embedder = configured_embedder()
    with ingest_progress(len(found.documents), args.no_progress) as progress, ExitStack() as stack:
        keeper = None if args.dry_run else scale_keeper(args, embedder, progress=progress.scale)
        target = _dry_run_target(index, stack) if args.dry_run else index
        with open_store(target, create=True, embedder=embedder, meter=keeper) as store:
            report = store.ingest(
                found.documents,
                replace=args.replace,
                max_bytes=max_bytes,
                progress=progress.documents,
                embed_progress=progress.embedding,
                sources=sources,
                prune=pruned,
                dry_run=args.dry_run,
            )
    for doc_id, reason in report.skipped:
        warn(f"{doc_id}: {reason}; skipped")
    for doc_id, before, now in report.taken:
        warn(
            f"{doc_id}: synced from {before} before, its text now from {now}: two sources that name one "
            "doc_id replace each other at every sync (sync their common folder, or rename one)"
        )
    if args.dry_run:
        for planned in dry_run_lines(report):
            print(planned)
    print(summary_line(report, index, source_skipped=found.skipped))
    if (line := measured_line(keeper)) is not None:
        print(line)
    return 0


def _dry_run_target(index: Location, stack: ExitStack) -> Location:
    """Where a dry run applies the rules: the store, or an empty one in a temporary folder when there
    is none yet (a dry run creates nothing)."""
    if isinstance(index, str) or (Path(index) / DB_NAME).is_file():
        return index
    return Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evloop-dry-run-"))) / "index"


def _pruned(args: argparse.Namespace) -> tuple[str, ...]:
    """The sources a prune covers: --source, else each path given, as collect names them."""
    if args.source is not None:
        return (args.source,)
    return tuple(dict.fromkeys(source_name(path) for path in args.paths))
