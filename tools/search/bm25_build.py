"""A bm25s index built with a few numpy passes instead of bm25s's loop over every row.

    built(token_lists)   a ``bm25s.BM25`` holding what ``BM25().index(token_lists)`` would hold (lucene,
                         k1=1.5, b=0.75): every (row, token) score to the bit, each column's rows in
                         order, the vocabulary with its empty token

bm25s counts each row's terms with a ``Counter`` and scores it in Python; at 100,000 units (and as
many passages) that was most of every write, since every write indexes the whole generation again.
Here all (row, token) pairs are counted at once and scored with the same floating-point steps in
the same types: the IDF with ``math.log`` in Python floats, stored as float32; the term part in
float64 as numpy 2 computes ``tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf)`` from a float32 tf and
a float64 average; their product rounded to float32. Token ids are numbered in order of first
appearance (bm25s numbers a set's iteration order, which changes with the string hash seed): an id
is only ever used through the vocabulary, and a query sums its tokens' columns in query order.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import bm25s

K1, B = 1.5, 0.75  # bm25s's defaults, which the index has always used


@cache
def bm25s_module() -> Any:
    """bm25s, imported when an index is first built or loaded (it brings tqdm and asyncio: a command
    that reads no index, `evloop docs`, does without)."""
    import bm25s

    # bm25s sets its own logger to DEBUG on import; any app that turns on logging would then print a
    # line per load. Its warnings still pass.
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


def built(token_lists: Sequence[Sequence[str]]) -> bm25s.BM25:
    """The index of ``token_lists`` (one list per row, none empty), as ``bm25s.BM25().index`` builds it."""
    vocab: dict[str, int] = {}
    ids = np.fromiter(
        (vocab.setdefault(token, len(vocab)) for tokens in token_lists for token in tokens), dtype=np.int64
    )
    lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
    rows, size = len(token_lists), len(vocab)
    owners = np.repeat(np.arange(rows, dtype=np.int64), lengths)
    pairs, counts = np.unique(owners * size + ids, return_counts=True)
    row, token = pairs // size, pairs % size
    freq = np.bincount(token, minlength=size)
    idf = np.array([_idf(int(df), rows) for df in freq.tolist()], dtype=np.float32)
    scores = _scores(idf[token], counts.astype(np.float32), lengths, row)
    order = np.argsort(token * rows + row)
    indptr = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(freq, out=indptr[1:])
    bm25: bm25s.BM25 = bm25s_module().BM25(k1=K1, b=B)
    bm25.scores = {
        "data": scores[order],
        "indices": row[order].astype(np.int32),
        "indptr": indptr,
        "num_docs": rows,
    }
    bm25.nonoccurrence_array = None
    if "" not in vocab:
        vocab[""] = size
    bm25.vocab_dict = vocab
    bm25.unique_token_ids_set = set(vocab.values())
    return bm25


def _idf(df: int, n: int) -> float:
    """Lucene's IDF, as bm25s computes it (Python floats)."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def _scores(
    idf: npt.NDArray[np.float32],
    tf: npt.NDArray[np.float32],
    lengths: npt.NDArray[np.int64],
    row: npt.NDArray[np.int64],
) -> npt.NDArray[np.float32]:
    """``idf * tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf)`` per pair, in bm25s's types and order."""
    mean = np.float64(lengths.mean())
    norm = K1 * ((1 - B) + B * lengths.astype(np.float64) / mean)
    tf64 = tf.astype(np.float64)
    out: npt.NDArray[np.float32] = (idf.astype(np.float64) * (tf64 / (norm[row] + tf64))).astype(np.float32)
    return out
