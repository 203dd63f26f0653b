"""What keeps a large knowledge base cheap: a loaded snapshot counts its units' tokens without
reading them, and the snapshots that hide documents or read through a write share what their view
says about itself instead of deriving it again for each question."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from evidence_loop.tools.search import snapshot as snapshot_module
from evidence_loop.tools.search.snapshot import fingerprint
from evidence_loop.tools.search.view import ViewFacts
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.store.schema import DB_NAME, read_generation
from evidence_loop.tools.store.views import load_view, read_transaction
from evidence_loop.tools.types import DocumentInput

DOCS = [
    DocumentInput(
        "wifi", "# Wi-Fi\nOpen Settings and choose the wifi network.\n\n---\n\nEnter the password."
    ),
    DocumentInput("refund", "退款说明\n退款将在七个工作日内原路退回。\n。。。\n如有疑问请联系客服。"),
    DocumentInput("staff", "Internal\nThe staff discount is 30 percent.", acl=("staff",)),
    DocumentInput("mixed", "LM-S10 整机保修3年 and the battery 1 year.\n- ok\n- 好"),
]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store.open(tmp_path / "ix", create=True) as opened:
        opened.ingest(DOCS)
    return Store.open(tmp_path / "ix")


def test_a_loaded_view_counts_each_units_tokens_as_the_index_was_built_from_them(tmp_path: Path) -> None:
    with Store.open(tmp_path / "ix", create=True) as store:
        store.ingest(DOCS)
    conn = sqlite3.connect(tmp_path / "ix" / DB_NAME, isolation_level=None)
    with read_transaction(conn):
        generation = read_generation(conn)
        built, tokens = load_view(conn, generation)
        loaded, none = load_view(conn, generation, tokens=False)
    conn.close()
    assert none == [] and 0 in [len(t) for t in tokens]  # a unit without tokens is among them
    assert loaded.unit_tokens.tolist() == [len(t) for t in tokens] == built.unit_tokens.tolist()
    assert loaded.units == built.units


def test_hiding_documents_again_and_again_derives_the_views_facts_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[ViewFacts] = []

    class Counted(ViewFacts):
        def __init__(self, view: object) -> None:
            super().__init__(view)  # type: ignore[arg-type]
            made.append(self)

    monkeypatch.setattr(snapshot_module, "ViewFacts", Counted)
    base = store.snapshot()
    before = len(made)
    for doc in DOCS * 5:
        hidden = base.hiding([doc.doc_id])
        hidden.search("password")
        hidden.position("wifi", "1", 0)
    assert len(made) == before
    store.close()


def test_a_snapshot_hiding_a_document_reads_as_a_corpus_without_it(store: Store) -> None:
    base = store.snapshot()
    hidden = base.hiding(["wifi"])
    kept = [d for d in base._view.docs if d.doc_id not in ("wifi", "staff")]
    assert hidden.readable_fingerprint(()) == fingerprint(kept)
    assert base.readable_fingerprint(()) == fingerprint([d for d in base._view.docs if d.doc_id != "staff"])
    assert hidden.fingerprint == base.fingerprint
    assert not hidden.search("password") and base.search("password")
    assert hidden.position("wifi", "1", 1) == base.position("wifi", "1", 1) is not None
    assert np.array_equal(base.unit_index.scores(["password"]), hidden.unit_index.scores(["password"]))
    store.close()
