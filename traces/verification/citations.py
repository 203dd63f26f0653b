"""Text a trace cites instead of carrying it: schema 2 records a span of stored text by
(doc_id, version, start, end) and the sha256 of that text, since the store keeps every version's
text; schema 1 traces carry the text itself and are read as written.

Cited spans in a schema 2 trace (every other field is what only the run knows, kept whole):

    recalled  hits[i]                                the hit's unit (schema 1: its first 160 characters)
    decided   outcome.evidence[i]                    the evidence window (schema 1: ``text``)
              outcome.answer.citations[i]            a cited span (schema 1: ``quote``)
              outcome.conflicts[i].values[j].citation

A reader that shows a trace resolves the spans from the store (``resolve``): the text goes back in
under its schema 1 name, or, when the store no longer holds that version (deleted, pruned, another
store) or holds other text there, ``unresolved`` says so. ``check_citations`` is verify's part:
a span whose stored text does not hash to the recorded sha256 fails; one the store lacks is counted.
A span of a version that a later write replaced (``--replace``, ``?replace=true``) is no failure:
the store still vouches for the version's new text (its ``intact``: the text hashes to the sha256
recorded with it), so the run's text was rewritten on purpose, not changed behind the store's
back. It is named ("cited version replaced"), and replay refuses the run (it cannot re-read it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from evidence_loop.traces.records.hashing import sha256_hex
from evidence_loop.traces.records.schema import Trace, TraceEvent
from evidence_loop.traces.records.steps import parse_step
from evidence_loop.traces.verification.verify import VerifyResult

CITING_SCHEMA: Final = 2
"""The first trace schema whose events cite stored text rather than carry it."""
HIT_PREVIEW: Final = 160
"""How much of a hit's unit a schema 1 trace carried, and a resolved hit shows."""

text_sha256 = sha256_hex
"""The sha256 a cited span records: of the span's text, UTF-8 (the trace's own digest)."""

TextSource = Callable[[str, str], str | None]
"""The text of a stored version (doc_id, version), or None when the store does not hold it."""


def cites(trace: Trace) -> bool:
    """True when the trace's events cite stored text (schema 2 on)."""
    return trace.header.schema_version >= CITING_SCHEMA


def _spans(step: str, data: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    """Each cited span of an event's data (the dicts themselves), and the key its text goes under."""
    if step == "recalled":
        for hit in data["hits"]:
            yield hit, "text"
    elif step == "decided":
        outcome = data["outcome"]
        for evidence in outcome.get("evidence") or ():
            yield evidence, "text"
        for citation in (outcome.get("answer") or {}).get("citations") or ():
            yield citation, "quote"
        for conflict in outcome.get("conflicts") or ():
            for side in conflict.get("values") or ():
                yield side["citation"], "quote"


REPLACED: Final = "was rewritten by a later write; the text this run read is no longer stored"


SpanState = Literal["held", "gone", "replaced", "differs"]
"""A cited span against the store: its text held as cited; its version not held; its version's text
rewritten by a later write (the store still vouches for it: ``intact``); other text, unvouched."""


@dataclass
class _Texts:
    """Stored texts read once per version while one trace is resolved or checked."""

    source: TextSource | None
    held: dict[tuple[str, str], str | None]

    def span(self, span: dict[str, Any]) -> tuple[str | None, str, SpanState]:
        """The span's text when the store holds it with its recorded sha256, else None and why."""
        doc_id, version = span["doc_id"], span["version"]
        key = (doc_id, version)
        if key not in self.held:
            self.held[key] = self.source(doc_id, version) if self.source is not None else None
        whole = self.held[key]
        if whole is None:
            where = (
                "no store to read it from"
                if self.source is None
                else "the store does not hold that version (deleted, pruned, or another store)"
            )
            return None, f"text of {doc_id}@{version} not resolved: {where}", "gone"
        start, end = span["start"], span["end"]
        text = whole[start:end]
        if text_sha256(text) == span.get("sha256"):
            return text, "", "held"
        intact = getattr(self.source, "intact", None)
        if intact is not None and intact(doc_id, version):
            return None, f"cited version replaced: {doc_id}@{version} {REPLACED}", "replaced"
        return (
            None,
            f"the store's text of {doc_id}@{version} [{start}:{end}] is not the text cited",
            "differs",
        )


def resolve(trace: Trace, texts: TextSource | None) -> Trace:
    """The trace as a reader shows it: each cited span with its text from ``texts`` (a hit's first
    160 characters, as schema 1 held), or ``unresolved`` saying why not. A schema 1 trace is returned
    as it is; ``records`` stay as written (verify and export-as-written read those)."""
    if not cites(trace):
        return trace
    held = _Texts(texts, {})
    return replace(trace, events=tuple(_resolved(event, held) for event in trace.events))


def _resolved(event: TraceEvent, held: _Texts) -> TraceEvent:
    if event.step not in ("recalled", "decided"):
        return event
    data = _deep_copy(event.data.trace_data())  # filled in: the event read stays as it was
    for span, key in _spans(event.step, data):
        text, why, _state = held.span(span)
        if text is not None:
            span[key] = text[:HIT_PREVIEW] if event.step == "recalled" else text
        else:
            span["unresolved"] = why
    return event.model_copy(update={"data": parse_step(event.step, data)})


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _deep_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_deep_copy(item) for item in value]
    return value


@dataclass(frozen=True, slots=True)
class CitationCheck:
    """What ``check_citations`` found: the first span whose stored text differs, and how many spans
    were checked and how many the store lacks."""

    checked: int
    unavailable: int
    first_bad_seq: int | None = None
    reason: str = ""
    replaced: tuple[tuple[str, str], ...] = ()

    @property
    def ok(self) -> bool:
        return self.first_bad_seq is None

    def describe(self) -> str:
        """The clause verify adds to its reason."""
        if not self.ok:
            return self.reason
        lacking = f", {self.unavailable} not in the store (not checked)" if self.unavailable else ""
        replaced = ""
        if self.replaced:
            names = ", ".join(f"{doc_id}@{version}" for doc_id, version in self.replaced)
            replaced = f"; cited version replaced: {names} {REPLACED} (not tampering)"
        return f"{self.checked} cited texts match the store{lacking}{replaced}"


def check_citations(trace: Trace, texts: TextSource | None) -> CitationCheck:
    """Check each cited span of a schema 2 trace against the stored text's sha256."""
    held = _Texts(texts, {})
    checked = unavailable = 0
    replaced: dict[tuple[str, str], None] = {}
    for event in trace.events if cites(trace) else ():
        for span, _key in _spans(event.step, event.data.trace_data()):
            _text, why, state = held.span(span)
            if state == "held":
                checked += 1
            elif state == "gone":
                unavailable += 1
            elif state == "replaced":
                replaced[(span["doc_id"], span["version"])] = None
            else:
                reason = f"event {event.seq} ({event.step}): {why}"
                return CitationCheck(checked, unavailable, event.seq, reason)
    return CitationCheck(checked, unavailable, replaced=tuple(replaced))


def with_citations(result: VerifyResult, trace: Trace, texts: TextSource | None) -> VerifyResult:
    """``result`` (the chain's verdict) with the cited texts checked too, when the chain holds: a
    span whose stored text does not hash to its sha256 fails there; the reason counts what was checked.
    Without ``texts`` (no document store at hand) the chain's verdict stands alone."""
    if not result.ok or not cites(trace) or texts is None:
        return result
    found = check_citations(trace, texts)
    if not found.ok:
        return replace(result, ok=False, first_bad_seq=found.first_bad_seq, reason=found.reason)
    return replace(result, reason=f"{result.reason}; {found.describe()}", replaced=found.replaced)
