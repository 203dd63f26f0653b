"""Readable text for ``evloop trace show`` and ``evloop trace list``.

Each step of ``traces.records.steps`` has a small formatter reading its typed fields: the first line says what
happened, continuation lines the detail (a few hits, why a window slid, what is missing). Text a user
or a document wrote is shown on its own line with its control and bidi characters escaped
(``tools.printable``): a question cannot print a line of its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from evidence_loop.tools.printable import printable
from evidence_loop.traces.records.schema import Trace, TraceEvent, TraceSummary
from evidence_loop.traces.records.steps import (
    AbortedStep,
    CheckedStep,
    ConflictScanStep,
    ConflictStep,
    DecidedStep,
    EmbeddedStep,
    LLMReplyStep,
    LLMRequestStep,
    RecalledStep,
    RerankReplyStep,
    RerankRequestStep,
    ResolvedStep,
    SlidStep,
    StepModel,
)

Lines = list[str]
MAX_HITS = 5
EXCERPT = 60


def short(value: object, limit: int = EXCERPT) -> str:
    """One line of at most ``limit`` characters (before escapes); whitespace collapsed, cut with an
    ellipsis, control and bidi characters escaped."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    flat = " ".join(text.split())
    return printable(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _embedded(step: EmbeddedStep) -> Lines:
    return [f"{step.embedder}, {step.dim} dimensions, digest {step.digest[:12]}"]


def _resolved(step: ResolvedStep) -> Lines:
    cue = step.cue or "none: the question stands alone"
    lines = [f'{_count(len(step.history), "earlier turn")}, cue {cue}: "{short(step.question)}"']
    for carried in step.carried:
        lines.append(f'carried {carried["kind"]} "{short(carried["text"], 40)}" from turn {carried["turn"]}')
    if step.candidates:
        lines.append(f"ambiguous: {', '.join(step.candidates)}")
    if step.unresolved:
        lines.append("unresolved: no earlier turn names a subject")
    if step.prior_docs:
        lines.append(f"prior documents {', '.join(step.prior_docs)}")
    if step.run_ids_read:
        lines.append(f"runs read {', '.join(step.run_ids_read)}")
    return lines


def _recalled(step: RecalledStep) -> Lines:
    lines = [f'query "{short(step.query)}" round {step.round}, k {step.k}: {_count(len(step.hits), "hit")}']
    for hit in step.hits[:MAX_HITS]:
        similarity = f" cos {_num(hit['similarity'])}" if "similarity" in hit else ""
        where = f"{hit['doc_id']}@{hit['version']} [{hit['start']}:{hit['end']}]"
        lines.append(f"{where} {_num(hit['score'])}{similarity} {hit['kind']}  {_cited(hit)}")
    if len(step.hits) > MAX_HITS:
        lines.append(f"... {len(step.hits) - MAX_HITS} more")
    return lines


def _cited(hit: Mapping[str, Any]) -> str:
    """A hit's text as a reader shows it: its start, or why the store could not give it (a schema 2
    trace not resolved: ``traces.verification.citations``)."""
    if "text" in hit:
        return f'"{short(hit["text"], 40)}"'
    if "unresolved" in hit:
        return f"[{short(hit['unresolved'], 120)}]"
    return f"[cited, sha256 {hit.get('sha256', '')[:12]}]"


def _slid(step: SlidStep) -> Lines:
    first, last = step.window
    return [
        f"{step.doc_id}@{step.version} units {first}-{last} ({step.units}) {step.move} +{step.unit_kind}, "
        f"score {_num(step.score_before)} -> {_num(step.score_after)}",
        f"why: {short(step.reason, 80)}",
    ]


def _checked(step: CheckedStep) -> Lines:
    parts = [f"score {_num(step.score)}", f"relevance {_num(step.relevance)}"]
    parts += [f"slot_coverage {_num(step.slot_coverage)}", f"boundary {_num(step.boundary)}"]
    lines = [", ".join(parts) + f", {_count(len(step.windows), 'window')}"]
    if step.judge is not None:
        judge = step.judge
        lines.append(
            f"judge {_num(judge['probability'])} (logit {_num(judge['logit'])}, "
            f"threshold {_num(judge['threshold'])})"
        )
    if step.missing:
        pieces = [f"{m['kind']}: {short(m['value'] or m['detail'], 30)}" for m in step.missing]
        lines.append("missing " + "; ".join(pieces))
    return lines


def _rerank_request(step: RerankRequestStep) -> Lines:
    body = step.body
    documents = body["documents"] if "documents" in body else body["texts"]  # Cohere's shape, or TEI's
    return [f"{step.url}: {_count(len(documents), 'document')}", f'query: "{short(body["query"])}"']


def _rerank_reply(step: RerankReplyStep) -> Lines:
    shown = ", ".join(_num(s) for s in step.scores[:MAX_HITS]) + (
        " ..." if len(step.scores) > MAX_HITS else ""
    )
    head = f"status {step.status}" if step.status is not None else "not recorded"
    head += f", {_count(len(step.scores), 'score')}"
    if step.attempts is not None:
        head += f", attempts {step.attempts}"
    return [head, f"scores: {shown or '-'}"]


def _llm_request(step: LLMRequestStep) -> Lines:
    last = short(step.messages[-1]["content"]) if step.messages else "-"
    head = (
        f"model {step.model} call {step.call} attempt {step.attempt}, {_count(len(step.messages), 'message')}"
    )
    return [head, f'last: "{last}"']


def _llm_reply(step: LLMReplyStep) -> Lines:
    head = f"model {step.model} call {step.call} attempt {step.attempt}, {step.latency_ms:.1f} ms"
    if step.outcome == "ok":
        return [head, f'reply: "{short(step.text or "")}"']
    return [head, f"error: {short(step.final_error or step.error or step.error_class or '', 80)}"]


def _conflict(step: ConflictStep) -> Lines:
    sides = [
        f"{short(v['value'], 20)} ({v['doc_id']}@{v['version']} [{v['start']}:{v['end']}])"
        for v in step.values
    ]
    scope = f" (scope: {short(step.scope, 30)})" if step.scope else ""
    return [
        f"slot {step.slot}: " + " vs ".join(sides),
        f"verdict {step.verdict} by {step.adjudicator}{scope}: {short(step.reason)}",
    ]


def _conflict_scan(step: ConflictScanStep) -> Lines:
    lines = [f"{len(step.dropped)} candidates set aside, {step.candidates} went on to a verdict"]
    for dropped in step.dropped[:MAX_HITS]:
        sides = " vs ".join(
            f"{short(v['value'], 20)} ({v['doc_id']}@{v['version']} [{v['start']}:{v['end']}])"
            for v in dropped["values"]
        )
        lines += [f"slot {dropped['slot']}: {sides}", f"  set aside: {short(dropped['dropped'])}"]
    return lines


def _decided(step: DecidedStep) -> Lines:
    lines = [f"{step.status}: {short(step.why, 80)}"]
    for evidence in (step.outcome.get("evidence") or [])[:MAX_HITS]:
        where = f"{evidence['doc_id']}@{evidence['version']} [{evidence['start']}:{evidence['end']}]"
        text = f'"{short(evidence["text"], 40)}"' if "text" in evidence else _cited(evidence)
        lines.append(f"{evidence.get('evidence_id', '-')} {where}  {text}")
    return lines


def _aborted(step: AbortedStep) -> Lines:
    return [f"{step.error}: {short(step.message, 80)}"]


# each formatter takes its own step type; a test renders every kind of step
FORMATTERS: dict[type[StepModel], Callable[[Any], Lines]] = {
    EmbeddedStep: _embedded,
    ResolvedStep: _resolved,
    RecalledStep: _recalled,
    SlidStep: _slid,
    CheckedStep: _checked,
    RerankRequestStep: _rerank_request,
    RerankReplyStep: _rerank_reply,
    LLMRequestStep: _llm_request,
    LLMReplyStep: _llm_reply,
    ConflictStep: _conflict,
    ConflictScanStep: _conflict_scan,
    DecidedStep: _decided,
    AbortedStep: _aborted,
}


def render_event(event: TraceEvent) -> Lines:
    """The lines of one event: ``#seq step`` and its first line, then continuation lines indented."""
    body = FORMATTERS[type(event.data)](event.data)
    head = f"  #{event.seq:<3} {event.step + ' ':<12}"  # a long step name keeps a space after it
    return [f"{head}{body[0]}"] + [" " * len(head) + line for line in body[1:]]


def _header_lines(trace: Trace) -> Lines:
    h, settings = trace.header, trace.named("llm")  # schema 3 names the LLM settings by hash
    llm = settings.get("model") or "rules (no LLM)"
    base = f" at {settings['base_url']}" if settings.get("base_url") else ""
    return [
        f"run       {h.run_id}  (schema {h.schema_version}, code {h.code_version})",
        f"time      {h.created_at}",
        f"question  {printable(h.question)}",
        *(f"resolved  {printable(text)}" for text in _resolved_question(trace)),
        f"groups    {printable(', '.join(h.groups)) or '(none)'}",
        f"corpus    generation {h.corpus.generation}, fingerprint {h.corpus.fingerprint[:12]}, "
        f"{_count(len(h.corpus.versions_read), 'version')} read",
        f"policy    {h.policy_hash[:12]}",
        f"llm       {short(llm, 40)}{base}",
        "",
    ]


def _resolved_question(trace: Trace) -> Lines:
    """The question the run resolved the asked one to, when earlier turns changed it."""
    for event in trace.events:
        if isinstance(event.data, ResolvedStep) and event.data.question != event.data.asked:
            return [event.data.question]
    return []


def _end_lines(trace: Trace) -> Lines:
    lines = [""]
    if trace.footer is not None:
        lines.append(
            f"end       complete: {trace.footer.outcome_status}, {len(trace.events)} events, "
            f"final hash {trace.footer.hash[:12]}"
        )
    else:
        lines.append(f"end       INCOMPLETE: no footer after {len(trace.events)} events (run did not finish)")
    if trace.torn:
        lines.append("          a torn last line (interrupted write) was ignored")
    if trace.damage is not None:
        lines.append(f"          DAMAGED: {trace.damage}")
    return lines


def render_timeline(trace: Trace) -> str:
    """The whole trace as a readable timeline: header, one block per event, how it ended."""
    lines = _header_lines(trace)
    for event in trace.events:
        lines.extend(render_event(event))
    lines.extend(_end_lines(trace))
    return "\n".join(lines) + "\n"


def _table(rows: Sequence[Sequence[str]]) -> Iterable[str]:
    """Left-aligned columns; the last column (free text) is not padded."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        yield "  ".join([*cells, row[-1]]).rstrip()


def render_list(summaries: Sequence[TraceSummary]) -> str:
    """A table of runs for ``evloop trace list``: time, run, status, outcome, size, question."""
    if not summaries:
        return "no traces\n"
    rows = [("CREATED", "RUN", "TRACE", "OUTCOME", "EVENTS", "BYTES", "QUESTION")]
    rows += [
        (
            s.created_at,
            s.run_id,
            s.status,
            s.outcome_status or "-",
            str(s.events),
            str(s.bytes),
            printable(s.question),
        )
        for s in summaries
    ]
    return "\n".join(_table(rows)) + "\n"
