"""Recomputing a trace's hash chain: is this the record as it was written, and where does it break?

Checked in file order, the first failure wins:

1. the header's stored hash matches its content, and its ``policy_hash`` matches its policy (seq -1);
   from schema 3, each document it names by hash is in the store and still hashes to that name;
2. event ``k`` sits at position ``k`` (a removed, inserted or reordered event fails here), links to the
   hash before it, and its own hash matches its ``seq``, ``step`` and ``data`` (a changed byte fails here);
   from schema 4, a finished run's events carry no hash: the digest of the header's hash and every
   event line, encoded again as written, must be the footer's ``prev_hash`` (a changed byte in any
   event fails here, named as a change of the events, not of one);
3. the footer links to the last event, counts the events, and its hash matches its content;
4. a damaged line stops the chain where it is (an event still JSON is checked as in 2 first, so an
   edit that also broke its shape reads as a change);
5. when the caller knows how the run ended (its final hash and event count, from the day manifest,
   the index or an Outcome), the trace ends there: a file cut short of it is *truncated*, one that
   ends on another hash is *rewritten*. Without that record a trace with no footer is a run that
   did not finish (a crash, a kill), which is no failure.

Verification runs over the raw records as written, not over their typed reading. The chain detects
accidental and naive changes; it carries no secret, so whoever can rewrite the file can rewrite the chain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evidence_loop.traces.records.blobs import document_problem
from evidence_loop.traces.records.encode import batch_events_of
from evidence_loop.traces.records.hashing import digest, event_hash, record_hash, steps_digest
from evidence_loop.traces.records.schema import BATCH_SCHEMA, Trace

HEADER_SEQ = -1
"""``first_bad_seq`` of a failure in the header."""


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """The verdict on one trace: ``ok`` says the chain holds as far as the trace goes."""

    ok: bool
    complete: bool
    first_bad_seq: int | None
    reason: str
    events: int = 0
    final_hash: str | None = None
    # False for a file whose run was never recorded (no complete header): nothing to verify, no failure
    written: bool = True
    # versions the trace cites whose text a later write replaced (doc_id, version): not tampering
    replaced: tuple[tuple[str, str], ...] = ()


def not_written(reason: str) -> VerifyResult:
    """The verdict on a trace file whose run was never recorded and is not known to have finished."""
    return VerifyResult(ok=True, complete=False, first_bad_seq=None, reason=reason, written=False)


def _raw_records(trace: Trace) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
    """Header, events and footer as written: the raw records if read from a file, else the models."""
    if trace.records:
        count = len(trace.events)
        footer = trace.records[1 + count] if trace.footer is not None else None
        return trace.records[0], list(trace.records[1 : 1 + count]), footer
    return (
        trace.header.model_dump(mode="json"),
        [event.model_dump(mode="json") for event in trace.events],
        trace.footer.model_dump(mode="json") if trace.footer is not None else None,
    )


def _header_problem(header: Mapping[str, Any]) -> str | None:
    if header.get("hash") != record_hash(header):
        return "header changed: its hash does not match its content"
    policy = header.get("policy")
    if isinstance(policy, dict) and header.get("policy_hash") != digest(policy):
        return "header changed: policy_hash does not match the policy"
    return None


def _event_problem(
    event: Mapping[str, Any], position: int, expected_prev: str, schema: int
) -> tuple[int, str] | None:
    """The (seq, reason) of the event's failure, or None when it chains correctly."""
    if event.get("seq") != position:
        return position, (
            f"expected event {position}, found seq {event.get('seq')!r}: an event was removed, "
            "inserted or reordered"
        )
    if event.get("prev_hash") != expected_prev:
        if position == 0:
            return HEADER_SEQ, "header changed: the first event does not link to it"
        return position, f"event {position} does not link to event {position - 1}: one before it was changed"
    step, data = str(event.get("step")), event.get("data") or {}
    recomputed = event_hash(expected_prev, position, step, data, schema=schema)
    if event.get("hash") != recomputed:
        return (
            position,
            f"event {position} ({event.get('step')}) changed: its hash does not match its content",
        )
    return None


def _footer_problem(footer: Mapping[str, Any], count: int, expected_prev: str) -> str | None:
    if footer.get("prev_hash") != expected_prev:
        return "footer does not link to the last event: the end of the trace was changed"
    if footer.get("events") != count:
        return f"footer counts {footer.get('events')!r} events, the file holds {count}"
    if footer.get("hash") != record_hash(footer):
        return "footer changed: its hash does not match its content"
    return None


def _fail(seq: int, reason: str, events: int) -> VerifyResult:
    return VerifyResult(ok=False, complete=False, first_bad_seq=seq, reason=reason, events=events)


def _batch_events(
    events: Sequence[Mapping[str, Any]], start: str, footer: Mapping[str, Any] | None
) -> tuple[str, VerifyResult | None]:
    """Schema 4: each event at its place and without a hash of its own, and their digest the one the
    footer holds (without a footer they are not chained: the header's hash is the last)."""
    for position, event in enumerate(events):
        if event.get("seq") != position:
            reason = f"expected event {position}, found seq {event.get('seq')!r}: an event was removed, "
            return start, _fail(position, reason + "inserted or reordered", position)
        if "hash" in event or "prev_hash" in event:
            return start, _fail(
                position, f"event {position} carries a hash: a schema 4 event has none", position
            )
    if footer is None:
        return start, None
    try:
        digest_hex = steps_digest(start, batch_events_of(events))
    except (TypeError, ValueError):
        digest_hex = ""
    if footer.get("prev_hash") != digest_hex:
        reason = (
            "the events changed: their digest is not the one the footer holds (or the footer's was changed)"
        )
        return start, _fail(0, reason, len(events))
    return digest_hex, None


def _walk_events(
    events: Sequence[Mapping[str, Any]], start: str, schema: int, footer: Mapping[str, Any] | None = None
) -> tuple[str, VerifyResult | None]:
    """Follow the chain from the header's hash; return the last hash and the first failure, if any."""
    if schema >= BATCH_SCHEMA:
        return _batch_events(events, start, footer)
    last = start
    for position, event in enumerate(events):
        problem = _event_problem(event, position, last, schema)
        if problem is not None:
            return last, _fail(problem[0], problem[1], position)
        last = str(event["hash"])
    return last, None


def verify(
    trace: Trace, *, expected_hash: str | None = None, expected_events: int | None = None
) -> VerifyResult:
    """Recompute the chain of ``trace``; see the module docstring for what is checked, in which order.

    ``expected_hash`` and ``expected_events`` say how the run ended when it finished, if known.
    """
    header, events, footer = _raw_records(trace)
    problem = _header_problem(header) or document_problem(header, trace.documents)
    if problem is not None:
        return _fail(HEADER_SEQ, problem, 0)
    schema = int(header.get("schema_version") or 1)
    last, failure = _walk_events(events, str(header["hash"]), schema, footer)
    if failure is not None:
        return failure
    count = len(events)
    if footer is not None:
        problem = _footer_problem(footer, count, last)
        if problem is not None:
            return _fail(count, problem, count)
        last = str(footer["hash"])
    if trace.damage is not None:
        return _damaged(trace, count, last, schema)
    if expected_hash is not None and expected_hash != last:
        reason = _cut_short(expected_hash, expected_events, count, footer is not None, last)
        return _fail(count, reason, count)
    return VerifyResult(
        ok=True,
        complete=footer is not None,
        first_bad_seq=None,
        reason=_ok_reason(count, footer is not None, trace.torn, unchained=schema >= BATCH_SCHEMA),
        events=count,
        final_hash=last,
    )


def _damaged(trace: Trace, count: int, last: str, schema: int) -> VerifyResult:
    """The failure of a trace read up to a damaged line. A damaged event that is still JSON is checked
    as any event first: an edit that also broke its shape reads as a change."""
    unread = trace.records[1 + count] if trace.footer is None and len(trace.records) > 1 + count else None
    chained = isinstance(unread, dict) and schema < BATCH_SCHEMA  # a schema 4 event has no hash to check
    changed = _event_problem(unread, count, last, schema) if chained and unread is not None else None
    if changed is not None:
        return _fail(changed[0], changed[1], count)
    return _fail(count, f"a damaged record where event {count} should be: {trace.damage}", count)


def _cut_short(expected: str, expected_events: int | None, count: int, has_footer: bool, last: str) -> str:
    """Why a trace that does not end on its recorded final hash fails."""
    if has_footer or (expected_events is not None and count > expected_events):
        return f"rewritten: the run finished with hash {expected} but the file ends on hash {last}"
    at = f" at event {expected_events}" if expected_events is not None else ""
    return f"truncated: the run finished with hash {expected}{at} but the file ends at event {count}"


def _ok_reason(count: int, complete: bool, torn: bool, *, unchained: bool = False) -> str:
    torn_note = "; a torn last line from an interrupted write was ignored" if torn else ""
    if unchained and not complete:  # schema 4 without its footer: a frame cut short as it was written
        return (
            f"incomplete, the run's trace was cut short as it was written (no footer): its {count} "
            f"events are chained by the footer and are not verified{torn_note}"
        )
    state = "complete" if complete else "incomplete, the run did not finish (no footer, no final hash)"
    return f"hash chain verifies over {count} events; {state}{torn_note}"
