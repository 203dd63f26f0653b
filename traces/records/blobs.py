"""The documents a schema 3 trace names by hash, each stored once per store (content-addressed).

A run's header names its policy, the LLM settings, the embedder and the reranker by the sha256 of
their canonical JSON (``traces.records.hashing.digest``); the documents themselves are kept here, once for
every run that shares them:

    folder store   ROOT/blobs/<sha256>.json    the canonical JSON, written atomically once, never changed
    PostgreSQL     trace_documents(hash, body) one row per document, append-only (tools/store/pg_schema.py)

A document is stored before the first run that names it is begun, so a finished run never names a
document its store lacks. ``verify`` checks that every named document is there and still hashes to
its name; ``read`` resolves them for show, replay and export (``traces.documents``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Final, Protocol

import orjson

from evidence_loop.tools.errors import TraceError
from evidence_loop.traces.records.hashing import canonical_json, plain_canonical_json, sha256_hex
from evidence_loop.traces.records.reader import parse_trace
from evidence_loop.traces.records.schema import BY_HASH_SCHEMA, Trace, TraceHeader

_HASH = re.compile(r"^[0-9a-f]{64}$")


class Documents(Protocol):
    """Where a store keeps the documents its traces name by hash."""

    def put(self, documents: Mapping[str, Any]) -> None:
        """Store each ``hash -> document`` not yet stored (the hash is the document's digest)."""

    def get(self, hashes: Iterable[str]) -> dict[str, Any]:
        """The stored documents of ``hashes`` (as stored, not checked); a missing one is left out."""


def encoded(document: object) -> tuple[str, bytes]:
    """A document's hash and the bytes stored for it: its canonical JSON, as UTF-8."""
    text = canonical_json(document)
    return _cached_digest(text), text.encode("utf-8")


class FolderDocuments:
    """``ROOT/blobs/<sha256>.json``: each written once, through a temporary file, synced and renamed."""

    def __init__(self, root: Path, *, fsync: Any = os.fsync) -> None:
        self.folder = Path(root) / "blobs"
        self._fsync = fsync
        self._known: set[str] = set()
        self._lock = threading.Lock()

    def path(self, digest_hex: str) -> Path:
        """The file of one document."""
        if not _HASH.match(digest_hex):
            raise ValueError(f"{digest_hex!r} is not a sha256 hex digest")
        return self.folder / f"{digest_hex}.json"

    def put(self, documents: Mapping[str, Any]) -> None:
        new = [h for h in documents if h not in self._known]
        if not new:
            return  # the common case: every run after the first names documents already stored
        with self._lock:
            for digest_hex in new:
                path = self.path(digest_hex)
                if not path.exists():
                    self._write(path, documents[digest_hex])
                self._known.add(digest_hex)

    def _write(self, path: Path, document: object) -> None:
        digest_hex, body = encoded(document)
        if path.name != f"{digest_hex}.json":
            raise ValueError(f"the document stored as {path.name} hashes to {digest_hex}")
        made = not self.folder.exists()
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        try:
            with temporary.open("wb") as file:
                file.write(body)
                file.flush()
                self._fsync(file.fileno())
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)
        for folder in (self.folder, self.folder.parent) if made else (self.folder,):
            if os.name != "nt":
                fd = os.open(folder, os.O_RDONLY)
                try:
                    self._fsync(fd)
                finally:
                    os.close(fd)

    def get(self, hashes: Iterable[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for digest_hex in hashes:
            try:
                found[digest_hex] = json.loads(self.path(digest_hex).read_bytes())
            except (OSError, ValueError):
                continue  # missing, unreadable or not JSON: verify reports it as missing
        return found


Query = Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]


class TableDocuments:
    """PostgreSQL's ``trace_documents`` table, through a store's read connection (``query``). A run's
    documents are written with it, in the statement that writes the run (``traces.stores.pg_store``)."""

    def __init__(self, query: Query) -> None:
        self._query = query

    def put(self, documents: Mapping[str, Any]) -> None:
        """Store documents ahead of the runs that name them (an import)."""
        if not documents:
            return
        bodies = [encoded(documents[h]) for h in documents]
        if any(h != digest_hex for h, (digest_hex, _) in zip(documents, bodies, strict=True)):
            raise ValueError("a document does not hash to the name it is stored by")
        insert = "INSERT INTO trace_documents (hash, body) SELECT * FROM unnest(%s::text[], %s::text[])"
        sql = f"{insert} ON CONFLICT (hash) DO NOTHING RETURNING hash"
        self._query(sql, ([h for h, _ in bodies], [body.decode("utf-8") for _, body in bodies]))

    def get(self, hashes: Iterable[str]) -> dict[str, Any]:
        wanted = sorted(set(hashes))
        rows = self._query("SELECT hash, body FROM trace_documents WHERE hash = ANY(%s)", (wanted,))
        found: dict[str, Any] = {}
        for digest_hex, body in rows:
            with contextlib.suppress(ValueError):
                found[str(digest_hex)] = json.loads(body)
        return found


class MemoryDocuments:
    """Documents carried with an exported trace (or collected for one): a dict by hash."""

    def __init__(self, documents: Mapping[str, Any] | None = None) -> None:
        self.documents: dict[str, Any] = dict(documents or {})

    def put(self, documents: Mapping[str, Any]) -> None:
        for digest_hex, document in documents.items():
            self.documents.setdefault(digest_hex, document)

    def get(self, hashes: Iterable[str]) -> dict[str, Any]:
        return {h: self.documents[h] for h in hashes if h in self.documents}


NAMED: tuple[str, ...] = ("policy", "llm", "embedder", "reranker")
"""The header's fields a schema 3 header names by hash, in the order ``documents`` lists them."""


def split_documents(header: TraceHeader) -> tuple[TraceHeader, dict[str, Any]]:
    """The header naming its policy, LLM settings, embedder and reranker by hash, and those documents
    by hash; an empty one (no LLM, lexical recall, no reranker) is named by none."""
    if header.documents or header.schema_version < BY_HASH_SCHEMA:
        return header, {}
    names: dict[str, str] = {}
    documents: dict[str, Any] = {}
    for name in NAMED:
        value = getattr(header, name)
        if not value:
            continue
        digest_hex = header.policy_hash if name == "policy" and header.policy_hash else _digest(value)
        names[name] = digest_hex
        documents[digest_hex] = value
    empty: dict[str, Any] = {name: {} for name in NAMED}
    return header.model_copy(update={**empty, "documents": names}), documents


def _digest(value: Mapping[str, Any]) -> str:
    return _cached_digest(plain_canonical_json(value))  # a header's values: plain JSON already


@lru_cache(maxsize=64)
def _cached_digest(text: str) -> str:
    return sha256_hex(text)


def with_documents(trace: Trace, source: Documents) -> Trace:
    """``trace`` with the documents its header names, read from ``source`` (a store's, an export's),
    for ``Trace.named`` (show, replay) and ``verify``. Header and records stay as written."""
    names = trace.header.documents
    found = source.get(set(names.values())) if names else {}
    return replace(trace, documents=found)


def document_problem(header: Mapping[str, Any], documents: Mapping[str, Any] | None) -> str | None:
    """Why the documents a header record names do not stand (missing, changed), or None; with no
    ``documents`` (a trace read without its store) only that policy_hash names the policy."""
    names = header.get("documents")
    if not isinstance(names, dict):
        return None
    if "policy" in names and header.get("policy_hash") != names["policy"]:
        return "header changed: policy_hash does not name its policy document"
    if documents is None:
        return None
    for name, digest_hex in names.items():
        if digest_hex not in documents:
            return f"document missing: the {name} document {str(digest_hex)[:12]} is not in the store"
        try:  # read back from JSON: plain values, hashed in one pass of the encoder (no walk first)
            actual = _cached_digest(plain_canonical_json(documents[digest_hex]))
        except (TypeError, ValueError):
            actual = ""
        if actual != digest_hex:
            return f"document changed: the stored {name} document does not hash to {str(digest_hex)[:12]}"
    return None


FAILED_VERIFICATION: Final = "failed_verification"
"""The key of an exported header whose trace failed verification (``trace export --force``): why."""


def carried(
    records: Sequence[Mapping[str, Any]], documents: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """An export's records: the header carries the documents it names (``carried``), so that the
    exported trace verifies where its store is not."""
    out = [dict(record) for record in records]
    names = out[0].get("documents") if out else None
    if isinstance(names, dict) and names and documents is not None:
        out[0]["carried"] = {h: documents[h] for h in sorted(set(names.values())) if h in documents}
    return out


def read_export(records: Sequence[Mapping[str, Any]]) -> Trace:
    """The trace an export holds (``evloop trace export --as-written``), with its carried documents;
    the mark of an export forced past a failed verification is dropped: what it holds is verified
    again as it is."""
    if not records or not isinstance(records[0], Mapping):
        raise TraceError("an export is a JSON list of trace records, the header first")
    header = dict(records[0])
    header.pop(FAILED_VERIFICATION, None)
    documents = header.pop("carried", None) or {}
    rest = [header, *records[1:]]
    content = b"".join(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE) for record in rest)
    return with_documents(parse_trace(content), MemoryDocuments(documents))
