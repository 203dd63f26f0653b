"""A store's vectors belong to one embedder: the checks and writes that keep it so, for both backends.

    check(conn, embedder, shown)          on open: the configured embedder is the one the vectors record
    embed_written(conn, embedder, shown)  in an ingest's transaction: embed its new versions, or refuse
                                          to ingest into an embedding store without its embedder
    reembed(conn, embedder)               in a reindex's transaction: every version anew, or none

``shown`` is how messages name the store (a folder, or a PostgreSQL URL without its password), so
that each error ends with the command that repairs it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evidence_loop.tools.errors import EmbedderError
from evidence_loop.tools.models.embedding import Embedder
from evidence_loop.tools.store import vectors
from evidence_loop.tools.store.generation import location_flag, reembed_hint
from evidence_loop.tools.store.sql import Db

Progress = Callable[[int, int], None]


def check(conn: Db, embedder: Embedder, shown: Path | str) -> None:
    """EmbedderError when the store's vectors were made by another embedder than ``embedder``."""
    if not conn.execute("SELECT 1 FROM units LIMIT 1").fetchone():
        return  # an empty store takes the embedder of its first ingest
    recorded = vectors.recorded_identity(conn)
    if recorded is None:
        raise EmbedderError(f"the index at {shown} has no unit vectors; {reembed_hint(shown)}")
    if recorded.key != embedder.identity.key:
        raise EmbedderError(
            f"the index's vectors were made by {recorded.key}, the configured embedder is "
            f"{embedder.identity.key}; {reembed_hint(shown)}"
        )


def embed_written(conn: Db, embedder: Embedder | None, shown: Path | str, progress: Progress | None) -> int:
    """Embed the versions this write added (the count of units embedded); a store that embeds refuses
    to go on without its embedder."""
    if embedder is not None:
        return vectors.embed_missing(conn, embedder, progress)
    if (recorded := vectors.recorded_identity(conn)) is not None:
        raise EmbedderError(
            f"the index at {shown} embeds its documents with {recorded.key}, and no embedder "
            f"is configured; configure it to ingest, or drop the vectors with "
            f"`EVLOOP_EMBEDDER=none evloop reindex --embeddings {location_flag(shown)}`"
        )
    return 0


def reembed(conn: Db, embedder: Embedder | None, progress: Progress | None) -> bool:
    """Embed every stored version with ``embedder`` (None: drop the vectors); other embedders' go."""
    conn.execute(vectors.DDL)
    keep = embedder.identity.key if embedder is not None else ""
    conn.execute("DELETE FROM unit_vectors WHERE embedder != ?", (keep,))
    if embedder is None:
        vectors.forget_identity(conn)
    else:
        vectors.embed_missing(conn, embedder, progress)
    return True


def _location(shown: Path | str) -> object:
    return shown
