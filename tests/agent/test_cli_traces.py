"""`evloop trace verify` and `evloop replay` on damaged traces: every trace checked, tampering named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import TraceStore
from tests.agent.golden_runs import GOLDEN, RUNS, recorded_sample_kb
from tests.legacy_parse import legacy_parse
from tests.trace_support import edit_run

Capture = pytest.CaptureFixture[str]
QUESTIONS = ("LM-S10 的整机保修期是多久？", "How do I return a device?", "满多少元可以免费配送？")


@pytest.fixture()
def recorded_index(tmp_path: Path) -> Path:
    """The sample help centre as the golden runs were recorded against it."""
    folder = tmp_path / "recorded"
    with Store.open(folder, create=True) as store:
        store.ingest(recorded_sample_kb(), parse=legacy_parse)
    return folder


def run(capsys: Capture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def ask(capsys: Capture, index: Path, question: str = QUESTIONS[0]) -> str:
    code, out, _ = run(capsys, "ask", question, "--index", str(index), "--json")
    assert code == 0
    return str(json.loads(out)["run_id"])


def traces(index: Path) -> TraceStore:
    return TraceStore(index / "traces")


def edit_event(index: Path, run_id: str, seq: int) -> None:
    """Change one event's data, keeping the line valid JSON: only the hash chain can tell."""

    def edit(lines: list[bytes]) -> list[bytes]:
        record = json.loads(lines[seq + 1])
        assert record["seq"] == seq
        record["data"]["edited"] = True
        return [*lines[: seq + 1], json.dumps(record, ensure_ascii=False).encode() + b"\n", *lines[seq + 2 :]]

    edit_run(traces(index), run_id, edit)


def test_verify_all_checks_every_trace_reports_each_failure_and_counts_them(
    capsys: Capture, index: Path
) -> None:
    runs = [ask(capsys, index, q) for q in QUESTIONS]
    edit_run(traces(index), runs[0], lambda lines: [b"{not a header\n", *lines[1:]])
    edit_event(index, runs[2], 1)

    code, out, err = run(capsys, "trace", "verify", "--all", "--index", str(index))

    failed = [line for line in out.splitlines() if "FAILED" in line]
    assert code == 1
    assert sorted(line.split(":")[0] for line in failed) == sorted([runs[0], runs[2]])
    assert "1 of 3 traces verify" in out and "2 of 3 traces failed verification" in err


def test_verify_all_of_untouched_traces_exits_zero(capsys: Capture, index: Path) -> None:
    for question in QUESTIONS[:2]:
        ask(capsys, index, question)
    code, out, _ = run(capsys, "trace", "verify", "--all", "--index", str(index))
    chain = "run chain holds: 1 day; 2 journals or writers chained, 2 anchored at their end"
    assert (code, out.splitlines()) == (0, ["2 of 2 traces verify", chain])


def test_verify_tells_a_truncated_run_from_a_crashed_one(capsys: Capture, index: Path) -> None:
    run_id = ask(capsys, index)
    (index / "traces" / "index.jsonl").unlink()  # the index is a cache: the day manifest still knows
    edit_run(traces(index), run_id, lambda lines: lines[:-1])
    code, out, _ = run(capsys, "trace", "verify", run_id, "--index", str(index))
    assert code == 1 and "FAILED - truncated: the run finished with hash" in out

    events = len(traces(index).raw(run_id).splitlines()) - 1
    (traces(index).path(run_id).parent / "finished.manifest").unlink()  # nothing says it finished now
    code, out, _ = run(capsys, "trace", "verify", run_id, "--index", str(index))
    cut = f"ok - incomplete, the run's trace was cut short as it was written (no footer): its {events} events"
    assert code == 0 and cut in out


def test_replay_of_a_tampered_trace_says_tampered_at_the_event(capsys: Capture, index: Path) -> None:
    run_id = ask(capsys, index)
    edit_event(index, run_id, 2)
    code, out, err = run(capsys, "replay", run_id, "--index", str(index))
    assert code == 1 and "differs" not in out
    assert f"run {run_id}: tampered at event 2: a damaged record where event 2 should be" in err


def test_replay_of_a_truncated_trace_says_tampered_where_the_file_ends(capsys: Capture, index: Path) -> None:
    run_id = ask(capsys, index)
    edit_run(traces(index), run_id, lambda lines: lines[:3])
    code, _, err = run(capsys, "replay", run_id, "--index", str(index))
    assert code == 1 and "tampered at event 2: truncated: the run finished with hash" in err


def test_replay_all_names_a_tampered_trace_and_replays_the_rest(capsys: Capture, index: Path) -> None:
    runs = [ask(capsys, index, q) for q in QUESTIONS[:2]]
    edit_event(index, runs[1], 0)
    code, out, _ = run(capsys, "replay", "--all", "--index", str(index))
    assert code == 1
    assert f"run {runs[1]}: tampered at event 0" in out
    assert "replayed 1 runs: 1 identical, 0 differ, 1 tampered or unreadable (not replayed)" in out


def test_a_changed_byte_of_a_compressed_frame_is_a_failure_naming_its_run_never_a_crash(
    capsys: Capture, index: Path
) -> None:
    runs = [ask(capsys, index, q) for q in QUESTIONS]
    journal = traces(index).path(runs[1])
    content = bytearray(journal.read_bytes())
    frame = content.index(b'{"frame":"' + runs[1].encode())
    at = content.index(b"\n", frame) + 40  # inside its compressed line
    content[at] = ord("B") if content[at] == ord("A") else ord("A")
    journal.write_bytes(bytes(content))

    code, out, err = run(capsys, "trace", "verify", "--all", "--index", str(index))
    assert code == 1 and "2 of 3 traces verify" in out
    [failed] = [line for line in out.splitlines() if "FAILED" in line]
    assert failed.startswith(f"{runs[1]}: FAILED - damaged: the compressed records of its frame")
    for argv in (["trace", "verify", runs[1]], ["trace", "show", runs[1]], ["replay", runs[1]]):
        code, out, err = run(capsys, *argv, "--index", str(index))
        assert code == 1 and f"trace of run {runs[1]} in runs-" in out + err, argv
    code, out, _ = run(capsys, "trace", "verify", runs[2], "--index", str(index))
    assert code == 0 and "complete" in out


@pytest.mark.parametrize("run_id", [r for r, _, _ in RUNS if r.startswith("golden-")])
def test_a_committed_golden_trace_verifies_and_replays_from_the_cli(
    capsys: Capture, recorded_index: Path, run_id: str
) -> None:
    path = str(GOLDEN / f"{run_id}.jsonl")
    code, out, _ = run(capsys, "trace", "verify", path, "--index", str(recorded_index))
    assert code == 0 and ": ok - hash chain verifies" in out and "complete" in out
    code, out, _ = run(capsys, "replay", path, "--index", str(recorded_index))
    assert code == 0 and f"{run_id}: identical" in out
