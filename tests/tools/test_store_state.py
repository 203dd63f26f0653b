"""The store on disk: damage is reported with a hint, a kill leaves the previous state, snapshots hold."""

from __future__ import annotations

import shutil
import signal
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest

from evidence_loop.tools.errors import IndexStateError, NotFoundError
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import DocFormat, DocumentInput
from tests.damage_support import killed_at

CORPUS = [
    DocumentInput("refund", "售后说明\n购买后七天内可以申请全额退款。\n超过七天不予退款。", title="退款"),
    DocumentInput("ship", "Shipping\nOrders ship within 2 business days.\nInternational orders take longer."),
]
QUERY = "七天 退款 shipping"


def make_store(folder: Path) -> list[tuple[str, int, float]]:
    """A store at generation 1 holding CORPUS; returns what QUERY finds there."""
    with Store.open(folder, create=True) as store:
        store.ingest(CORPUS)
        return found(store)


def found(store: Store, generation: int | None = None) -> list[tuple[str, int, float]]:
    return [(h.unit.doc_id, h.unit.ordinal, h.score) for h in store.snapshot(generation).search(QUERY, 10)]


def test_opening_a_missing_folder_says_how_to_create_one(tmp_path: Path) -> None:
    with pytest.raises(IndexStateError, match=r"no index at .*evloop ingest PATH --index"):
        Store.open(tmp_path / "nowhere")


def test_create_on_an_existing_store_opens_it_as_it_is(tmp_path: Path) -> None:
    before = make_store(tmp_path / "ix")
    with Store.open(tmp_path / "ix", create=True) as store:
        assert (store.generation, found(store)) == (1, before)


def test_a_reopened_store_answers_from_its_saved_index_as_before(tmp_path: Path) -> None:
    before = make_store(tmp_path / "ix")
    with Store.open(tmp_path / "ix") as store:
        assert found(store) == before


def test_a_corrupt_database_is_reported_with_a_rebuild_hint(tmp_path: Path) -> None:
    make_store(tmp_path / "ix")
    for name in ("store.sqlite3-wal", "store.sqlite3-shm"):
        (tmp_path / "ix" / name).unlink(missing_ok=True)
    (tmp_path / "ix" / "store.sqlite3").write_bytes(b"this is not a database" * 100)
    with pytest.raises(IndexStateError, match="ingest again"):
        Store.open(tmp_path / "ix")


def test_a_database_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    make_store(tmp_path / "ix")
    with closing(sqlite3.connect(tmp_path / "ix" / "store.sqlite3")) as conn, conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(IndexStateError, match=r"schema version 99.*ingest again"):
        Store.open(tmp_path / "ix")


def test_a_missing_index_folder_is_reported_with_a_rebuild_hint(tmp_path: Path) -> None:
    make_store(tmp_path / "ix")
    shutil.rmtree(tmp_path / "ix" / "bm25" / "gen-000001")
    with pytest.raises(IndexStateError, match="reindex"):
        Store.open(tmp_path / "ix")


def test_a_damaged_index_file_is_reported_with_a_rebuild_hint(tmp_path: Path) -> None:
    make_store(tmp_path / "ix")
    (tmp_path / "ix" / "bm25" / "gen-000001" / "data.csc.index.npy").unlink()
    with pytest.raises(IndexStateError, match="reindex"), Store.open(tmp_path / "ix") as store:
        store.snapshot()


def test_rebuild_index_restores_the_same_answers_from_stored_tokens(tmp_path: Path) -> None:
    before = make_store(tmp_path / "ix")
    shutil.rmtree(tmp_path / "ix" / "bm25")
    with Store.open(tmp_path / "ix", rebuild_index=True) as store:
        assert found(store) == before
    with Store.open(tmp_path / "ix") as store:
        assert found(store) == before


def test_opening_removes_index_folders_of_other_generations(tmp_path: Path) -> None:
    make_store(tmp_path / "ix")
    (tmp_path / "ix" / "bm25" / "gen-000000").mkdir()
    (tmp_path / "ix" / "bm25" / "gen-000007").mkdir()
    Store.open(tmp_path / "ix").close()
    assert [p.name for p in (tmp_path / "ix" / "bm25").iterdir()] == ["gen-000001"]


KILLED_INGEST = """
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import DocumentInput
with Store.open(sys.argv[1], checkpoint=kill_at(sys.argv[2])) as store:
    store.ingest([
        DocumentInput("fresh", "全新的文档。\\n第二句话。"),
        DocumentInput("refund", "售后说明\\n购买后三十天内可以申请全额退款。", version="2"),
    ])
"""


def ingest_and_die(folder: Path, stage: str) -> int:
    return killed_at(stage, KILLED_INGEST, folder)


def stored_format(value: str) -> DocFormat:
    assert value in ("text", "markdown", "html")
    return value  # type: ignore[return-value]


def half_written(folder: Path) -> list[str]:
    """Versions whose stored units differ from what parsing their text gives, and dangling rows."""
    with closing(sqlite3.connect(folder / "store.sqlite3")) as conn:
        problems = [f"foreign key: {row}" for row in conn.execute("PRAGMA foreign_key_check")]
        for doc_id, version, text, fmt in conn.execute("SELECT doc_id, version, text, format FROM versions"):
            expected = len(
                parse_document(DocumentInput(doc_id, text, version, format=stored_format(fmt))).units
            )
            stored = conn.execute(
                "SELECT count(*) FROM units WHERE doc_id = ? AND version = ?", (doc_id, version)
            ).fetchone()[0]
            if stored != expected:
                problems.append(f"{doc_id}@{version}: {stored} of {expected} units")
    return problems


@pytest.mark.parametrize("stage", ["rows", "index"])
def test_a_kill_before_commit_leaves_the_previous_state_intact(tmp_path: Path, stage: str) -> None:
    before = make_store(tmp_path / "ix")
    assert ingest_and_die(tmp_path / "ix", stage) == -signal.SIGKILL
    with Store.open(tmp_path / "ix") as store:
        assert (store.generation, found(store)) == (1, before)
        assert dict(store.snapshot().current_versions()) == {"refund": "1", "ship": "1"}
    assert half_written(tmp_path / "ix") == []
    assert [p.name for p in (tmp_path / "ix" / "bm25").iterdir()] == ["gen-000001"]


def test_a_kill_right_after_commit_keeps_the_new_state(tmp_path: Path) -> None:
    make_store(tmp_path / "ix")
    assert ingest_and_die(tmp_path / "ix", "commit") == -signal.SIGKILL
    with Store.open(tmp_path / "ix") as store:
        current = dict(store.snapshot().current_versions())
        assert (store.generation, current) == (2, {"fresh": "1", "refund": "2", "ship": "1"})
    assert half_written(tmp_path / "ix") == []
    assert [p.name for p in (tmp_path / "ix" / "bm25").iterdir()] == ["gen-000002"]


def test_the_checkpoint_is_told_each_stage_of_a_write_in_order(tmp_path: Path) -> None:
    make_store(tmp_path / "ix")
    stages: list[str] = []
    with Store.open(tmp_path / "ix", checkpoint=stages.append) as store:
        store.ingest([DocumentInput("fresh", "全新的文档。")])
        store.delete("fresh")
    assert stages == ["rows", "index", "commit", "index", "commit"]


def test_a_snapshot_taken_before_an_ingest_keeps_answering_from_its_generation(tmp_path: Path) -> None:
    with Store.open(tmp_path / "ix", create=True) as store:
        store.ingest(CORPUS)
        before = store.snapshot()
        answer = before.search(QUERY)
        store.ingest([DocumentInput("refund", "售后说明\n购买后三十天内可以申请全额退款。", version="2")])
        assert (before.generation, dict(before.current_versions()), before.search(QUERY)) == (
            1,
            {"refund": "1", "ship": "1"},
            answer,
        )
        assert store.snapshot().current_versions()["refund"] == "2"


def test_readers_keep_the_previous_generation_while_an_ingest_is_under_way(tmp_path: Path) -> None:
    before = make_store(tmp_path / "ix")
    reached, release = threading.Event(), threading.Event()

    def pause(done: int) -> None:
        reached.set()
        release.wait(10)

    with Store.open(tmp_path / "ix") as store:
        batch = [DocumentInput("more", "退款 七天 shipping。")]
        writer = threading.Thread(target=store.ingest, args=(batch,), kwargs={"progress": pause})
        writer.start()
        assert reached.wait(10)
        during = (store.snapshot().generation, found(store), [d.doc_id for d in store.documents()])
        release.set()
        writer.join(10)
        assert during == (1, before, ["refund", "ship"])
        assert store.snapshot().generation == 2


def test_a_past_generation_searches_exactly_as_it_did_then(tmp_path: Path) -> None:
    before = make_store(tmp_path / "ix")
    with Store.open(tmp_path / "ix") as store:
        store.ingest([DocumentInput("refund", "售后说明\n购买后三十天内可以申请全额退款。", version="2")])
        store.ingest([DocumentInput("more", "退款 退款 七天。\nMore shipping notes.")])
        assert found(store) != before
        assert found(store, generation=1) == before


def test_a_generation_not_committed_is_not_found(tmp_path: Path) -> None:
    make_store(tmp_path / "ix")
    with Store.open(tmp_path / "ix") as store, pytest.raises(NotFoundError):
        store.snapshot(5)


def test_refresh_follows_a_generation_committed_by_another_store_object(tmp_path: Path) -> None:
    make_store(tmp_path / "ix")
    with Store.open(tmp_path / "ix") as reader, Store.open(tmp_path / "ix") as writer:
        old = reader.snapshot()
        writer.ingest([DocumentInput("more", "More shipping notes.")])
        assert (reader.refresh(), reader.refresh()) == (True, False)
        assert (
            old.generation,
            reader.snapshot().generation,
            "more" in reader.snapshot().current_versions(),
        ) == (
            1,
            2,
            True,
        )


def test_a_stale_store_object_still_answers_after_the_writer_removed_its_folder(tmp_path: Path) -> None:
    before = make_store(tmp_path / "ix")
    with Store.open(tmp_path / "ix") as reader, Store.open(tmp_path / "ix") as writer:
        writer.ingest([DocumentInput("more", "More shipping notes.")])
        assert not (tmp_path / "ix" / "bm25" / "gen-000001").exists()
        assert found(reader) == before
