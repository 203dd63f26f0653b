"""Unit vectors in the store: embedded once per version inside the ingest, kept with each generation,
checked against the configured embedder, and used by hybrid recall."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evidence_loop.tools.errors import EmbedderError, IndexStateError
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.store import vectors
from evidence_loop.tools.store.folder import Store, gen_dir
from evidence_loop.tools.types import DocumentInput
from tests.fake_embedder import FakeEmbedder

WIFI = DocumentInput("wifi", "Connecting\nOpen Settings and choose the wifi network.\nEnter the password.")
REFUND = DocumentInput("refund", "Refunds\nA refund is paid within seven days of the return.")


def _open(path: Path, embedder: FakeEmbedder | None, **kwargs: object) -> Store:
    return Store.open(path, create=True, embedder=embedder, **kwargs)  # type: ignore[arg-type]


def test_every_unit_is_embedded_once_and_the_generation_holds_its_rows(tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    with _open(tmp_path / "ix", embedder) as store:
        store.ingest([WIFI, REFUND])
        snapshot = store.snapshot()
        dense = snapshot.dense_index
        assert dense is not None and dense.identity == embedder.identity
        texts = [u.text for u in snapshot._view.units]
        assert sorted(embedder.embedded) == sorted(texts)
        assert np.allclose(dense.matrix, embedder.queries(texts), atol=2e-3)  # float16 on disk
    assert (gen_dir(tmp_path / "ix", 1) / "vectors.npy").is_file()


def test_unchanged_versions_are_not_embedded_again_and_a_new_version_only_itself(tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    with _open(tmp_path / "ix", embedder) as store:
        store.ingest([WIFI, REFUND])
        first = len(embedder.embedded)
        store.ingest([WIFI, REFUND])
        assert len(embedder.embedded) == first
        changed = DocumentInput("refund", "Refunds\nA refund is paid within ten days.", version="2")
        store.ingest([changed])
        assert embedder.embedded[first:] == ["Refunds", "A refund is paid within ten days."]


def test_a_store_reopened_with_its_embedder_loads_the_saved_vectors(tmp_path: Path) -> None:
    with _open(tmp_path / "ix", FakeEmbedder()) as store:
        store.ingest([WIFI, REFUND])
        saved = store.snapshot().dense_index
    again = FakeEmbedder()
    with Store.open(tmp_path / "ix", embedder=again) as store:
        loaded = store.snapshot().dense_index
    assert loaded is not None and saved is not None
    assert np.array_equal(loaded.matrix, saved.matrix) and again.embedded == []


def test_another_embedder_is_refused_with_the_way_out(tmp_path: Path) -> None:
    with _open(tmp_path / "ix", FakeEmbedder("a")) as store:
        store.ingest([WIFI])
    with pytest.raises(
        EmbedderError, match=r"made by fake:a:.*configured embedder is fake:b.*reindex --embeddings"
    ):
        Store.open(tmp_path / "ix", embedder=FakeEmbedder("b"))
    with Store.open(tmp_path / "ix") as store:  # lexical recall reads the same store
        assert store.snapshot().search("password")


def test_reembedding_switches_the_store_to_the_configured_embedder_in_a_new_generation(
    tmp_path: Path,
) -> None:
    with _open(tmp_path / "ix", FakeEmbedder("a")) as store:
        store.ingest([WIFI, REFUND])
    other = FakeEmbedder("b")
    with Store.open(tmp_path / "ix", embedder=other, reembed=True) as store:
        assert store.generation == 2
        dense = store.snapshot().dense_index
        assert dense is not None and dense.identity == other.identity
    with Store.open(tmp_path / "ix", embedder=FakeEmbedder("b")) as store:
        assert store.snapshot().embedder == other.identity


def test_a_lexical_store_asks_for_embeddings_before_hybrid_recall(tmp_path: Path) -> None:
    with _open(tmp_path / "ix", None) as store:
        store.ingest([WIFI])
    with pytest.raises(EmbedderError, match=r"has no unit vectors.*reindex --embeddings"):
        Store.open(tmp_path / "ix", embedder=FakeEmbedder())


def test_an_embedder_failing_mid_ingest_leaves_nothing_written(tmp_path: Path) -> None:
    with _open(tmp_path / "ix", FakeEmbedder()) as store:
        store.ingest([WIFI])
    failing = FakeEmbedder(fail_after=3)
    with Store.open(tmp_path / "ix", embedder=failing) as store:
        with pytest.raises(EmbedderError, match="endpoint is down"):
            store.ingest([REFUND, DocumentInput("more", "Another\nLine one.\nLine two.\nLine three.")])
        assert store.generation == 1 and [d.doc_id for d in store.documents()] == ["wifi"]
        assert not gen_dir(tmp_path / "ix", 2).exists()
    with Store.open(tmp_path / "ix", embedder=FakeEmbedder()) as store:
        dense = store.snapshot().dense_index
        assert dense is not None and dense.size == len(store.snapshot()._view.units)


def test_a_flipped_byte_in_the_vectors_is_damage(tmp_path: Path) -> None:
    with _open(tmp_path / "ix", FakeEmbedder()) as store:
        store.ingest([WIFI])
    path = gen_dir(tmp_path / "ix", 1) / "vectors.npy"
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    path.write_bytes(bytes(data))
    with (
        pytest.raises(IndexStateError, match=r"vectors\.npy"),
        Store.open(tmp_path / "ix", embedder=FakeEmbedder()) as store,
    ):
        store.snapshot()
    with Store.open(tmp_path / "ix", embedder=FakeEmbedder(), rebuild_index=True) as store:
        assert store.snapshot().dense_index is not None


def test_hybrid_recall_finds_by_meaning_what_no_word_of_the_question_matches(tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    with _open(tmp_path / "ix", embedder) as store:
        store.ingest([WIFI, REFUND])
        snapshot = store.snapshot()
        question = "wlan network"  # "wlan" is in no document; the fake folds it into "wifi"
        lexical = snapshot.search(question, 3)
        sims = snapshot.similarities(embedder.queries([question])[0])
        assert sims is not None
        hybrid = snapshot.search(question, 3, similarities=sims)
    assert hybrid[0].unit.text == "Open Settings and choose the wifi network."
    assert all(h.similarity is not None for h in hybrid)
    assert all(h.similarity is None for h in lexical)


def test_hybrid_recall_never_returns_what_the_caller_may_not_read_or_has_seen(tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    staff = DocumentInput("staff", "Staff\nThe wifi password for staff is kestrel.", acl=("staff",))
    with _open(tmp_path / "ix", embedder) as store:
        store.ingest([WIFI, staff])
        snapshot = store.snapshot()
        vector = embedder.queries(["wifi password"])[0]
        sims = snapshot.similarities(vector, ())
        assert sims is not None
        public = snapshot.search("wifi password", 10, similarities=sims)
        assert {h.unit.doc_id for h in public} == {"wifi"}
        seen = {(h.unit.doc_id, h.unit.version, h.unit.ordinal) for h in public[:1]}
        rest = snapshot.search("wifi password", 10, similarities=sims, exclude=seen)
        assert not {(h.unit.doc_id, h.unit.version, h.unit.ordinal) for h in rest} & seen
        staff_sims = snapshot.similarities(vector, ("staff",))
        assert staff_sims is not None
        assert "staff" in {
            h.unit.doc_id
            for h in snapshot.search("wifi password", 10, groups=("staff",), similarities=staff_sims)
        }


def test_a_past_generation_is_rebuilt_with_its_own_vectors(tmp_path: Path) -> None:
    with _open(tmp_path / "ix", FakeEmbedder()) as store:
        store.ingest([WIFI])
        store.ingest([REFUND])
        past = store.snapshot(1)
        assert past.dense_index is not None and past.dense_index.size == len(past._view.units)


def test_a_store_that_embeds_refuses_an_ingest_without_its_embedder(tmp_path: Path) -> None:
    with _open(tmp_path / "ix", FakeEmbedder()) as store:
        store.ingest([WIFI])
    with Store.open(tmp_path / "ix") as store:
        with pytest.raises(
            EmbedderError, match=r"embeds its documents with fake:fake.*no embedder is configured"
        ):
            store.ingest([REFUND])
        assert store.generation == 1


def test_a_delete_made_without_the_embedder_keeps_the_vectors(tmp_path: Path) -> None:
    with _open(tmp_path / "ix", FakeEmbedder()) as store:
        store.ingest([WIFI, REFUND])
    with Store.open(tmp_path / "ix") as store:
        store.delete("refund")
    with Store.open(tmp_path / "ix", embedder=FakeEmbedder()) as store:
        dense = store.snapshot().dense_index
        assert dense is not None and dense.size == len(store.snapshot()._view.units)


def test_reembedding_with_no_embedder_makes_the_store_lexical(tmp_path: Path) -> None:
    with _open(tmp_path / "ix", FakeEmbedder()) as store:
        store.ingest([WIFI])
    with Store.open(tmp_path / "ix", reembed=True) as store:
        store.ingest([REFUND])
        assert store.snapshot().dense_index is None
    assert not (gen_dir(tmp_path / "ix", 3) / "vectors.npy").exists()


def test_units_of_many_versions_embedded_together_are_written_to_each_version_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "EMBED_CHUNK_UNITS", 3)  # chunks that cut across documents
    docs = [
        DocumentInput(f"d{n}", "\n".join(f"Step {k} of guide {n}." for k in range(n + 1))) for n in range(6)
    ]
    embedder = FakeEmbedder()
    with _open(tmp_path / "ix", embedder) as store:
        store.ingest(docs)
        snapshot = store.snapshot()
        dense = snapshot.dense_index
        assert dense is not None
        for doc in docs:
            rows = [i for i, u in enumerate(snapshot._view.units) if u.doc_id == doc.doc_id]
            texts = [snapshot._view.units[i].text for i in rows]
            assert np.allclose(dense.matrix[rows], embedder.queries(texts), atol=2e-3)
    assert embedder.embedded == [u.text for doc in docs for u in parse_document(doc).units]
