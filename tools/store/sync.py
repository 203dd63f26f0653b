"""One batch of a write, inside its transaction: every document by the ingest rules, the source it
came from recorded, and the documents of a pruned source that the batch no longer holds retired.

    write_batch(conn, batch, generation, tally, on_document)

A sync is an ordinary write: one transaction, one new generation, so a kill leaves the state
before it or after it. What it adds to a batch of documents:

- a batch that names a document more than once keeps the earlier versions as history and makes the
  last one current (``superseded`` in tools/store/ingest.py); the document is counted once, by its
  last line, against what was live before the batch;
- ``sources`` maps doc_ids to the source they came from (tools/store/origins.py), recorded for every
  document the batch holds, written or unchanged; a document whose text a batch changes while it was
  synced from another source is reported (``Tally.taken``): two folders that name one doc_id
  replace each other at every sync;
- each source in ``prune`` retires its documents that have a live version and are not in the batch:
  they stop being answered, their versions stay stored for replay and audit. A document the
  writer's guard finds hidden from it (NotFoundError) is not the writer's to retire: it is left.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from evidence_loop.tools.errors import NotFoundError
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.store import origins
from evidence_loop.tools.store.guard import WriteGuard
from evidence_loop.tools.store.ingest import Parse, apply_document, retire_document
from evidence_loop.tools.store.sql import Db
from evidence_loop.tools.store.tally import Tally
from evidence_loop.tools.types import DocumentInput


@dataclass(frozen=True, slots=True)
class Batch:
    """What one write is asked to do."""

    docs: tuple[DocumentInput, ...]
    replace: bool = False
    max_bytes: int = 20_000_000
    guard: WriteGuard | None = None
    sources: Mapping[str, str] = field(default_factory=dict)
    prune: tuple[str, ...] = ()
    parse: Parse = parse_document


def write_batch(
    conn: Db, batch: Batch, generation: int, tally: Tally, on_document: Callable[[int], None]
) -> bool:
    """Apply ``batch`` at ``generation`` (the rules above); ``on_document(n)`` after the n-th document.
    True when a document's source was recorded anew (a write even when no document changed)."""
    last = {doc.doc_id: at for at, doc in enumerate(batch.docs)}
    if batch.sources or batch.prune:
        origins.ensure(conn)
    recorded = False
    live_before: dict[str, bool] = {}
    for at, doc in enumerate(batch.docs):
        outcome = apply_document(
            conn, doc, generation, replace=batch.replace, max_bytes=batch.max_bytes, tally=tally,
            guard=batch.guard, superseded=last[doc.doc_id] != at, live_before=live_before, parse=batch.parse,
        )  # fmt: skip
        source = batch.sources.get(doc.doc_id)
        if source is not None and outcome != "skipped":
            before = origins.record(conn, doc.doc_id, source)
            recorded = recorded or before != source
            if outcome == "changed" and before not in (None, source):
                tally.taken.append((doc.doc_id, before, source))
        on_document(at + 1)
    for source in batch.prune:
        for doc_id in origins.live_of(conn, source):
            if doc_id not in last:
                _retire(conn, doc_id, generation, batch.guard, tally)
    return recorded


def _retire(conn: Db, doc_id: str, generation: int, guard: WriteGuard | None, tally: Tally) -> None:
    row = conn.execute(
        "SELECT version FROM versions WHERE doc_id = ? AND is_current = 1", (doc_id,)
    ).fetchone()
    try:
        retired = retire_document(conn, doc_id, generation, guard)
    except NotFoundError:
        return  # hidden from the writer: not its to retire, and nothing to tell it
    if retired and row is not None:
        tally.count(doc_id, str(row[0]), "retired")
