"""The audit record of every run: schema, hashing, the durable store, verify, diff and rendering.

Where things are:

    steps.py     every step an event records, typed: TraceStep (one discriminated union), parse_step
    schema.py    the records (header, event, footer), SCHEMA_VERSION, Trace, TraceSummary
    citations.py stored text cited by (doc_id, version, start, end, sha256): resolve, check_citations
    hashing.py   canonical JSON and the hash chain
    writer.py    TraceWriter: a run's records, each event chained (schema 3), durable at finish
    batch.py     BatchWriter: a finished run written whole, its events hashed once (schema 4)
    reader.py    read_trace / parse_trace: torn, incomplete and damaged files told apart
    store.py     TraceStore: runs by UTC day (a journal per day and process), list, read, verify_all
    journal.py   the day journal: a frame per run (records zlib-compressed), one fdatasync per commit
                 group, scan, read_frame
    journal_store.py the store's open journals, a run's pending frame, the run ids in use
    day_verify.py verify_day: a day's files and frames against the ends its manifest recorded
    run_index.py index.jsonl (a cache of summaries) and the summary of a run it lacks
    group_sync.py GroupSync: one folder sync shared by the runs finishing together (one file per run)
    manifest.py  the day manifest: each finished run's final hash and frame offset, apart from its trace
    run_chain.py the run chain: each frame linked to the one before it in its journal, a journal's end
                 anchored; chain_verify.py checks it (no run removed whole), pg_chain.py in PostgreSQL
    feedback.py  reviewers' verdicts (feedback_folder.py, feedback_pg.py keep them; feedback_chain.py
                 checks a log: its chain, its unreadable lines, its anchored tail)
    retention.py prune(store, before): whole days older than a date removed, the index rewritten
    verify.py    verify(trace) -> VerifyResult
    diff.py      first_divergence(recorded, replayed) -> Divergence | None
    render.py    render_timeline(trace), render_list(summaries)

This package imports neither ``agent`` nor ``policies``.
"""

from evidence_loop.traces.journal.manifest import MANIFEST_NAME, FinishedRun, read_manifest
from evidence_loop.traces.reading.diff import ABSENT, DEFAULT_VOLATILE, Divergence, first_divergence
from evidence_loop.traces.reading.render import render_list, render_timeline
from evidence_loop.traces.records.hashing import canonical_json, digest, event_hash, record_hash
from evidence_loop.traces.records.reader import parse_trace, read_trace
from evidence_loop.traces.records.schema import (
    SCHEMA_VERSION,
    CorpusInfo,
    Trace,
    TraceEvent,
    TraceFooter,
    TraceHeader,
    TraceSummary,
    utc_timestamp,
)
from evidence_loop.traces.records.steps import STEP_KINDS, TraceStep, parse_step
from evidence_loop.traces.records.writer import TraceWriter
from evidence_loop.traces.stores.retention import PruneReport, prune
from evidence_loop.traces.stores.store import RunWriter, TraceStore
from evidence_loop.traces.verification.verify import HEADER_SEQ, VerifyResult, verify

__all__ = [
    "ABSENT",
    "DEFAULT_VOLATILE",
    "HEADER_SEQ",
    "MANIFEST_NAME",
    "SCHEMA_VERSION",
    "STEP_KINDS",
    "CorpusInfo",
    "Divergence",
    "FinishedRun",
    "PruneReport",
    "RunWriter",
    "Trace",
    "TraceEvent",
    "TraceFooter",
    "TraceHeader",
    "TraceStep",
    "TraceStore",
    "TraceSummary",
    "TraceWriter",
    "VerifyResult",
    "canonical_json",
    "digest",
    "event_hash",
    "first_divergence",
    "parse_step",
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
