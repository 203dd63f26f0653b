"""BM25 recall over hit units with bm25s: build from token lists, save to and load from a folder,
score a query, and pick a stable top k.

A row of the index is a *corpus position*: the caller decides the order (the store uses units of the
live versions sorted by (doc_id, ordinal)), and every tie is broken by it, so the same corpus and
query always give the same ranking. Filtering (ACL, already-seen units) is a float mask multiplied
into the scores *before* the top k is taken, so a filtered unit can never displace a kept one.

Statistics can also be read over a subset of the rows (:class:`Rows`, the rows a caller may read):
vocabulary, document frequencies and BM25 scores are then those of an index built over the subset
alone, to the bit, so the rows outside it change nothing that is computed from them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from evidence_loop.tools.errors import IndexStateError
from evidence_loop.tools.search.bm25_build import bm25s_module, built
from evidence_loop.tools.types import TYPO_MIN_CHARS

if TYPE_CHECKING:
    import bm25s

META_FILE = "recall.json"
_FORMAT = 2  # 2: recall tokens with CJK bigrams; a passages/ index beside the unit index
# bm25s needs at least one token per row; "" never comes out of the tokenizer, so a unit made of
# stop words or punctuation keeps its row (positions stay aligned) and can never match a query.
_EMPTY_ROW = [""]

Scores = npt.NDArray[np.float32]
Positions = npt.NDArray[np.int64]
Lengths = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Rows:
    """A subset of an index's rows, whose statistics are read as if the index held nothing else.

    ``keep`` flags the rows of the subset; ``lengths`` is every row's token count as indexed (a row
    without tokens counts 1, see ``_EMPTY_ROW``). Build it with :meth:`of`.
    """

    keep: npt.NDArray[np.bool_]
    lengths: Lengths
    count: int
    mean_length: float  # over the subset, computed as bm25s computes it at build time
    mean_all: float  # over every row: what the stored scores were computed with

    @classmethod
    def of(cls, keep: npt.NDArray[np.bool_], lengths: Lengths) -> Rows:
        kept = lengths[keep]
        mean = float(kept.mean()) if kept.size else 1.0
        return cls(keep, lengths, int(kept.size), mean, float(lengths.mean()) if lengths.size else 1.0)


class RecallIndex:
    """A bm25s index over ``size`` corpus positions (``size`` may be 0: nothing ever matches)."""

    __slots__ = ("_bm25", "_deletes", "_mixed", "_vocab", "size")

    def __init__(self, bm25: bm25s.BM25 | None, size: int) -> None:
        self._bm25 = bm25
        self._vocab: Mapping[str, int] = bm25.vocab_dict if bm25 is not None else {}
        # per shortest word corrected: built on the first misspelling, it serves every later one
        self._deletes: dict[int, dict[str, tuple[str, ...]]] = {}
        self._mixed: frozenset[str] | None = None
        self.size = size

    def spelled(
        self, tokens: Sequence[str], rows: Rows | None = None, min_chars: int = TYPO_MIN_CHARS
    ) -> list[str]:
        """The tokens with each unknown Latin word of ``min_chars`` or more replaced by the known
        word one edit away (insertion, deletion, substitution), the most frequent first; users misspell.

        With ``rows``, "known" and "frequent" are read over those rows only: a word that only other
        rows hold is neither kept as known nor ever proposed.
        """
        out = []
        for token in tokens:
            if (
                self.knows(token, rows)
                or len(token) < min_chars
                or not token.isascii()
                or not token.isalpha()
            ):
                out.append(token)
                continue
            near = self._near(token, rows, min_chars)
            out.append(near if near is not None else token)
        return out

    def knows(self, token: str, rows: Rows | None = None) -> bool:
        """Whether some row (of ``rows``, when given) holds the token."""
        if rows is None:
            return token in self._vocab
        return self.doc_freq(token, rows) > 0

    def _near(self, token: str, rows: Rows | None, min_chars: int) -> str | None:
        deletes = self._deletes.get(min_chars)
        if deletes is None:
            deletes = self._deletes[min_chars] = _deletion_index(self._vocab, min_chars)
        keys = [token, *(token[:i] + token[i + 1 :] for i in range(len(token)))]
        found = {word for key in keys for word in deletes.get(key, ())}
        found.discard(token)
        freq = {word: self.doc_freq(word, rows) for word in found}
        known = [word for word, df in freq.items() if df > 0]
        if not known:
            return None
        return min(known, key=lambda word: (-freq[word], word))

    @classmethod
    def build(cls, token_lists: Sequence[Sequence[str]]) -> RecallIndex:
        """Index one token list per corpus position (lucene BM25, bm25s defaults k1=1.5, b=0.75), as
        bm25s would (``tools/search/bm25_build.py``, in numpy passes)."""
        if not token_lists:
            return cls(None, 0)
        return cls(built([tokens if tokens else _EMPTY_ROW for tokens in token_lists]), len(token_lists))

    def save(self, folder: Path, meta: Mapping[str, object]) -> None:
        """Write the index and ``meta`` (plus the row count) into a new folder."""
        folder.mkdir(parents=True)
        if self._bm25 is not None:
            self._bm25.save(folder, show_progress=False)
        record = {"format": _FORMAT, "units": self.size, **meta}
        (folder / META_FILE).write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> tuple[RecallIndex, dict[str, object]]:
        """Read a folder written by :meth:`save`; IndexStateError if it is missing or damaged."""
        try:
            meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
            size = int(meta["units"])
            if meta.get("format") != _FORMAT:
                raise ValueError(f"unknown index format {meta.get('format')!r}")
            if size == 0:
                return cls(None, 0), meta
            bm25 = bm25s_module().BM25.load(folder, show_progress=False)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise IndexStateError(f"the bm25 index in {folder} cannot be read ({exc})") from exc
        if bm25.scores.get("num_docs") != size:
            raise IndexStateError(
                f"the bm25 index in {folder} has {bm25.scores.get('num_docs')} rows, not {size}"
            )
        return cls(bm25, size), meta

    def doc_freq(self, token: str, rows: Rows | None = None) -> int:
        """How many positions (of ``rows``, when given) contain the token (0 when none does)."""
        tid = self._vocab.get(token)
        if tid is None or self._bm25 is None:
            return 0
        indptr = self._bm25.scores["indptr"]
        if rows is None:
            return int(indptr[tid + 1] - indptr[tid])
        held = self._bm25.scores["indices"][indptr[tid] : indptr[tid + 1]]
        return int(np.count_nonzero(rows.keep[held]))

    def postings(self, token: str, rows: Rows | None = None) -> Positions:
        """The positions (of ``rows``, when given) that contain the token, ascending."""
        tid = self._vocab.get(token)
        if tid is None or self._bm25 is None:
            return np.zeros(0, dtype=np.int64)
        indptr = self._bm25.scores["indptr"]
        held = np.asarray(self._bm25.scores["indices"][indptr[tid] : indptr[tid + 1]], dtype=np.int64)
        return held if rows is None else held[rows.keep[held]]

    def together(self, tokens: Sequence[str], rows: Rows | None = None) -> int:
        """How many positions (of ``rows``, when given) contain every one of the tokens (0 for none)."""
        if not tokens:
            return 0
        held = self.postings(tokens[0], rows)
        for token in tokens[1:]:
            if not held.size:
                break
            held = np.intersect1d(held, self.postings(token, rows), assume_unique=True)
        return int(held.size)

    def mixed_tokens(self, rows: Rows | None = None) -> frozenset[str]:
        """The vocabulary's tokens that mix ASCII letters and digits ("s10", "65q80t", "4k"), held by
        some position (of ``rows``, when given)."""
        if self._mixed is None:
            self._mixed = frozenset(
                t for t in self._vocab if t.isascii() and t.isalnum() and not t.isalpha() and not t.isdigit()
            )
        if rows is None:
            return self._mixed
        return frozenset(t for t in self._mixed if self.doc_freq(t, rows) > 0)

    def scores(self, tokens: Sequence[str], rows: Rows | None = None) -> Scores | None:
        """BM25 score of every position for the query tokens; None when no token is in the vocabulary.

        With ``rows``: the scores an index built over those rows alone would give them (IDF, row
        count and mean length of the subset), 0 for every other row; None when no row of the subset
        holds a query token.
        """
        vocab = self._vocab
        ids = [vocab[token] for token in tokens if token in vocab]
        if not ids or self._bm25 is None:
            return None
        if rows is not None:
            return self._subset_scores(ids, rows)
        scores: Scores = self._bm25.get_scores_from_ids(ids)
        return scores

    def _subset_scores(self, ids: Sequence[int], rows: Rows) -> Scores | None:
        """Re-score the query's columns over ``rows``, exactly as bm25s (lucene) would have built them.

        A stored entry is ``idf * tf / (tf + k1 * norm(length))`` over the whole index; its term
        frequency (an integer) is recovered from it and scored again with the subset's IDF and mean
        length, in the same floating-point steps, and the entries are summed token by token in
        query order, as bm25s sums them.
        """
        assert self._bm25 is not None
        matrix = self._bm25.scores
        k1, b = float(self._bm25.k1), float(self._bm25.b)
        token_ids = np.asarray(ids, dtype=np.int64)
        starts = matrix["indptr"][token_ids].astype(np.int64)
        sizes = matrix["indptr"][token_ids + 1].astype(np.int64) - starts
        # every entry of the query's columns, column after column, and the query token it belongs to
        owner = np.repeat(np.arange(token_ids.size), sizes)
        entries = np.arange(int(sizes.sum())) + np.repeat(starts - np.cumsum(sizes) + sizes, sizes)
        docs = matrix["indices"][entries]
        kept = rows.keep[docs]
        held = np.bincount(owner[kept], minlength=token_ids.size)
        if not held.any():
            return None
        owner, entries, docs = owner[kept], entries[kept], docs[kept]
        lengths = rows.lengths[docs]
        idf_all = np.array([_idf(int(df), self.size) for df in sizes.tolist()], dtype=np.float32)
        idf_sub = np.array([_idf(int(df), rows.count) for df in held.tolist()], dtype=np.float32)
        ratio = matrix["data"][entries].astype(np.float64) / idf_all[owner].astype(np.float64)
        stored = _length_norm(lengths, rows.mean_all, k1, b)
        tf = np.clip(np.rint(ratio * stored / (1.0 - ratio)), 1, lengths).astype(np.float32)
        tfc = tf / (_length_norm(lengths, rows.mean_length, k1, b) + tf)
        out = np.zeros(self.size, dtype=np.float32)
        np.add.at(out, docs, (idf_sub[owner].astype(np.float64) * tfc).astype(np.float32))
        return out


def _idf(df: int, n: int) -> np.float32:
    """bm25s's lucene IDF, stored as float32 as its idf array stores it."""
    return np.float32(math.log(1 + (n - df + 0.5) / (df + 0.5)))


def _length_norm(lengths: Lengths, mean: float, k1: float, b: float) -> npt.NDArray[np.float64]:
    """``k1 * ((1 - b) + b * l_d / l_avg)`` per row, with bm25s's operation order (same bits)."""
    result: npt.NDArray[np.float64] = k1 * ((1 - b) + b * lengths / np.float64(mean))
    return result


def _deletion_index(vocab: Mapping[str, int], min_chars: int) -> dict[str, tuple[str, ...]]:
    """Each Latin vocabulary word one edit from a word of ``min_chars`` or more, and each of its
    one-character deletions, mapped to the words: two words one edit apart share a key
    (symmetric-delete spelling correction)."""
    index: dict[str, list[str]] = {}
    for word in vocab:
        if len(word) < min_chars - 1 or not word.isascii() or not word.isalpha():
            continue
        for key in {word, *(word[:i] + word[i + 1 :] for i in range(len(word)))}:
            index.setdefault(key, []).append(word)
    return {key: tuple(words) for key, words in index.items()}


def top_k(scores: Scores, k: int) -> tuple[Positions, Scores]:
    """The k best positive scores, best first; equal scores in corpus-position order.

    ``argpartition`` finds the k-th best value; every candidate at or above it (ties included) is
    then sorted by (score descending, position ascending), so the cut at k is deterministic.
    """
    candidates = np.flatnonzero(scores > 0)
    if k <= 0 or candidates.size == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    values = scores[candidates]
    if candidates.size > k:
        kth = np.partition(values, candidates.size - k)[candidates.size - k]
        keep = values >= kth
        candidates, values = candidates[keep], values[keep]
    order = np.lexsort((candidates, -values))[:k]
    return candidates[order], values[order]
