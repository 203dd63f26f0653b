"""``evloop eval`` on a set whose corpus is a kb/ folder of articles, scored on the stored texts, and its
table by question kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.tuning.eval_kinds import answer_hit, by_kind

Capture = pytest.CaptureFixture[str]

WARRANTY = (
    "# Warranty\n\nThe LM-S10 has a whole-unit warranty of 2 years.\n\nThe battery is covered for 1 year.\n"
)
RESET = (
    "<html><head><title>Reset your password | Acme Help</title></head><body>"
    "<h1>Reset your password</h1><p>Open the reset link in the email. The link expires after 60 minutes.</p>"
    "</body></html>"
)
QUESTIONS = [
    {"id": "w", "question": "How long is the LM-S10 whole-unit warranty?", "expect": "answer",
     "gold_answers": ["2 years"], "metadata": {"kind": "fact"}},
    {"id": "r", "question": "How long is the password reset link valid?", "expect": "answer",
     "gold_answers": ["60 minutes"], "metadata": {"kind": "fact"}},
    {"id": "z", "question": "How long is the LM-Z900 warranty?", "expect": "refuse",
     "metadata": {"kind": "unanswerable"}},
]  # fmt: skip


def run(capsys: Capture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def kb_set(tmp_path: Path) -> Path:
    set_dir = tmp_path / "sets" / "helpdesk"
    (set_dir / "kb" / "account").mkdir(parents=True)
    (set_dir / "kb" / "warranty.md").write_text(WARRANTY, "utf-8")
    (set_dir / "kb" / "account" / "reset.html").write_text(RESET, "utf-8")
    lines = "\n".join(json.dumps(q) for q in QUESTIONS) + "\n"
    (set_dir / "questions.jsonl").write_text(lines, "utf-8")
    return set_dir


def _results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_eval_reads_a_kb_folder_with_doc_ids_as_ingest_gives_them(
    capsys: Capture, kb_set: Path, tmp_path: Path
) -> None:
    out_dir = tmp_path / "out"
    code, _, _ = run(capsys, "eval", str(kb_set), "--out-dir", str(out_dir), "--no-progress")
    cited = {e["doc_id"] for r in _results(out_dir / "helpdesk-adaptive.jsonl") for e in r["evidence"]}
    assert code == 0 and cited == {"warranty", "account/reset"}


def test_eval_of_a_kb_set_writes_the_stored_texts_its_offsets_point_into(
    capsys: Capture, kb_set: Path, tmp_path: Path
) -> None:
    out_dir = tmp_path / "out"
    run(capsys, "eval", str(kb_set), "--out-dir", str(out_dir), "--no-progress")
    corpus = _results(out_dir / "helpdesk-scoring" / "corpus.jsonl")
    texts = {(str(d["doc_id"]), str(d["version"])): str(d["text"]) for d in corpus}
    evidence = [e for r in _results(out_dir / "helpdesk-adaptive.jsonl") for e in r["evidence"]]
    assert evidence
    assert all(texts[e["doc_id"], e["version"]][e["start"] : e["end"]] == e["text"] for e in evidence)


def test_eval_of_a_kb_set_copies_its_questions_beside_the_stored_texts(
    capsys: Capture, kb_set: Path, tmp_path: Path
) -> None:
    out_dir = tmp_path / "out"
    run(capsys, "eval", str(kb_set), "--out-dir", str(out_dir), "--no-progress")
    copied = (out_dir / "helpdesk-scoring" / "questions.jsonl").read_bytes()
    assert copied == (kb_set / "questions.jsonl").read_bytes()


def test_eval_scores_a_kb_set_with_the_scorer_named(capsys: Capture, kb_set: Path, tmp_path: Path) -> None:
    scorer = tmp_path / "score.py"  # a scorer that reads SET_DIR/corpus.jsonl, as the shared one does
    scorer.write_text(
        "import json, sys\nfrom pathlib import Path\n"
        "n = len(Path(sys.argv[1], 'corpus.jsonl').read_text().splitlines())\n"
        "print(json.dumps({'correct_outcome': n / 10}))\n",
        "utf-8",
    )
    out_dir = tmp_path / "out"
    code, out, _ = run(capsys, "eval", str(kb_set), "--out-dir", str(out_dir), "--scorer", str(scorer))
    assert code == 0 and "correct outcome" in out and "0.200" in out


def test_eval_names_a_scorer_that_does_not_exist(capsys: Capture, kb_set: Path, tmp_path: Path) -> None:
    code, _, err = run(capsys, "eval", str(kb_set), "--scorer", str(tmp_path / "nope.py"))
    assert code == 2 and "nope.py" in err


def test_eval_refuses_a_set_with_both_a_corpus_file_and_a_kb_folder(
    capsys: Capture, kb_set: Path, tmp_path: Path
) -> None:
    (kb_set / "corpus.jsonl").write_text('{"doc_id": "a", "text": "x"}\n', "utf-8")
    code, _, err = run(capsys, "eval", str(kb_set), "--out-dir", str(tmp_path / "out"))
    assert code == 2 and "both corpus.jsonl and kb/" in err


def test_eval_refuses_a_set_without_a_corpus(capsys: Capture, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "questions.jsonl").write_text(json.dumps(QUESTIONS[0]) + "\n", "utf-8")
    code, _, err = run(capsys, "eval", str(tmp_path / "empty"), "--out-dir", str(tmp_path / "out"))
    assert code == 2 and "neither corpus.jsonl nor a kb/ folder" in err


def test_eval_prints_a_table_by_question_kind(capsys: Capture, kb_set: Path, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "eval", str(kb_set), "--out-dir", str(tmp_path / "out"), "--no-progress")
    table = out[out.index("by kind") :].splitlines()
    assert code == 0 and [line.split()[0] for line in table[2:5]] == ["fact", "unanswerable", "all"]


def test_the_kind_table_counts_correct_outcomes_answer_hits_and_conflicts() -> None:
    questions = [
        {"id": "a", "expect": "answer", "gold_answers": ["60 minutes"], "metadata": {"kind": "fact"}},
        {"id": "b", "expect": "answer", "gold_answers": ["2 years"], "metadata": {"kind": "fact"}},
        {"id": "c", "expect": "conflict", "metadata": {"kind": "conflict"}},
        {"id": "d", "expect": "conflict", "metadata": {"kind": "conflict"}},
        {"id": "e", "expect": "refuse", "metadata": {"kind": "conflict"}},
        {"id": "f", "expect": "answer"},
    ]
    results = [
        {"id": "a", "status": "answered", "answer": "The link expires after 60 Minutes."},
        {"id": "b", "status": "answered", "answer": "The battery is covered for 1 year."},
        {"id": "c", "status": "conflicting_evidence", "answer": None},
        {"id": "d", "status": "answered", "answer": "90 days"},
        {"id": "e", "status": "conflicting_evidence", "answer": None},
    ]
    rows = {r.kind: r for r in by_kind(questions, results)}
    fact, conflict, every = rows["fact"], rows["conflict"], rows["all"]
    assert (fact.n, fact.correct, fact.answer_hit, fact.conflict_recall) == (2, 1.0, 0.5, None)
    assert (conflict.n, conflict.conflict_recall, conflict.false_conflicts) == (3, 0.5, 1)
    assert conflict.correct == pytest.approx(1 / 3)
    assert (every.n, every.answer_hit, every.false_conflicts) == (5, 0.5, 1)


def test_answer_hit_reads_the_answer_as_the_shared_scorer_does() -> None:
    question = {"expect": "answer", "gold_answers": ["ＬＭ-S10  2 年"]}
    assert answer_hit(question, {"status": "answered", "answer": {"text": "lm-s10 2年"}}) is True


def test_a_set_without_kinds_has_no_kind_table() -> None:
    assert by_kind([{"id": "a", "expect": "answer"}], [{"id": "a", "status": "answered"}]) == []
