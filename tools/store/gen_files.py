"""Where a generation's index files are, and whether they are whole: the checks of
``tools.store.generation`` (which re-exports them) that need neither the indexes nor numpy, so that
reading the database alone (``evloop docs``, tools/store/listing.py) checks what opening a store does.
"""

from __future__ import annotations

from pathlib import Path

from evidence_loop.tools.errors import IndexStateError
from evidence_loop.tools.store.manifest import verify_manifest

BM25_DIR = "bm25"
PASSAGES_DIR = "passages"


def gen_dir(folder: Path, generation: int) -> Path:
    return folder / BM25_DIR / f"gen-{generation:06d}"


def missing_index_hint(folder: Path, generation: int) -> str:
    return (
        f"the bm25 index of generation {generation} is missing or damaged in {gen_dir(folder, generation)}; "
        f"rebuild it from the database with `evloop reindex --index {folder}` "
        f"(Store.open(..., rebuild_index=True)), or delete {folder} and ingest again"
    )


def verify_files(folder: Path, generation: int, *, hashes: bool) -> None:
    """IndexStateError unless every file of the generation's folder matches its manifest."""
    if not gen_dir(folder, generation).is_dir():
        raise IndexStateError(missing_index_hint(folder, generation))
    damage = verify_manifest(gen_dir(folder, generation), hashes=hashes)
    if damage:
        first = damage[0]
        more = f" (and {len(damage) - 1} more)" if len(damage) > 1 else ""
        raise IndexStateError(
            f"{first.path} in the index folder of generation {generation}: {first.problem}{more}; "
            f"{missing_index_hint(folder, generation)}"
        )
