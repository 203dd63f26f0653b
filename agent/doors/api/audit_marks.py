"""Evidence shown in its document on the run page, and the sentences the answer cites marked inside it.

    evidence_view(item, text, citations, replaced)   one evidence window in its pinned version, its
                                                     text in parts: the cited spans marked

An evidence item is shown inside the document version the run read: the text before and after it
(up to ``CONTEXT`` characters each way) is dimmed, and the window itself is exactly
``document_text[start:end]``, the text whose sha256 the trace recorded. Inside it, each span the
answer cites (a citation carries its own offsets) is marked again: its mark holds exactly
``document_text[start:end]`` of the citation, and only when the citation's own text was resolved
against its recorded sha256 and equals that slice of the window. When the store no longer holds the
window's text (the version deleted, rewritten by a later write, or changed), the page says the cited
text is gone rather than marking what is stored there now.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

CONTEXT: Final = 1500  # characters of the document shown on each side of an evidence item


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a window's text; ``n`` is the answer's citation number when the piece is cited."""

    text: str
    start: int
    end: int
    n: int | None = None


@dataclass(frozen=True, slots=True)
class EvidenceView:
    evidence_id: str
    doc_id: str
    version: str
    title: str
    section: str
    start: int
    end: int
    before: str  # the document text before the span (dimmed), cut to CONTEXT; empty when not shown
    text: str  # the text the run read: document_text[start:end] of the version it pinned
    after: str
    cut_before: bool
    cut_after: bool
    gone: str = ""  # why the text the run read cannot be shown (the store no longer holds it)
    note: str = ""  # why only the span is shown, without the text around it
    parts: tuple[Part, ...] = ()  # ``text`` in pieces, the cited ones numbered

    @property
    def cited(self) -> tuple[int, ...]:
        """The citation numbers marked in this window."""
        return tuple(p.n for p in self.parts if p.n is not None)


def evidence_view(
    item: dict[str, Any],
    text: str | None,
    citations: Iterable[dict[str, Any]] = (),
    replaced: bool = False,
) -> EvidenceView:
    """One evidence item inside its document's text. The span marked is the text the run read: the
    item's ``text``, resolved from the store only when it hashes to the sha256 the trace recorded (or
    carried in a schema 1 trace). When the store holds other text there, or none, the page says the
    cited text is gone instead of marking what is there now; when the version was rewritten later
    (``replaced``) or its text around the span differs, only the span is shown. ``citations`` are
    the answer's; those inside this window are marked in its ``parts``."""
    start, end = int(item["start"]), int(item["end"])
    cited = item.get("text")
    base = {
        "evidence_id": str(item.get("evidence_id", "")),
        "doc_id": item["doc_id"],
        "version": item["version"],
        "title": str(item.get("title", "")),
        "section": " › ".join(item.get("section") or []),
        "start": start,
        "end": end,
    }
    if not isinstance(cited, str):
        why = str(item.get("unresolved") or f"the store does not hold {item['doc_id']}@{item['version']}")
        return EvidenceView(**base, before="", text="", after="", cut_before=False, cut_after=False, gone=why)
    parts = marked_parts(item, cited, citations)
    if replaced or text is None or not 0 <= start <= end <= len(text) or text[start:end] != cited:
        note = "this version's text was rewritten by a later write: only the span the run read is shown"
        return EvidenceView(
            **base, before="", text=cited, after="", cut_before=False, cut_after=False, note=note, parts=parts
        )
    lo, hi = max(0, start - CONTEXT), min(len(text), end + CONTEXT)
    return EvidenceView(
        **base,
        before=text[lo:start],
        text=cited,
        after=text[end:hi],
        cut_before=lo > 0,
        cut_after=hi < len(text),
        parts=parts,
    )


def _inside(item: dict[str, Any], citation: dict[str, Any], window: str) -> tuple[int, int] | None:
    """The citation's offsets when it cites this window's version inside the window and its resolved
    text is exactly that part of the window; None otherwise."""
    if (citation.get("doc_id"), citation.get("version")) != (item["doc_id"], item["version"]):
        return None
    if citation.get("evidence_id", item.get("evidence_id")) != item.get("evidence_id"):
        return None  # it cites another window of the same version
    start, end, quote = citation.get("start"), citation.get("end"), citation.get("quote")
    if not isinstance(start, int) or not isinstance(end, int) or not isinstance(quote, str):
        return None  # a citation whose text was not resolved against its sha256 is not marked
    lo = int(item["start"])
    if not lo <= start < end <= lo + len(window) or window[start - lo : end - lo] != quote:
        return None
    return start, end


def marked_parts(item: dict[str, Any], window: str, citations: Iterable[dict[str, Any]]) -> tuple[Part, ...]:
    """``window`` (the text at ``item``'s offsets) in parts, each citation inside it a part of its own
    (in order; one overlapping an earlier one is left unmarked)."""
    spans = sorted(
        (place[0], place[1], int(c.get("n") or 0))
        for c in citations
        if (place := _inside(item, c, window)) is not None
    )
    lo, at, parts = int(item["start"]), int(item["start"]), []
    for start, end, n in spans:
        if start < at:
            continue
        if start > at:
            parts.append(Part(window[at - lo : start - lo], at, start))
        parts.append(Part(window[start - lo : end - lo], start, end, n))
        at = end
    if at < lo + len(window) or not parts:
        parts.append(Part(window[at - lo :], at, lo + len(window)))
    return tuple(parts)
