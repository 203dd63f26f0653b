"""`evloop docs` lists a folder's documents from its database alone (tools/store/listing.py): the
same list as the opened store's, and the same errors as opening it, for each kind of damage."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from evidence_loop.tools.errors import IndexStateError
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.store.listing import list_documents
from evidence_loop.tools.types import DocumentInput

WARRANTY = DocumentInput("warranty-en", "# Device Warranty\n\nThe LM-S10 is covered for 1 year.\n")
RETURNS = DocumentInput("returns-en", "# Returns\n\nReturns ship in 7 days.\n", acl=("staff",))
GEN = Path("bm25") / "gen-000002"


@pytest.fixture
def index(tmp_path: Path) -> Path:
    """A closed store at generation 2: two documents, the warranty in two versions."""
    folder = tmp_path / "ix"
    with Store.open(folder, create=True) as store:
        store.ingest([WARRANTY, RETURNS])
        store.ingest([DocumentInput("warranty-en", WARRANTY.text + "\nExtended to 2 years.\n")])
    return folder


def opening_error(folder: Path) -> str:
    with pytest.raises(IndexStateError) as raised:
        Store.open(folder).close()
    return str(raised.value)


def listing_error(folder: Path) -> str:
    with pytest.raises(IndexStateError) as raised:
        list_documents(folder)
    return str(raised.value)


def test_the_listing_is_the_opened_stores_document_list(index: Path) -> None:
    with Store.open(index) as store:
        expected = store.documents()

    assert list_documents(index) == expected
    assert [len(d.versions) for d in expected] == [1, 2]  # returns-en, then warranty-en


def test_a_folder_without_a_store_fails_as_opening_it_does(tmp_path: Path) -> None:
    assert listing_error(tmp_path / "none") == opening_error(tmp_path / "none")


def test_an_index_file_of_the_wrong_size_fails_as_opening_the_store_does(index: Path) -> None:
    damaged = sorted((index / GEN).rglob("*.npy"))[0]
    damaged.write_bytes(damaged.read_bytes() + b"x")

    assert listing_error(index) == opening_error(index)


def test_a_database_of_another_schema_version_fails_as_opening_the_store_does(index: Path) -> None:
    with closing(sqlite3.connect(index / "store.sqlite3")) as conn:
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        conn.commit()

    assert listing_error(index) == opening_error(index)
