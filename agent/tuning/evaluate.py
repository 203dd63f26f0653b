"""Evaluation on a set folder in the ../shared/eval FORMAT.md shape: ingest, ask, write results, score.

A set's corpus is its ``corpus.jsonl``, or a folder of article files ``kb/`` read as ``evloop ingest
SET_DIR/kb`` reads it (doc_id = the path under ``kb/`` without its extension). Scores come from the
``score.py`` beside the set folders (or the one named) so that the figures are the ones everybody
else computes; without it the results file is still written. Offsets are into the stored text,
which for an HTML page is its clean text, not its source: when the stored texts are not the set's
own ``corpus.jsonl`` texts (a ``kb/`` folder, HTML records), the set is scored against a scoring
folder holding the stored texts (``scoring_set``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import Protocol

from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.loop.history import history_fault
from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import check_question
from evidence_loop.agent.tuning.expansion import growth
from evidence_loop.policies.question.followup import Turn
from evidence_loop.tools.errors import InputError, MalformedRecordError
from evidence_loop.tools.inputs import JsonInputError, decode_utf8, parse_json
from evidence_loop.tools.models.embedding import Embedder
from evidence_loop.tools.parse.sources import collect, read_corpus_jsonl
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.calibration import CorpusScale, ScaleMeter
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.store.location import Location, open_store
from evidence_loop.traces.records.steps import RecalledStep, SlidStep, TraceStep

Progress = Callable[[int], None]


def read_questions(path: Path) -> list[dict[str, object]]:
    """questions.jsonl records, every one checked before any is asked: JSON nested at most
    ``MAX_JSON_DEPTH`` levels with no lone surrogate, a non-empty ``question`` within the service's
    limit, a ``history`` of at most ``MAX_HISTORY_TURNS`` questions. A bad line is reported with its
    number (``MalformedRecordError``); bytes that are not UTF-8 with the line and byte."""
    out: list[dict[str, object]] = []
    text = decode_utf8(path.read_bytes(), str(path))
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = parse_json(line)
        except JsonInputError as exc:
            raise MalformedRecordError(str(path), number, str(exc)) from None
        if not isinstance(record, dict) or not isinstance(record.get("question"), str):
            raise MalformedRecordError(str(path), number, "needs a 'question' string")
        try:
            check_question(record["question"])
            history_of(record)
        except InputError as exc:
            raise MalformedRecordError(str(path), number, str(exc)) from None
        record.setdefault("id", f"q{number}")
        out.append(record)
    return out


def result_line(qid: str, outcome: Outcome) -> dict[str, object]:
    """One results.jsonl line (FORMAT.md), with the extra fields the outcome carries."""
    return {
        "id": qid,
        "status": outcome.status,
        "answer": outcome.answer.text if outcome.answer else None,
        "evidence": [
            {"doc_id": e.doc_id, "version": e.version, "start": e.start, "end": e.end, "text": e.text}
            for e in outcome.evidence
        ],
        "missing": [m.model_dump(exclude_none=True) for m in outcome.missing],
        "conflicts": [c.model_dump(mode="json") for c in outcome.conflicts],
        "latency_ms": outcome.latency_ms,
        "run_id": outcome.run_id,
        "signals": outcome.signals.model_dump(),
    }


class Ask(Protocol):
    """Service.ask's shape as a batch calls it."""

    def __call__(self, question: str, groups: list[str], *, history: list[str] | None = None) -> Outcome: ...


def history_of(record: dict[str, object]) -> list[str] | None:
    """A question's ``history`` (FORMAT.md): its earlier questions, oldest first; None without one."""
    history = record.get("history")
    if history is None:
        return None
    if not isinstance(history, list) or not all(isinstance(t, str) for t in history):
        raise InputError(f"question {record.get('id')}: 'history' is a list of earlier question strings")
    if (fault := history_fault(len(history))) is not None:
        raise InputError(fault)
    return [str(t) for t in history] or None


def answer_all(
    ask: Ask,
    questions: Iterable[dict[str, object]],
    progress: Progress | None = None,
    extra: Callable[[Outcome], dict[str, object]] | None = None,
    *,
    with_history: bool = True,
) -> Iterator[dict[str, object]]:
    """Ask every question with its own groups, and its earlier turns unless ``with_history`` is off;
    yield result lines in order (plus ``extra`` fields)."""
    for n, q in enumerate(questions, 1):
        groups = q.get("groups") or []
        history = history_of(q) if with_history else None
        readers = [str(g) for g in groups] if isinstance(groups, list) else []
        question = str(q["question"])
        outcome = ask(question, readers, history=history) if history else ask(question, readers)
        if progress:
            progress(n)
        line = result_line(str(q["id"]), outcome)
        if extra is not None:
            line.update(extra(outcome))
        yield line


def write_jsonl(path: Path, rows: Iterable[dict[str, object]]) -> int:
    """Write rows to a temporary file and move it into place: never a half-written results file,
    and no ``.part`` file left behind when a row fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".part")
    count = 0
    try:
        with tmp.open("w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
                count += 1
        tmp.replace(path)
    except BaseException:
        with suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
    return count


def scorer_beside(set_dir: Path) -> Path | None:
    """The ``score.py`` beside the set folder, or None."""
    script = set_dir.resolve().parent / "score.py"
    return script if script.exists() else None


def score(set_dir: Path, results: Path, script: Path | None = None) -> dict[str, object] | None:
    """The set's scores from ``score.py --json`` (``script``, else the one beside the set folder), or
    None when there is none."""
    script = script or scorer_beside(set_dir)
    if script is None:
        return None
    done = subprocess.run(
        [sys.executable, str(script), str(set_dir), str(results), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    data: dict[str, object] = json.loads(done.stdout)
    return data


def set_corpus(set_dir: Path) -> Path:
    """Where a set's documents are: its ``corpus.jsonl``, or its ``kb/`` folder of article files."""
    corpus, kb = set_dir / "corpus.jsonl", set_dir / "kb"
    if corpus.exists() and kb.is_dir():
        raise InputError(f"{set_dir} holds both corpus.jsonl and kb/; an evaluation set has one corpus")
    if corpus.exists():
        return corpus
    if kb.is_dir():
        return kb
    raise InputError(f"{set_dir} has neither corpus.jsonl nor a kb/ folder (see FORMAT.md)")


def stored_corpus(snapshot: Snapshot) -> list[dict[str, object]]:
    """Every live version as a corpus.jsonl record of its stored text (what offsets point into)."""
    out: list[dict[str, object]] = []
    for doc_id, version in sorted(snapshot.current_versions().items()):
        parsed = snapshot.parsed(doc_id, version)
        out.append(
            {"doc_id": doc_id, "version": version, "title": parsed.title, "format": parsed.format,
             "text": parsed.text}
        )  # fmt: skip
    return out


def scoring_set(set_dir: Path, snapshot: Snapshot, out_dir: Path) -> Path:
    """The folder to score against: the set itself when the store holds its corpus.jsonl texts as
    they are, else ``OUT_DIR/<set>-scoring`` holding the stored texts and the set's questions."""
    corpus = set_corpus(set_dir)
    stored = stored_corpus(snapshot)
    if corpus.suffix == ".jsonl":
        given = {(d.doc_id, d.version): d.text for d in read_corpus_jsonl(corpus)}
        if all(given.get((str(r["doc_id"]), str(r["version"]))) == r["text"] for r in stored):
            return set_dir
    folder = out_dir / f"{set_dir.name}-scoring"
    write_jsonl(folder / "corpus.jsonl", stored)
    shutil.copyfile(set_dir / "questions.jsonl", folder / "questions.jsonl")
    return folder


def ingest_set(
    set_dir: Path,
    index: Location,
    embedder: Embedder | None = None,
    embed_progress: Callable[[int, int], None] | None = None,
    meter: ScaleMeter | None = None,
) -> Store:
    """A fresh store holding the set's corpus (``corpus.jsonl`` or ``kb/``; embedded when an embedder is
    given, its scale measured by ``meter``, as every ingest path measures it)."""
    corpus = set_corpus(set_dir)
    store = open_store(index, create=True, embedder=embedder, meter=meter)
    if store.generation != 0:
        store.close()
        raise InputError("the store already holds documents; an evaluation ingests its set into an empty one")
    store.ingest(collect([corpus]).documents, embed_progress=embed_progress)
    return store


def temp_index() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="evloop-eval-")


class _RunRecorder:
    """Keeps the documents a run's recall rounds found (for attribution) and its growth steps (for
    the expansion profile), nothing else."""

    def __init__(self) -> None:
        self.docs: dict[str, None] = {}
        self.slid: list[SlidStep] = []

    def record(self, step: TraceStep) -> None:
        if isinstance(step, RecalledStep):
            self.docs.update(dict.fromkeys(hit["doc_id"] for hit in step.hits))
        elif isinstance(step, SlidStep):
            self.slid.append(step)


class Asker:
    """Asks the controller against one snapshot and remembers what each run recalled and grew."""

    def __init__(self, controller: Controller, snapshot: Snapshot, scale: CorpusScale | None = None) -> None:
        self.controller = controller
        self.snapshot = snapshot
        self.scale = scale
        self._recorded: dict[str, _RunRecorder] = {}

    def __call__(self, question: str, groups: list[str], *, history: list[str] | None = None) -> Outcome:
        recorder = _RunRecorder()
        turns = [Turn(t) for t in history or ()]
        outcome = self.controller.ask(
            self.snapshot, question, groups, recorder=recorder, scale=self.scale, history=turns
        )
        self._recorded[outcome.run_id] = recorder
        return outcome

    def extra(self, outcome: Outcome) -> dict[str, object]:
        """The result line's ``recalled`` field (documents either recall round found) and, answered,
        its ``expansion`` (agent.tuning.expansion: kept growth steps and characters of the evidence)."""
        recorder = self._recorded.pop(outcome.run_id, None) or _RunRecorder()
        line: dict[str, object] = {"recalled": list(recorder.docs)}
        if outcome.status == "answered":
            line["expansion"] = growth(outcome, recorder.slid).as_record()
        return line
