"""The folder of one generation: its bm25s indexes, its unit vectors and its manifest.

    FOLDER/bm25/gen-000042/               the recall index over the units live at generation 42
    FOLDER/bm25/gen-000042/passages/      the index over their passages (search/passages.py)
    FOLDER/bm25/gen-000042/vectors.npy    their vectors, float16, when the store embeds (store/vectors.py)
    FOLDER/bm25/gen-000042/manifest.json  size and sha256 of every file above (store/manifest.py)

The store writes a generation's folder before it commits the generation (tools/store/folder.py); this
module knows how to write one, check it against its manifest and the database, and load it (the
checks that need no index, and where the folder is, are in store/gen_files.py).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from evidence_loop.tools.disk import check_write
from evidence_loop.tools.errors import EmbedderError, IndexStateError
from evidence_loop.tools.models.embedding import EmbedderIdentity, Vectors
from evidence_loop.tools.search.dense import DenseIndex
from evidence_loop.tools.search.index import RecallIndex
from evidence_loop.tools.search.passages import passage_tokens
from evidence_loop.tools.search.snapshot import CorpusView, fingerprint
from evidence_loop.tools.store import vectors
from evidence_loop.tools.store.gen_files import BM25_DIR as BM25_DIR
from evidence_loop.tools.store.gen_files import PASSAGES_DIR as PASSAGES_DIR
from evidence_loop.tools.store.gen_files import gen_dir as gen_dir
from evidence_loop.tools.store.gen_files import missing_index_hint as missing_index_hint
from evidence_loop.tools.store.gen_files import verify_files as verify_files
from evidence_loop.tools.store.manifest import write_manifest

Indexes = tuple[RecallIndex, RecallIndex, DenseIndex | None]


def location_flag(location: Path | str) -> str:
    """How a command names the store: ``--index DIR`` for a folder, ``--store URL`` for a database."""
    return f"--store {location}" if isinstance(location, str) else f"--index {location}"


def reembed_hint(folder: Path | str) -> str:
    return (
        f"re-embed with the configured embedder: `evloop reindex --embeddings {location_flag(folder)}`, "
        "or configure the embedder the index was built with (EVLOOP_EMBEDDER, EVLOOP_EMBED_CONFIG), "
        "or EVLOOP_EMBEDDER=none for lexical recall only"
    )


def remove_folders(folder: Path, doomed: Callable[[int], bool]) -> None:
    """Remove the generation folders of ``folder`` whose number is ``doomed`` (old or stray ones)."""
    root = folder / BM25_DIR
    for child in root.iterdir() if root.is_dir() else ():
        name = child.name
        if name.startswith("gen-") and name[4:].isdigit() and doomed(int(name[4:])):
            shutil.rmtree(child, ignore_errors=True)


def fresh_dir(folder: Path) -> Path:
    """``folder`` after removing whatever a killed writer (or damage) left there and on the way to it."""
    for path in (folder.parent, folder):
        if (path.is_symlink() and not path.exists()) or (path.exists() and not path.is_dir()):
            path.unlink()  # a file, or a dangling link, where a folder belongs
    if folder.exists():
        shutil.rmtree(folder)
    return folder


def build_indexes(view: CorpusView, tokens: list[list[str]]) -> tuple[RecallIndex, RecallIndex]:
    """The unit index and the passage index, both from the stored unit tokens."""
    return RecallIndex.build(tokens), RecallIndex.build(passage_tokens(view.unit_passage, tokens))


def dense_index(matrix: Vectors | None, identity: EmbedderIdentity | None) -> DenseIndex | None:
    return DenseIndex(matrix, identity) if matrix is not None and identity is not None else None


def save(folder: Path, indexes: Indexes, meta: dict[str, object]) -> None:
    """Write every file of one generation into its (new) folder, its manifest last."""
    check_write(folder)
    units, passages, dense = indexes
    units.save(folder, meta)
    passages.save(folder / PASSAGES_DIR, meta)
    if dense is not None:
        vectors.save(folder, dense.matrix, dense.identity)
    write_manifest(folder)


def load(root: Path, generation: int, view: CorpusView, embedder: EmbedderIdentity | None) -> Indexes:
    """A committed generation's indexes from its folder, checked against the database's view.

    Its vectors are loaded when it has them; with an embedder configured they must be that embedder's.
    """
    folder = gen_dir(root, generation)
    try:
        units, meta = RecallIndex.load(folder)
        passages, passage_meta = RecallIndex.load(folder / PASSAGES_DIR)
        stored = vectors.load(folder)
    except IndexStateError as exc:
        raise IndexStateError(f"{exc}; {missing_index_hint(root, generation)}") from exc
    check_meta(meta, view, generation, root, rows=len(view.units))
    check_meta(passage_meta, view, generation, root, rows=view.passages)
    if stored is None:
        if embedder is not None and view.units:  # an empty index takes the embedder of its first ingest
            raise EmbedderError(f"the index at {root} has no unit vectors; {reembed_hint(root)}")
        return units, passages, None
    matrix, identity = stored
    if embedder is not None and identity.key != embedder.key:
        raise EmbedderError(
            f"the index's vectors were made by {identity.key}, the configured embedder is "
            f"{embedder.key}; {reembed_hint(root)}"
        )
    if matrix.shape[0] != len(view.units):
        raise IndexStateError(
            f"the vectors cover {matrix.shape[0]} of {len(view.units)} units; "
            f"{missing_index_hint(root, generation)}"
        )
    return units, passages, DenseIndex(matrix, identity)


def check_meta(
    meta: dict[str, object], view: CorpusView, generation: int, folder: Path, *, rows: int
) -> None:
    """A saved index must describe exactly the units (or passages) the database says were live."""
    expected = {"generation": generation, "units": rows, "fingerprint": fingerprint(view.docs)}
    found = {key: meta.get(key) for key in expected}
    if found != expected:
        raise IndexStateError(
            f"the bm25 index does not match the database ({found} != {expected}); "
            f"{missing_index_hint(folder, generation)}"
        )
