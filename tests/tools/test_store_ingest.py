"""The store's ingest rules: versions, no-ops, clashes, replace, delete, skipped and oversize documents."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.tools.errors import DocumentTooLargeError, InputError, NotFoundError, VersionClashError
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.store.location import Location, open_store
from evidence_loop.tools.types import DocumentInput

REFUND_V1 = "售后说明\n购买后七天内可以申请全额退款。"
REFUND_V2 = "售后说明\n购买后十四天内可以申请全额退款。"
SHIPPING = "Shipping\nOrders ship within 2 business days."


@pytest.fixture
def store(store_location: Location) -> Iterator[Store]:
    """The same rules on each backend: an index folder, a PostgreSQL database."""
    with open_store(store_location, create=True) as opened:
        yield opened


def units_of(store: Store, query: str) -> list[tuple[str, str, str]]:
    return [(h.unit.doc_id, h.unit.version, h.unit.text) for h in store.snapshot().search(query, 10)]


def test_a_new_store_is_empty_at_generation_zero(store: Store) -> None:
    assert (store.generation, store.documents(), store.snapshot().search("退款")) == (0, [], [])


def test_new_documents_are_added_and_searchable(store: Store) -> None:
    batch = [DocumentInput("refund", REFUND_V1), DocumentInput("ship", SHIPPING)]
    report = store.ingest(batch)
    parsed_units = sum(len(parse_document(doc).units) for doc in batch)
    assert (report.documents, report.versions_added, report.units, report.generation) == (
        2,
        2,
        parsed_units,
        1,
    )
    assert units_of(store, "全额退款") == [("refund", "1", "购买后七天内可以申请全额退款。")]


def test_a_new_version_becomes_current_and_the_old_stays_readable(store: Store) -> None:
    store.ingest([DocumentInput("refund", REFUND_V1, version="1")])
    report = store.ingest([DocumentInput("refund", REFUND_V2, version="2")])
    snapshot = store.snapshot()
    assert (report.documents, report.versions_added) == (1, 1)
    assert snapshot.current_versions() == {"refund": "2"}
    assert [h.unit.version for h in snapshot.search("全额退款")] == ["2"]
    assert snapshot.parsed("refund", "1").text == REFUND_V1


def test_documents_lists_every_stored_version_of_a_current_document(store: Store) -> None:
    store.ingest([DocumentInput("refund", REFUND_V1, version="1", title="退款", acl=("b", "a", "b"))])
    store.ingest([DocumentInput("refund", REFUND_V2, version="2", title="退款 v2", acl=("a", "b"))])
    [info] = store.documents()
    units = len(parse_document(DocumentInput("refund", REFUND_V2)).units)
    assert (info.doc_id, info.title, info.current_version, info.versions, info.units, info.acl) == (
        "refund",
        "退款 v2",
        "2",
        ("1", "2"),
        units,
        ("a", "b"),
    )


def test_the_same_version_with_the_same_text_is_a_no_op(store: Store) -> None:
    store.ingest([DocumentInput("refund", REFUND_V1)])
    report = store.ingest([DocumentInput("refund", REFUND_V1)])
    assert (report.documents, report.versions_added, report.unchanged, report.generation) == (0, 0, 1, 1)
    assert store.generation == 1


def test_the_same_version_label_given_with_other_text_clashes_and_writes_nothing(store: Store) -> None:
    store.ingest([DocumentInput("refund", REFUND_V1)])
    with pytest.raises(VersionClashError, match="refund"):
        store.ingest([DocumentInput("ship", SHIPPING), DocumentInput("refund", REFUND_V2, version="1")])
    assert [d.doc_id for d in store.documents()] == ["refund"]
    assert store.generation == 1
    assert store.snapshot().parsed("refund", "1").text == REFUND_V1


def test_replace_rewrites_the_stored_version(store: Store) -> None:
    store.ingest([DocumentInput("refund", REFUND_V1)])
    report = store.ingest([DocumentInput("refund", REFUND_V2)], replace=True)
    assert (report.documents, report.versions_added) == (1, 1)
    assert store.snapshot().parsed("refund", "1").text == REFUND_V2
    assert units_of(store, "十四天") == [("refund", "1", "购买后十四天内可以申请全额退款。")]
    assert units_of(store, "七天") == []


def test_a_changed_acl_alone_updates_the_version_in_place(store: Store) -> None:
    store.ingest([DocumentInput("refund", REFUND_V1)])
    report = store.ingest([DocumentInput("refund", REFUND_V1, acl=("staff",))])
    assert (report.documents, report.versions_added, report.unchanged) == (1, 0, 0)
    assert units_of(store, "全额退款") == []
    assert store.snapshot().acl("refund", "1") == ("staff",)


def test_delete_stops_serving_a_document_but_keeps_its_versions_readable(store: Store) -> None:
    store.ingest([DocumentInput("refund", REFUND_V1), DocumentInput("ship", SHIPPING)])
    store.delete("refund")
    snapshot = store.snapshot()
    assert [d.doc_id for d in store.documents()] == ["ship"]
    assert snapshot.search("全额退款") == []
    assert snapshot.parsed("refund", "1").text == REFUND_V1


def test_deleting_an_unknown_or_deleted_document_is_not_found(store: Store) -> None:
    store.ingest([DocumentInput("refund", REFUND_V1)])
    store.delete("refund")
    with pytest.raises(NotFoundError):
        store.delete("refund")
    with pytest.raises(NotFoundError):
        store.delete("never-there")


def test_a_deleted_version_ingested_again_is_live_without_rewriting_its_past(store: Store) -> None:
    store.ingest([DocumentInput("refund", REFUND_V1)])
    store.delete("refund")
    store.ingest([DocumentInput("refund", REFUND_V1)])
    live = [dict(store.snapshot(g).current_versions()) for g in (1, 2, 3)]
    assert live == [{"refund": "1"}, {}, {"refund": "1"}]


def test_an_empty_document_is_skipped_with_a_reason(store: Store) -> None:
    report = store.ingest([DocumentInput("blank", " \n\t "), DocumentInput("ship", SHIPPING)])
    assert report.skipped == (("blank", "empty or whitespace-only text"),)
    assert [d.doc_id for d in store.documents()] == ["ship"]


def test_an_oversize_document_aborts_the_whole_batch(store: Store, store_location: Location) -> None:
    store.ingest([DocumentInput("refund", REFUND_V1)])
    with pytest.raises(DocumentTooLargeError, match="big"):
        store.ingest([DocumentInput("ship", SHIPPING), DocumentInput("big", "长" * 40)], max_bytes=100)
    assert ([d.doc_id for d in store.documents()], store.generation) == (["refund"], 1)
    if isinstance(store_location, Path):
        assert sorted(p.name for p in (store_location / "bm25").iterdir()) == ["gen-000001"]


def test_the_size_limit_counts_utf8_bytes_not_characters(store: Store) -> None:
    with pytest.raises(DocumentTooLargeError):
        store.ingest([DocumentInput("zh", "长" * 34)], max_bytes=100)  # 34 characters, 102 bytes


def test_progress_reports_documents_done_so_far(store: Store) -> None:
    seen: list[int] = []
    store.ingest([DocumentInput(f"d{i}", SHIPPING) for i in range(3)], progress=seen.append)
    assert seen == [1, 2, 3]


def test_a_later_line_of_a_batch_supersedes_an_earlier_one(store: Store) -> None:
    report = store.ingest([DocumentInput("refund", REFUND_V1, "1"), DocumentInput("refund", REFUND_V2, "2")])
    assert (report.versions_added, store.snapshot().current_versions()) == (2, {"refund": "2"})
    assert store.documents()[0].versions == ("1", "2")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_nan_or_an_infinity_in_metadata_is_refused_naming_the_field(store: Store, value: float) -> None:
    doc = DocumentInput("odd", "The warranty is one year.", metadata={"limits": {"max": [1, value]}})

    with pytest.raises(InputError, match=r"metadata field 'limits\.max\[1\]' is (nan|inf|-inf)"):
        store.ingest([doc])

    assert store.documents() == []
