"""Replay for audits: re-run the controller from a trace and report the first step that differs.

Pinned (the default): the trace's policy, the corpus generation it read (older versions stay in
the store), its question and groups, and the recorded LLM and reranker replies standing in for
the model and the cross-encoder, so no network is touched. ``current=True`` asks "would it still
say this?" against today's corpus.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from evidence_loop.agent.loop.conflict_check import ConflictChecker
from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.loop.events import recorded_history, recorded_vector
from evidence_loop.agent.loop.runtime import ConflictCheck, Deps, no_conflict_check
from evidence_loop.agent.loop.tracing import ListRecorder, corpus_fingerprint, stored_texts
from evidence_loop.policies.config import Policy
from evidence_loop.policies.question.followup import Turn
from evidence_loop.tools.errors import CitedVersionReplacedError, TamperedTraceError, TraceError
from evidence_loop.tools.models.embedding import Embedder, Vectors
from evidence_loop.tools.models.llm_config import ConflictLLMConfig
from evidence_loop.tools.models.reranker import RecordedReranker, RerankerIdentity
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.calibration import CorpusScale
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import Divergence, Trace, TraceStep, VerifyResult, first_divergence, verify
from evidence_loop.traces.records.steps import (
    EmbeddedStep,
    LLMReplyStep,
    LLMRequestStep,
    RerankReplyStep,
    RerankRequestStep,
    ResolvedStep,
    StepModel,
)
from evidence_loop.traces.verification.citations import cites, with_citations

ConflictFactory = Callable[[Trace], ConflictCheck]


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """The verdict of one replay."""

    run_id: str
    identical: bool
    divergence: Divergence | None
    pinned_generation: int
    replayed_generation: int
    corpus_changed: bool
    seconds: float
    recorded_status: str | None
    replayed_status: str | None

    def describe(self) -> str:
        """One line for a terminal."""
        where = f"generation {self.replayed_generation}" + (" (current)" if self.corpus_changed else "")
        if self.identical:
            return f"{self.run_id}: identical ({where}, {self.seconds * 1000:.1f} ms)"
        assert self.divergence is not None
        return f"{self.run_id}: differs at {self.divergence.describe()} [{where}]"


def _fixed_deps(trace: Trace) -> Deps:
    created = datetime.fromisoformat(trace.header.created_at.replace("Z", "+00:00"))
    return Deps(now=lambda: created, new_run_id=lambda: trace.header.run_id)


LLM_STEPS = (LLMRequestStep, LLMReplyStep)
RERANK_STEPS = (RerankRequestStep, RerankReplyStep)


def _records(trace: Trace, kinds: tuple[type[StepModel], ...]) -> list[dict[str, Any]]:
    """The trace's steps of these kinds as the records ``tools`` keeps (the step's data and its name)."""
    return [{**e.data.trace_data(), "step": e.step} for e in trace.events if isinstance(e.data, kinds)]


def recorded_policy(trace: Trace) -> Policy:
    """The policy the trace ran under; one this code cannot rebuild exactly is a TraceError, not a guess."""
    recorded = trace.named("policy")
    if not recorded:  # a schema 3 trace read without the store that holds its policy document
        raise TraceError(
            f"run {trace.header.run_id} names its policy {trace.header.policy_hash[:12]}, "
            "which is not at hand: read the trace through its store, or from an export that carries it"
        )
    try:
        return Policy.from_dict(recorded)
    except (TypeError, ValueError) as exc:
        raise TraceError(
            f"run {trace.header.run_id} was recorded under a policy this code cannot rebuild "
            f"({exc}); replay it with code version {trace.header.code_version}"
        ) from None


def recorded_conflict_check(trace: Trace) -> ConflictCheck:
    """The trace's conflict check with its recorded LLM replies standing in for the model (no network).

    Without recorded LLM calls the offline rules decide, as they did; a preset that checks no
    conflicts (an ablation) checks nothing.
    """
    policy = recorded_policy(trace)
    if not policy.preset.checks_conflicts:
        return no_conflict_check
    records = _records(trace, LLM_STEPS)
    if not records:
        return ConflictChecker()
    # Only a trace with LLM calls needs the model's libraries (slow to import; see agent.service).
    from evidence_loop.agent.loop.llm_adjudicator import LLMAdjudicator
    from evidence_loop.tools.models.llm_client import replay_model

    llm = trace.named("llm")
    config = ConflictLLMConfig(
        base_url=str(llm.get("base_url") or "recorded"), model=str(llm.get("model") or "recorded")
    )
    return ConflictChecker(LLMAdjudicator(replay_model(records), config))


def recorded_reranker(trace: Trace) -> RecordedReranker | None:
    """The trace's reranker replies standing in for the cross-encoder; None for a run without one.

    Its request and reply events are compared like any step: a replay that would send other windows
    differs at its ``rerank_request``."""
    reranker = trace.named("reranker")
    if not reranker:
        return None
    records = _records(trace, RERANK_STEPS)
    return RecordedReranker(RerankerIdentity.from_dict(reranker), records)


def _recorded_vector(trace: Trace, snapshot: Snapshot) -> Vectors | None:
    """The question vector the run recorded, if the snapshot's vectors come from the same embedder."""
    first = trace.events[0].data if trace.events else None
    if not isinstance(first, EmbeddedStep) or snapshot.embedder is None:
        return None
    return recorded_vector(first) if first.embedder == snapshot.embedder.key else None


def _recorded_history(trace: Trace) -> list[Turn]:
    """The earlier turns the run was given, as it recorded them (runs it read are not read again)."""
    for event in trace.events:
        if isinstance(event.data, ResolvedStep):
            return recorded_history(event.data)
    return []


def _comparable(steps: Sequence[TraceStep]) -> list[TraceStep]:
    """Steps to compare: the LLM's own request/reply records are transport, its verdicts are compared."""
    return [s for s in steps if not isinstance(s, LLM_STEPS)]


def replay(
    trace: Trace,
    store: Store,
    *,
    current: bool = False,
    conflicts: ConflictFactory | None = None,
    verdict: VerifyResult | None = None,
    embedder: Embedder | None = None,
) -> ReplayReport:
    """Re-run the traced question and compare it step by step with the record.

    A hybrid run replays with its recorded question vector and corpus scale while the index's
    vectors are still the recorded embedder's; under another embedder (``embedder``) the question is
    embedded anew, and the report names the first step that changed.

    The trace is verified first (``verdict``, when the caller has checked it against its store's record of
    how the run ended; else its hash chain): a changed record would otherwise read as a divergence.
    Pinned, the text it cites is checked against the store too: a cited version whose text a later
    write replaced cannot be re-read as the run read it (``CitedVersionReplacedError``, no tampering).
    """
    header = trace.header
    verdict = verdict if verdict is not None else verify(trace)
    if not current:  # pinned: the text the run read must still be the text stored
        verdict = with_citations(verdict, trace, stored_texts(store))
    if not verdict.ok:
        seq = verdict.first_bad_seq if verdict.first_bad_seq is not None else len(trace.events)
        raise TamperedTraceError(header.run_id, seq, verdict.reason)
    if verdict.replaced:
        raise CitedVersionReplacedError(header.run_id, verdict.replaced)
    snapshot = store.snapshot() if current else store.snapshot(generation=header.corpus.generation)
    policy = recorded_policy(trace)
    check = (conflicts or recorded_conflict_check)(trace)
    controller = Controller(policy, check, _fixed_deps(trace), embedder, recorded_reranker(trace))
    recorder = ListRecorder()
    started = time.perf_counter()
    outcome = controller.ask(
        snapshot,
        header.question,
        header.groups,
        recorder=recorder,
        run_id=header.run_id,
        scale=CorpusScale.from_dict(header.judge["scale"]) if header.judge.get("scale") else None,
        vector=_recorded_vector(trace, snapshot),
        inline_text=not cites(trace),  # a schema 1 trace copied the text its steps cite
        history=_recorded_history(trace),
    )
    seconds = time.perf_counter() - started
    divergence = first_divergence(_comparable([e.data for e in trace.events]), _comparable(recorder.steps))
    return ReplayReport(
        run_id=header.run_id,
        identical=divergence is None,
        divergence=divergence,
        pinned_generation=header.corpus.generation,
        replayed_generation=snapshot.generation,
        corpus_changed=corpus_fingerprint(snapshot, header.groups, policy) != header.corpus.fingerprint,
        seconds=seconds,
        recorded_status=trace.footer.outcome_status if trace.footer else None,
        replayed_status=outcome.status,
    )
