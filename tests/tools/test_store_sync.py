"""A store kept in sync with its sources: version labels, history, sources, prune and dry runs.

Every rule runs on both backends (an index folder, a PostgreSQL database: ``store_location``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from evidence_loop.tools.errors import NotFoundError, VersionClashError, WriteRefusedError
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.store.guard import WriteTarget
from evidence_loop.tools.store.labels import next_label
from evidence_loop.tools.store.location import Location, open_store
from evidence_loop.tools.types import DocumentInput
from tests.fake_embedder import FakeEmbedder

V1 = "退款说明\n购买后七天内可以申请全额退款。"
V2 = "退款说明\n购买后十四天内可以申请全额退款。"
SHIP = "Shipping\nOrders ship within two business days."
KB = "/srv/kb"


@pytest.fixture
def store(store_location: Location) -> Iterator[Store]:
    with open_store(store_location, create=True) as opened:
        yield opened


def current(store: Store) -> dict[str, str]:
    return dict(store.snapshot().current_versions())


def versions(store: Store, doc_id: str) -> tuple[str, ...]:
    return next(d.versions for d in store.documents() if d.doc_id == doc_id)


# --- labels ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["1"], "2"),
        (["1", "2", "7"], "8"),
        (["2024-10"], "2"),
        (["draft", "2"], "3"),
        (["v1", "2"], "3"),
        (["a", "b"], "3"),
        (["a", "3"], "4"),
        (["007"], "8"),
    ],
)
def test_the_next_label_is_one_more_than_the_largest_integer_label(labels: list[str], expected: str) -> None:
    assert next_label(labels) == expected


def test_the_next_label_skips_a_label_already_taken() -> None:
    assert next_label(["x", "2"]) == "3"
    assert next_label(["2", "y"]) == "3"
    assert next_label(["p", "q", "3"]) == "4"


def test_a_document_without_a_label_is_stored_as_version_1(store: Store) -> None:
    report = store.ingest([DocumentInput("refund", V1)])
    assert (report.outcomes, current(store)) == ((("refund", "1", "added"),), {"refund": "1"})


def test_an_unchanged_document_without_a_label_is_left_alone(store: Store) -> None:
    store.ingest([DocumentInput("refund", V1), DocumentInput("ship", SHIP)])
    report = store.ingest([DocumentInput("refund", V1), DocumentInput("ship", SHIP)])
    assert (report.unchanged, report.versions_added, report.generation) == (2, 0, 1)


def test_a_changed_text_without_a_label_becomes_the_next_version_and_the_old_stays(store: Store) -> None:
    store.ingest([DocumentInput("refund", V1)])
    report = store.ingest([DocumentInput("refund", V2)])
    assert (report.outcomes, current(store)) == ((("refund", "2", "changed"),), {"refund": "2"})
    assert store.snapshot().parsed("refund", "1").text == V1


def test_a_text_put_back_brings_its_old_version_back_without_storing_it_again(store: Store) -> None:
    store.ingest([DocumentInput("refund", V1)])
    store.ingest([DocumentInput("refund", V2)])
    report = store.ingest([DocumentInput("refund", V1)])
    assert (report.outcomes, report.versions_added) == ((("refund", "1", "changed"),), 0)
    assert (current(store), versions(store, "refund")) == ({"refund": "1"}, ("1", "2"))


def test_a_changed_text_after_a_named_label_gets_the_next_integer(store: Store) -> None:
    store.ingest([DocumentInput("refund", V1, version="2024-10")])
    store.ingest([DocumentInput("refund", V2)])
    assert current(store) == {"refund": "2"}


def test_a_label_given_to_an_unchanged_text_keeps_the_label_it_has(store: Store) -> None:
    store.ingest([DocumentInput("refund", V1), DocumentInput("ship", SHIP)])
    report = store.ingest(
        [DocumentInput("refund", V2, version="2"), DocumentInput("ship", SHIP, version="2")]
    )
    assert report.outcomes == (("refund", "2", "changed"), ("ship", "1", "unchanged"))
    assert versions(store, "ship") == ("1",)


def test_a_label_given_with_another_text_than_it_names_clashes(store: Store) -> None:
    store.ingest([DocumentInput("refund", V1)])
    with pytest.raises(VersionClashError, match="leave the version out"):
        store.ingest([DocumentInput("refund", V2, version="1")])


def test_replace_without_a_label_rewrites_the_current_version(store: Store) -> None:
    store.ingest([DocumentInput("refund", V1)])
    store.ingest([DocumentInput("refund", V2)], replace=True)
    assert (current(store), versions(store, "refund")) == ({"refund": "1"}, ("1",))
    assert store.snapshot().parsed("refund", "1").text == V2


# --- a batch that names a document more than once ------------------------------------------------------


def test_a_batch_of_two_versions_keeps_the_first_as_history_and_serves_the_last(store: Store) -> None:
    batch = [DocumentInput("refund", V1, version="1"), DocumentInput("refund", V2, version="2")]
    store.ingest(batch)
    again = store.ingest(batch)
    assert (again.added, again.changed, again.versions_added, again.generation) == (0, 0, 0, 1)
    assert current(store) == {"refund": "2"}


def test_a_batch_naming_a_new_document_twice_counts_it_once_as_added(store: Store) -> None:
    report = store.ingest(
        [DocumentInput("refund", V1, version="1"), DocumentInput("refund", V2, version="2")]
    )
    assert (report.added, report.changed, report.versions_added) == (1, 0, 2)
    assert report.outcomes == (("refund", "2", "added"),)


# --- sources and prune ---------------------------------------------------------------------------------


def test_prune_retires_the_documents_of_the_source_that_are_gone_and_keeps_their_versions(
    store: Store,
) -> None:
    store.ingest(
        [DocumentInput("refund", V1), DocumentInput("ship", SHIP)], sources={"refund": KB, "ship": KB}
    )
    report = store.ingest([DocumentInput("refund", V1)], sources={"refund": KB}, prune=[KB])
    assert (report.outcomes[-1], report.retired, current(store)) == (
        ("ship", "1", "retired"),
        1,
        {"refund": "1"},
    )
    assert store.snapshot().search("ship") == []
    assert store.snapshot().parsed("ship", "1").text == SHIP


def test_prune_leaves_the_documents_of_other_sources(store: Store) -> None:
    store.ingest([DocumentInput("refund", V1)], sources={"refund": KB})
    store.ingest([DocumentInput("ship", SHIP)], sources={"ship": "/srv/other"})
    store.ingest([], sources={}, prune=[KB])
    assert current(store) == {"ship": "1"}


def test_prune_leaves_documents_written_without_a_source(store: Store) -> None:
    store.ingest([DocumentInput("ship", SHIP)])
    report = store.ingest([DocumentInput("refund", V1)], sources={"refund": KB}, prune=[KB])
    assert (report.retired, current(store)) == (0, {"refund": "1", "ship": "1"})


def test_a_document_seen_by_a_later_source_belongs_to_that_source(store: Store) -> None:
    store.ingest([DocumentInput("ship", SHIP)], sources={"ship": "/srv/old"})
    store.ingest([DocumentInput("ship", SHIP)], sources={"ship": KB})
    store.ingest([], prune=["/srv/old"])
    assert current(store) == {"ship": "1"}


def test_a_retired_document_synced_again_is_live_again_with_its_version(store: Store) -> None:
    store.ingest([DocumentInput("ship", SHIP)], sources={"ship": KB})
    store.ingest([], prune=[KB])
    report = store.ingest([DocumentInput("ship", SHIP)], sources={"ship": KB}, prune=[KB])
    assert (report.outcomes, report.versions_added, current(store)) == (
        (("ship", "1", "added"),),
        0,
        {"ship": "1"},
    )


def test_prune_leaves_a_document_the_writers_guard_finds_hidden_from_it(store: Store) -> None:
    store.ingest([DocumentInput("ship", SHIP, acl=("exec",))], sources={"ship": KB})

    def hidden(target: WriteTarget) -> None:
        if target.live_acl == ("exec",):
            raise NotFoundError(f"no document {target.doc_id!r} in the store")

    report = store.ingest([], prune=[KB], guard=hidden)
    assert (report.retired, current(store)) == (0, {"ship": "1"})


def test_prune_of_a_document_the_writer_may_not_write_refuses_the_whole_batch(store: Store) -> None:
    store.ingest([DocumentInput("ship", SHIP, acl=("exec",))], sources={"ship": KB})

    def refuse(target: WriteTarget) -> None:
        if target.new_acl is None:
            raise WriteRefusedError("no")

    with pytest.raises(WriteRefusedError):
        store.ingest([DocumentInput("refund", V1)], sources={"refund": KB}, prune=[KB], guard=refuse)
    assert current(store) == {"ship": "1"}


# --- dry runs ------------------------------------------------------------------------------------------


def test_a_dry_run_says_what_would_change_and_writes_nothing(store: Store) -> None:
    store.ingest(
        [DocumentInput("refund", V1), DocumentInput("ship", SHIP)], sources={"refund": KB, "ship": KB}
    )
    before = (store.generation, store.documents(), store.snapshot().fingerprint)
    report = store.ingest(
        [DocumentInput("refund", V2), DocumentInput("new", SHIP + " New.")],
        sources={"refund": KB, "new": KB},
        prune=[KB],
        dry_run=True,
    )
    assert report.outcomes == (("refund", "2", "changed"), ("new", "1", "added"), ("ship", "1", "retired"))
    assert (report.dry_run, report.generation, report.embedded) == (True, 1, 0)
    with open_store(store_location_of(store)) as reopened:
        assert (reopened.generation, reopened.documents(), reopened.snapshot().fingerprint) == before


def store_location_of(store: Store) -> Location:
    url = getattr(store, "_url", None)
    return url if isinstance(url, str) else store._folder


# --- what is embedded ----------------------------------------------------------------------------------


def test_a_sync_embeds_the_units_of_the_changed_document_only(store_location: Location) -> None:
    docs = [DocumentInput(f"doc-{i}", f"Topic {i}\nThe answer to question {i} is {i}.") for i in range(5)]
    embedder = FakeEmbedder()
    with open_store(store_location, create=True, embedder=embedder) as store:
        store.ingest(docs)
        embedder.embedded.clear()
        edited = DocumentInput("doc-3", "Topic 3\nThe answer to question 3 is now three.\nA new line.")
        report = store.ingest([*docs[:3], edited, docs[4]])
    changed_units = [u.text for u in parse_document(edited).units]
    assert (embedder.embedded, report.embedded, report.versions_added) == (
        changed_units,
        len(changed_units),
        1,
    )


PAGE = "<html><body><main><h1>Returns</h1><p>Returns are free within 30 days.</p></main></body></html>"


def test_an_html_page_synced_again_keeps_its_version_and_an_edit_makes_the_next(store: Store) -> None:
    store.ingest([DocumentInput("returns", PAGE, format="html")])
    again = store.ingest([DocumentInput("returns", PAGE, format="html")])
    edited = store.ingest([DocumentInput("returns", PAGE.replace("30", "14"), format="html")])
    assert (again.outcomes, again.generation) == ((("returns", "1", "unchanged"),), 1)
    assert edited.outcomes == (("returns", "2", "changed"),)
