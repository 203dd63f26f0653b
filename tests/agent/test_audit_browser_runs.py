"""The console an auditor works in all day, in a real browser (Debian's chromium, headless): the runs
list's columns and filters, a conversation's turns together, the cited sentence marked inside its
evidence, the review history, the figures page against the traces, and the reviewed runs exported
as an evaluation set that ``evloop eval`` runs."""

from __future__ import annotations

import json
import math
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.traces import Trace
from evidence_loop.traces.feedback.feedback import FeedbackEntry, Verdict, latest
from evidence_loop.traces.journal.manifest import read_manifest
from evidence_loop.traces.records.schema import utc_timestamp
from evidence_loop.traces.records.steps import DecidedStep
from tests.agent.api_support import Key
from tests.agent.browser_support import NEEDS_CHROMIUM, WAIT_S, chromium, listed, serving, sign_in, wait_for

pytestmark = [NEEDS_CHROMIUM, pytest.mark.browser]

BOT = Key("bot", "pk-bot", ("staff",), ("ask",))
AUDITOR = Key("auditor", "pk-auditor", ("staff",), ("audit", "review"))
KEYS = (BOT, AUDITOR)
EXPECT = {"answered": "answer", "insufficient_evidence": "refuse", "conflicting_evidence": "conflict"}


@dataclass
class Runs:
    url: str
    service: Service
    answered: str  # reviewed correct
    refused: str  # an uncovered model, reviewed correct
    staff: str  # reviewed should_have_refused
    unanswered: str  # refused for want of evidence, reviewed should_have_answered
    unreviewed: str
    spare: str  # reviewed by a test, from the page
    turns: list[str] = field(default_factory=list)  # one conversation, oldest first; the last reviewed


def review(service: Service, run_id: str, verdict: Verdict, note: str | None = None) -> None:
    assert service.traces is not None
    final = service.trace(run_id).footer
    assert final is not None
    moment = utc_timestamp(datetime.now(UTC))
    service.traces.feedback.append(FeedbackEntry(run_id, final.hash, verdict, moment, "lead", note=note))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    service = Service.open(tmp_path_factory.mktemp("console") / "index", create=True, embedder=None)
    service.ingest(load_sample_kb())

    def ask(question: str, groups: tuple[str, ...] = (), history: list[Any] | None = None) -> str:
        return service.ask(question, list(groups), caller=BOT.name, history=history).run_id

    made = Runs(
        "",
        service,
        answered=ask("LM-S10 整机保修多久？"),
        refused=ask("LM-Z900 的整机保修期是多久？"),
        staff=ask("员工购机优惠是几折？", ("staff",)),
        unanswered=ask("Who is the CEO of the company?"),
        unreviewed=ask("What is the refund policy for courses that have started?"),
        spare=ask("How do I reset the router?"),
    )
    first = "What does Lumen Care Premium cover?"
    made.turns.append(ask(first))
    made.turns.append(ask("How much does it cost?", history=[{"question": first, "run_id": made.turns[0]}]))
    earlier = [
        {"question": first, "run_id": made.turns[0]},
        {"question": "How much?", "run_id": made.turns[1]},
    ]
    made.turns.append(ask("And the Essential plan?", history=earlier))
    for run_id, verdict in (
        (made.answered, "correct"),
        (made.refused, "correct"),
        (made.staff, "should_have_refused"),
        (made.unanswered, "should_have_answered"),
        (made.turns[2], "correct"),
    ):
        review(service, run_id, verdict)  # type: ignore[arg-type]
    with serving(service, KEYS) as url:
        made.url = url
        yield made
    service.close()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    with chromium(tmp_path / "profile", downloads=tmp_path / "downloads") as driver:
        yield driver


def standing(runs: Runs) -> dict[str, str]:
    assert runs.service.traces is not None
    return {run: r.verdict for run, r in latest(runs.service.traces.feedback.records()).items()}


def choose(driver: Any, select_id: str, value: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.ID, select_id)).select_by_value(value)
    driver.find_element(By.ID, "apply-filters").click()
    wait_for(driver, lambda d: f"{select_id[2:]}={value}" in d.current_url)


def row(driver: Any, run_id: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, f'#runs tr[data-run-id="{run_id}"]')


def decided(trace: Trace) -> DecidedStep:
    return next(e.data for e in trace.events if isinstance(e.data, DecidedStep))


def test_the_list_shows_each_runs_answer_its_refusal_reason_and_its_review(browser: Any, runs: Runs) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, runs.url, AUDITOR)
    answer = decided(runs.service.trace(runs.answered)).outcome["answer"]["text"]

    preview = row(browser, runs.answered).find_element(By.CSS_SELECTOR, ".answer-preview").text
    refused = row(browser, runs.refused)
    kinds = [k.get_attribute("data-kind") for k in refused.find_elements(By.CSS_SELECTOR, ".kind")]

    assert preview and " ".join(answer.split()).startswith(preview.rstrip("…"))
    assert kinds == ["uncovered_slot"] and "LM-Z900" in refused.find_element(By.CSS_SELECTOR, ".why").text
    assert row(browser, runs.staff).find_element(By.CSS_SELECTOR, ".review").text == "should have refused"
    assert row(browser, runs.unreviewed).get_attribute("data-review") is None


@pytest.mark.parametrize("wanted", ["correct", "reviewed", "unreviewed"])
def test_the_list_filters_by_the_verdict_that_stands_and_by_reviewed_or_not(
    browser: Any, runs: Runs, wanted: str
) -> None:
    sign_in(browser, runs.url, AUDITOR)
    choose(browser, "f-review", wanted)
    verdicts = standing(runs)
    everything = [
        runs.answered,
        runs.refused,
        runs.staff,
        runs.unanswered,
        runs.unreviewed,
        runs.spare,
        *runs.turns,
    ]
    keep = {
        "correct": lambda r: verdicts.get(r) == "correct",
        "reviewed": lambda r: r in verdicts,
        "unreviewed": lambda r: r not in verdicts,
    }[wanted]

    assert set(listed(browser)) == {r for r in everything if keep(r)}


def test_the_list_filters_by_missing_kind(browser: Any, runs: Runs) -> None:
    """Exactly the runs whose refusal holds a piece of that kind, as their traces record them (the
    uncovered model, and any other question refused for a thing no document names)."""
    sign_in(browser, runs.url, AUDITOR)
    choose(browser, "f-missing", "uncovered_slot")
    everything = [
        runs.answered,
        runs.refused,
        runs.staff,
        runs.unanswered,
        runs.unreviewed,
        runs.spare,
        *runs.turns,
    ]

    def kinds(run_id: str) -> set[str]:
        return {m["kind"] for m in decided(runs.service.trace(run_id)).outcome.get("missing") or []}

    shown = listed(browser)
    assert runs.refused in shown
    assert set(shown) == {r for r in everything if "uncovered_slot" in kinds(r)}


def test_a_conversations_turns_are_grouped_in_the_order_asked(browser: Any, runs: Runs) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, runs.url, AUDITOR)
    group = browser.find_element(By.CSS_SELECTOR, "#runs tbody.conversation")
    turns = group.find_elements(By.CSS_SELECTOR, "tr[data-run-id]")

    assert [(t.get_attribute("data-run-id"), t.get_attribute("data-turn")) for t in turns] == [
        (runs.turns[0], "1"),
        (runs.turns[1], "2"),
        (runs.turns[2], "3"),
    ]
    group.find_element(By.LINK_TEXT, "all its turns").click()
    wait_for(browser, lambda d: "conversation=" in d.current_url)
    assert set(listed(browser)) == set(runs.turns)


def test_a_follow_ups_page_links_the_turns_before_it(browser: Any, runs: Runs) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, runs.url, AUDITOR, f"/audit/runs/{runs.turns[2]}")
    earlier = browser.find_elements(By.CSS_SELECTOR, "#conversation .earlier-turn a")

    assert [a.get_attribute("data-run-id") for a in earlier] == runs.turns[:2]
    read_as = decided(runs.service.trace(runs.turns[2])).outcome["resolved_question"]
    assert read_as and "Essential" in read_as  # the thing swapped in, as issue 31's follow-ups read it
    assert browser.find_element(By.ID, "read-as").text == read_as


def test_each_cited_sentence_is_marked_inside_its_evidence_with_exactly_its_offsets(
    browser: Any, runs: Runs
) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, runs.url, AUDITOR, f"/audit/runs/{runs.answered}")
    snapshot = runs.service.snapshot()
    citations = decided(runs.service.trace(runs.answered)).outcome["answer"]["citations"]
    marks = browser.find_elements(By.CSS_SELECTOR, "mark.evidence-span > mark.cite-span")

    assert len(marks) == len(citations) > 0
    for mark, citation in zip(marks, sorted(citations, key=lambda c: c["start"]), strict=True):
        window = mark.find_element(By.XPATH, "..")
        start, end = int(mark.get_attribute("data-start")), int(mark.get_attribute("data-end"))
        text = snapshot.parsed(mark.get_attribute("data-doc-id"), mark.get_attribute("data-version")).text
        assert (start, end) == (citation["start"], citation["end"])
        assert mark.get_attribute("textContent") == text[start:end]
        assert int(window.get_attribute("data-start")) <= start < end <= int(window.get_attribute("data-end"))


def test_the_answers_citation_links_to_its_marked_sentence(browser: Any, runs: Runs) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, runs.url, AUDITOR, f"/audit/runs/{runs.answered}")
    links = browser.find_elements(By.CSS_SELECTOR, "#answer a.cite")

    assert links and all(link.get_attribute("href").split("#")[1].startswith("cite-") for link in links)
    for link in links:
        target = link.get_attribute("href").split("#")[1]
        assert browser.find_element(By.ID, target).tag_name == "mark"


def test_a_posted_review_shows_its_note_document_and_reviewer_in_the_history(
    browser: Any, runs: Runs
) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, runs.url, AUDITOR, f"/audit/runs/{runs.spare}")
    browser.find_element(By.ID, "verdict-correct").click()
    browser.find_element(By.ID, "fb-doc").send_keys("troubleshoot-wifi-en")
    browser.find_element(By.ID, "fb-note").send_keys("the reset steps, in order")
    browser.find_element(By.ID, "send-feedback").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "feedback-result").text.startswith("Stored"))
    posted = browser.find_element(By.CSS_SELECTOR, "#review-rows tr.stands .note").text
    browser.refresh()
    stands = browser.find_element(By.CSS_SELECTOR, "#review-rows tr.stands")

    assert posted == "the reset steps, in order"
    assert [
        stands.find_element(By.CSS_SELECTOR, f".{name}").text for name in ("note", "doc", "reviewer")
    ] == [
        "the reset steps, in order",
        "troubleshoot-wifi-en",
        "auditor",
    ]


def nearest_rank(values: list[int], share: float) -> int:
    return sorted(values)[max(0, math.ceil(share * len(values)) - 1)]


def from_the_traces(runs: Runs) -> dict[str, Any]:
    """The figures of today, counted from each run's trace, the manifest and the reviews."""
    assert runs.service.traces is not None
    store = runs.service.traces
    outcomes, kinds, latencies = Counter[str](), Counter[str](), []
    for summary in store.list():
        trace = store.read(summary.run_id)
        assert trace.footer is not None
        outcomes[trace.footer.outcome_status] += 1
        if trace.footer.outcome_status == "insufficient_evidence":
            kinds.update({m["kind"] for m in decided(trace).outcome["missing"]})
    for folder in (folder for _, folder in store.day_folders()):
        for run_id, finished in read_manifest(folder).items():
            created = store.read(run_id).header.created.timestamp()
            assert finished.at is not None
            latencies.append(round((finished.at - created) * 1000))
    verdicts = standing(runs)
    status_of = {s.run_id: s.outcome_status for s in store.list()}
    agreement = {
        status: (
            sum(status_of[r] == status for r in verdicts),
            sum(status_of[r] == status and v == "correct" for r, v in verdicts.items()),
        )
        for status in EXPECT
    }
    return {
        "outcomes": dict(outcomes),
        "kinds": dict(kinds),
        "verdicts": dict(Counter(verdicts.values())),
        "agreement": agreement,
        "p50": nearest_rank(latencies, 0.5),
        "p95": nearest_rank(latencies, 0.95),
    }


def shown_counts(driver: Any, table: str) -> dict[str, int]:
    from selenium.webdriver.common.by import By

    cells = driver.find_elements(By.CSS_SELECTOR, f"#{table}-table tbody tr[data-key]")
    return {
        c.get_attribute("data-key"): int(c.get_attribute("data-count"))
        for c in cells
        if c.get_attribute("data-count") != "0"
    }


def test_the_figures_page_matches_the_counts_of_the_traces(browser: Any, runs: Runs) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, runs.url, AUDITOR, "/audit/figures")
    expected = from_the_traces(runs)
    agreement = {
        row.get_attribute("data-key"): (
            int(row.get_attribute("data-reviewed")),
            int(row.get_attribute("data-correct")),
        )
        for row in browser.find_elements(By.CSS_SELECTOR, "#agreement tbody tr")
    }
    latency = browser.find_element(By.ID, "latency")

    assert shown_counts(browser, "outcomes") == expected["outcomes"]
    assert shown_counts(browser, "kinds") == expected["kinds"]
    assert shown_counts(browser, "verdicts") == expected["verdicts"]
    assert agreement == expected["agreement"]
    assert (int(latency.get_attribute("data-p50")), int(latency.get_attribute("data-p95"))) == (
        expected["p50"],
        expected["p95"],
    )
    assert browser.find_elements(By.CSS_SELECTOR, "#outcomes svg rect.bar")


def downloaded(folder: Path) -> Path:
    """The zip the browser saved into ``folder``, once it is whole."""
    import time

    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        done = [p for p in folder.glob("*.zip")] if folder.exists() else []
        if done and not list(folder.glob("*.crdownload")):
            return done[0]
        time.sleep(0.1)
    raise AssertionError("no download arrived")


def test_the_exported_set_runs_with_evloop_eval_and_reproduces_the_reviewed_outcomes(
    browser: Any, runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from selenium.webdriver.common.by import By

    browser.execute_cdp_cmd(
        "Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path / "downloads")}
    )
    sign_in(browser, runs.url, AUDITOR, "/audit/figures")
    browser.find_element(By.ID, "export-eval").click()
    with zipfile.ZipFile(downloaded(tmp_path / "downloads")) as archive:
        archive.extractall(tmp_path / "set")
    (folder,) = (tmp_path / "set").iterdir()
    code = main(["eval", str(folder), "--out-dir", str(tmp_path / "out"), "--no-progress"])
    capsys.readouterr()
    questions = [json.loads(line) for line in (folder / "questions.jsonl").read_text().splitlines()]
    results = {
        r["id"]: r
        for r in map(
            json.loads, (tmp_path / "out" / f"{folder.name}-adaptive.jsonl").read_text().splitlines()
        )
    }
    verdicts = standing(runs)

    assert code == 0 and {q["id"] for q in questions} == set(verdicts)
    for item in questions:
        ran = runs.service.trace(item["id"]).footer
        assert ran is not None
        assert results[item["id"]]["status"] == ran.outcome_status  # the outcome, reproduced
        right = EXPECT[results[item["id"]]["status"]] == item["expect"]
        assert right == (verdicts[item["id"]] == "correct"), item["id"]  # and what the reviewer said of it
