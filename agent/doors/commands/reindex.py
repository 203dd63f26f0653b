"""``evloop reindex``: rebuild the index files from the database, or re-embed every document."""

from __future__ import annotations

import argparse

from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_embed_workers_option,
    add_index_option,
    configured_embedder,
    resolve_location,
    shown,
    warn,
)
from evidence_loop.agent.doors.commands.progress import Count, Progress, add_progress_option
from evidence_loop.agent.doors.commands.session import measured_line, scale_keeper
from evidence_loop.agent.loop.calibrate import ScaleKeeper
from evidence_loop.tools.errors import EmbedderError
from evidence_loop.tools.models.embedding import Embedder
from evidence_loop.tools.store.location import Location, open_store

DESCRIPTION = """\
Rebuild the current generation's index files (BM25 and unit vectors) from the database, for when
the index folder was damaged or deleted. Documents, versions and traces are untouched.

With --embeddings, embed every stored document version with the configured embedder instead
(EVLOOP_EMBEDDER, EVLOOP_EMBED_CONFIG; see docs/models.md), in a new generation: after changing the
embedder, or to add vectors to an index built without them. With EVLOOP_EMBEDDER=none it drops
the vectors and the index goes back to lexical recall.

A PostgreSQL store (--store) keeps no index files: each replica builds the current generation's
index in memory from the database. Without --embeddings reindex then builds it once, to show that
the database holds all it needs, and writes nothing.

Either way, with an embedder, the corpus's scale for the answer-or-refuse judge is measured again
when it is due (never measured, as in a store written by an older evloop; measured with other
vectors; or on a corpus a quarter smaller or larger), in a new generation."""

EPILOG = """\
examples:
  evloop reindex --index .evloop
  EVLOOP_EMBEDDER=openai EVLOOP_EMBED_BASE_URL=http://127.0.0.1:8000/v1 EVLOOP_EMBED_MODEL=e5 \\
      evloop reindex --embeddings"""


def register(subparsers: Subparsers) -> None:
    """Add the ``reindex`` command."""
    parser = add_command(
        subparsers, "reindex", summary="rebuild the index files", description=DESCRIPTION, epilog=EPILOG
    )
    add_index_option(parser)
    parser.add_argument(
        "--embeddings", action="store_true", help="re-embed every document with the configured embedder"
    )
    add_progress_option(parser)
    add_embed_workers_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    index = resolve_location(args)
    embedder = configured_embedder()
    with Progress("reindex", show=not args.no_progress) as progress:
        keeper = scale_keeper(args, embedder, progress=progress.stage("measuring the scale", "question"))
        if args.embeddings:
            _reembed(index, embedder, keeper, progress.stage("embedding", "unit"))
        else:
            _rebuild(index)
            if keeper is not None:
                _measure_when_due(index, embedder, keeper)
    if (line := measured_line(keeper)) is not None:
        print(line)
    return 0


def _rebuild(index: Location) -> None:
    """The index files (for a database: the in-memory index, once) from the stored rows."""
    with open_store(index, rebuild_index=True) as store:
        if isinstance(index, str):
            units = store.snapshot().unit_count
            print(
                f"nothing to rebuild: the store at {shown(index)} keeps no index files, each replica "
                f"builds generation {store.generation}'s index in memory; built it here from the "
                f"database ({units} units) and wrote nothing"
            )
        else:
            print(f"rebuilt the index of generation {store.generation} in {shown(index)}")


def _measure_when_due(index: Location, embedder: Embedder | None, keeper: ScaleKeeper) -> None:
    """The corpus's scale when it is due; a store whose vectors are not the configured embedder's
    cannot be measured, and the warning says how to repair it."""
    try:
        with open_store(index, embedder=embedder, meter=keeper) as store:
            store.measure_scale()
    except EmbedderError as exc:
        warn(f"the corpus's scale was not measured: {exc}")


def _reembed(
    index: Location, embedder: Embedder | None, keeper: ScaleKeeper | None, bar: Count | None
) -> None:
    """Every document embedded anew (none: the vectors dropped), in a new generation with its scale."""
    with open_store(index, embedder=embedder, reembed=True, embed_progress=bar, meter=keeper) as store:
        what = f"embedded every document with {embedder.identity.key}" if embedder else "dropped the vectors"
        print(f"{what}: generation {store.generation} in {shown(index)}")
