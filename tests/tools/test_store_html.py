"""An HTML page in the store: its clean text is the version's text, the source's format, size and
sha256 are kept beside it, and a page whose clean text did not change is not written again; on each
backend."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.store.location import Location, open_store
from evidence_loop.tools.types import DocumentInput
from tests.html_pages import furnished_page
from tests.legacy_parse import legacy_parse

PAGE = furnished_page()


@pytest.fixture
def store(store_location: Location) -> Iterator[Store]:
    with open_store(store_location, create=True) as opened:
        yield opened


def stored_row(location: Location, doc_id: str, version: str = "1") -> tuple[Any, ...]:
    """format, text, sha256 and metadata of a stored version, read from the database itself."""
    sql = "SELECT format, text, sha256, metadata FROM versions WHERE doc_id = {p} AND version = {p}"
    if isinstance(location, Path):
        with sqlite3.connect(location / "store.sqlite3") as conn:
            row = conn.execute(sql.format(p="?"), (doc_id, version)).fetchone()
    else:
        import psycopg

        with psycopg.connect(location) as conn:
            row = conn.execute(sql.format(p="%s"), (doc_id, version)).fetchone()
    assert row is not None
    return tuple(row)


def page(text: str = PAGE, version: str = "1") -> DocumentInput:
    return DocumentInput("account/reset", text, version=version, title="Reset your password", format="html")


def test_a_page_is_stored_as_its_clean_text(store: Store, store_location: Location) -> None:
    store.ingest([page()])
    fmt, text, sha, _ = stored_row(store_location, "account/reset")
    assert (fmt, text, sha) == (
        "text",
        parse_document(page()).text,
        hashlib.sha256(text.encode()).hexdigest(),
    )


def test_the_source_format_size_and_sha256_are_kept_beside_the_clean_text(
    store: Store, store_location: Location
) -> None:
    store.ingest([page()])
    metadata = json.loads(stored_row(store_location, "account/reset")[3])
    source = PAGE.encode()
    assert metadata["parsed_from"] == {
        "format": "html",
        "bytes": len(source),
        "sha256": hashlib.sha256(source).hexdigest(),
    }


def test_the_store_serves_units_cut_from_the_clean_text(store: Store) -> None:
    store.ingest([page()])
    snapshot = store.snapshot()
    parsed = snapshot.parsed("account/reset", "1")
    hits = snapshot.search("reset link expires", 3)
    assert hits and all(parsed.text[h.unit.start : h.unit.end] == h.unit.text for h in hits)
    assert "<" not in hits[0].unit.text and "expires after 60 minutes" in hits[0].unit.text


def test_a_page_whose_clean_text_did_not_change_is_unchanged(store: Store) -> None:
    store.ingest([page()])
    redressed = PAGE.replace("&copy; 2026", "&copy; 2027").replace("font-family", "font-weight")
    report = store.ingest([page(redressed)])
    assert (report.unchanged, report.documents, report.generation) == (1, 0, 1)


def test_a_page_whose_clean_text_changed_clashes_with_its_stored_version(store: Store) -> None:
    store.ingest([page()])
    with pytest.raises(Exception, match="already stored with different text"):
        store.ingest([page(PAGE.replace("60 minutes", "30 minutes"))])


def test_a_new_version_of_a_page_stores_its_new_clean_text(store: Store) -> None:
    store.ingest([page()])
    store.ingest([page(PAGE.replace("60 minutes", "30 minutes"), version="2")])
    assert "expires after 30 minutes" in store.snapshot().parsed("account/reset", "2").text


def test_a_page_stored_as_its_source_before_clean_text_is_left_as_it_was(
    store: Store, store_location: Location
) -> None:
    store.ingest([page()], parse=legacy_parse)
    report = store.ingest([page()])
    assert report.unchanged == 1 and stored_row(store_location, "account/reset")[:2] == ("html", PAGE)


def test_replace_rewrites_a_page_stored_as_its_source_to_clean_text(
    store: Store, store_location: Location
) -> None:
    store.ingest([page()], parse=legacy_parse)
    store.ingest([page()], replace=True)
    assert stored_row(store_location, "account/reset")[:2] == ("text", parse_document(page()).text)


def test_a_page_with_no_text_is_skipped_with_the_reason(store: Store) -> None:
    report = store.ingest(
        [page("<head><title>Soon | Acme</title><script>x()</script></head><body><img src=a></body>")]
    )
    assert report.skipped == (("account/reset", "no text once its markup and page furniture are dropped"),)


def test_new_metadata_for_a_page_stored_as_its_source_names_no_parsed_from(
    store: Store, store_location: Location
) -> None:
    store.ingest([page()], parse=legacy_parse)
    retitled = DocumentInput(
        "account/reset", PAGE, title="Reset your password", format="html", metadata={"team": "accounts"}
    )
    store.ingest([retitled])
    assert json.loads(stored_row(store_location, "account/reset")[3]) == {"team": "accounts"}
