"""The evidence loop: the data flow of docs/design.md in code. It only orchestrates:

    embed the question -> seed recall -> grow each seed window (directional sliding)
    -> check: rerank, select the evidence, judge it, list what is missing
    -> wider recall and check again while a query can name what is missing
    -> conflict check -> decision -> outcome

Every threshold and rule lives in ``policies`` (the mode's preset in ``policies.presets``); every
mechanism in ``tools``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import ParamSpec

from evidence_loop.agent.loop import assemble, events
from evidence_loop.agent.loop.conflict_check import ConflictChecker
from evidence_loop.agent.loop.conversation import ambiguity, resolution_for, skipped, with_prior
from evidence_loop.agent.loop.growth import Grower, StepReport
from evidence_loop.agent.loop.runtime import (
    ConflictCheck,
    ConflictReport,
    Deps,
    NullRecorder,
    PlainRecorder,
    Recorder,
    no_conflict_check,
)
from evidence_loop.agent.loop.wider import wider_lookup
from evidence_loop.agent.outcome import Evidence, Outcome
from evidence_loop.policies.config import Policy
from evidence_loop.policies.conflicts.meaning import asked_kinds
from evidence_loop.policies.decision.answer import answer_units, unquotable
from evidence_loop.policies.decision.judge import JudgeVerdict, judge, judge_signals
from evidence_loop.policies.decision.messages import language_of
from evidence_loop.policies.decision.missing import (
    answer_notes,
    missing_pieces,
    should_widen,
    widened_query,
)
from evidence_loop.policies.decision.rerank import rerank_pool, rerank_text, reranked
from evidence_loop.policies.decision.signals import evidence_signals
from evidence_loop.policies.decision.status import asked_back, status_of
from evidence_loop.policies.evidence.absorption import absorb
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.comparison import sides_to_cover
from evidence_loop.policies.evidence.directives import addressed_families, addressed_units, screened_window
from evidence_loop.policies.evidence.reading import read_for_shape
from evidence_loop.policies.evidence.selection import (
    conflict_extras,
    regrown,
    runner_policy,
    select_evidence,
    shortlist,
    statement_span,
)
from evidence_loop.policies.evidence.slot_scope import on_subject
from evidence_loop.policies.question.analysis import Question, analyse, reading_of
from evidence_loop.policies.question.followup import Resolution, Turn, prior_first, with_carried_sides
from evidence_loop.policies.question.scopes import scope_statement
from evidence_loop.policies.question.shape import Shape, shape_of
from evidence_loop.policies.types import MissingPiece
from evidence_loop.tools.errors import DeadlineExceeded, EmbedderError
from evidence_loop.tools.models.embedding import Embedder, EmbedderIdentity, Vectors
from evidence_loop.tools.models.reranker import Reranker, RerankerIdentity
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.calibration import CorpusScale
from evidence_loop.tools.types import Hit, Unit
from evidence_loop.tools.windows import Step, Window, merge_windows, seed_window, seeds_of, units_within
from evidence_loop.traces.records.steps import AnyStep, Made

P = ParamSpec("P")


def _quiet(window: Window, step: Step) -> None:
    """Regrowing a runner-up is not a new step of the run."""


def default_conflict_check(policy: Policy) -> ConflictCheck:
    """The offline rules when the policy's preset checks conflicts (the full loop), else nothing.

    The service wires the LLM adjudicator in when one is configured (``agent.service``).
    """
    return ConflictChecker() if policy.preset.checks_conflicts else no_conflict_check


@dataclass(slots=True)
class Run:
    """The state of one run: what was recalled and grown so far."""

    question: Question
    shape: Shape  # what kind of answer the question wants (policies.question.shape): how much is read for it
    groups: tuple[str, ...]
    recorder: Recorder  # a NullRecorder when the run is not traced
    items: list[Checked] = field(default_factory=list)
    seen: set[tuple[str, str, int]] = field(default_factory=set)
    # sentences addressed to a model, met in recall or in a grown window: set aside, listed in the outcome
    suspicious: dict[tuple[str, str, int], tuple[Unit, str]] = field(default_factory=dict)
    recalls: int = 0
    slides: int = 0
    scale: CorpusScale | None = None  # the corpus's own scale for the judge (tools.store.calibration)
    verdict: JudgeVerdict | None = None  # the judge's last verdict
    notes: list[MissingPiece] = field(default_factory=list)  # what an answer notes beside it (last check)
    deadline: float | None = None  # on the deps clock; checked at every step boundary
    clock: Callable[[], float] = time.perf_counter
    inline_text: bool = False  # the steps copy the text they cite, as schema 1 traces did (a replay of one)
    # a follow-up (policies.question.followup): the question as asked, and how earlier turns completed it
    resolution: Resolution | None = None
    quoted: list[tuple[int, Unit]] | None = None  # the answer's units, once read for the wider lookup

    def set_aside(self, found: Iterable[tuple[Unit, str]]) -> None:
        """Note sentences addressed to a model (with their families), once each, for the outcome."""
        for unit, family in found:
            self.suspicious.setdefault((unit.doc_id, unit.version, unit.ordinal), (unit, family))

    def record(self, build: Callable[P, AnyStep], *args: P.args, **kwargs: P.kwargs) -> None:
        """Record the step ``build`` makes of ``args``; an untraced run does not make it. A step made
        as plain data goes to the trace writer as it is, to any other recorder typed."""
        if isinstance(self.recorder, NullRecorder):
            return
        step = build(*args, **kwargs)
        if isinstance(self.recorder, PlainRecorder):
            self.recorder.record(step)
        else:
            self.recorder.record(step.typed() if isinstance(step, Made) else step)

    def on_time(self, step: str) -> None:
        """Raise ``DeadlineExceeded`` once the run's time is up (cooperative: between steps, never inside)."""
        if self.deadline is not None and self.clock() > self.deadline:
            raise DeadlineExceeded(
                f"the run ran out of time before {step} ({self.recalls} recalls, {self.slides} slides)"
            )


class Controller:
    """Runs the loop for one question against one snapshot of the store."""

    def __init__(
        self,
        policy: Policy | None = None,
        conflict_check: ConflictCheck | None = None,
        deps: Deps | None = None,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        self.policy = policy or Policy()
        self.embedder = embedder
        self.reranker = reranker
        check = conflict_check or default_conflict_check(self.policy)
        # the conflict rules this policy sets (an old trace's policy has the later switches off)
        self.conflict_check = check.under(self.policy) if isinstance(check, ConflictChecker) else check
        self.deps = deps or Deps()
        self._runner_policy = runner_policy(self.policy)  # once: a policy has many fields to copy

    def ask(
        self,
        snapshot: Snapshot,
        question: str,
        groups: Collection[str] = (),
        recorder: Recorder | None = None,
        run_id: str | None = None,
        timeout_s: float | None = None,
        scale: CorpusScale | None = None,
        vector: Vectors | None = None,
        inline_text: bool = False,
        history: Sequence[Turn] = (),
    ) -> Outcome:
        """Answer one question from one snapshot: answered, insufficient_evidence or conflicting_evidence.

        ``scale`` is the corpus's own scale for the sufficiency judge (``Store.scale``); without it
        (or without vectors) the lexical coverage rule decides. ``vector`` is the question's, when
        it is already known (a replay, a batch embedded at once); else the embedder makes it.

        With ``timeout_s`` the run stops at the first step boundary past that time, raising
        ``DeadlineExceeded``: a caller that gave up does not leave the loop running in its thread.

        ``inline_text`` records the steps as schema 1 traces held them, the text they cite copied in
        (a replay of such a trace compares like with like).

        ``history`` holds the earlier turns of the conversation, oldest first: a follow-up is run as
        the question they complete (policies.question.followup), recorded as the run's ``resolved`` step.
        """
        started = self.deps.clock()
        readers = tuple(sorted(set(groups)))
        recorder = recorder or NullRecorder()
        resolution = resolution_for(self.policy, question, history)
        resolution = with_prior(self.policy, snapshot, resolution, readers)
        text = resolution.text if resolution is not None else question
        vector = self.embed(snapshot, text, recorder, vector)
        if resolution is not None and not isinstance(recorder, NullRecorder):
            recorder.record(events.resolved(history, resolution, skipped(self.policy, history)))
        analysed = with_carried_sides(self.analyse(snapshot, text, readers, vector), resolution)
        run = Run(
            analysed,
            shape_of(analysed),
            readers,
            recorder,
            scale=scale,
            deadline=None if timeout_s is None else started + timeout_s,
            clock=self.deps.clock,
            inline_text=inline_text,
            resolution=resolution,
        )
        self.recall(snapshot, run, text, self.policy.seed_k)
        selected, missing = self.check(run)
        while should_widen(missing, run.recalls, self.policy):
            run.on_time("the wider recall")
            self.recall(snapshot, run, widened_query(run.question, missing), self.policy.wider_k)
            selected, missing = self.check(run)
        run.on_time("the conflict check")
        evidence, report = self.conflicts(snapshot, run, selected, answers=not missing)
        ambiguous = ambiguity(self.policy, snapshot, run.resolution, selected, run.groups)
        missing, blocking = asked_back(ambiguous, missing, report.blocking)  # "which one?" first
        report = ConflictReport(report.conflicts, blocking, report.llm_calls)
        outcome = self.decide(run, selected, evidence, missing, report, run_id or self.deps.new_run_id())
        latency = round((self.deps.clock() - started) * 1000, 3)
        run.record(events.decided, outcome, inline_text=run.inline_text)
        return outcome.model_copy(update={"latency_ms": latency})

    def analyse(
        self, snapshot: Snapshot, text: str, readers: tuple[str, ...], vector: Vectors | None
    ) -> Question:
        """The question analysed once; spelling and term weights read only what these groups may read
        (tools.search.snapshot)."""
        scoped, policy = self.policy.caller_statistics, self.policy
        return analyse(
            text,
            partial(snapshot.term_weights, groups=readers, scoped=scoped),
            partial(snapshot.spelled, groups=readers, scoped=scoped, min_chars=policy.typo_min_chars),
            snapshot.cosines(vector, readers) if vector is not None else None,
            snapshot.terms_for(readers, scoped=scoped),
            reading_of(policy),
        )

    def embedder_for(self, snapshot: Snapshot) -> EmbedderIdentity | None:
        """The embedder a run on this snapshot uses: recall is hybrid when the index has vectors,
        an embedder is configured and the policy wants them."""
        if not self.policy.dense_recall or self.embedder is None:
            return None
        return snapshot.embedder

    def reranker_for(self) -> RerankerIdentity | None:
        """The cross-encoder a run's checks ask, when one is configured and the policy reranks."""
        return self.reranker.identity if self.reranker is not None and self.policy.rerank_k else None

    def embed(
        self, snapshot: Snapshot, question: str, recorder: Recorder, given: Vectors | None = None
    ) -> Vectors | None:
        """The question's vector when recall is hybrid (recorded as the run's first step): ``given``
        (a replay's recorded one), else the embedder's."""
        made_by = snapshot.embedder if self.policy.dense_recall else None
        if made_by is None or (self.embedder is None and given is None):
            return None
        vector = given
        if vector is None:
            assert self.embedder is not None
            if self.embedder.identity.key != made_by.key:
                raise EmbedderError(
                    f"the index's vectors were made by {made_by.key}, not {self.embedder.identity.key}"
                )
            vector = self.embedder.queries([question])[0]
        recorder.record(events.embedded(made_by, vector))
        return vector

    def search(self, snapshot: Snapshot, query: str, k: int, groups: Collection[str] = ()) -> list[Hit]:
        """The raw recall step as a run's first recall makes it, before any window grows: hybrid when
        the index has vectors and the policy uses them, lexical otherwise; ``EmbedderError`` when the
        embedder is not the one that made the index's vectors (as for a question)."""
        readers = tuple(sorted(set(groups)))
        vector = self.embed(snapshot, query, NullRecorder())
        return snapshot.search(
            query,
            k,
            groups=readers,
            scoped=self.policy.caller_statistics,
            similarities=snapshot.similarities(vector, readers) if vector is not None else None,
            **self.policy.recall_options(),
        )

    def recall(self, snapshot: Snapshot, run: Run, query: str, k: int) -> None:
        """Seed (or wider) recall, then grow a window around each new hit."""
        cosines, policy = run.question.cosines, self.policy
        prior = run.resolution.prior_docs if run.resolution is not None else ()
        boosted = bool(prior) and policy.followup_doc_boost > 0
        hits = snapshot.search(
            query,
            2 * k if boosted else k,
            groups=run.groups,
            exclude=run.seen,
            scoped=policy.caller_statistics,
            similarities=cosines.similarities if cosines is not None else None,
            **policy.recall_options(),
        )
        if boosted:
            hits = prior_first(hits, prior, policy.followup_doc_boost, k)
        run.recalls += 1
        run.record(events.recalled, query, k, run.recalls, hits, inline_text=run.inline_text)
        run.seen.update((h.unit.doc_id, h.unit.version, h.unit.ordinal) for h in hits)
        best = max((h.score for h in hits), default=0.0)
        for window in merge_windows([seed_window(h) for h in self.screened_hits(run, hits, snapshot)]):
            run.on_time("growing the next window")
            doc = snapshot.parsed(window.doc_id, window.version)
            grower = Grower(run.question, doc, best, self.policy, self.reporter(run))
            run.items = absorb(
                run.question, run.items, self.screened(run, grower, grower.grow(window)), self.policy
            )

    def screened_hits(self, run: Run, hits: list[Hit], snapshot: Snapshot) -> list[Hit]:
        """The hits that may seed a window: a sentence addressed to a model does not."""
        if not self.policy.screen_directives:
            return hits
        found: dict[Unit, str] = {}
        if self.policy.screen_hidden:  # a directive cut in two is seen in its document
            by_doc: dict[tuple[str, str], Mapping[int, str]] = {}
            for h in hits:
                key = (h.unit.doc_id, h.unit.version)
                if (families := by_doc.get(key)) is None:
                    families = by_doc[key] = addressed_families(snapshot.parsed(*key), hidden=True)
                if (family := families.get(h.unit.ordinal)) is not None:
                    found[h.unit] = family
        else:
            found = dict(addressed_units(h.unit for h in hits))
        run.set_aside(found.items())
        return [h for h in hits if h.unit not in found]

    def screened(self, run: Run, grower: Grower, item: Checked) -> Checked:
        """A grown window without the sentences its document addresses to a model (and re-checked)."""
        if not self.policy.screen_directives:
            return item
        window, found = screened_window(item.window, item.doc, self.policy.screen_hidden)
        if window is item.window:
            return item
        run.set_aside(found)
        return Checked(window, item.doc, grower.check(window), item.best)

    def reporter(self, run: Run) -> StepReport:
        def report(window: Window, step: Step) -> None:
            run.slides += 1
            run.record(events.slid, window, step)

        return report

    def conflicts(
        self, snapshot: Snapshot, run: Run, selected: list[Checked], answers: bool = True
    ) -> tuple[list[Evidence], ConflictReport]:
        """Check the evidence and other windows close to it for disagreements; cited ones join it.
        ``answers``: nothing is missing, so the statement that answers is looked beyond (agent.loop.wider)."""
        evidence = assemble.evidence_items(selected)
        others = conflict_extras(on_subject(run.question, run.items, self.policy), selected, self.policy)
        question, policy = run.question, self.policy
        if answers and policy.conflict_wider_k and asked_kinds(question.text):  # read once, quoted in decide
            run.quoted = answer_units(question, selected, policy, run.shape)
        read = [*selected, *others]
        wider, anchor = wider_lookup(snapshot, question, run.groups, run.quoted or [], read, policy)
        others = [*others, *wider]
        extras = assemble.evidence_items(others, first_id=len(evidence) + 1)

        def focus(e: Evidence) -> tuple[int, int] | None:
            units = units_within(snapshot.parsed(e.doc_id, e.version), e.start, e.end)
            return statement_span(run.question, units, self.policy)

        def scope(e: Evidence) -> str:
            return scope_statement(
                snapshot.parsed(e.doc_id, e.version).text[: self.policy.conflict_scope_chars]
            )

        def held(e: Evidence, start: int, end: int) -> tuple[tuple[int, int, int], ...]:
            found = units_within(snapshot.parsed(e.doc_id, e.version), start, end)
            return tuple((u.ordinal, u.start, u.end) for u in found)

        said = scope if self.policy.conflict_scopes else None
        reads_units = self.policy.conflict_meaning or anchor is not None  # by meaning, or the wider pairs
        unit_spans = held if reads_units and run.question.cosines is not None else None
        views = events.views([*evidence, *extras], snapshot.current_versions(), focus, said, unit_spans)
        check = self.conflict_check
        if anchor is not None and isinstance(check, ConflictChecker):
            report = check(run.question, views, run.recorder, anchor)
        else:
            report = check(run.question, views, run.recorder)
        cited = {side.citation.evidence_id for c in report.conflicts for side in c.values}
        return [*evidence, *(e for e in extras if e.evidence_id in cited)], report

    def shortlist(self, run: Run) -> list[Checked]:
        """The lead windows as grown, then the runners-up regrown from their seeds
        (policies.evidence.selection)."""
        lead, runners = shortlist(run.items, self.policy)
        return [*lead, *(self.regrow(run, c) for c in runners)]

    def regrow(self, run: Run, item: Checked) -> Checked:
        """One runner-up grown again from its seeds under the runner policy (its steps not reported)."""
        grower = Grower(run.question, item.doc, item.best, self._runner_policy, _quiet)
        return regrown(item, self.screened(run, grower, grower.grow(seeds_of(item.window))), self.policy)

    def rerank(self, run: Run) -> bool:
        """Expand first, rerank after: the best grown windows read by the cross-encoder in one
        request, each one's relevance entering its score. False without a reranker (nothing sent)."""
        if self.reranker_for() is None or not run.items:
            return False
        assert self.reranker is not None
        run.on_time("the rerank")
        pool = rerank_pool(on_subject(run.question, run.items, self.policy), self.policy)
        reply = self.reranker.rerank(run.question.text, [rerank_text(c, self.policy) for c in pool])
        run.record(events.rerank_request, reply)
        run.record(events.rerank_reply, reply)
        run.items = reranked(run.items, pool, reply.scores, self.policy)
        return True

    def check(self, run: Run) -> tuple[list[Checked], list[MissingPiece]]:
        """Rerank, select the evidence, judge it and list what it still lacks; then read as much of
        it as the question's shape needs (policies.evidence.reading: what is read, not whether to answer)."""
        scored = self.rerank(run)
        selected = select_evidence(run.question, self.shortlist(run), run.items, self.policy)
        signals = judge_signals(run.question, selected, self.policy.w_rerank if scored else None, self.policy)
        run.verdict = judge(signals, self.policy, run.scale)
        missing = missing_pieces(run.question, selected, self.policy, run.verdict)
        run.notes = answer_notes(run.question, selected, self.policy) if not missing else []
        selected = read_for_shape(run.shape, run.question, selected, run.items, self.policy)
        shape = run.shape if self.policy.shape_reading else None  # a trace from before it has none
        sides = sides_to_cover(run.question, self.policy)
        run.record(events.checked, selected, missing, signals, run.verdict, sides, shape, run.notes)
        return selected, missing

    def decide(
        self,
        run: Run,
        selected: list[Checked],
        evidence: list[Evidence],
        missing: list[MissingPiece],
        report: ConflictReport,
        run_id: str,
    ) -> Outcome:
        """The outcome: status from the decision policy, evidence cut from the documents."""
        status = status_of(missing, report.blocking)
        signals = assemble.signals(
            evidence_signals(run.question, selected, run.verdict),
            run.recalls,
            run.slides,
            report.llm_calls,
            run.suspicious.values(),
        )
        answer = None
        if status == "answered":
            units = run.quoted
            if units is None:
                units = answer_units(run.question, selected, self.policy, run.shape)
            if unquoted := unquotable(units, self.policy):  # nothing states anything: no answer
                missing, status = unquoted, status_of(unquoted, False)
            else:
                answer = assemble.answer(units, selected, evidence)
        sides = sides_to_cover(run.question, self.policy)
        resolution = run.resolution
        asked = resolution.asked if resolution is not None else run.question.text
        lang = language_of(asked)  # the user reads the refusal in the language they asked in
        return Outcome(
            run_id=run_id,
            status=status,
            question=asked,
            resolved_question=resolution.text if resolution is not None and resolution.changed else None,
            answer=answer,
            evidence=evidence,
            documents=assemble.documents(evidence, selected, sides),
            missing=assemble.missing(missing, lang) if status == "insufficient_evidence" else [],
            notes=assemble.missing(run.notes, lang) if status == "answered" else [],
            conflicts=assemble.conflicts(report.conflicts, lang),
            signals=signals,
        )
