"""The numpy build of a BM25 index holds what bm25s's own build holds: every (row, token) score to
the bit and each column's rows in order, so every query scores every row the same."""

from __future__ import annotations

import random

import bm25s
import numpy as np
import pytest

from evidence_loop.tools.search.bm25_build import built
from evidence_loop.tools.search.index import RecallIndex
from evidence_loop.tools.tokenize import recall_tokens

SENTENCES = [
    "LM-S10 整机保修3年，电池保修1年。",
    "The LM-X200 tablet has a one-year warranty, and the warranty covers the battery.",
    "退款将在七个工作日内原路退回；退款到账时间以银行为准。",
    "Open Settings and choose the wifi network, then enter the password.",
    "A refund is paid within seven days of the return.",
]


def _columns(bm25: bm25s.BM25) -> dict[str, tuple[list[int], list[int]]]:
    """token -> (its rows in order, the bits of their scores)."""
    scores = bm25.scores
    out = {}
    for token, tid in bm25.vocab_dict.items():
        if tid + 1 >= len(scores["indptr"]):
            continue  # the empty token bm25s adds when no row holds it
        start, end = scores["indptr"][tid], scores["indptr"][tid + 1]
        rows = scores["indices"][start:end].tolist()
        out[token] = (rows, scores["data"][start:end].astype(np.float32).view(np.uint32).tolist())
    return out


def _corpus(seed: int, rows: int) -> list[list[str]]:
    rng = random.Random(seed)
    words = [t for s in SENTENCES for t in recall_tokens(s)]
    return [[rng.choice(words) for _ in range(rng.randint(1, 30))] for _ in range(rows)]


@pytest.mark.parametrize(("seed", "rows"), [(0, 1), (1, 7), (2, 300), (3, 2000)])
def test_the_numpy_build_holds_bm25s_scores_to_the_bit(seed: int, rows: int) -> None:
    corpus = _corpus(seed, rows)
    reference = bm25s.BM25()
    reference.index(corpus, show_progress=False)
    ours = built(corpus)
    assert ours.scores["num_docs"] == reference.scores["num_docs"] == rows
    assert set(ours.vocab_dict) == set(reference.vocab_dict)
    assert _columns(ours) == _columns(reference)
    for query in corpus[:20]:
        mine = ours.get_scores_from_ids([ours.vocab_dict[t] for t in query])
        theirs = reference.get_scores_from_ids([reference.vocab_dict[t] for t in query])
        assert np.array_equal(mine, theirs)


def test_a_saved_numpy_build_loads_and_scores_as_built(tmp_path: object) -> None:
    corpus = [recall_tokens(s) for s in SENTENCES]
    index = RecallIndex.build(corpus)
    folder = tmp_path / "ix"  # type: ignore[operator]
    index.save(folder, {"generation": 1})
    loaded, meta = RecallIndex.load(folder)
    query = recall_tokens("warranty of the battery 保修")
    assert meta["units"] == len(SENTENCES)
    assert np.array_equal(loaded.scores(query), index.scores(query))  # type: ignore[arg-type]
