"""How a run's records become the bytes written, and the hashes of those bytes.

Each record is encoded once. An event's data is encoded to its canonical JSON (``traces.records.hashing``,
schema 3's ``compact_canonical``), and those very bytes are both hashed (inside the event's
envelope) and written; the header and footer are sealed (their hash over their canonical JSON) and
written as compact JSON in field order. What ``verify`` recomputes from a record read back is the
canonical text written here.

Schema 4 (a finished run written whole, ``traces.records.batch``): each event line is its envelope around
the same canonical data, with no hash of its own; the footer's ``prev_hash`` is the digest of the
header's hash and those lines (``hashing.steps_digest``): one hash for the run's events.

A header handed in with its documents inline (policy, LLM settings, embedder, reranker) is written
so when no store takes the documents (a bare ``TraceWriter``); a store splits them out first
(``traces.records.blobs.split_documents``) and the header names them by hash.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from evidence_loop.tools.errors import TraceError
from evidence_loop.traces.records.hashing import (
    compact_canonical,
    data_text,
    event_hash_of_bytes,
    plain_canonical_json,
    sha256_hex,
    steps_digest,
)
from evidence_loop.traces.records.schema import CHAINED_SCHEMA, SCHEMA_VERSION, TraceFooter, TraceHeader
from evidence_loop.traces.records.steps import AnyStep


def line(record: Mapping[str, Any]) -> bytes:
    """One committed record: compact JSON in field order (non-ASCII as UTF-8), then a newline.

    The record's values were checked as plain JSON when it was sealed (NaN refused there)."""
    return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)


def sealed_header(header: TraceHeader) -> tuple[TraceHeader, bytes]:
    """The header with its hash filled in, and its line (``header_line``): dumped once for both."""
    if not CHAINED_SCHEMA <= header.schema_version <= SCHEMA_VERSION:
        raise TraceError(
            f"new traces are written in schema {CHAINED_SCHEMA} or {SCHEMA_VERSION}, "
            f"not {header.schema_version}"
        )
    raw = header.model_dump(mode="json")  # strict fields: what is dumped is what a reader validates
    raw["hash"] = sha256_hex(plain_canonical_json({k: v for k, v in raw.items() if k != "hash"}, "header"))
    return header.model_copy(update={"hash": raw["hash"]}), line(raw)


def header_line(header: TraceHeader) -> bytes:
    """The sealed header's line."""
    return line(header.model_dump(mode="json"))


def event_line(prev_hash: str, seq: int, step: AnyStep) -> tuple[str, bytes]:
    """The event's hash and line: the step's data encoded once, the same bytes hashed and written."""
    data = compact_canonical(step.trace_data(), "data")
    digest = event_hash_of_bytes(prev_hash, seq, step.step, data)
    head = f'{{"type":"event","seq":{seq},"step":"{step.step}","data":'.encode()
    return digest, b"".join((head, data, f',"prev_hash":"{prev_hash}","hash":"{digest}"}}\n'.encode()))


def batch_event(seq: int, step: str, data: bytes) -> bytes:
    """A schema 4 event line: its envelope around the data's canonical bytes, no hash of its own."""
    return b"".join((f'{{"type":"event","seq":{seq},"step":"{step}","data":'.encode(), data, b"}\n"))


def batch_events(steps: Sequence[AnyStep]) -> bytes:
    """A finished run's event lines (schema 4), each step's data encoded once."""
    return b"".join(
        [
            batch_event(seq, step.step, compact_canonical(step.trace_data(), "data"))
            for seq, step in enumerate(steps)
        ]
    )


def batch_events_of(events: Sequence[Mapping[str, Any]]) -> bytes:
    """The event lines of a schema 4 trace as its writer wrote them, from the records read back
    (what ``verify`` hashes; each record sits at its position): each record's data encoded again
    as the writer encoded it."""
    return b"".join(
        batch_event(seq, str(event.get("step")), data_text(event.get("data") or {}, SCHEMA_VERSION))
        for seq, event in enumerate(events)
    )


def finished_run(
    header_hash: str, events: bytes, count: int, outcome_status: str, versions_read: Mapping[str, str]
) -> tuple[TraceFooter, bytes]:
    """The footer of a finished schema 4 run whose ``count`` event lines are ``events``, and its
    line: its ``prev_hash`` is the digest of the header's hash and the events."""
    return sealed_footer(outcome_status, count, versions_read, steps_digest(header_hash, events))


def sealed_footer(
    outcome_status: str, events: int, versions_read: Mapping[str, str], prev_hash: str
) -> tuple[TraceFooter, bytes]:
    """The footer with its hash, and its line."""
    raw: dict[str, Any] = {
        "type": "footer",
        "status": "complete",
        "outcome_status": outcome_status,
        "events": events,
        "versions_read": dict(versions_read),
        "prev_hash": prev_hash,
    }
    raw["hash"] = sha256_hex(plain_canonical_json(raw, "footer"))
    footer = TraceFooter.model_construct(**raw)  # made of checked values: a reader validates it
    return footer, line(raw)
