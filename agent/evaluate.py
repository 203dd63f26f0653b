"""Evaluation on a set folder in the ../shared/eval FORMAT.md shape: ingest, ask, write results, score.

Scores come from the set's own ``score.py`` (beside the set folders) so that the figures are the
ones everybody else computes; without it the results file is still written.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from agent.controller import Controller
from agent.outcome import Outcome
from tools.errors import InputError, MalformedRecordError
from tools.snapshot import Snapshot
from tools.sources import collect
from tools.store import Store

Progress = Callable[[int], None]


def read_questions(path: Path) -> list[dict[str, object]]:
    """questions.jsonl records; a bad line is reported with its number."""
    out: list[dict[str, object]] = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise MalformedRecordError(str(path), number, f"not JSON: {exc}") from None
            if not isinstance(record, dict) or not isinstance(record.get("question"), str):
                raise MalformedRecordError(str(path), number, "needs a 'question' string")
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


def answer_all(
    ask: Callable[[str, list[str]], Outcome],
    questions: Iterable[dict[str, object]],
    progress: Progress | None = None,
) -> Iterator[dict[str, object]]:
    """Ask every question with its own groups; yield result lines in order."""
    for n, q in enumerate(questions, 1):
        groups = q.get("groups") or []
        outcome = ask(str(q["question"]), [str(g) for g in groups] if isinstance(groups, list) else [])
        if progress:
            progress(n)
        yield result_line(str(q["id"]), outcome)


def write_jsonl(path: Path, rows: Iterable[dict[str, object]]) -> int:
    """Write rows to a temporary file and move it into place: never a half-written results file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".part")
    count = 0
    with tmp.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    tmp.replace(path)
    return count


def score(set_dir: Path, results: Path) -> dict[str, object] | None:
    """The set's scores from ``score.py --json`` beside the set folder, or None when it is absent."""
    script = set_dir.resolve().parent / "score.py"
    if not script.exists():
        return None
    done = subprocess.run(
        [sys.executable, str(script), str(set_dir), str(results), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    data: dict[str, object] = json.loads(done.stdout)
    return data


def ingest_set(set_dir: Path, index: Path) -> Store:
    """A fresh store holding the set's corpus."""
    corpus = set_dir / "corpus.jsonl"
    if not corpus.exists():
        raise InputError(f"{set_dir} has no corpus.jsonl (see FORMAT.md)")
    store = Store.open(index, create=True)
    store.ingest(collect([corpus]).documents)
    return store


def temp_index() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="evloop-eval-")


def asker(controller: Controller, snapshot: Snapshot) -> Callable[[str, list[str]], Outcome]:
    def ask(question: str, groups: list[str]) -> Outcome:
        return controller.ask(snapshot, question, groups)

    return ask
