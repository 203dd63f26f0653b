"""``evloop reindex``: rebuild the index files from the database, or re-embed every document."""

from __future__ import annotations

import argparse

from evidence_loop.agent.commands.common import (
    Subparsers,
    add_command,
    add_index_option,
    configured_embedder,
    embedding_bar,
    open_store,
    resolve_location,
    shown,
    want_progress,
)

DESCRIPTION = """\
Rebuild the current generation's index files (BM25 and unit vectors) from the database, for when
the index folder was damaged or deleted. Documents, versions and traces are untouched.

With --embeddings, embed every stored document version with the configured embedder instead
(EVLOOP_EMBEDDER, EVLOOP_EMBED_CONFIG; see docs/models.md), in a new generation: after changing the
embedder, or to add vectors to an index built without them. With EVLOOP_EMBEDDER=none it drops
the vectors and the index goes back to lexical recall.

A PostgreSQL store (--store) keeps no index files: each replica builds the current generation's
index in memory from the database. Without --embeddings reindex then builds it once, to show that
the database holds all it needs, and writes nothing."""

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
    parser.add_argument("--no-progress", action="store_true", help="never show the progress bar")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    index = resolve_location(args)
    if not args.embeddings:
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
        return 0
    embedder = configured_embedder()
    with (
        embedding_bar(enabled=want_progress(1000, args.no_progress)) as bar,
        open_store(index, embedder=embedder, reembed=True, embed_progress=bar) as store,
    ):
        what = f"embedded every document with {embedder.identity.key}" if embedder else "dropped the vectors"
        print(f"{what}: generation {store.generation} in {shown(index)}")
    return 0
