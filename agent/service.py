"""The library's front object: one store, one controller, the trace store; what the CLI and HTTP API call.

Each question runs against one snapshot taken when it starts, so an ingest that lands meanwhile is
either wholly visible to a question or not at all. Each run is traced (when a trace store is set):
the trace is written before the outcome is returned, and made durable (fdatasync) by the journal's
thread at most ``trace_sync_ms`` later (0: before the outcome is returned).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import structlog

from evidence_loop.agent import logs, settings
from evidence_loop.agent.access.run_access import may_see, reading_with
from evidence_loop.agent.access.write_access import Writer
from evidence_loop.agent.loop import tracing
from evidence_loop.agent.loop.async_door import AsyncDoor
from evidence_loop.agent.loop.calibrate import JudgeGap, ScaleKeeper, judge_gap
from evidence_loop.agent.loop.conflict_check import ConflictChecker
from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.loop.history import HistoryItem, RunCache, taken_history, turns_of
from evidence_loop.agent.loop.replay import ConflictFactory, ReplayReport, replay
from evidence_loop.agent.loop.run_export import SpanSink, Watch, configured_sink, watching
from evidence_loop.agent.loop.runtime import ConflictCheck, Deps, freeze_heap
from evidence_loop.agent.outcome import NotTraced, Outcome, TraceRef
from evidence_loop.policies.config import Policy, load_policy_file
from evidence_loop.policies.question.followup import Turn
from evidence_loop.tools.errors import (
    InputError,
    NotFoundError,
    QuestionTooLongError,
    TraceStoreUnavailableError,
    UnwrittenTraceError,
)
from evidence_loop.tools.inputs import check_unicode
from evidence_loop.tools.models.embedder import build_embedder
from evidence_loop.tools.models.embedder_config import EmbedConfig
from evidence_loop.tools.models.embedding import Embedder
from evidence_loop.tools.models.llm_config import ConflictLLMConfig
from evidence_loop.tools.models.reranker import Reranker, build_reranker
from evidence_loop.tools.models.reranker_config import RerankConfig
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.calibration import CorpusScale
from evidence_loop.tools.store.folder import DocumentInfo, IngestReport, Store
from evidence_loop.tools.store.location import Location, open_store
from evidence_loop.tools.store.pg import is_url
from evidence_loop.tools.types import DocumentInput, Hit
from evidence_loop.traces import Trace, TraceStore, VerifyResult
from evidence_loop.traces.verification.citations import resolve, with_citations

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

TRACES_SUBDIR = "traces"
WhenTracesFail = Literal["refuse", "answer-untraced"]
"""What a run does when its trace cannot be written: no answer (the default: every answer has its
audit record), or an answer whose outcome says it was not traced."""
WHEN_TRACES_FAIL: tuple[WhenTracesFail, ...] = ("refuse", "answer-untraced")
log = logging.getLogger(__name__)


def conflict_check_for(policy: Policy, llm: ConflictLLMConfig | None) -> ConflictCheck | None:
    """The LLM-adjudicated conflict check when a model is configured and the policy's preset checks
    conflicts (the full loop), else the default."""
    if llm is None or not policy.preset.checks_conflicts:
        return None
    # pydantic-ai and openai cost a second or more to import: only a configured model pays for them.
    from evidence_loop.agent.loop.llm_adjudicator import build_adjudicator

    return ConflictChecker(build_adjudicator(config=llm))


def configured_policy() -> Policy:
    """The policy file the settings name (``EVLOOP_POLICY``, the configuration file's
    ``policy_file``), else the shipped policy."""
    named = settings.current().get("policy_file")
    return load_policy_file(Path(named)) if named else Policy()


MAX_QUESTION_CHARS = 2000  # the default of the service and of the HTTP API's limit
TRACE_SYNC_MS = 10  # folder traces: synced by the journal's thread at most this long after the outcome


def default_trace_store(index: Location, folder: Path | None) -> TraceStore:
    """Traces in ``folder`` if given, else beside the store: ``INDEX/traces``, or the database's tables."""
    if folder is None and is_url(index):
        from evidence_loop.traces.stores.pg_store import PgTraceStore

        return PgTraceStore(str(index))
    # fdatasync: the trace's bytes made durable without a metadata flush, by the run (trace_sync_ms
    # 0) or by the journal's thread within that many ms of the outcome (the frame is written first)
    within = trace_sync_within(settings.current().get("trace_sync_ms"))
    return TraceStore(folder or Path(index) / TRACES_SUBDIR, fsync=os.fdatasync, sync_within=within)


def trace_sync_within(value: str | None) -> float | None:
    """The ``trace_sync_ms`` setting in seconds (None for 0: each run waits for its own sync);
    ``InputError`` for anything but a whole number of milliseconds from 0 to 1000."""
    text = (value or "").strip() or str(TRACE_SYNC_MS)  # the setting's default, for a caller without it
    if not text.isascii() or not text.isdigit() or int(text) > 1000:
        raise InputError(f"trace_sync_ms must be a whole number of milliseconds from 0 to 1000, not {text!r}")
    return int(text) / 1000 or None


def untraced_reason(exc: TraceStoreUnavailableError) -> str:
    """What an outcome answered without its trace says about it (no server path in it)."""
    return f"not traced: {exc.reason} where traces are kept; answered untraced by the operator's choice"


def check_question(question: str, limit: int = MAX_QUESTION_CHARS, what: str = "the question") -> None:
    """A question is non-empty Unicode text of bounded length; anything else is the caller's error."""
    if not question.strip():
        raise InputError(f"{what} is empty")
    if len(question) > limit:
        raise QuestionTooLongError(f"{what} has {len(question)} characters; the limit is {limit}")
    check_unicode(question, what)


def check_caller(groups: Collection[str], caller: str | None) -> None:
    """The groups and the caller's name a run records are Unicode text (its trace hashes them)."""
    for group in groups:
        check_unicode(group, "a group")
    if caller is not None:
        check_unicode(caller, "the caller")


def _readable(snapshot: Snapshot, doc_id: str, version: str, groups: Collection[str]) -> bool:
    try:
        return snapshot.readable(doc_id, version, groups)
    except NotFoundError:
        return False


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
        when_traces_fail: WhenTracesFail = "refuse",
        async_running: int | None = None,
        spans: TracerProvider | SpanSink | None = None,
    ) -> None:
        self.store = store
        # runs as spans for a team's tracing tools (agent.loop.run_export), or None
        self.spans = configured_sink(spans) if spans is not None else None
        self.when_traces_fail = when_traces_fail
        self._trace_failure: TraceStoreUnavailableError | None = None  # the last, until a trace is written
        self.embedder = embedder
        self.reranker = reranker
        self.question_chars = question_chars
        self.policy = policy or Policy()
        self.traces = traces
        self.deps = deps or Deps()
        self.controller = Controller(self.policy, conflict_check, self.deps, embedder, reranker)
        self.replay_conflicts = replay_conflicts
        self.llm_info = tracing.as_json(llm_info or {})  # as a trace header holds it: made once
        self._write_lock = threading.Lock()
        self._scale: tuple[int, CorpusScale | None] | None = None
        self._runs = RunCache()  # earlier turns read back by run id (agent.loop.history)
        self._door = AsyncDoor(async_running)  # aask's threads, started on its first question
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
        llm: ConflictLLMConfig | Literal["configured"] | None = "configured",
        when_traces_fail: WhenTracesFail = "refuse",
        async_running: int | None = None,
        spans: TracerProvider | SpanSink | Literal["configured"] | None = "configured",
    ) -> Service:
        """A service over ``index`` (a folder, or a PostgreSQL URL); traces default to
        ``index/traces``. The policy, the embedder, the reranker and the conflict check's LLM are
        the ones the settings configure (``agent.settings``: the environment over the configuration
        file; ``EVLOOP_POLICY`` names a policy file, see ``tools.models.embedder_config``,
        ``tools.models.reranker_config``, ``tools.models.llm_config``) unless given, as an object or its
        config (None: lexical only, no reranker, the offline conflict rules). ``async_running`` bounds
        the questions ``aask`` runs at once (``agent.loop.async_door``). ``spans`` exports each run as
        OpenTelemetry spans: as the settings say (``otel``, ``otel_endpoint``; off by default), with
        an application's own tracer provider, or not at all (None). Use it as a context manager, or
        call ``close``."""
        configured = settings.current().environ()  # the environment over the configuration file
        if embedder == "configured":
            embedder = EmbedConfig.from_env(configured)
        if isinstance(embedder, EmbedConfig):
            embedder = build_embedder(embedder)
        if reranker == "configured":
            reranker = RerankConfig.from_env(configured)
        if isinstance(reranker, RerankConfig):
            reranker = build_reranker(reranker)
        if llm == "configured":
            llm = ConflictLLMConfig.from_env(configured)
        store = open_store(index, create=create, embedder=embedder)
        policy = policy or configured_policy()
        check = conflict_check_for(policy, llm)
        trace_store = default_trace_store(index, traces) if tracing_on else None
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
            when_traces_fail=when_traces_fail,
            async_running=async_running,
            spans=configured_sink(spans),
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
        history: Sequence[HistoryItem] | None = None,
    ) -> Outcome:
        """Run the loop for one question against the current snapshot, traced when tracing is on.

        Past ``timeout_s`` the run stops at its next step with ``DeadlineExceeded``; its trace is
        left incomplete (it ends with an ``aborted`` event), never half-written.

        ``history`` holds the earlier turns of the conversation, oldest first: each a question
        string, or ``{"question": ..., "run_id": ...}`` (a ``run_id`` is read back from the trace
        store, ``NotFoundError`` when there is none or ``groups`` could not read it). A follow-up
        ("它是哪一年推出的", "what about the Premium plan?") is resolved from them by rule
        (``policies.question.followup``) and the trace records what was carried from which turn.
        At most ``MAX_HISTORY_TURNS`` (32) turns are taken; the last ``policy.followup_turns`` of
        them are read, and only those reach the loop and its trace.

        Every text is checked first (``InputError``): a question empty, too long or not Unicode (a
        lone surrogate), a group or a turn likewise (``tools.inputs``, as every door checks them).
        """
        check_question(question, self.question_chars)
        check_caller(groups, caller)
        read = taken_history(history, self.policy.followup_turns)
        snapshot = self.snapshot()
        turns = turns_of(read, lambda run_id, text: self.turn(run_id, groups, text, snapshot))
        for turn in turns:
            check_question(turn.text, self.question_chars, "a history turn")
        run_id = self.deps.new_run_id()
        with structlog.contextvars.bound_contextvars(run_id=run_id):
            outcome = self._run(snapshot, question, groups, run_id, caller, timeout_s, turns)
            logs.log_run(outcome, caller=caller)
        return outcome

    def search(
        self, query: str, k: int = 10, groups: Collection[str] = (), *, snapshot: Snapshot | None = None
    ) -> list[Hit]:
        """The ``k`` units recall finds for ``query`` among those ``groups`` may read, as a question's
        first recall finds them (``Controller.search``: hybrid when the index's vectors are this
        embedder's; ``EmbedderError`` when they are another's), in ``snapshot`` (default: the latest).
        Untraced: nothing is decided."""
        if k < 1:
            raise InputError(f"k must be positive, not {k}")
        check_question(query, self.question_chars, "the query")
        check_caller(groups, None)
        return self.controller.search(snapshot or self.snapshot(), query, k, groups)

    async def aask(
        self,
        question: str,
        groups: Collection[str] = (),
        *,
        caller: str | None = None,
        timeout_s: float | None = None,
        history: Sequence[HistoryItem] | None = None,
    ) -> Outcome:
        """``ask`` for asyncio: the same loop, run in a worker thread (at most ``async_running`` at
        once, the others waiting without a thread), its LLM conflict check awaited on the caller's
        event loop; the same outcome, trace and replay (``agent.loop.async_door``)."""
        work = partial(self.ask, question, groups, caller=caller, timeout_s=timeout_s, history=history)
        return await self._door.run(work)

    def _run(
        self,
        snapshot: Snapshot,
        question: str,
        groups: Collection[str],
        run_id: str,
        caller: str | None,
        timeout_s: float | None,
        history: Sequence[Turn] = (),
    ) -> Outcome:
        if self.spans is None:  # export off: nothing watched
            return self._traced(snapshot, question, groups, run_id, caller, timeout_s, history, None)
        with watching(self.spans, snapshot, groups, run_id, question, caller) as watch:
            watch.outcome = self._traced(
                snapshot, question, groups, run_id, caller, timeout_s, history, watch
            )
            return watch.outcome

    def _traced(
        self,
        snapshot: Snapshot,
        question: str,
        groups: Collection[str],
        run_id: str,
        caller: str | None,
        timeout_s: float | None,
        history: Sequence[Turn],
        watch: Watch | None,
    ) -> Outcome:
        scale = self.scale(snapshot)
        if self.traces is None:
            return self.controller.ask(
                snapshot, question, groups, recorder=watch.around(None) if watch else None, run_id=run_id,
                timeout_s=timeout_s, scale=scale, history=history,
            )  # fmt: skip
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
        untraced = self.when_traces_fail == "answer-untraced"
        outcome: Outcome | None = None
        try:
            with self.traces.begin(head) as writer:
                written = tracing.UntracedRecorder(writer) if untraced else tracing.TraceRecorder(writer)
                recorder = watch.around(written) if watch is not None else written
                outcome = self.controller.ask(
                    snapshot, question, groups, recorder=recorder, run_id=run_id, timeout_s=timeout_s,
                    scale=scale, history=history,
                )  # fmt: skip
                if isinstance(written, tracing.UntracedRecorder) and written.failure is not None:
                    raise written.failure
                final = writer.finish(outcome.status, versions_read=tracing.versions_read(outcome))
        except TraceStoreUnavailableError as exc:
            self._trace_failure = exc
            if not untraced:
                raise  # fail closed: no answer without its audit record
            log.warning("answering untraced", extra={"run_id": run_id, "error": str(exc)})
            if outcome is None:  # the trace could not be begun: the question has not run yet
                outcome = self.controller.ask(
                    snapshot, question, groups, run_id=run_id, timeout_s=timeout_s, scale=scale,
                    history=history,
                )  # fmt: skip
            return outcome.model_copy(update={"trace": NotTraced(id=run_id, reason=untraced_reason(exc))})
        self._trace_failure = None
        return outcome.model_copy(update={"trace": TraceRef(id=run_id, hash=final)})

    def turn(
        self, run_id: str, groups: Collection[str], text: str | None = None, snapshot: Snapshot | None = None
    ) -> Turn:
        """An earlier turn read back from its run: the question it resolved to and the documents its
        evidence came from that ``groups`` may read. ``NotFoundError`` when there is no such run or
        it read with groups these do not cover (the same answer either way)."""
        try:
            run = self._runs.get(run_id, self.trace) if self.traces is not None else None
        except (NotFoundError, UnwrittenTraceError):  # a run never recorded has no trace to read
            run = None
        if run is None or not may_see(reading_with(groups), run.owner, run.groups):
            raise NotFoundError(f"no trace for run {run_id!r}")
        snapshot = snapshot or self.snapshot()
        current = snapshot.current_versions()  # a document since deleted or closed to them lends nothing
        docs = tuple(
            d for d in sorted(run.doc_ids) if d in current and _readable(snapshot, d, current[d], groups)
        )
        return Turn(text or run.question, run_id, run.resolved, docs)

    def traces_writable(self) -> TraceStoreUnavailableError | None:
        """None when a trace can be written now; else why not. Cheap: after a failed trace, or on a
        (nearly) full disk, it writes a small probe file (``TraceStore.probe``)."""
        if self.traces is None:
            return None
        failure = self.traces.probe(failed=self._trace_failure is not None)
        if failure is None:
            self._trace_failure = None
        return failure

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
        """Why the calibrated judge cannot decide on the current corpus (``agent.loop.calibrate.judge_gap``),
        or None when it can."""
        snapshot = self.snapshot()
        return judge_gap(snapshot, self.scale(snapshot), self.controller)

    def _require_traces(self) -> TraceStore:
        if self.traces is None:
            raise RuntimeError("tracing is off for this service")
        return self.traces

    def trace(self, run_id: str) -> Trace:
        """A stored run's trace as written (a schema 2 trace cites text: ``shown`` resolves it)."""
        return self._require_traces().read(run_id)

    def shown(self, trace: Trace) -> Trace:
        """The trace as a reader sees it: the text its steps cite read from this service's store."""
        return resolve(trace, tracing.stored_texts(self.store))

    def verify(self, run_id: str) -> VerifyResult:
        """The chain, the end its store recorded, and each cited text against its sha256."""
        traces = self._require_traces()
        trace = traces.read(run_id)
        return with_citations(traces.check(trace), trace, tracing.stored_texts(self.store))

    def replay(self, run_id: str, *, current: bool = False) -> ReplayReport:
        """Replay a stored run; ``TamperedTraceError`` when its trace does not verify (nothing re-run)."""
        trace = self.trace(run_id)
        verdict = self._require_traces().check(trace)
        return replay(
            trace,
            self.store,
            current=current,
            conflicts=self.replay_conflicts,
            verdict=verdict,
            embedder=self.embedder,
        )

    def ingest(
        self,
        docs: Iterable[DocumentInput],
        *,
        replace: bool = False,
        writer: Writer | None = None,
        source: str | None = None,
        prune: bool = False,
        dry_run: bool = False,
    ) -> IngestReport:
        """Ingest a batch atomically; writers are serialised, readers keep their snapshot meanwhile.
        The corpus's scale is measured in the same transaction when the batch makes it due.

        A document without a version label gets one (``tools.store.labels``): unchanged, it is left
        alone; changed, it becomes the next version and the old one stays for replay. ``source``
        names where the batch comes from (recorded for each document); ``prune`` then retires that
        source's documents the batch no longer holds (no longer answered, their versions kept).
        ``dry_run`` reports what the batch would do and writes nothing.

        With a ``writer``, each document must be one it may write (``agent.access.write_access``), checked
        inside the write's transaction; a refusal (WriteRefusedError) writes nothing of the batch.
        """
        if prune and source is None:
            raise InputError("a prune needs the source whose documents it retires")
        batch = list(docs)
        sources = {doc.doc_id: source for doc in batch} if source is not None else None
        guard = writer.guard() if writer is not None else None
        with self._write_lock:
            return self.store.ingest(
                batch,
                replace=replace,
                guard=guard,
                sources=sources,
                prune=(source,) if prune and source is not None else (),
                dry_run=dry_run,
            )

    def delete(self, doc_id: str, *, writer: Writer | None = None) -> None:
        """Retire a document: no longer answered, its versions kept for replay and audit; with a
        ``writer``, only one it may write (as for ``ingest``)."""
        guard = writer.guard() if writer is not None else None
        with self._write_lock:
            self.store.delete(doc_id, guard=guard)

    def documents(self) -> Sequence[DocumentInfo]:
        return self.store.documents()

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Wait for ``aask``'s questions in flight; close the trace store, the store and the
        reranker's connections."""
        self._door.close()
        if self.spans is not None:
            self.spans.close()
        if self.traces is not None:
            self.traces.close()
        self.store.close()
        if self.reranker is not None:
            self.reranker.close()
