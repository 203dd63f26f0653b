"""evloop feedback export --as-eval: reviewed runs as an evaluation set (FORMAT.md) that evloop eval runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.traces.feedback.feedback import FeedbackEntry, Verdict
from evidence_loop.traces.records.schema import utc_timestamp


@dataclass
class Reviewed:
    index: Path
    answered: str  # reviewed correct
    unanswered: str  # refused, reviewed should_have_answered naming the document that answers
    unnamed: str  # reviewed wrong_evidence without naming a document
    staff: str  # asked with the staff group, reviewed correct
    follow_up: str  # the second turn of a conversation, reviewed correct
    first_turn: str  # asked first, not reviewed


def post(service: Service, run_id: str, verdict: Verdict, doc_id: str | None = None) -> None:
    assert service.traces is not None
    footer = service.trace(run_id).footer
    assert footer is not None
    moment = utc_timestamp(datetime.now(UTC))
    service.traces.feedback.append(FeedbackEntry(run_id, footer.hash, verdict, moment, "lead", doc_id=doc_id))


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reviewed]:
    index = tmp_path_factory.mktemp("review-set") / "index"
    service = Service.open(index, create=True, embedder=None)
    service.ingest(load_sample_kb())
    first = "What does Lumen Care Premium cover?"
    first_turn = service.ask(first).run_id
    made = Reviewed(
        index,
        answered=service.ask("LM-S10 整机保修多久？").run_id,
        unanswered=service.ask("Who is the CEO of the company?").run_id,
        unnamed=service.ask("How do I reset the router?").run_id,
        staff=service.ask("员工购机优惠是几折？", ["staff"]).run_id,
        follow_up=service.ask(
            "How much does it cost?", history=[{"question": first, "run_id": first_turn}]
        ).run_id,
        first_turn=first_turn,
    )
    post(service, made.answered, "correct")
    post(service, made.unanswered, "should_have_answered", doc_id="warranty-en")
    post(service, made.unnamed, "wrong_evidence")
    post(service, made.staff, "correct")
    post(service, made.follow_up, "correct")
    service.close()
    yield made


def exported(reviewed: Reviewed, folder: Path, *extra: str) -> dict[str, dict[str, Any]]:
    assert main(["feedback", "export", "--index", str(reviewed.index), "--as-eval", str(folder), *extra]) == 0
    lines = (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return {item["id"]: item for item in map(json.loads, lines)}


def test_each_reviewed_run_becomes_a_question_expecting_what_its_verdict_says(
    reviewed: Reviewed, tmp_path: Path
) -> None:
    questions = exported(reviewed, tmp_path / "set")

    assert questions[reviewed.answered]["expect"] == "answer"
    assert questions[reviewed.unanswered]["expect"] == "answer"
    assert questions[reviewed.unanswered]["gold_doc_ids"] == ["warranty-en"]
    assert reviewed.first_turn not in questions


def test_a_correct_answer_keeps_its_cited_documents_and_its_answer_as_it_was(
    reviewed: Reviewed, tmp_path: Path
) -> None:
    item = exported(reviewed, tmp_path / "set")[reviewed.answered]

    assert item["gold_doc_ids"] and item["gold_answers"]
    assert item["metadata"]["status"] == "answered" and item["metadata"]["answer"]
    assert item["metadata"]["verdict"] == "correct" and item["metadata"]["reviewer"] == "lead"


def test_a_follow_up_carries_the_earlier_turns_it_read(reviewed: Reviewed, tmp_path: Path) -> None:
    item = exported(reviewed, tmp_path / "set")[reviewed.follow_up]

    assert item["history"] == ["What does Lumen Care Premium cover?"]


def test_a_wrong_evidence_verdict_naming_no_document_is_left_out_and_counted(
    reviewed: Reviewed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = exported(reviewed, tmp_path / "set")
    out = capsys.readouterr().out

    assert reviewed.unnamed not in questions
    assert "Left out: 1 reviewed runs (wrong_evidence naming no document)." in out
    assert "Left out: 1" in (tmp_path / "set" / "README.md").read_text(encoding="utf-8")


def test_exporting_for_groups_leaves_out_runs_asked_with_other_groups(
    reviewed: Reviewed, tmp_path: Path
) -> None:
    everyone = exported(reviewed, tmp_path / "all")
    public = exported(reviewed, tmp_path / "public", "--groups", "public")

    assert reviewed.staff in everyone and reviewed.staff not in public
    assert reviewed.answered in public


def test_the_corpus_holds_the_stored_text_of_each_readable_document(
    reviewed: Reviewed, tmp_path: Path
) -> None:
    exported(reviewed, tmp_path / "set", "--corpus", "cited")
    corpus = [json.loads(line) for line in (tmp_path / "set" / "corpus.jsonl").read_text().splitlines()]

    assert "warranty-en" in {d["doc_id"] for d in corpus}
    assert all(d["text"] and d["version"] for d in corpus)


def test_the_exported_set_runs_with_evloop_eval(
    reviewed: Reviewed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = exported(reviewed, tmp_path / "set")
    code = main(
        ["eval", str(tmp_path / "set"), "--lexical", "--out-dir", str(tmp_path / "out"), "--no-progress"]
    )
    capsys.readouterr()
    results = [
        json.loads(line) for line in (tmp_path / "out" / "set-adaptive.jsonl").read_text().splitlines()
    ]

    assert code == 0
    assert {r["id"] for r in results} == set(questions)
    assert {r["id"]: r["status"] for r in results}[reviewed.answered] == "answered"


def test_exporting_into_a_folder_that_holds_files_is_refused(
    reviewed: Reviewed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "keep.txt").write_text("mine", encoding="utf-8")
    code = main(["feedback", "export", "--index", str(reviewed.index), "--as-eval", str(tmp_path / "set")])

    assert code == 2
    assert "is not an empty folder" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "set").iterdir()] == ["keep.txt"]


def test_groups_without_as_eval_is_refused(reviewed: Reviewed, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["feedback", "export", "--index", str(reviewed.index), "--groups", "staff"])

    assert code == 2
    assert "--groups goes with --as-eval" in capsys.readouterr().err


def test_corpus_without_as_eval_is_refused(reviewed: Reviewed, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["feedback", "export", "--index", str(reviewed.index), "--corpus", "none"])

    assert code == 2
    assert "--corpus goes with --as-eval" in capsys.readouterr().err
