"""`evloop demo`: a short first contact (the questions, each outcome, one citation, where the traces
are), the steps under --verbose, and counts that say what a second run did."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.commands.demo import DEMO_QUESTIONS
from evidence_loop.agent.loop.render import telling_citation
from evidence_loop.agent.outcome import Citation

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
    # the model's warranty is cited by the table row that names the model, not the header row
    for i, line in enumerate(lines):
        if "LM-S10" in line and line[:1].isdigit() and lines[i + 1].strip().startswith("answered"):
            assert "LM-S10" in lines[i + 2], lines[i : i + 3]


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


def _cite(n: int, quote: str) -> Citation:
    return Citation(
        n=n, evidence_id="e1", doc_id="d", version="1", section=[], start=0, end=len(quote), quote=quote
    )


def test_the_brief_view_cites_the_row_naming_the_asked_model_not_the_header() -> None:
    header = _cite(1, "| Model | Whole-unit warranty | Battery warranty |\n| --- | --- | --- |")
    other = _cite(2, "| LM-X200 | 1 year | 6 months |")
    row = _cite(3, "| LM-S10 | 3 years | 1 year |")
    assert (
        telling_citation("How long is the whole-unit warranty for the LM-S10?", [header, other, row]) is row
    )
    assert telling_citation("整机保修多久？", [header, other, row]) is other  # no model named: the first row
    scope = _cite(1, "本政策适用于通过App报名的所有课程。")
    rule = _cite(2, "学员可免费改期一次，改至同一课程的其他班次。")
    assert telling_citation("还能免费改期一次吗？", [scope, rule]) is scope  # the answer's first sentence
