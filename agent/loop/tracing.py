"""Wiring the loop to the audit trail: a recorder that writes trace events, and the trace header.

The controller reports steps to a ``Recorder``; here that becomes one hash-chained trace event per
step, written and flushed as the run happens.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from evidence_loop.agent.loop.runtime import Deps, PlainRecorder
from evidence_loop.agent.outcome import Outcome
from evidence_loop.policies.config import Policy
from evidence_loop.tools.errors import NotFoundError, TraceError, TraceStoreUnavailableError
from evidence_loop.tools.models.embedding import EmbedderIdentity
from evidence_loop.tools.models.reranker import RerankerIdentity
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.calibration import CorpusScale
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import (
    SCHEMA_VERSION,
    CorpusInfo,
    RunWriter,
    Trace,
    TraceHeader,
    TraceStep,
    TraceStore,
    canonical_json,
    digest,
    utc_timestamp,
)
from evidence_loop.traces.records.hashing import sha256_hex
from evidence_loop.traces.records.schema import CHAINED_SCHEMA
from evidence_loop.traces.records.steps import AnyStep
from evidence_loop.traces.verification.citations import TextSource


@lru_cache(maxsize=1)
def code_version() -> str:
    """The installed distribution's version: what a trace says produced it."""
    try:
        return version("evidence-loop")
    except PackageNotFoundError:
        return "0+unknown"


def as_json(data: Mapping[str, object]) -> dict[str, Any]:
    """Data exactly as it reads back from a trace file (tuples become lists, keys strings)."""
    loaded: dict[str, Any] = json.loads(canonical_json(dict(data)))
    return loaded


@lru_cache(maxsize=32)
def _policy_record(policy: Policy) -> tuple[dict[str, Any], str]:
    """A policy as a trace holds it, and its hash: computed once per policy, not once per run."""
    plain = as_json(policy.as_dict())
    return plain, digest(plain)


class TraceRecorder(PlainRecorder):
    """Writes each step of a run as a trace event (steps made as plain data as they are)."""

    def __init__(self, writer: RunWriter) -> None:
        self.writer = writer

    def record(self, step: AnyStep) -> None:
        self.writer.append(step)


class UntracedRecorder(PlainRecorder):
    """Writes each step until the trace store fails, then keeps the failure and lets the run go on:
    for a service that answers untraced, the run is not stopped (nor run a second time) by it."""

    def __init__(self, writer: RunWriter) -> None:
        self.writer = writer
        self.failure: TraceStoreUnavailableError | None = None

    def record(self, step: AnyStep) -> None:
        if self.failure is not None:
            return
        try:
            self.writer.append(step)
        except TraceStoreUnavailableError as exc:
            self.failure = exc


class ListRecorder:
    """Keeps each step in memory (for replays and tests)."""

    def __init__(self) -> None:
        self.steps: list[TraceStep] = []

    def record(self, step: TraceStep) -> None:
        self.steps.append(step)


def header(
    run_id: str,
    question: str,
    groups: Collection[str],
    snapshot: Snapshot,
    policy: Policy,
    deps: Deps,
    *,
    caller: str | None = None,
    llm: Mapping[str, object] | None = None,
    embedder: EmbedderIdentity | None = None,
    scale: CorpusScale | None = None,
    reranker: RerankerIdentity | None = None,
) -> TraceHeader:
    """Who asked what, under which code, policy, corpus generation, model, embedder and reranker.
    ``llm`` is plain JSON already (``as_json``: the service converts its settings once)."""
    policy_json, policy_hash = _policy_record(policy)
    return TraceHeader(
        run_id=run_id,
        created_at=utc_timestamp(deps.now()),
        code_version=code_version(),
        policy=policy_json,  # validation copies it: the cached record stays as it was
        policy_hash=policy_hash,
        corpus=CorpusInfo(
            generation=snapshot.generation, fingerprint=corpus_fingerprint(snapshot, groups, policy)
        ),
        question=question,
        groups=sorted(set(groups)),
        caller=caller,
        llm=dict(llm or {}),  # plain JSON already (the service's, made once); validation copies it
        embedder=as_json(embedder.as_dict()) if embedder is not None else {},
        reranker=as_json(reranker.as_dict()) if reranker is not None else {},
        judge=as_json({"scale": scale.as_dict()}) if scale is not None else {},
    )


def corpus_fingerprint(snapshot: Snapshot, groups: Collection[str], policy: Policy) -> str:
    """The fingerprint a trace pins: of the versions its groups may read, the only ones its run
    depends on; of the whole corpus for a policy from before runs read only those."""
    if policy.caller_statistics:
        return snapshot.readable_fingerprint(groups)
    return snapshot.fingerprint


class StoredTexts:
    """The text of any version the store holds (old and deleted ones too), for the spans a trace
    cites (None for one it does not hold); and whether that text is still the one the store recorded
    for the version (``intact``): a cited span that differs from intact text was replaced by a later
    write, one that differs from text the store no longer vouches for is damage."""

    def __init__(self, store: Store) -> None:
        self._snapshot = store.snapshot()

    def __call__(self, doc_id: str, version: str) -> str | None:
        try:
            return self._snapshot.parsed(doc_id, version).text
        except NotFoundError:
            return None

    def intact(self, doc_id: str, version: str) -> bool:
        text = self(doc_id, version)
        if text is None:
            return False
        return sha256_hex(text) == self._snapshot.version_info(doc_id, version).sha256


def stored_texts(store: Store) -> TextSource:
    """The store's texts for the spans a trace cites (see :class:`StoredTexts`)."""
    return StoredTexts(store)


def import_trace(store: TraceStore, trace: Trace) -> str:
    """Write a verified schema 3 or 4 trace (an export's) into ``store`` record for record, with
    the documents it names, in its own schema; its final hash, returned, is the one it was exported
    with. A run id the store holds is refused; a trace of an older schema, whose records this code
    no longer writes, is refused too (a schema 4 one into a store of one file per run, likewise)."""
    if not CHAINED_SCHEMA <= trace.header.schema_version <= SCHEMA_VERSION or trace.footer is None:
        raise TraceError(
            f"run {trace.header.run_id}: only a finished schema {CHAINED_SCHEMA} or {SCHEMA_VERSION} "
            "trace can be imported"
        )
    store.documents.put(dict(trace.documents or {}))
    with store.begin(trace.header) as writer:
        for event in trace.events:
            writer.append(event.data)
        final = writer.finish(trace.footer.outcome_status, versions_read=trace.footer.versions_read)
    if final != trace.footer.hash:
        raise TraceError(
            f"run {trace.header.run_id} was written again with hash {final}, not {trace.footer.hash}"
        )
    return final


def versions_read(outcome: Outcome) -> dict[str, str]:
    """doc_id -> version of every document the outcome's evidence comes from."""
    return {e.doc_id: e.version for e in sorted(outcome.evidence, key=lambda e: e.doc_id)}
