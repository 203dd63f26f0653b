"""Seed recall: bilingual BM25 over hit units, ACL and exclusions applied inside retrieval, stable ties."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from evidence_loop.tools.search.index import RecallIndex, top_k
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import DocumentInput, Hit

CORPUS = [
    DocumentInput("refund", "售后说明\n购买后七天内可以申请全额退款。\n超过七天不予退款。"),
    DocumentInput("warranty", "保修说明\nX200 耳机的保修期为两年。\n人为损坏不在保修范围内。"),
    DocumentInput(
        "shipping",
        "Shipping\nOrders ship within 2 business days.\nInternational shipping takes 7 to 14 days.",
    ),
    DocumentInput("internal", "内部流程\n退款 退款 退款：主管审批全额退款。", acl=("staff",)),
]


@pytest.fixture
def snapshot(tmp_path: Path) -> Iterator[Snapshot]:
    with Store.open(tmp_path / "ix", create=True) as store:
        store.ingest(CORPUS)
        yield store.snapshot()


def texts(hits: list[Hit]) -> list[str]:
    return [h.unit.text for h in hits]


def test_a_chinese_query_finds_the_chinese_unit(snapshot: Snapshot) -> None:
    assert texts(snapshot.search("人为损坏保修吗", 1)) == ["人为损坏不在保修范围内。"]


def test_an_english_query_is_stemmed_to_find_the_english_unit(snapshot: Snapshot) -> None:
    hits = snapshot.search("How long do international shipments take?", 1)
    assert texts(hits) == ["International shipping takes 7 to 14 days."]


def test_a_mixed_query_finds_the_unit_with_the_model_number(snapshot: Snapshot) -> None:
    assert texts(snapshot.search("X200 耳机保修期多长", 1)) == ["X200 耳机的保修期为两年。"]


def test_hits_are_ranked_best_first_with_positive_scores(snapshot: Snapshot) -> None:
    hits = snapshot.search("退款 七天", 10)
    assert [h.rank for h in hits] == list(range(len(hits)))
    assert all(a.score >= b.score > 0 for a, b in itertools.pairwise(hits))


def test_a_query_without_index_tokens_finds_nothing(snapshot: Snapshot) -> None:
    assert (snapshot.search("的 了 吗？", 5), snapshot.search("", 5), snapshot.search("zzzz", 5)) == (
        [],
        [],
        [],
    )


def test_a_restricted_unit_is_never_returned_to_a_caller_outside_its_groups(snapshot: Snapshot) -> None:
    hits = snapshot.search("全额退款", 10, groups=("sales",))
    assert "internal" not in {h.unit.doc_id for h in hits}


def test_a_restricted_unit_with_a_higher_score_does_not_displace_a_readable_one(snapshot: Snapshot) -> None:
    staff_top = snapshot.search("全额退款", 1, groups=("staff",))
    public_top = snapshot.search("全额退款", 1)
    assert [h.unit.doc_id for h in staff_top + public_top] == ["internal", "refund"]


def test_k_larger_than_the_corpus_returns_every_matching_unit(snapshot: Snapshot) -> None:
    hits = snapshot.search("退款", 1000)
    assert sorted(h.unit.text for h in hits) == ["购买后七天内可以申请全额退款。", "超过七天不予退款。"]


def test_excluded_units_are_skipped_and_the_next_best_take_their_place(snapshot: Snapshot) -> None:
    first = snapshot.search("退款", 1)[0].unit
    hits = snapshot.search("退款", 1, exclude={(first.doc_id, first.version, first.ordinal)})
    assert len(hits) == 1 and hits[0].unit != first and hits[0].unit.doc_id == "refund"


def test_equal_scores_are_ordered_by_doc_id_then_ordinal(tmp_path: Path) -> None:
    same = "Returns are free.\nReturns are free."
    with Store.open(tmp_path / "ix", create=True) as store:
        store.ingest([DocumentInput("b", same), DocumentInput("a", same)])
        hits = store.snapshot().search("free returns", 3)
    assert [(h.unit.doc_id, h.unit.ordinal) for h in hits] == [("a", 0), ("a", 1), ("b", 0)]


def test_bm25s_prints_nothing_while_ingesting_loading_and_searching(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    with Store.open(tmp_path / "ix", create=True) as store:
        store.ingest(CORPUS)
        store.snapshot().search("退款", 3)
    with Store.open(tmp_path / "ix") as store:
        store.snapshot().search("shipping", 3)
        store.snapshot(1).search("shipping", 3)
    assert capfd.readouterr() == ("", "")


def test_top_k_breaks_ties_by_position_at_the_cut() -> None:
    scores = np.array([1.0, 3.0, 2.0, 3.0, 2.0, 0.0, 2.0], dtype=np.float32)
    positions, values = top_k(scores, 4)
    assert (positions.tolist(), values.tolist()) == ([1, 3, 2, 4], [3.0, 3.0, 2.0, 2.0])


def test_top_k_drops_zero_scores_and_accepts_any_k() -> None:
    scores = np.array([0.0, 0.5, 0.0], dtype=np.float32)
    assert [top_k(scores, k)[0].tolist() for k in (0, 1, 10)] == [[], [1], [1]]


def test_a_row_without_tokens_keeps_positions_aligned_and_never_matches() -> None:
    index = RecallIndex.build([["退款"], [], ["保修"]])
    scores = index.scores(["保修"])
    assert scores is not None and top_k(scores, 3)[0].tolist() == [2]


def test_an_empty_index_scores_nothing() -> None:
    assert RecallIndex.build([]).scores(["退款"]) is None


def test_a_saved_index_loads_with_the_same_scores(tmp_path: Path) -> None:
    built = RecallIndex.build([["退款", "七天"], ["保修"], ["退款"]])
    built.save(tmp_path / "g", {"generation": 3})
    loaded, meta = RecallIndex.load(tmp_path / "g")
    assert meta["generation"] == 3
    assert np.array_equal(built.scores(["退款"]), loaded.scores(["退款"]))  # type: ignore[arg-type]


def test_a_misspelled_english_word_is_read_as_the_known_word_one_edit_away() -> None:
    index = RecallIndex.build([["schedul", "view"], ["cancel", "record"], ["schedul", "record"]])
    assert index.spelled(["shedul", "view", "xyzzyq", "ab"]) == ["schedul", "view", "xyzzyq", "ab"]


def test_a_word_shorter_than_the_typo_length_is_left_as_typed() -> None:
    index = RecallIndex.build([["view", "record"]])
    assert index.spelled(["vew"]) == ["vew"]
    assert index.spelled(["vew"], min_chars=3) == ["view"]
    assert index.spelled(["recrd"], min_chars=6) == ["recrd"]
