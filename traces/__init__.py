"""The audit record of every run: schema, hashing, the durable store, verify, diff and rendering.

Where things are:

    schema.py    the records (header, event, footer), SCHEMA_VERSION, UPGRADERS, Trace, TraceSummary
    hashing.py   canonical JSON and the hash chain
    writer.py    TraceWriter: append-only, flushed per line, fsynced at finish
    reader.py    read_trace / parse_trace: torn, incomplete and damaged files told apart
    upgrade.py   UpgradeChain: old schemas read in the current shape
    store.py     TraceStore: one file per run by UTC day, index.jsonl, list, read, verify, verify_all
    manifest.py  the day manifest: each finished run's final hash, where cutting its trace cannot reach
    retention.py prune(store, before): whole days older than a date removed, the index rewritten
    verify.py    verify(trace) -> VerifyResult
    diff.py      first_divergence(recorded, replayed) -> Divergence | None
    render.py    render_timeline(trace), render_list(summaries)

This package imports neither ``agent`` nor ``policies``.
"""

from traces.diff import ABSENT, DEFAULT_VOLATILE, Divergence, first_divergence
from traces.hashing import canonical_json, digest, event_hash, record_hash
from traces.manifest import MANIFEST_NAME, FinishedRun, read_manifest
from traces.reader import parse_trace, read_trace
from traces.render import render_list, render_timeline
from traces.retention import PruneReport, prune
from traces.schema import (
    KNOWN_STEPS,
    SCHEMA_VERSION,
    UPGRADERS,
    CorpusInfo,
    Trace,
    TraceEvent,
    TraceFooter,
    TraceHeader,
    TraceSummary,
    utc_timestamp,
)
from traces.store import TraceStore
from traces.upgrade import UpgradeChain, default_chain
from traces.verify import HEADER_SEQ, VerifyResult, verify
from traces.writer import TraceWriter

__all__ = [
    "ABSENT",
    "DEFAULT_VOLATILE",
    "HEADER_SEQ",
    "KNOWN_STEPS",
    "MANIFEST_NAME",
    "SCHEMA_VERSION",
    "UPGRADERS",
    "CorpusInfo",
    "Divergence",
    "FinishedRun",
    "PruneReport",
    "Trace",
    "TraceEvent",
    "TraceFooter",
    "TraceHeader",
    "TraceStore",
    "TraceSummary",
    "TraceWriter",
    "UpgradeChain",
    "VerifyResult",
    "canonical_json",
    "default_chain",
    "digest",
    "event_hash",
    "first_divergence",
    "parse_trace",
    "prune",
    "read_manifest",
    "read_trace",
    "record_hash",
    "render_list",
    "render_timeline",
    "utc_timestamp",
    "verify",
]
