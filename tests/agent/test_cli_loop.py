"""The loop's command-line front door: ask, batch, eval, trace, replay, reindex."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.cli.sample import load_sample_kb

Capture = pytest.CaptureFixture[str]


def run(capsys: Capture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_ask_json_prints_the_outcome_with_its_trace(capsys: Capture, index: Path) -> None:
    code, out, _ = run(capsys, "ask", "LM-S10 的整机保修期是多久？", "--index", str(index), "--json")
    outcome = json.loads(out)
    assert code == 0 and outcome["status"] == "answered"
    assert outcome["trace"]["id"] == outcome["run_id"]


def test_ask_prints_a_refusal_with_what_is_missing(capsys: Capture, index: Path) -> None:
    code, out, _ = run(capsys, "ask", "LM-Z900 的整机保修期是多久？", "--index", str(index))
    assert code == 0
    assert "[insufficient_evidence]" in out and "LM-Z900" in out


def test_an_empty_question_is_an_input_error(capsys: Capture, index: Path) -> None:
    code, _, err = run(capsys, "ask", "   ", "--index", str(index))
    assert code == 2 and "the question is empty" in err


def test_an_unknown_policy_field_is_an_input_error(capsys: Capture, index: Path) -> None:
    code, _, err = run(capsys, "ask", "保修", "--index", str(index), "--policy", "no_such=1")
    assert code == 2 and "unknown policy field" in err


def test_batch_writes_one_result_line_per_question_in_the_eval_format(
    capsys: Capture, index: Path, tmp_path: Path
) -> None:
    questions = tmp_path / "q.jsonl"
    rows = [
        {"id": "a", "question": "LM-S10 的整机保修期是多久？"},
        {"id": "b", "question": "员工内部购机优惠是多少？"},
    ]
    questions.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    out_file = tmp_path / "r.jsonl"
    code, _, _ = run(capsys, "batch", str(questions), "--out", str(out_file), "--index", str(index))
    results = [json.loads(line) for line in out_file.read_text(encoding="utf-8").splitlines()]
    assert code == 0 and [r["id"] for r in results] == ["a", "b"]
    assert {"status", "answer", "evidence", "missing", "latency_ms"} <= set(results[0])


def test_batch_reports_a_malformed_question_line_and_writes_nothing(
    capsys: Capture, index: Path, tmp_path: Path
) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "a", "question": "保修"}\n{not json\n', encoding="utf-8")
    out_file = tmp_path / "r.jsonl"
    code, _, err = run(capsys, "batch", str(questions), "--out", str(out_file), "--index", str(index))
    assert code == 2 and "q.jsonl:2" in err and not out_file.exists()


def test_trace_list_show_verify_and_replay_work_on_a_stored_run(capsys: Capture, index: Path) -> None:
    _, out, _ = run(capsys, "ask", "LM-S10 的整机保修期是多久？", "--index", str(index), "--json")
    run_id = json.loads(out)["run_id"]
    assert run_id in run(capsys, "trace", "list", "--index", str(index))[1]
    assert "recalled" in run(capsys, "trace", "show", run_id, "--index", str(index))[1]
    assert "ok" in run(capsys, "trace", "verify", run_id, "--index", str(index))[1]
    records = json.loads(run(capsys, "trace", "export", run_id, "--index", str(index))[1])
    assert records[0]["type"] == "header"
    code, out, _ = run(capsys, "replay", run_id, "--index", str(index))
    assert code == 0 and "identical" in out


def test_trace_prune_keeps_todays_runs_and_refuses_a_bad_date(capsys: Capture, index: Path) -> None:
    _, out, _ = run(capsys, "ask", "LM-S10 的整机保修期是多久？", "--index", str(index), "--json")
    run_id = json.loads(out)["run_id"]
    today = datetime.now(UTC).date().isoformat()
    code, out, _ = run(capsys, "trace", "prune", "--before", today, "--index", str(index))
    assert code == 0 and "removed 0 runs in 0 days" in out
    assert run_id in run(capsys, "trace", "list", "--index", str(index))[1]
    code, _, err = run(capsys, "trace", "prune", "--before", "last week", "--index", str(index))
    assert code == 2 and "not a date" in err


def test_replay_all_summarises_every_stored_run(capsys: Capture, index: Path) -> None:
    for question in ("LM-S10 的整机保修期是多久？", "How do I return a device?"):
        run(capsys, "ask", question, "--index", str(index))
    code, out, _ = run(capsys, "replay", "--all", "--index", str(index))
    assert code == 0 and "replayed 2 runs: 2 identical" in out


def test_reindex_rebuilds_missing_index_files(capsys: Capture, index: Path) -> None:
    shutil.rmtree(index / "bm25")
    assert run(capsys, "search", "保修", "--index", str(index))[0] == 1
    assert run(capsys, "reindex", "--index", str(index))[0] == 0
    code, out, _ = run(capsys, "search", "保修", "--index", str(index))
    assert code == 0 and "warranty-zh" in out


def test_eval_runs_each_mode_and_writes_results(capsys: Capture, tmp_path: Path) -> None:
    set_dir = tmp_path / "mini"
    set_dir.mkdir()
    docs = [{"doc_id": d.doc_id, "text": d.text, "format": d.format} for d in load_sample_kb()[:4]]
    (set_dir / "corpus.jsonl").write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs), "utf-8")
    question = {"id": "q1", "question": "LM-S10 的整机保修期是多久？", "expect": "answer"}
    (set_dir / "questions.jsonl").write_text(json.dumps(question, ensure_ascii=False), "utf-8")
    out_dir = tmp_path / "out"
    code, out, _ = run(
        capsys, "eval", str(set_dir), "--mode", "seed", "--mode", "adaptive", "--out-dir", str(out_dir)
    )
    assert code == 0 and "score.py not found" in out
    assert (out_dir / "mini-seed.jsonl").exists() and (out_dir / "mini-adaptive.jsonl").exists()
