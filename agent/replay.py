"""Replay for audits: re-run the controller from a trace and report the first step that differs.

Pinned (the default): the trace's policy, the corpus generation it read (older versions stay in
the store), its question and groups, and the recorded LLM replies standing in for the model, so
no network is touched. ``current=True`` asks "would it still say this?" against today's corpus.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from agent.controller import Controller
from agent.runtime import ConflictCheck, Deps
from agent.tracing import ListRecorder
from policies.config import Policy
from tools.store import Store
from traces import Divergence, Trace, first_divergence

ConflictFactory = Callable[[Trace], ConflictCheck | None]


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


def replay(
    trace: Trace, store: Store, *, current: bool = False, conflicts: ConflictFactory | None = None
) -> ReplayReport:
    """Re-run the traced question and compare it step by step with the record."""
    header = trace.header
    snapshot = store.snapshot() if current else store.snapshot(generation=header.corpus.generation)
    policy = Policy.from_dict(dict(header.policy))
    check = conflicts(trace) if conflicts else None
    controller = Controller(policy, check, _fixed_deps(trace))
    recorder = ListRecorder()
    started = time.perf_counter()
    outcome = controller.ask(
        snapshot, header.question, header.groups, recorder=recorder, run_id=header.run_id
    )
    seconds = time.perf_counter() - started
    divergence = first_divergence(list(trace.events), recorder.events)
    return ReplayReport(
        run_id=header.run_id,
        identical=divergence is None,
        divergence=divergence,
        pinned_generation=header.corpus.generation,
        replayed_generation=snapshot.generation,
        corpus_changed=snapshot.fingerprint != header.corpus.fingerprint,
        seconds=seconds,
        recorded_status=trace.footer.outcome_status if trace.footer else None,
        replayed_status=outcome.status,
    )
