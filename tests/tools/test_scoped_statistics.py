"""Statistics over what a caller may read: spelling, document frequencies, BM25 scores, term weights
and the fingerprint are those of a corpus without the documents it may not read, to the bit."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.search.index import RecallIndex, Rows
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.tokenize import recall_tokens
from evidence_loop.tools.types import DocumentInput

KESTREL = DocumentInput(
    "refund-approvals-staff",
    "# Refund approvals\n\n## Who approves\n\nRefunds above 2,000 yuan are approved by the Kestrel desk. "
    "Kestrel reviews each request within two working days.\n",
    title="Refund approvals",
    format="markdown",
    acl=("staff",),
)
QUERIES = (
    "who approves refunds?",
    "How long is the warranty of the LM-X200 tablet?",
    "员工购买学习设备打几折？",
    "LM-S10 整机保修多久？",
    "满多少元可以免费配送？",
    "Kestrel reviews each request",
)


def public(docs: Sequence[DocumentInput]) -> list[DocumentInput]:
    return [d for d in docs if not d.acl]


def open_store(folder: Path, docs: Sequence[DocumentInput]) -> Store:
    store = Store.open(folder, create=True)
    store.ingest(docs)
    return store


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Snapshot, Snapshot]]:
    """The sample help centre with its staff pages and a staff page naming Kestrel, and without them."""
    docs = [*load_sample_kb(include_optional=True), KESTREL]
    folder = tmp_path_factory.mktemp("scoped")
    with open_store(folder / "all", docs) as everything, open_store(folder / "public", public(docs)) as only:
        yield everything.snapshot(), only.snapshot()


def rows_of(token_lists: Sequence[Sequence[str]], keep: Sequence[bool]) -> Rows:
    lengths = np.array([max(len(t), 1) for t in token_lists], dtype=np.int64)
    return Rows.of(np.array(keep, dtype=np.bool_), lengths)


def sample_unit_tokens() -> list[list[str]]:
    """The BM25 tokens of every unit of the sample help centre."""
    return [recall_tokens(u.text) for d in load_sample_kb() for u in parse_document(d).units]


def test_scores_over_some_rows_are_those_of_an_index_built_over_them_alone() -> None:
    units = sample_unit_tokens()
    keep = [i % 3 != 0 for i in range(len(units))]
    whole, alone = (
        RecallIndex.build(units),
        RecallIndex.build([t for t, k in zip(units, keep, strict=True) if k]),
    )
    rows = rows_of(units, keep)
    words = sorted({w for t in units for w in t})

    differ = []
    for word in words:
        scored, expected = whole.scores([word], rows), alone.scores([word])
        got = scored[rows.keep] if scored is not None else None
        if (got is None) != (expected is None) or (got is not None and not np.array_equal(got, expected)):
            differ.append(word)
    assert (len(words) > 500, differ) == (True, [])


def test_scores_over_some_rows_are_zero_elsewhere_and_sum_several_tokens_as_bm25s_does() -> None:
    units = [["refund", "approv", "refund"], ["approv", "desk"], ["refund"], [], ["desk", "desk", "approv"]]
    keep = [True, False, True, True, True]
    whole, alone = (
        RecallIndex.build(units),
        RecallIndex.build([u for u, k in zip(units, keep, strict=True) if k]),
    )

    scored = whole.scores(["approv", "refund", "approv"], rows_of(units, keep))

    assert scored is not None and scored[1] == 0.0
    assert np.array_equal(scored[[0, 2, 3, 4]], alone.scores(["approv", "refund", "approv"]))  # type: ignore[arg-type]


def test_a_word_only_hidden_rows_hold_is_unknown_and_scores_nothing() -> None:
    units = [["kestrel", "desk"], ["refund", "desk"]]
    index, rows = RecallIndex.build(units), rows_of(units, [False, True])

    assert (
        index.knows("kestrel", rows),
        index.doc_freq("kestrel", rows),
        index.scores(["kestrel"], rows),
    ) == (
        False,
        0,
        None,
    )


def test_spelling_never_proposes_a_word_only_hidden_rows_hold() -> None:
    units = [["kestrel"], ["refund"], ["kestrels"]]
    index = RecallIndex.build(units)

    assert (
        index.spelled(["kestrex"]),
        index.spelled(["kestrex"], rows_of(units, [False, True, True])),
        index.spelled(["kestrel"], rows_of(units, [False, True, True])),
    ) == (["kestrel"], ["kestrex"], ["kestrels"])


def test_passage_scores_over_readable_passages_are_those_of_a_passage_index_without_the_others() -> None:
    units = sample_unit_tokens()
    passages = [units[:3], units[3:10], units[10:11], units[11:]]
    tokens = [[w for t in group for w in t] for group in passages]
    keep = [True, False, True, True]
    whole, alone = (
        RecallIndex.build(tokens),
        RecallIndex.build([t for t, k in zip(tokens, keep, strict=True) if k]),
    )

    scored = whole.scores(["refund", "warranti"], rows_of(tokens, keep))

    assert scored is not None and np.array_equal(scored[[0, 2, 3]], alone.scores(["refund", "warranti"]))  # type: ignore[arg-type]


def test_a_public_search_is_the_same_with_and_without_the_staff_pages(
    snapshots: tuple[Snapshot, Snapshot],
) -> None:
    everything, only = snapshots

    def seen(snapshot: Snapshot, query: str) -> list[tuple[str, int, float]]:
        return [(h.unit.doc_id, h.unit.ordinal, h.score) for h in snapshot.search(query, 12)]

    assert [seen(everything, q) for q in QUERIES] == [seen(only, q) for q in QUERIES]


def test_public_term_weights_and_spelling_are_the_same_with_and_without_the_staff_pages(
    snapshots: tuple[Snapshot, Snapshot],
) -> None:
    everything, only = snapshots
    terms = ["kestrex", "kestrel", "refund", "warranti", "approv", "员工", "折扣", "nothingelse"]

    assert (everything.term_weights(terms), everything.spelled(terms)) == (
        only.term_weights(terms),
        only.spelled(terms),
    )


def test_a_staff_caller_still_reads_the_staff_words(snapshots: tuple[Snapshot, Snapshot]) -> None:
    everything, _ = snapshots

    assert (
        everything.spelled(["kestrex"], ("staff",)),
        everything.search("kestrel", 1, groups=("staff",))[0].unit.doc_id,
    ) == (["kestrel"], KESTREL.doc_id)


def test_the_fingerprint_a_public_caller_reads_is_that_of_the_public_corpus(
    snapshots: tuple[Snapshot, Snapshot],
) -> None:
    everything, only = snapshots

    assert (everything.readable_fingerprint(()), everything.readable_fingerprint(("staff",))) == (
        only.fingerprint,
        everything.fingerprint,
    )


def test_whole_corpus_statistics_stay_available_for_runs_recorded_before_the_rule(
    snapshots: tuple[Snapshot, Snapshot],
) -> None:
    everything, _ = snapshots

    assert everything.spelled(["kestrex"], scoped=False) == ["kestrel"]
    assert all(h.unit.doc_id != KESTREL.doc_id for h in everything.search("kestrel desk", 12, scoped=False))


def test_passage_statistics_for_reading_a_question_are_those_of_the_readable_corpus(
    snapshots: tuple[Snapshot, Snapshot],
) -> None:
    everything, only = snapshots
    terms = ["kestrel", "refund", "lm", "s10", "保修"]
    readable = everything.terms_for(("customer",))
    public = only.terms_for()
    assert readable.doc_freqs(terms) == public.doc_freqs(terms)
    assert readable.together(["kestrel", "refund"]) == public.together(["kestrel", "refund"]) == 0
    assert readable.mixed_tokens() == public.mixed_tokens()
    assert everything.terms_for(("staff",)).together(["kestrel", "refund"]) > 0


def test_together_counts_the_passages_that_hold_every_term(snapshots: tuple[Snapshot, Snapshot]) -> None:
    public = snapshots[1].terms_for()
    frequencies = public.doc_freqs(["s10", "保修"])
    together = public.together(["s10", "保修"])
    assert 0 < together <= min(frequencies.values())
    assert public.together(["s10", "no-such-term"]) == 0


def test_the_codes_a_corpus_names_are_its_tokens_mixing_letters_and_digits(
    snapshots: tuple[Snapshot, Snapshot],
) -> None:
    codes = snapshots[1].terms_for().mixed_tokens()
    assert {"s10", "x200"} <= codes
    assert all(any(c.isdigit() for c in t) and any(c.isalpha() for c in t) for t in codes)
