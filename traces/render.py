"""Readable text for ``evloop trace show`` and ``evloop trace list``.

Each known step has a small formatter reading the fields described in ``traces.schema``; a formatter
never trusts the data's shape: a missing field shows as ``?``, and a step it does not know, or data it
cannot read, falls back to a generic ``key=value`` line. Rendering never raises on a readable trace.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from traces.schema import Trace, TraceEvent, TraceSummary

Lines = list[str]
MAX_HITS = 5
EXCERPT = 60


def short(value: object, limit: int = EXCERPT) -> str:
    """One line of at most ``limit`` characters; whitespace collapsed, cut with an ellipsis."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _num(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "?" if value is None else short(value, 12)
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _get(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return "?" if value is None else short(value)


def _items(value: object) -> list[Mapping[str, Any]]:
    """The mappings of a list field; anything else reads as empty."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def _span(item: Mapping[str, Any]) -> str:
    where = item.get("evidence_id") or f"{item.get('doc_id', '?')}@{item.get('version', '?')}"
    return f"{where} [{_num(item.get('start'))}:{_num(item.get('end'))}]"


def _recalled(data: Mapping[str, Any]) -> Lines:
    hits = _items(data.get("hits"))
    head = f'query "{_get(data, "query")}" round {_get(data, "round")}: {_count(len(hits), "hit")}'
    lines = [head]
    for hit in hits[:MAX_HITS]:
        text = f'  "{short(hit["text"], 40)}"' if "text" in hit else ""
        lines.append(f"{_span(hit)} {_num(hit.get('score'))} {hit.get('kind', '')}{text}".rstrip())
    if len(hits) > MAX_HITS:
        lines.append(f"... {len(hits) - MAX_HITS} more")
    return lines


def _checked(data: Mapping[str, Any]) -> Lines:
    parts = [f"score {_num(data.get('score'))}"]
    parts += [f"{key} {_num(data[key])}" for key in ("relevance", "slot_coverage", "boundary") if key in data]
    lines = [", ".join(parts)]
    missing = _items(data.get("missing"))
    if missing:
        pieces = [
            f"{m.get('kind', '?')}: {short(m.get('value') or m.get('detail') or '?', 30)}" for m in missing
        ]
        lines.append("missing " + "; ".join(pieces))
    return lines


def _slid(data: Mapping[str, Any]) -> Lines:
    window = data.get("window")
    where = _span(window) if isinstance(window, Mapping) else _get(data, "window")
    move = data.get("direction") or data.get("move") or "?"
    return [
        f"{where} {move} +{_get(data, 'unit_kind')}, "
        f"score {_num(data.get('score_before'))} -> {_num(data.get('score_after'))}",
        f"why: {_get(data, 'reason')}",
    ]


def _conflict(data: Mapping[str, Any]) -> Lines:
    sides = [f"{short(v.get('value', '?'), 20)} ({_span(v)})" for v in _items(data.get("values"))]
    lines = [f"slot {_get(data, 'slot')}: " + (" vs ".join(sides) or _get(data, "candidate"))]
    lines.append(f"verdict {_get(data, 'verdict')} by {_get(data, 'adjudicator')}: {_get(data, 'reason')}")
    return lines


def _llm_request(data: Mapping[str, Any]) -> Lines:
    messages = _items(data.get("messages"))
    last = short(messages[-1].get("content", ""), EXCERPT) if messages else "?"
    head = f"model {_get(data, 'model')} attempt {_get(data, 'attempt')}, {_count(len(messages), 'message')}"
    return [head, f'last: "{last}"']


def _llm_reply(data: Mapping[str, Any]) -> Lines:
    text = data.get("text", data.get("content", data.get("output")))
    head = f"model {_get(data, 'model')} attempt {_get(data, 'attempt')}"
    if "latency_ms" in data:
        head += f", {_num(data['latency_ms'])} ms"
    return [head, f'reply: "{short(text) if text is not None else "?"}"']


def _rerank_request(data: Mapping[str, Any]) -> Lines:
    body = data.get("body")
    body = body if isinstance(body, Mapping) else {}
    texts = body.get("documents", body.get("texts"))
    count = len(texts) if isinstance(texts, list) else 0
    return [f"{_get(data, 'url')}: {_count(count, 'document')}", f'query: "{_get(body, "query")}"']


def _rerank_reply(data: Mapping[str, Any]) -> Lines:
    scores = data.get("scores")
    scores = scores if isinstance(scores, list) else []
    shown = ", ".join(_num(s) for s in scores[:MAX_HITS]) + (" ..." if len(scores) > MAX_HITS else "")
    head = f"status {_get(data, 'status')}, {_count(len(scores), 'score')}"
    if "attempts" in data:
        head += f", attempts {_get(data, 'attempts')}"
    return [head, f"scores: {shown or '?'}"]


def _decided(data: Mapping[str, Any]) -> Lines:
    why = data.get("why", data.get("reason"))
    return [f"{_get(data, 'status')}: {short(why, 80) if why is not None else '?'}"]


def _outcome(data: Mapping[str, Any]) -> Lines:
    rest = {key: value for key, value in data.items() if key != "status"}
    return [f"{_get(data, 'status')}" + (f" ({_generic(rest)[0]})" if rest else "")]


def _generic(data: Mapping[str, Any]) -> Lines:
    if not data:
        return ["(no data)"]
    return [short(", ".join(f"{key}={short(value, 30)}" for key, value in data.items()), 100)]


FORMATTERS: dict[str, Callable[[Mapping[str, Any]], Lines]] = {
    "recalled": _recalled,
    "checked": _checked,
    "slid": _slid,
    "conflict": _conflict,
    "llm_request": _llm_request,
    "llm_reply": _llm_reply,
    "rerank_request": _rerank_request,
    "rerank_reply": _rerank_reply,
    "decided": _decided,
    "outcome": _outcome,
}


def render_event(event: TraceEvent) -> Lines:
    """The lines of one event: ``#seq step`` and its first line, then continuation lines indented."""
    formatter = FORMATTERS.get(event.step, _generic)
    try:
        body = formatter(event.data)
    except (AttributeError, KeyError, TypeError, ValueError):
        body = _generic(event.data)  # data of an unexpected shape: show it rather than fail the audit
    head = f"  #{event.seq:<3} {event.step:<12}"
    return [f"{head}{body[0]}"] + [" " * len(head) + line for line in body[1:]]


def _header_lines(trace: Trace) -> Lines:
    h = trace.header
    llm = h.llm.get("model") or "rules (no LLM)"
    base = f" at {h.llm['base_url']}" if h.llm.get("base_url") else ""
    return [
        f"run       {h.run_id}  (schema {h.schema_version}, code {h.code_version})",
        f"time      {h.created_at}",
        f"question  {h.question}",
        f"groups    {', '.join(h.groups) or '(none)'}",
        f"corpus    generation {h.corpus.generation}, fingerprint {h.corpus.fingerprint[:12]}, "
        f"{_count(len(h.corpus.versions_read), 'version')} read",
        f"policy    {h.policy_hash[:12]}",
        f"llm       {short(llm, 40)}{base}",
        "",
    ]


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
            s.question,
        )
        for s in summaries
    ]
    return "\n".join(_table(rows)) + "\n"
