"""Reading as much as the question's shape needs, on the bundled sample help centre, in both languages:
a procedure question hands back the intro and every step of the procedure, not only the step it hit.
The sample's sections are short enough to be read whole anyway; under a tight window budget (as
`evloop demo` shows) the loop without the shape rule (a trace recorded before it) slides to the
steps its words reach, and the shape rule still reads the whole procedure."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from evidence_loop.agent.doors.cli.sample import sample_kb_dir
from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.loop.tracing import ListRecorder
from evidence_loop.agent.outcome import Outcome
from evidence_loop.policies.config import Policy
from evidence_loop.tools.search.snapshot import Snapshot

# (question, document, the intro line) per language; the question names one step's words, so the
# seed lands on that step and the rest of the procedure must be read for it
PROCEDURES = [
    ("How do I fix the Wi-Fi when the tablet cannot connect? Do I restart the router?",
     "troubleshoot-wifi-en", "follow these steps:"),
    ("平板无法连接Wi-Fi怎么办？要重启路由器吗？", "troubleshoot-wifi-zh", "请按以下步骤排查："),
]  # fmt: skip


TIGHT = 250  # characters: a window of a step or two


def steps_of(doc_id: str) -> tuple[str, list[str]]:
    """The document's intro sentence and its numbered steps, read from the file itself."""
    text = (sample_kb_dir() / f"{doc_id}.md").read_text(encoding="utf-8")
    steps = [m.group(1).strip() for m in re.finditer(r"^\d+\. (.+)$", text, re.MULTILINE)]
    return text, steps


def evidence_text(outcome: Outcome, doc_id: str) -> str:
    return "\n".join(e.text for e in outcome.evidence if e.doc_id == doc_id)


@pytest.mark.parametrize(("question", "doc_id", "intro"), PROCEDURES, ids=["en", "zh"])
def test_a_procedure_question_returns_every_step_with_its_intro(
    sample_snapshot: Snapshot, question: str, doc_id: str, intro: str
) -> None:
    outcome = Controller().ask(sample_snapshot, question, run_id="procedure")
    assert outcome.status == "answered", outcome.missing
    text = evidence_text(outcome, doc_id)
    _, steps = steps_of(doc_id)
    assert len(steps) == 6
    assert intro in text
    assert [s for s in steps if s not in text] == []
    assert text.index(intro) < text.index(steps[0]) < text.index(steps[-1])


@pytest.mark.parametrize(("question", "doc_id", "intro"), PROCEDURES, ids=["en", "zh"])
def test_under_a_tight_budget_only_the_shape_rule_reads_the_whole_procedure(
    sample_snapshot: Snapshot, question: str, doc_id: str, intro: str
) -> None:
    tight = replace(Policy(), window_budget=TIGHT, parent_free_chars=0)
    narrow = Controller(replace(tight, shape_reading=False)).ask(sample_snapshot, question, run_id="narrow")
    shaped = Controller(tight).ask(sample_snapshot, question, run_id="shaped")
    _, steps = steps_of(doc_id)
    read = evidence_text(narrow, doc_id)
    assert sum(s in read for s in steps) < len(steps)  # the shape is what reads the whole procedure
    assert sum(s in evidence_text(shaped, doc_id) for s in steps) == len(steps)
    for e in [*narrow.evidence, *shaped.evidence]:  # offsets stay exact
        assert e.text == sample_snapshot.parsed(e.doc_id, e.version).text[e.start : e.end]


def test_the_checked_step_records_the_shape_only_when_reading_follows_it(sample_snapshot: Snapshot) -> None:
    question = PROCEDURES[0][0]
    shaped, plain = ListRecorder(), ListRecorder()
    Controller().ask(sample_snapshot, question, recorder=shaped, run_id="a")
    Controller(replace(Policy(), shape_reading=False)).ask(
        sample_snapshot, question, recorder=plain, run_id="b"
    )
    checked = [s for s in shaped.steps if s.step == "checked"]
    assert checked and all(s.shape == "procedure" for s in checked)  # type: ignore[attr-defined]
    old = [s.trace_data() for s in plain.steps if s.step == "checked"]
    assert old and all("shape" not in data for data in old)
