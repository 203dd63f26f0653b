"""Stored text that end users and reviewers wrote reaches the operator's terminal escaped: a question
asked over HTTP and a reviewer's note holding terminal escapes (set the title, clear the screen,
colours), a carriage return, a newline and bidi overrides are printed by ``trace list``, ``trace
show``, ``feedback list``, ``docs`` and ``ask`` as visible escapes, each on its own line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.service import Service
from evidence_loop.tools.printable import CONTROL_AND_BIDI
from evidence_loop.tools.types import DocumentInput
from tests.agent.api_support import api_client, open_sample

TITLE_AND_CLEAR = "\x1b]0;PWNED\x07\x1b[2J\x1b[31m"
HOSTILE = f"{TITLE_AND_CLEAR}LM-S10 保修多久？\rFAKE: all runs verified\n\u202eevil\u2066"
NOTE = "\x1b[2Jlooks right\nFAKE: 0 verdicts posted"
TITLE = "Warranty \x1b[1mbold\u202e"
Capture = pytest.CaptureFixture[str]


@dataclass(frozen=True)
class Asked:
    index: Path
    run_id: str


@pytest.fixture(scope="module")
def asked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Asked]:
    """A question asked over HTTP, and a review posted on it, both holding control and bidi characters."""
    folder = tmp_path_factory.mktemp("escapes")
    page = DocumentInput("styled", "# Warranty\n\nThe LM-Q1 warranty is one year.\n", "1", TITLE, "markdown")
    service: Service = open_sample(folder, (page,))
    client = api_client(service, local=True)
    run_id = client.post("/v1/ask", json={"question": HOSTILE}).json()["run_id"]
    posted = client.post(f"/v1/runs/{run_id}/feedback", json={"verdict": "correct", "note": NOTE})
    assert posted.status_code == 201, posted.text
    service.close()
    yield Asked(folder / "index", run_id)


def printed(capsys: Capture, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def assert_nothing_a_terminal_obeys(out: str) -> None:
    bad = [c for c in out if (c not in "\n" and not c.isprintable()) or c in "\u202e\u2066\u200f"]
    assert bad == [], out


def test_trace_list_prints_a_question_with_its_escapes_shown(asked: Asked, capsys: Capture) -> None:
    out = printed(capsys, "trace", "list", "--index", str(asked.index))

    assert_nothing_a_terminal_obeys(out)
    (row,) = [line for line in out.splitlines() if asked.run_id in line]
    assert "\\u001b]0;PWNED\\u0007\\u001b[2J" in row and "\\u202eevil" in row
    assert not any(line.startswith("FAKE") for line in out.splitlines())


def test_trace_show_keeps_the_question_on_its_own_line(asked: Asked, capsys: Capture) -> None:
    out = printed(capsys, "trace", "show", asked.run_id, "--index", str(asked.index))

    assert_nothing_a_terminal_obeys(out)
    (line,) = [line for line in out.splitlines() if line.startswith("question")]
    assert line.endswith("LM-S10 保修多久？\\rFAKE: all runs verified\\n\\u202eevil\\u2066")
    assert not any(line.startswith("FAKE") for line in out.splitlines())


def test_feedback_list_prints_a_note_of_several_lines_on_one_line(asked: Asked, capsys: Capture) -> None:
    out = printed(capsys, "feedback", "list", "--index", str(asked.index))

    assert_nothing_a_terminal_obeys(out)
    assert out.splitlines()[0].endswith("note=\\u001b[2Jlooks right\\nFAKE: 0 verdicts posted")
    assert not any(line.startswith("FAKE") for line in out.splitlines())  # the note made no line of its own


def test_docs_prints_a_title_with_its_escapes_shown(asked: Asked, capsys: Capture) -> None:
    out = printed(capsys, "docs", "--index", str(asked.index))

    assert_nothing_a_terminal_obeys(out)
    assert "Warranty \\u001b[1mbold\\u202e" in out


def test_json_output_is_escaped_and_still_reads_back_as_the_stored_text(
    asked: Asked, capsys: Capture
) -> None:
    out = printed(capsys, "trace", "export", asked.run_id, "--index", str(asked.index))

    assert re.search(f"[{CONTROL_AND_BIDI}]", out.replace("\n", "")) is None
    assert json.loads(out)[0]["question"] == HOSTILE
