"""The passage statistics a question is read against, over what one caller may read.

    ReadableTerms(index, rows)   doc_freqs, together, mixed_tokens over the passages of ``rows``

``Snapshot.terms_for(groups)`` hands one out, cached per group set: a word only a restricted passage
holds is, for a caller who may not read it, held by nothing (as every statistic of a snapshot).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from evidence_loop.tools.search.index import RecallIndex, Rows


class ReadableTerms:
    """How many readable passages hold a term, or every one of some terms, and which codes (tokens
    mixing letters and digits) they hold."""

    __slots__ = ("_codes", "_index", "_lock", "_rows")

    def __init__(self, index: RecallIndex, rows: Rows | None) -> None:
        self._index = index
        self._rows = rows
        self._codes: frozenset[str] | None = None
        self._lock = threading.Lock()

    def doc_freqs(self, terms: Sequence[str]) -> dict[str, int]:
        """How many readable passages hold each term."""
        return {term: self._index.doc_freq(term, self._rows) for term in terms}

    def together(self, terms: Sequence[str]) -> int:
        """How many readable passages hold every one of the terms."""
        return self._index.together(terms, self._rows)

    def mixed_tokens(self) -> frozenset[str]:
        """The tokens mixing letters and digits the readable passages hold ("s10", "65q80t")."""
        if self._codes is None:
            codes = self._index.mixed_tokens(self._rows)
            with self._lock:
                self._codes = codes
        return self._codes
