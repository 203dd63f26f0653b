"""A content-addressed cache in front of an embedder: the same text under the same identity is embedded once.

    CachingEmbedder(inner, path)   an Embedder; vectors kept in one SQLite file

The key is sha256 over (identity key, query or passage, text), so a cache can be shared by every
index and evaluation on a machine (``EVLOOP_EMBED_CACHE``): re-ingesting a corpus into a fresh
folder, as ``evloop eval`` does, costs lookups instead of inference. Vectors are stored as float32,
exactly as the embedder returned them.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from evidence_loop.tools.errors import InputError
from evidence_loop.tools.models.embedding import Embedder, EmbedderIdentity, Progress, Vectors

_DDL = "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID"


class CachingEmbedder:
    """Looks each text up before asking ``inner``; what it had to embed it keeps."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        self._inner = inner
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(_DDL)
        except (OSError, sqlite3.Error) as exc:
            raise InputError(f"the embedding cache {path} cannot be used ({exc})") from exc
        self._lock = threading.Lock()

    @property
    def identity(self) -> EmbedderIdentity:
        return self._inner.identity

    def queries(self, texts: Sequence[str]) -> Vectors:
        return self._cached(texts, "query", None)

    def passages(self, texts: Sequence[str], progress: Progress | None = None) -> Vectors:
        return self._cached(texts, "passage", progress)

    def _cached(self, texts: Sequence[str], kind: str, progress: Progress | None) -> Vectors:
        identity = self.identity
        keys = [
            hashlib.sha256(f"{identity.key}\0{kind}\0{t}".encode("utf-8", "replace")).digest() for t in texts
        ]
        found = self._lookup(keys)
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            wanted = [texts[i] for i in missing]
            fresh = self._inner.queries(wanted) if kind == "query" else self._inner.passages(wanted, progress)
            with self._lock:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO vectors(key, data) VALUES (?, ?)",
                    [
                        (keys[i], row.astype(np.float32).tobytes())
                        for i, row in zip(missing, fresh, strict=True)
                    ],
                )
            found.update({keys[i]: row for i, row in zip(missing, fresh, strict=True)})
        elif progress is not None:
            progress(len(texts))
        out = np.zeros((len(texts), identity.dim), dtype=np.float32)
        for i, key in enumerate(keys):
            out[i] = found[key]
        return out

    def _lookup(self, keys: list[bytes]) -> dict[bytes, Vectors]:
        found: dict[bytes, Vectors] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for key, data in self._conn.execute(
                    f"SELECT key, data FROM vectors WHERE key IN ({marks})", chunk
                ):
                    found[bytes(key)] = np.frombuffer(data, dtype=np.float32)
        return found
