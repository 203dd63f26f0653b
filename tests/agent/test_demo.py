"""`evloop demo`: a short first contact (the questions, each outcome, one citation, where the traces
are), the steps under --verbose, and counts that say what a second run did."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.commands.demo import DEMO_QUESTIONS

Capture = pytest.CaptureFixture[str]


def demo(capsys: Capture, index: Path, *flags: str) -> list[str]:
    assert main(["demo", "--index", str(index), *flags]) == 0
    out, _ = capsys.readouterr()
    return out.splitlines()


def test_the_demo_shows_each_question_its_outcome_and_where_the_traces_are(
    capsys: Capture, tmp_path: Path
) -> None:
    lines = demo(capsys, tmp_path / "ix")

    numbered = [line for line in lines if line[:1].isdigit() and ". " in line[:4]]
    assert [line.split(". ", 1)[1].split("  (asked")[0] for line in numbered] == [
        q for q, _ in DEMO_QUESTIONS
    ]
    assert any(line.strip().startswith("cites ") for line in lines)
    assert any(line.strip().startswith("insufficient_evidence: ") for line in lines)
    assert f"Every run above is traced in {tmp_path / 'ix' / 'traces'}" in "\n".join(lines)
    assert len(lines) <= 60 and not any("slid " in line for line in lines)


def test_a_second_demo_run_says_every_document_is_unchanged(capsys: Capture, tmp_path: Path) -> None:
    demo(capsys, tmp_path / "ix")
    lines = demo(capsys, tmp_path / "ix")

    assert (
        lines[1].strip().startswith("0 added, 0 changed, 18 unchanged, 0 retired, 0 skipped: 0 new versions,")
    )


def test_the_verbose_demo_shows_the_searches_and_how_each_window_grew(
    capsys: Capture, tmp_path: Path
) -> None:
    lines = demo(capsys, tmp_path / "ix", "--verbose")

    assert any(line.startswith("search: ") for line in lines)
    assert any("slid " in line for line in lines)
    assert any("tight window budget" in line for line in lines)
