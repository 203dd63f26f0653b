"""Recall fusion: CJK bigrams in the recall tokens, passages, and unit scores lifted by their passage's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evidence_loop.tools.errors import IndexStateError
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.search.passages import passage_ids, passage_tokens
from evidence_loop.tools.store.folder import BM25_DIR, PASSAGES_DIR, Store
from evidence_loop.tools.tokenize import cjk_bigrams, index_tokens, recall_tokens
from evidence_loop.tools.types import DocumentInput, Hit

# The same sentence twice: once in a section about returns, once in a section about shipping.
# Its own BM25 score is the same in both places; only the section around it differs.
RETURNS_FIRST_IN_SHIPPING = DocumentInput(
    "a-shipping",
    "# Shipping\n\nParcels leave the warehouse daily.\n\nReturns are free.\n\nTracking links come by mail.\n",
    format="markdown",
)
RETURNS_IN_RETURNS = DocumentInput(
    "b-returns",
    "# Returns\n\nSend returns within 30 days.\n\nReturns are free.\n\nRefunds follow returns in 5 days.\n",
    format="markdown",
)


def where(hits: list[Hit]) -> list[tuple[str, str]]:
    return [(h.unit.doc_id, h.unit.text) for h in hits]


def test_recall_tokens_are_the_index_tokens_followed_by_cjk_bigrams() -> None:
    text = "X200 耳机的保修期"
    assert recall_tokens(text) == [*index_tokens(text), "耳机", "机的", "的保", "保修", "修期"]


def test_a_one_character_cjk_run_is_its_own_bigram() -> None:
    assert cjk_bigrams("A 卡 B 保修") == ["卡", "保修"]


def test_english_text_gets_no_bigrams() -> None:
    assert recall_tokens("Orders ship daily") == index_tokens("Orders ship daily")


def test_bigrams_let_a_chinese_query_match_a_differently_segmented_word(tmp_path: Path) -> None:
    # The segmenter keeps 保修期 whole in the document and cuts 保修 out of the question.
    assert "保修" not in index_tokens("耳机的保修期为两年。")
    with Store.open(tmp_path / "ix", create=True) as store:
        store.ingest([DocumentInput("w", "耳机的保修期为两年。"), DocumentInput("s", "订单当天发货。")])
        hits = store.snapshot().search("保修多久", 5)
    assert where(hits) == [("w", "耳机的保修期为两年。")]


def test_a_leaf_section_is_one_passage_and_a_document_without_headings_is_one() -> None:
    units = [
        *parse_document(RETURNS_IN_RETURNS).units,
        *parse_document(DocumentInput("plain", "One. Two.\nThree.")).units,
    ]
    assert passage_ids(units).tolist() == [0, 0, 0, 0, 1, 1, 1]


def test_a_section_with_subsections_keeps_its_intro_as_its_own_passage() -> None:
    doc = DocumentInput("d", "# A\n\nIntro.\n\n## B\n\nBee.\n\n## C\n\nSea.\n", format="markdown")
    assert passage_ids(parse_document(doc).units).tolist() == [0, 0, 1, 1, 2, 2]


def test_a_long_section_is_cut_into_passages_of_consecutive_units() -> None:
    units = parse_document(DocumentInput("long", "Alpha beta.\nGamma delta.\nEpsilon zeta.")).units
    assert passage_ids(units, max_chars=25).tolist() == [0, 0, 1]


def test_a_passage_holds_the_tokens_of_its_units_in_order() -> None:
    ids = passage_ids(
        parse_document(DocumentInput("d", "# A\n\nOne.\n\n# B\n\nTwo.\n", format="markdown")).units
    )
    assert passage_tokens(ids, [["a"], ["one"], ["b"], ["two"]]) == [["a", "one"], ["b", "two"]]


def test_a_unit_in_a_matching_section_outranks_an_equal_unit_elsewhere(tmp_path: Path) -> None:
    with Store.open(tmp_path / "ix", create=True) as store:
        store.ingest([RETURNS_FIRST_IN_SHIPPING, RETURNS_IN_RETURNS])
        hits = store.snapshot().search("are returns free", 10)
    equal = [h.unit.doc_id for h in hits if h.unit.text == "Returns are free."]
    assert equal == ["b-returns", "a-shipping"]


def test_without_the_passage_weight_equal_units_fall_back_to_corpus_order(tmp_path: Path) -> None:
    with Store.open(tmp_path / "ix", create=True) as store:
        store.ingest([RETURNS_FIRST_IN_SHIPPING, RETURNS_IN_RETURNS])
        hits = store.snapshot().search("are returns free", 10, fusion_weight=0.0)
    equal = [h.unit.doc_id for h in hits if h.unit.text == "Returns are free."]
    assert equal == ["a-shipping", "b-returns"]


def test_a_unit_that_does_not_match_is_not_lifted_in_by_its_passage(tmp_path: Path) -> None:
    with Store.open(tmp_path / "ix", create=True) as store:
        store.ingest([RETURNS_IN_RETURNS])
        hits = store.snapshot().search("free", 10)
    assert where(hits) == [("b-returns", "Returns are free.")]


def test_fused_scores_lie_between_zero_and_one_plus_the_weight(tmp_path: Path) -> None:
    with Store.open(tmp_path / "ix", create=True) as store:
        store.ingest([RETURNS_FIRST_IN_SHIPPING, RETURNS_IN_RETURNS])
        hits = store.snapshot().search("returns", 10, fusion_weight=1.5)
    assert hits[0].score == pytest.approx(1.0 + 1.5)
    assert all(0.0 < h.score <= hits[0].score for h in hits)


def test_a_restricted_passage_neither_displaces_nor_rescales_readable_hits(tmp_path: Path) -> None:
    secret = DocumentInput(
        "c-secret",
        "# Returns\n\nReturns returns returns.\n\nReturns are free.\n",
        format="markdown",
        acl=("staff",),
    )
    with Store.open(tmp_path / "ix", create=True) as store:
        store.ingest([RETURNS_FIRST_IN_SHIPPING, RETURNS_IN_RETURNS])
        public_before = store.snapshot().search("are returns free", 10)
        store.ingest([secret])
        public_after = store.snapshot().search("are returns free", 10, groups=("sales",), fusion_weight=1.5)
        staff = store.snapshot().search("are returns free", 1, groups=("staff",))
    assert [h.unit.doc_id for h in staff] == ["c-secret"]
    assert where(public_after) == where(public_before)
    assert public_after[0].score == pytest.approx(1.0 + 1.5)


def test_a_pinned_generation_rebuilds_its_passages_and_searches_as_it_did_then(tmp_path: Path) -> None:
    def seen(hits: list[Hit]) -> list[tuple[str, int, float]]:
        return [(h.unit.doc_id, h.unit.ordinal, h.score) for h in hits]

    with Store.open(tmp_path / "ix", create=True) as store:
        store.ingest([RETURNS_FIRST_IN_SHIPPING, RETURNS_IN_RETURNS])
        before = seen(store.snapshot().search("are returns free", 10))
        store.ingest([DocumentInput("b-returns", "# Returns\n\nReturns are free.\n", "2", format="markdown")])
        assert seen(store.snapshot().search("are returns free", 10)) != before
    with Store.open(tmp_path / "ix") as store:
        assert seen(store.snapshot(1).search("are returns free", 10)) == before


def test_a_missing_passage_index_is_reported_with_a_rebuild_hint(tmp_path: Path) -> None:
    with Store.open(tmp_path / "ix", create=True) as store:
        store.ingest([RETURNS_IN_RETURNS])
    shutil.rmtree(tmp_path / "ix" / BM25_DIR / "gen-000001" / PASSAGES_DIR)
    with pytest.raises(IndexStateError, match="reindex"), Store.open(tmp_path / "ix") as store:
        store.snapshot()


def test_rebuilding_the_index_restores_the_passage_index(tmp_path: Path) -> None:
    with Store.open(tmp_path / "ix", create=True) as store:
        store.ingest([RETURNS_FIRST_IN_SHIPPING, RETURNS_IN_RETURNS])
        before = where(store.snapshot().search("are returns free", 10))
    shutil.rmtree(tmp_path / "ix" / BM25_DIR / "gen-000001" / PASSAGES_DIR)
    with Store.open(tmp_path / "ix", rebuild_index=True) as store:
        assert where(store.snapshot().search("are returns free", 10)) == before
