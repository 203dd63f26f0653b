"""A small real corpus for the question's reading against its corpus: each text is a passage, tokenized
as the recall index tokenizes it (``tools.tokenize.recall_tokens``)."""

from __future__ import annotations

from collections.abc import Sequence

from evidence_loop.tools.tokenize import recall_tokens


class PassageTerms:
    """``policies.question.named.CorpusTerms`` over a few passages."""

    def __init__(self, passages: Sequence[str]) -> None:
        self.passages = [frozenset(recall_tokens(p)) for p in passages]

    def doc_freqs(self, terms: Sequence[str]) -> dict[str, int]:
        return {t: sum(t in p for p in self.passages) for t in terms}

    def together(self, terms: Sequence[str]) -> int:
        return sum(all(t in p for t in terms) for p in self.passages)

    def mixed_tokens(self) -> frozenset[str]:
        return frozenset(
            t
            for p in self.passages
            for t in p
            if t.isascii() and t.isalnum() and not t.isalpha() and not t.isdigit()
        )
