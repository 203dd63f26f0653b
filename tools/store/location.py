"""Choosing the store: an index folder (SQLite, embedded, the default) or a PostgreSQL URL (shared).

    open_store(".evloop")                          tools.store.folder.Store over the folder
    open_store("postgresql://host/db")             tools.store.postgres.PgStore over the database

Both are the same :class:`tools.store.folder.Store` to their callers. The folder is for one host: nothing
to set up, created by the first ingest. PostgreSQL is for several API replicas sharing one
knowledge base and one audit record; its schema is created and upgraded by ``evloop migrate``
only (tools/store/pg_schema.py).
"""

from __future__ import annotations

from pathlib import Path

from evidence_loop.tools.models.embedding import Embedder
from evidence_loop.tools.store.calibration import ScaleMeter
from evidence_loop.tools.store.folder import Checkpoint, EmbedProgress, Store
from evidence_loop.tools.store.pg import is_url

Location = str | Path


def open_store(
    location: Location,
    *,
    create: bool = False,
    rebuild_index: bool = False,
    embedder: Embedder | None = None,
    reembed: bool = False,
    embed_progress: EmbedProgress | None = None,
    meter: ScaleMeter | None = None,
    checkpoint: Checkpoint | None = None,
) -> Store:
    """The store at ``location``; ``create`` and ``rebuild_index`` concern folders only (a database
    is created by ``evloop migrate``, and its indexes live in each replica's memory); ``meter`` measures
    the corpus's scale in each write that makes it due (``Store.keep_scale_with``); ``checkpoint`` is
    told each stage of every write (the crash tests kill the process there)."""
    if is_url(location):
        from evidence_loop.tools.store.postgres import PgStore

        return PgStore.open(
            str(location), embedder=embedder, reembed=reembed, embed_progress=embed_progress, meter=meter,
            checkpoint=checkpoint,
        )  # fmt: skip
    return Store.open(
        location,
        create=create,
        rebuild_index=rebuild_index,
        embedder=embedder,
        reembed=reembed,
        embed_progress=embed_progress,
        meter=meter,
        checkpoint=checkpoint,
    )
