"""Turning selected windows, missing pieces and conflicts into the Outcome the API returns.

Every evidence text and every quote is cut from the document text by its offsets here, so
``text == document_text[start:end]`` holds by construction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict

from evidence_loop.agent.outcome import (
    Answer,
    Citation,
    Conflict,
    DocumentEvidence,
    Evidence,
    GrowthStep,
    Missing,
    SeedHit,
    Signals,
    Suspicious,
)
from evidence_loop.policies.decision.messages import Lang, conflict_message, missing_messages
from evidence_loop.policies.decision.signals import EvidenceSignals
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.comparison import sides_of
from evidence_loop.policies.question.sides import Side
from evidence_loop.policies.types import MissingPiece
from evidence_loop.tools.parse.legacy_html import visible_text
from evidence_loop.tools.types import ParsedDocument, Unit
from evidence_loop.tools.windows import runs


def evidence_items(items: Sequence[Checked], first_id: int = 1) -> list[Evidence]:
    """One Evidence per contiguous run of each window; seeds and steps go with the run holding them.

    Ids count from ``first_id`` (``e1``, ``e2``, ...): items assembled after others continue their ids."""
    out: list[Evidence] = []
    for item in items:
        doc, window = item.doc, item.window
        for first, last in runs(window):
            start, end = doc.units[first].start, doc.units[last].end
            seeds = [
                SeedHit(start=h.unit.start, end=h.unit.end, kind=h.unit.kind, score=round(h.score, 6))
                for h in window.seeds
                if first <= h.unit.ordinal <= last
            ]
            steps = [
                GrowthStep(
                    move=s.move,
                    unit_kind=s.unit_kind,
                    reason=s.reason,
                    start=doc.units[min(s.ordinals)].start,
                    end=doc.units[max(s.ordinals)].end,
                    score_before=s.score_before,
                    score_after=s.score_after,
                )
                for s in window.steps
                if first <= min(s.ordinals) and max(s.ordinals) <= last
            ]
            out.append(
                Evidence(
                    evidence_id=f"e{first_id + len(out)}",
                    doc_id=window.doc_id,
                    version=window.version,
                    title=doc.title,
                    section=list(common_section(doc, first, last)),
                    start=start,
                    end=end,
                    text=doc.text[start:end],
                    score=round(item.check.score, 6),
                    seeds=seeds,
                    steps=steps,
                )
            )
    return out


def documents(
    evidence: Sequence[Evidence], items: Sequence[Checked], sides: Sequence[Side] = ()
) -> list[DocumentEvidence]:
    """The evidence grouped by document version, each group in the order of its first window, with the
    sides of a comparison (``sides``) that the document's selected windows speak for."""
    spoken: dict[tuple[str, str], list[str]] = {}
    for item in items:
        names = spoken.setdefault(item.window.key, [])
        names += [s.name for s in sides_of(sides, item) if s.name not in names]
    ids: dict[tuple[str, str], list[str]] = {}
    titles: dict[tuple[str, str], str] = {}
    for e in evidence:
        ids.setdefault((e.doc_id, e.version), []).append(e.evidence_id)
        titles.setdefault((e.doc_id, e.version), e.title)
    return [
        DocumentEvidence(
            doc_id=doc_id,
            version=version,
            title=titles[doc_id, version],
            evidence_ids=group,
            sides=[s.name for s in sides if s.name in spoken.get((doc_id, version), [])],
        )
        for (doc_id, version), group in ids.items()
    ]


def common_section(doc: ParsedDocument, first: int, last: int) -> tuple[str, ...]:
    """Heading path of the innermost section holding units ``first..last``."""
    start, end = doc.units[first].start, doc.units[last].end
    section = doc.sections[doc.units[first].section_id]
    while not (section.start <= start and end <= section.end) and section.parent_id is not None:
        section = doc.sections[section.parent_id]
    return section.path


def cite(unit: Unit, evidence: Sequence[Evidence], n: int, doc: ParsedDocument) -> Citation:
    """The citation of one answer unit, pointing at the evidence item that holds it."""
    holder = next(
        e
        for e in evidence
        if e.doc_id == unit.doc_id
        and e.version == unit.version
        and e.start <= unit.start
        and unit.end <= e.end
    )
    return Citation(
        n=n,
        evidence_id=holder.evidence_id,
        doc_id=unit.doc_id,
        version=unit.version,
        section=list(doc.sections[unit.section_id].path),
        start=unit.start,
        end=unit.end,
        quote=doc.text[unit.start : unit.end],
    )


def answer(
    units: Sequence[tuple[int, Unit]], items: Sequence[Checked], evidence: Sequence[Evidence]
) -> Answer:
    """The extractive answer: the chosen units' text, each cited (quotes exact, HTML read as text)."""
    citations = [cite(unit, evidence, n + 1, items[i].doc) for n, (i, unit) in enumerate(units)]
    lines = [readable(c.quote, items[i].doc.format) for c, (i, _) in zip(citations, units, strict=True)]
    return Answer(text="\n".join(lines), citations=citations)


def readable(quote: str, fmt: str) -> str:
    """A quote as a reader sees it. A version stored as raw HTML (``format`` "html": stored before
    clean text) is read with its tags dropped and spaces collapsed; every other text, the clean text
    of an HTML page stored since included, as written."""
    return " ".join(visible_text(quote).split()) if fmt == "html" else quote


def missing(pieces: Sequence[MissingPiece], lang: Lang = "en") -> list[Missing]:
    """Missing pieces as API values (the same fields; the slot's kind is already in the detail), each
    with the message its user may read in ``lang`` (policies.decision.messages)."""
    return [
        Missing(**{k: v for k, v in asdict(p).items() if k != "slot_kind"}, message=message)
        for p, message in zip(pieces, missing_messages(pieces, lang), strict=True)
    ]


def conflicts(found: Iterable[Conflict], lang: Lang = "en") -> list[Conflict]:
    """The conflicts the check reported, a confirmed one with the message its user may read in ``lang``."""
    return [
        c.model_copy(update={"message": conflict_message(c.values[0].value, c.values[1].value, lang)})
        if c.verdict == "conflict" and len(c.values) == 2
        else c
        for c in found
    ]


def signals(
    evidence: EvidenceSignals,
    recalls: int,
    slides: int,
    llm_calls: int,
    suspicious: Iterable[tuple[Unit, str]],
) -> Signals:
    """The outcome's signals: the evidence's, the run's counts, and the sentences it set aside as
    addressed to a model (with their families), in document order."""
    return Signals(
        **asdict(evidence),
        recalls=recalls,
        slides=slides,
        llm_calls=llm_calls,
        suspicious=[
            Suspicious(doc_id=u.doc_id, version=u.version, start=u.start, end=u.end, family=family)
            for u, family in sorted(suspicious, key=lambda f: (f[0].doc_id, f[0].version, f[0].start))
        ],
    )
