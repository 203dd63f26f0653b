"""BM25 recall over hit units with bm25s: build from token lists, save to and load from a folder,
score a query, and pick a stable top k.

A row of the index is a *corpus position*: the caller decides the order (the store uses units of the
live versions sorted by (doc_id, ordinal)), and every tie is broken by it, so the same corpus and
query always give the same ranking. Filtering (ACL, already-seen units) is a float mask multiplied
into the scores *before* the top k is taken, so a filtered unit can never displace a kept one.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import bm25s
import numpy as np
import numpy.typing as npt

from tools.errors import IndexStateError

# bm25s sets its own logger to DEBUG on import; any app that turns on logging would then print a
# line per index build. Its warnings still get through.
logging.getLogger("bm25s").setLevel(logging.WARNING)

META_FILE = "recall.json"
_FORMAT = 2  # 2: recall tokens with CJK bigrams; a passages/ index beside the unit index
# bm25s needs at least one token per row; "" never comes out of the tokenizer, so a unit made of
# stop words or punctuation keeps its row (positions stay aligned) and can never match a query.
_EMPTY_ROW = [""]

Scores = npt.NDArray[np.float32]
Positions = npt.NDArray[np.int64]


class RecallIndex:
    """A bm25s index over ``size`` corpus positions (``size`` may be 0: nothing ever matches)."""

    __slots__ = ("_bm25", "_deletes", "_vocab", "size")

    def __init__(self, bm25: bm25s.BM25 | None, size: int) -> None:
        self._bm25 = bm25
        self._vocab: Mapping[str, int] = bm25.vocab_dict if bm25 is not None else {}
        self._deletes: dict[str, tuple[str, ...]] | None = None
        self.size = size

    def spelled(self, tokens: Sequence[str]) -> list[str]:
        """The tokens with each unknown Latin word of ``TYPO_MIN_CHARS`` or more replaced by the known
        word one edit away (insertion, deletion, substitution), the most frequent first; users misspell.
        """
        out = []
        for token in tokens:
            if (
                token in self._vocab
                or len(token) < TYPO_MIN_CHARS
                or not token.isascii()
                or not token.isalpha()
            ):
                out.append(token)
                continue
            near = self._near(token)
            out.append(near if near is not None else token)
        return out

    def _near(self, token: str) -> str | None:
        if self._deletes is None:
            self._deletes = _deletion_index(self._vocab)
        keys = [token, *(token[:i] + token[i + 1 :] for i in range(len(token)))]
        found = {word for key in keys for word in self._deletes.get(key, ())}
        found.discard(token)
        if not found:
            return None
        return min(found, key=lambda word: (-self.doc_freq(word), word))

    @classmethod
    def build(cls, token_lists: Sequence[Sequence[str]]) -> RecallIndex:
        """Index one token list per corpus position (lucene BM25, bm25s defaults k1=1.5, b=0.75)."""
        if not token_lists:
            return cls(None, 0)
        bm25 = bm25s.BM25()
        bm25.index([list(tokens) if tokens else _EMPTY_ROW for tokens in token_lists], show_progress=False)
        return cls(bm25, len(token_lists))

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
            bm25 = bm25s.BM25.load(folder, show_progress=False)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise IndexStateError(f"the bm25 index in {folder} cannot be read ({exc})") from exc
        if bm25.scores.get("num_docs") != size:
            raise IndexStateError(
                f"the bm25 index in {folder} has {bm25.scores.get('num_docs')} rows, not {size}"
            )
        return cls(bm25, size), meta

    def doc_freq(self, token: str) -> int:
        """How many positions contain the token (0 when it is not in the vocabulary)."""
        tid = self._vocab.get(token)
        if tid is None or self._bm25 is None:
            return 0
        indptr = self._bm25.scores["indptr"]
        return int(indptr[tid + 1] - indptr[tid])

    def scores(self, tokens: Sequence[str]) -> Scores | None:
        """BM25 score of every position for the query tokens; None when no token is in the vocabulary."""
        vocab = self._vocab
        ids = [vocab[token] for token in tokens if token in vocab]
        if not ids or self._bm25 is None:
            return None
        scores: Scores = self._bm25.get_scores_from_ids(ids)
        return scores


TYPO_MIN_CHARS = 5


def _deletion_index(vocab: Mapping[str, int]) -> dict[str, tuple[str, ...]]:
    """Each Latin vocabulary word, and each of its one-character deletions, mapped to the words:
    two words one edit apart share a key (symmetric-delete spelling correction)."""
    index: dict[str, list[str]] = {}
    for word in vocab:
        if len(word) < TYPO_MIN_CHARS - 1 or not word.isascii() or not word.isalpha():
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
