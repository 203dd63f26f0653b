"""A small deterministic embedder for tests: bag of words hashed into a few dimensions, synonyms folded.

It is a real implementation of the ``tools.models.embedding.Embedder`` protocol (no model): texts that share
words point the same way, and ``SYNONYMS`` lets a test make two different words mean the same, so
dense recall can find what BM25 cannot. It counts what it was asked to embed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from evidence_loop.tools.models.embedding import EmbedderIdentity, Progress, Vectors

DIM = 64
SYNONYMS = {"wireless": "wifi", "wlan": "wifi", "reimbursement": "refund", "退钱": "退款"}
_WORD = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]{1,2}")


class FakeEmbedder:
    def __init__(self, name: str = "fake", fail_after: int | None = None) -> None:
        self.name = name
        self.embedded: list[str] = []
        self.fail_after = fail_after
        self.identity = EmbedderIdentity("fake", name, DIM, hashlib.sha256(name.encode()).hexdigest())

    def _vector(self, text: str, salt: str) -> Vectors:
        out = np.zeros(DIM, dtype=np.float32)
        out[0] = 0.05  # every text shares a little: no zero vector
        for word in _WORD.findall(text.lower()):
            word = SYNONYMS.get(word, word)
            out[1 + int(hashlib.md5((salt + word).encode()).hexdigest(), 16) % (DIM - 1)] += 1.0
        vector: Vectors = out / np.linalg.norm(out)
        return vector

    def queries(self, texts: Sequence[str]) -> Vectors:
        return np.array([self._vector(t, self.name) for t in texts], dtype=np.float32).reshape(-1, DIM)

    def passages(self, texts: Sequence[str], progress: Progress | None = None) -> Vectors:
        if self.fail_after is not None and len(self.embedded) + len(texts) > self.fail_after:
            from evidence_loop.tools.errors import EmbedderError

            raise EmbedderError("the fake embeddings endpoint is down")
        self.embedded.extend(texts)
        if progress is not None:
            progress(len(texts))
        return self.queries(texts)
