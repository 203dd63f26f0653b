"""The library's front object: one store, one controller, the trace store; what the CLI and HTTP API call.

Each question runs against one snapshot taken when it starts, so an ingest that lands meanwhile is
either wholly visible to a question or not at all. Each run is traced (when a trace store is set):
the trace is fsynced before the outcome is returned.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import structlog

from evidence_loop.agent import logs, tracing
from evidence_loop.agent.calibrate import JudgeGap, ScaleKeeper, judge_gap
from evidence_loop.agent.conflict_check import ConflictChecker
from evidence_loop.agent.controller import Controller
from evidence_loop.agent.outcome import Outcome, TraceRef
from evidence_loop.agent.replay import ConflictFactory, ReplayReport, replay
from evidence_loop.agent.runtime import ConflictCheck, Deps, freeze_heap
from evidence_loop.policies.config import Policy
from evidence_loop.tools.calibration import CorpusScale
from evidence_loop.tools.embed_config import EmbedConfig
from evidence_loop.tools.embedder import Embedder, build_embedder
from evidence_loop.tools.errors import InputError, QuestionTooLongError
from evidence_loop.tools.llm_config import LLMConfig
from evidence_loop.tools.pg import is_url
from evidence_loop.tools.rerank_config import RerankConfig
from evidence_loop.tools.reranker import Reranker, build_reranker
from evidence_loop.tools.snapshot import Snapshot
from evidence_loop.tools.store import DocumentInfo, IngestReport, Store
from evidence_loop.tools.stores import Location, open_store
from evidence_loop.tools.types import DocumentInput
from evidence_loop.traces import Trace, TraceStore, VerifyResult
from evidence_loop.traces.citations import resolve, with_citations

TRACES_SUBDIR = "traces"


def conflict_check_for(policy: Policy, llm: LLMConfig | None) -> ConflictCheck | None:
    """The LLM-adjudicated conflict check when a model is configured and the policy's preset checks
    conflicts (the full loop), else the default."""
    if llm is None or not policy.preset.checks_conflicts:
        return None
    # pydantic-ai and openai cost a second or more to import: only a configured model pays for them.
    from evidence_loop.agent.llm_adjudicator import build_adjudicator

    return ConflictChecker(build_adjudicator(config=llm))


MAX_QUESTION_CHARS = 2000  # the default of the service and of the HTTP API's limit


def _trace_store(index: Location, folder: Path | None) -> TraceStore:
    """Traces in ``folder`` if given, else beside the store: ``INDEX/traces``, or the database's tables."""
    if folder is None and is_url(index):
        from evidence_loop.traces.pg_store import PgTraceStore

        return PgTraceStore(str(index))
    # fdatasync: the trace's bytes are durable before the outcome returns, without a metadata flush
    return TraceStore(folder or Path(index) / TRACES_SUBDIR, fsync=os.fdatasync)


def check_question(question: str, limit: int = MAX_QUESTION_CHARS) -> None:
    """A question is non-empty text of bounded length; anything else is the caller's error."""
    if not question.strip():
        raise InputError("the question is empty")
    if len(question) > limit:
        raise QuestionTooLongError(f"the question has {len(question)} characters; the limit is {limit}")


class Service:
    """Ask questions, manage documents and audit runs over one index folder."""

    def __init__(
        self,
        store: Store,
        *,
        policy: Policy | None = None,
        traces: TraceStore | None = None,
        conflict_check: ConflictCheck | None = None,
        replay_conflicts: ConflictFactory | None = None,
        llm_info: Mapping[str, object] | None = None,
        deps: Deps | None = None,
        question_chars: int = MAX_QUESTION_CHARS,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.reranker = reranker
        self.question_chars = question_chars
        self.policy = policy or Policy()
        self.traces = traces
        self.deps = deps or Deps()
        self.controller = Controller(self.policy, conflict_check, self.deps, embedder, reranker)
        self.replay_conflicts = replay_conflicts
        self.llm_info = dict(llm_info or {})
        self._write_lock = threading.Lock()
        self._scale: tuple[int, CorpusScale | None] | None = None
        if embedder is not None:
            # Every write through this service (or its store) measures the scale when due. The LLM
            # conflict check is left out: the judge's signals are read before it would be asked.
            store.keep_scale_with(ScaleKeeper(Controller(self.policy, None, Deps(), embedder, reranker)))

    @classmethod
    def open(
        cls,
        index: Location,
        *,
        create: bool = False,
        traces: Path | None = None,
        tracing_on: bool = True,
        policy: Policy | None = None,
        question_chars: int = MAX_QUESTION_CHARS,
        embedder: Embedder | EmbedConfig | Literal["configured"] | None = "configured",
        reranker: Reranker | RerankConfig | Literal["configured"] | None = "configured",
        llm: LLMConfig | Literal["configured"] | None = "configured",
    ) -> Service:
        """A service over ``index`` (a folder, or a PostgreSQL URL); traces default to
        ``index/traces``. The embedder, the reranker and the conflict check's LLM are the ones the
        environment configures (``tools.embed_config``, ``tools.rerank_config``,
        ``tools.llm_config``) unless given, as an object or its config (None: lexical only, no
        reranker, the offline conflict rules). Use it as a context manager, or call ``close``."""
        if embedder == "configured":
            embedder = EmbedConfig.from_env(os.environ)
        if isinstance(embedder, EmbedConfig):
            embedder = build_embedder(embedder)
        if reranker == "configured":
            reranker = RerankConfig.from_env(os.environ)
        if isinstance(reranker, RerankConfig):
            reranker = build_reranker(reranker)
        if llm == "configured":
            llm = LLMConfig.from_env(os.environ)
        store = open_store(index, create=create, embedder=embedder)
        policy = policy or Policy()
        check = conflict_check_for(policy, llm)
        trace_store = _trace_store(index, traces) if tracing_on else None
        llm_info = llm.public() if llm is not None else {}
        return cls(
            store,
            policy=policy,
            traces=trace_store,
            conflict_check=check,
            llm_info=llm_info,
            question_chars=question_chars,
            embedder=embedder,
            reranker=reranker,
        )

    def snapshot(self) -> Snapshot:
        """The latest committed snapshot (picks up ingests made by other processes)."""
        self.store.refresh()
        return self.store.snapshot()

    def settle(self) -> None:
        """For a long-running process: load the index now, follow the store's new generations from
        now on, and keep the collector off the loaded index."""
        self.snapshot()
        self.store.watch()
        freeze_heap()

    def store_reachable(self) -> bool:
        """False while a shared store cannot be reached (questions are answered from the held snapshot)."""
        return self.store.reachable

    def ask(
        self,
        question: str,
        groups: Collection[str] = (),
        *,
        caller: str | None = None,
        timeout_s: float | None = None,
    ) -> Outcome:
        """Run the loop for one question against the current snapshot, traced when tracing is on.

        Past ``timeout_s`` the run stops at its next step with ``DeadlineExceeded``; its trace is
        left incomplete (it ends with an ``aborted`` event), never half-written.
        """
        check_question(question, self.question_chars)
        snapshot = self.snapshot()
        run_id = self.deps.new_run_id()
        with structlog.contextvars.bound_contextvars(run_id=run_id):
            outcome = self._run(snapshot, question, groups, run_id, caller, timeout_s)
            logs.log_run(outcome, caller=caller)
        return outcome

    def _run(
        self,
        snapshot: Snapshot,
        question: str,
        groups: Collection[str],
        run_id: str,
        caller: str | None,
        timeout_s: float | None,
    ) -> Outcome:
        scale = self.scale(snapshot)
        if self.traces is None:
            return self.controller.ask(
                snapshot, question, groups, run_id=run_id, timeout_s=timeout_s, scale=scale
            )
        head = tracing.header(
            run_id,
            question,
            groups,
            snapshot,
            self.policy,
            self.deps,
            caller=caller,
            llm=self.llm_info,
            embedder=self.controller.embedder_for(snapshot),
            scale=scale,
            reranker=self.controller.reranker_for(),
        )
        with self.traces.begin(head) as writer:
            recorder = tracing.TraceRecorder(writer)
            outcome = self.controller.ask(
                snapshot, question, groups, recorder=recorder, run_id=run_id, timeout_s=timeout_s, scale=scale
            )
            final = writer.finish(outcome.status, versions_read=tracing.versions_read(outcome))
        return outcome.model_copy(update={"trace": TraceRef(id=run_id, hash=final)})

    def scale(self, snapshot: Snapshot) -> CorpusScale | None:
        """The corpus's scale for the judge, when the run will have vectors (read once per generation)."""
        if self.controller.embedder_for(snapshot) is None:
            return None
        cached = self._scale
        if cached is None or cached[0] != snapshot.generation:
            cached = (snapshot.generation, self.store.scale())
            self._scale = cached
        return cached[1]

    def calibrate(self, *, force: bool = False) -> CorpusScale | None:
        """Measure the corpus's own scale now when due, or ``force`` (``Store.measure_scale``); every
        write measures it by itself when due, so this is for a store written by an older version."""
        with self._write_lock:
            scale = self.store.measure_scale(force=force)
        self._scale = None
        return scale

    def judge_gap(self) -> JudgeGap | None:
        """Why the calibrated judge cannot decide on the current corpus (``agent.calibrate.judge_gap``),
        or None when it can."""
        snapshot = self.snapshot()
        return judge_gap(snapshot, self.scale(snapshot), self.controller)

    def _trace_store(self) -> TraceStore:
        if self.traces is None:
            raise RuntimeError("tracing is off for this service")
        return self.traces

    def trace(self, run_id: str) -> Trace:
        """A stored run's trace as written (a schema 2 trace cites text: ``shown`` resolves it)."""
        return self._trace_store().read(run_id)

    def shown(self, trace: Trace) -> Trace:
        """The trace as a reader sees it: the text its steps cite read from this service's store."""
        return resolve(trace, tracing.stored_texts(self.store))

    def verify(self, run_id: str) -> VerifyResult:
        """The chain, the end its store recorded, and each cited text against its sha256."""
        traces = self._trace_store()
        trace = traces.read(run_id)
        return with_citations(traces.check(trace), trace, tracing.stored_texts(self.store))

    def replay(self, run_id: str, *, current: bool = False) -> ReplayReport:
        """Replay a stored run; ``TamperedTraceError`` when its trace does not verify (nothing re-run)."""
        trace = self.trace(run_id)
        verdict = self._trace_store().check(trace)
        return replay(
            trace,
            self.store,
            current=current,
            conflicts=self.replay_conflicts,
            verdict=verdict,
            embedder=self.embedder,
        )

    def ingest(self, docs: Iterable[DocumentInput], *, replace: bool = False) -> IngestReport:
        """Ingest a batch atomically; writers are serialised, readers keep their snapshot meanwhile.
        The corpus's scale is measured in the same transaction when the batch makes it due."""
        with self._write_lock:
            return self.store.ingest(docs, replace=replace)

    def delete(self, doc_id: str) -> None:
        with self._write_lock:
            self.store.delete(doc_id)

    def documents(self) -> Sequence[DocumentInfo]:
        return self.store.documents()

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the trace store, the store and the reranker's connections."""
        if self.traces is not None:
            self.traces.close()
        self.store.close()
        if self.reranker is not None:
            self.reranker.close()
