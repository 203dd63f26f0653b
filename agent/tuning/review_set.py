"""Reviewed runs as an evaluation set (``/work/shared/eval/FORMAT.md``, what ``evloop eval`` runs): a
team's reviews become its regression test.

    review_set(traces, snapshot, ...)   the reviewed runs a reader may see, as questions, and a corpus
    write_set(folder, reviewed)         questions.jsonl, corpus.jsonl and README.md in a new folder
    set_zip(reviewed, name)             the same three files in one zip (the console's download)

One question per reviewed run, from the verdict that stands (the last one posted):

    id, question     the run id; the question as asked
    history          the earlier turns the run read (a follow-up's), oldest first
    groups           the groups it was asked with
    expect           ``correct``: the outcome as it was; ``should_have_refused``: refuse;
                     ``should_have_answered``, ``false_conflict``: answer; ``missed_conflict``:
                     conflict; ``wrong_evidence``: answer, from the document the reviewer named
    gold_doc_ids     the reviewer's doc_id; for a run that answered and was reviewed correct, the
                     documents its answer cites
    gold_answers     for that run too: the spans its answer quotes (the stored text it read)
    metadata         run_id, verdict, reviewer, reviewed_at, note, and the status, answer and
                     policy_hash as they were (``evloop eval`` does not read it)

Left out, and counted by why: a run whose trace is gone (pruned) and a ``wrong_evidence`` verdict
that names no document (which document answers is not known).

The corpus is what the questions are asked of. ``all`` (the default): every document ``reader`` may
read, its current version's stored text (what offsets point into), title, format, version and ACL;
``cited``: only the documents the reviewed runs read and the reviewers named; ``none``: no corpus
(put the team's own ``kb/`` folder or ``corpus.jsonl`` beside the questions). An ACL keeps only the
groups the reader has (a question's groups are among them), so a set names no group, document or
run beyond what its reader may see. A page ingested as HTML is stored as its clean text, which
parses again into other units than the page did; such documents are named in the README
(``reparsed``), since runs on them may go differently from the export.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal, Protocol

from evidence_loop.agent.tuning.evaluate import write_jsonl
from evidence_loop.tools.errors import InputError, NotFoundError, TraceError
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.types import DocumentInput, ParsedDocument
from evidence_loop.traces import Trace
from evidence_loop.traces.feedback.feedback import FeedbackLog, FeedbackRecord, latest
from evidence_loop.traces.records.steps import DecidedStep, ResolvedStep

CorpusChoice = Literal["all", "cited", "none"]
CORPUS_CHOICES: tuple[CorpusChoice, ...] = ("all", "cited", "none")
EXPECT_OF_STATUS = {
    "answered": "answer",
    "insufficient_evidence": "refuse",
    "conflicting_evidence": "conflict",
}
EXPECT_OF_VERDICT = {
    "should_have_refused": "refuse",
    "should_have_answered": "answer",
    "wrong_evidence": "answer",
    "missed_conflict": "conflict",
    "false_conflict": "answer",
}
GONE = "trace gone"
UNNAMED = "wrong_evidence naming no document"


class Reader(Protocol):
    """Who exports: the runs whose groups it covers, the documents it may read (``api.auth.Caller``)."""

    @property
    def groups(self) -> frozenset[str] | None: ...
    def covers(self, groups: Collection[str]) -> bool: ...
    def may_read(self, acl: Collection[str]) -> bool: ...


class TraceSource(Protocol):
    """A trace store: runs by id, and the reviews beside them."""

    @property
    def feedback(self) -> FeedbackLog: ...
    def read(self, run: str) -> Trace: ...


@dataclass(frozen=True, slots=True)
class ReviewSet:
    questions: list[dict[str, Any]]
    corpus: list[dict[str, Any]] | None  # None: no corpus written (``none``)
    left_out: dict[str, int] = field(default_factory=dict)  # why -> runs
    reparsed: list[str] = field(default_factory=list)  # doc_ids whose stored text parses otherwise
    policies: list[str] = field(default_factory=list)  # the policy hashes the runs were made under


def review_set(
    traces: TraceSource,
    snapshot: Snapshot,
    shown: Callable[[Trace], Trace],
    reader: Reader,
    *,
    since: date | None = None,
    corpus: CorpusChoice = "all",
) -> ReviewSet:
    """The reviewed runs ``reader`` may see (reviews posted on or after ``since``) as a set, from the
    documents of ``snapshot``; ``shown`` reads a trace's cited text in (``Service.shown``)."""
    readable = _readable(snapshot, reader)
    questions: list[dict[str, Any]] = []
    left_out: dict[str, int] = {}
    cited: set[str] = set()
    policies: dict[str, None] = {}
    for record in latest(traces.feedback.records(since)).values():
        try:
            trace = traces.read(record.run_id)
        except (NotFoundError, TraceError):
            left_out[GONE] = left_out.get(GONE, 0) + 1
            continue
        if not reader.covers(trace.header.groups) or trace.footer is None:
            continue  # not the reader's to see: not counted either
        item = question_of(shown(trace), record, readable)
        if item is None:
            left_out[UNNAMED] = left_out.get(UNNAMED, 0) + 1
            continue
        questions.append(item)
        policies[trace.header.policy_hash] = None
        cited |= set(trace.footer.versions_read) | set(item.get("gold_doc_ids", ()))
    chosen = None if corpus == "none" else [d for d in readable if corpus == "all" or d in cited]
    documents = None if chosen is None else [_document(snapshot, d, readable[d], reader) for d in chosen]
    return ReviewSet(
        sorted(questions, key=lambda q: (q["metadata"]["asked_at"], q["id"])),
        [d for d, _ in documents] if documents is not None else None,
        left_out,
        [d["doc_id"] for d, same in documents or () if not same],
        list(policies),
    )


def question_of(trace: Trace, review: FeedbackRecord, readable: Mapping[str, str]) -> dict[str, Any] | None:
    """The set's question for one reviewed run (its trace resolved); None when the verdict says too
    little (``wrong_evidence`` naming no document the reader may read)."""
    decided = next((e.data for e in reversed(trace.events) if isinstance(e.data, DecidedStep)), None)
    outcome: dict[str, Any] = decided.outcome if decided is not None else {}
    status = trace.footer.outcome_status if trace.footer is not None else ""
    answer = outcome.get("answer") or {}
    named = [review.doc_id] if review.doc_id and review.doc_id in readable else []
    if review.verdict == "wrong_evidence" and not named:
        return None
    item: dict[str, Any] = {"id": trace.header.run_id, "question": trace.header.question}
    history = _history(trace)
    if history:
        item["history"] = history
    item["groups"] = list(trace.header.groups)
    item["expect"] = (
        EXPECT_OF_STATUS.get(status, "refuse")
        if review.verdict == "correct"
        else (EXPECT_OF_VERDICT[review.verdict])
    )
    quotes = [c["quote"] for c in answer.get("citations") or () if isinstance(c.get("quote"), str)]
    if review.verdict == "correct" and status == "answered":
        named = named or list(dict.fromkeys(str(c["doc_id"]) for c in answer.get("citations") or ()))
        if quotes:
            item["gold_answers"] = list(dict.fromkeys(quotes))
    if named:
        item["gold_doc_ids"] = named
    item["metadata"] = {
        "run_id": trace.header.run_id,
        "asked_at": trace.header.created_at,
        "verdict": review.verdict,
        "reviewer": review.reviewer,
        "reviewed_at": review.created_at,
        "note": review.note,
        "status": status,
        "answer": answer.get("text"),
        "policy_hash": trace.header.policy_hash,
    }
    return item


def _history(trace: Trace) -> list[str]:
    resolved = next((e.data for e in trace.events if isinstance(e.data, ResolvedStep)), None)
    return [turn["text"] for turn in resolved.history] if resolved is not None else []


def _readable(snapshot: Snapshot, reader: Reader) -> dict[str, str]:
    """doc_id -> current version, of every document ``reader`` may read, in doc_id order."""
    current = snapshot.current_versions()
    return {d: v for d, v in sorted(current.items()) if reader.may_read(snapshot.acl(d, v))}


def _document(snapshot: Snapshot, doc_id: str, version: str, reader: Reader) -> tuple[dict[str, Any], bool]:
    """A corpus record of a stored version, and whether its text parses again into the same units."""
    parsed = snapshot.parsed(doc_id, version)
    acl = [g for g in snapshot.acl(doc_id, version) if reader.groups is None or g in reader.groups]
    record: dict[str, Any] = {
        "doc_id": doc_id,
        "version": version,
        "title": parsed.title,
        "format": parsed.format,
        "text": parsed.text,
    }
    if acl:
        record["acl"] = acl
    again = parse_document(DocumentInput(doc_id, parsed.text, version, parsed.title, parsed.format))
    return record, _same_units(parsed, again)


def _same_units(one: ParsedDocument, other: ParsedDocument) -> bool:
    return [(u.start, u.end, u.kind) for u in one.units] == [(u.start, u.end, u.kind) for u in other.units]


def readme(reviewed: ReviewSet) -> str:
    """What the set holds and how to run it."""
    counts: dict[str, int] = {}
    for q in reviewed.questions:
        counts[q["expect"]] = counts.get(q["expect"], 0) + 1
    lines = [
        "# Reviewed runs as an evaluation set",
        "",
        "Made by `evloop feedback export --as-eval` or the audit console, from the verdict that stands",
        'for each reviewed run (docs/audit.md, "Reviews as a regression test"). Run it with',
        "",
        "    evloop eval THIS_FOLDER",
        "",
        f"{len(reviewed.questions)} questions: "
        + ", ".join(f"{n} expect {kind}" for kind, n in sorted(counts.items())),
    ]
    return "\n".join(lines + notes(reviewed)) + "\n"


def notes(reviewed: ReviewSet) -> list[str]:
    """What a reader of the set should know: its corpus, what was left out and why, the policies."""
    lines = []
    if reviewed.corpus is None:
        lines.append("No corpus: put the knowledge base's kb/ folder or corpus.jsonl beside questions.jsonl.")
    else:
        lines.append(f"{len(reviewed.corpus)} documents in corpus.jsonl (their stored texts).")
    for why, n in sorted(reviewed.left_out.items()):
        lines.append(f"Left out: {n} reviewed runs ({why}).")
    if reviewed.reparsed:
        lines.append(
            "Stored from HTML (their clean text parses into other units, so runs on them may go"
            " differently): " + ", ".join(reviewed.reparsed)
        )
    if reviewed.policies:
        lines.append("Made under the policies " + ", ".join(reviewed.policies) + " (each run's header).")
    return lines


def _jsonl(rows: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def write_set(folder: Path, reviewed: ReviewSet) -> None:
    """The set's files in ``folder``, which must not exist or be empty (``InputError`` otherwise)."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise InputError(f"{folder} exists and is not an empty folder; name a new one")
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "questions.jsonl", reviewed.questions)
    if reviewed.corpus is not None:
        write_jsonl(folder / "corpus.jsonl", reviewed.corpus)
    (folder / "README.md").write_text(readme(reviewed), encoding="utf-8")


def set_zip(reviewed: ReviewSet, name: str) -> bytes:
    """The set's files under ``name/`` in one zip."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{name}/questions.jsonl", _jsonl(reviewed.questions))
        if reviewed.corpus is not None:
            archive.writestr(f"{name}/corpus.jsonl", _jsonl(reviewed.corpus))
        archive.writestr(f"{name}/README.md", readme(reviewed))
    return out.getvalue()
