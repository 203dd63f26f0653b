"""``evloop ingest PATH...``: read files, folders and corpus.jsonl files into the index."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from evidence_loop.agent.commands.common import (
    Subparsers,
    add_command,
    add_embed_workers_option,
    add_index_option,
    configured_embedder,
    embedding_bar,
    open_store,
    parse_groups,
    progress_bar,
    resolve_location,
    summary_line,
    want_progress,
    warn,
)
from evidence_loop.agent.commands.session import measured_line, scale_keeper
from evidence_loop.tools.errors import InputError
from evidence_loop.tools.parse.sources import SUPPORTED_SUFFIXES, collect

DESCRIPTION = """\
Add documents to the index. Every path is read and checked first; if any input is bad
(malformed JSON line, unsupported file type, bytes that are not UTF-8, a document over the
size limit, a version clash) nothing is written and the error names the file and line.

Files: .md/.markdown (markdown), .txt (text), .html/.htm (html), .jsonl (one document per line:
doc_id and text required; title, version, format, acl, metadata optional). Folders are read
recursively; hidden files are skipped, other file types are skipped with a warning. A link in a
folder is read only if it points to a file inside that folder (--follow-symlinks: anywhere);
other links, and links to folders, are skipped with a warning.
A file's doc_id is its path below the folder given, without the extension. A doc_id must be
printable text: a file name that is not UTF-8, or a doc_id with a control character (NUL,
newline, tab, escape, direction overrides), is refused.

Re-ingesting a document version with the same text changes nothing; a new --version becomes the
current one and older versions stay readable.

With an embedder (the default), the first ingest, and any that grows or shrinks the corpus by a
quarter, also measures the corpus's own scale for the answer-or-refuse judge (self-calibration,
seconds), in the same transaction: later `ask`, `batch` and `serve` decide with the calibrated
judge, as `evloop eval` does."""

EPILOG = """\
examples:
  evloop ingest help-centre/
  evloop ingest internal/ --acl staff --version 2024-10
  evloop ingest corpus.jsonl --index /tmp/kb --max-mb 50"""


def register(subparsers: Subparsers) -> None:
    """Add the ``ingest`` command."""
    parser = add_command(
        subparsers, "ingest", summary="add documents to the index", description=DESCRIPTION, epilog=EPILOG
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
        help='version label for the documents (default: "1"); for .jsonl records, only those without one',
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="overwrite a stored version whose text changed (default: refuse)",
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
    add_embed_workers_option(parser)
    parser.add_argument("--no-progress", action="store_true", help="never show the progress bar")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Collect every document, then write them in one batch and print the summary line."""
    index = resolve_location(args)
    if not 0 < args.max_mb < math.inf:
        raise InputError(f"--max-mb must be a positive number, not {args.max_mb}")
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
    if not found.documents:
        raise InputError(f"no documents to ingest in {', '.join(map(str, args.paths))}")
    total = len(found.documents)
    embedder = configured_embedder()
    with (
        scale_keeper(args, embedder, enabled=want_progress(total, args.no_progress)) as keeper,
        open_store(index, create=True, embedder=embedder, meter=keeper) as store,
        progress_bar(total, enabled=want_progress(total, args.no_progress)) as bar,
        embedding_bar(enabled=want_progress(total, args.no_progress)) as embed_bar,
    ):
        report = store.ingest(
            found.documents, replace=args.replace, max_bytes=max_bytes, progress=bar, embed_progress=embed_bar
        )
    for doc_id, reason in report.skipped:
        warn(f"{doc_id}: {reason}; skipped")
    print(summary_line(report, index, source_skipped=found.skipped))
    if (line := measured_line(keeper)) is not None:
        print(line)
    return 0
