"""The audit console in a real browser: Debian's chromium, headless, driven by selenium.

Skipped only where no chromium binary (or its driver) exists; `.ci/run` installs both.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from tests.agent.api_support import Key
from tests.agent.browser_support import NEEDS_CHROMIUM, chromium, listed, serving, wait_for
from tests.agent.browser_support import sign_in as sign_in_at
from tests.loopback import JsonHandler, LoopbackServer

pytestmark = [NEEDS_CHROMIUM, pytest.mark.browser]

STAFF_BOT = Key("staff-bot", "pk-staff", ("staff",), ("ask",))
PUBLIC_BOT = Key("public-bot", "pk-public", (), ("ask",))
STAFF_AUDITOR = Key("staff-auditor", "pk-audit-staff", ("staff",), ("audit", "review"))
SALES_AUDITOR = Key("sales-auditor", "pk-audit-sales", ("sales",), ("audit", "review"))
KEYS = (STAFF_BOT, PUBLIC_BOT, STAFF_AUDITOR, SALES_AUDITOR)
STAFF_QUESTION = "员工购机优惠是几折？"
PUBLIC_QUESTION = "LM-S10 整机保修多久？"


@dataclass
class Console:
    url: str
    service: Service
    staff_run: str
    public_run: str


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    """The API and console on uvicorn in a thread, with one staff run and one public run."""
    folder = tmp_path_factory.mktemp("console")
    service = Service.open(folder / "index", create=True, embedder=None)
    service.ingest(load_sample_kb())
    staff = service.ask(STAFF_QUESTION, ["staff"], caller=STAFF_BOT.name)
    public = service.ask(PUBLIC_QUESTION, [], caller=PUBLIC_BOT.name)
    with serving(service, KEYS) as url:
        yield Console(url, service, staff.run_id, public.run_id)
    service.close()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[object]:
    with chromium(tmp_path / "profile") as driver:
        yield driver


def sign_in(driver: object, console: Console, key: Key, then: str = "/audit") -> None:
    sign_in_at(driver, console.url, key, then)


def test_the_runs_list_renders_and_filters(browser: object, console: Console) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(f"{console.url}/audit")  # type: ignore[attr-defined]
    assert "/audit/login" in browser.current_url  # type: ignore[attr-defined]
    sign_in(browser, console, STAFF_AUDITOR)
    assert set(listed(browser)) == {console.staff_run, console.public_run}

    search = browser.find_element(By.ID, "f-q")  # type: ignore[attr-defined]
    search.send_keys("LM-S10")
    browser.find_element(By.ID, "apply-filters").click()  # type: ignore[attr-defined]
    wait_for(browser, lambda d: "q=LM-S10" in d.current_url)
    assert listed(browser) == [console.public_run]

    browser.get(f"{console.url}/audit")  # type: ignore[attr-defined]
    Select(browser.find_element(By.ID, "f-status")).select_by_value("conflicting_evidence")  # type: ignore[attr-defined]
    browser.find_element(By.ID, "apply-filters").click()  # type: ignore[attr-defined]
    wait_for(browser, lambda d: "status=conflicting_evidence" in d.current_url)
    assert listed(browser) == []


def test_the_run_page_highlights_exactly_the_cited_offsets(browser: object, console: Console) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, console, STAFF_AUDITOR, f"/audit/runs/{console.staff_run}")
    marks = browser.find_elements(By.CSS_SELECTOR, "mark.evidence-span")  # type: ignore[attr-defined]
    snapshot = console.service.snapshot()

    assert marks
    for mark in marks:
        doc_id, version = mark.get_attribute("data-doc-id"), mark.get_attribute("data-version")
        start, end = int(mark.get_attribute("data-start")), int(mark.get_attribute("data-end"))
        assert mark.get_attribute("textContent") == snapshot.parsed(doc_id, version).text[start:end]


def test_replay_from_the_page_shows_identical(browser: object, console: Console) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, console, STAFF_AUDITOR, f"/audit/runs/{console.public_run}")
    browser.find_element(By.ID, "replay").click()  # type: ignore[attr-defined]
    result = browser.find_element(By.ID, "replay-result")  # type: ignore[attr-defined]
    wait_for(browser, lambda d: result.get_attribute("data-identical") is not None)

    assert result.get_attribute("data-identical") == "true" and "identical" in result.text


def test_feedback_posted_from_the_page_is_stored(browser: object, console: Console) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, console, STAFF_AUDITOR, f"/audit/runs/{console.staff_run}")
    browser.find_element(By.ID, "verdict-should_have_refused").click()  # type: ignore[attr-defined]
    browser.find_element(By.ID, "fb-note").send_keys("staff-only figure")  # type: ignore[attr-defined]
    browser.find_element(By.ID, "send-feedback").click()  # type: ignore[attr-defined]
    result = browser.find_element(By.ID, "feedback-result")  # type: ignore[attr-defined]
    wait_for(browser, lambda d: result.text != "")

    assert result.text.startswith("Stored"), result.text
    assert console.service.traces is not None
    stored = [r for r in console.service.traces.feedback.records() if r.run_id == console.staff_run]
    assert (stored[-1].verdict, stored[-1].note, stored[-1].reviewer) == (
        "should_have_refused",
        "staff-only figure",
        "staff-auditor",
    )


def test_a_key_of_another_group_gets_nothing(browser: object, console: Console) -> None:
    sign_in(browser, console, SALES_AUDITOR)
    assert listed(browser) == [console.public_run]

    browser.get(f"{console.url}/audit/runs/{console.staff_run}")  # type: ignore[attr-defined]
    page = browser.page_source  # type: ignore[attr-defined]
    assert "Not found" in page and STAFF_QUESTION not in page and "7折" not in page


def test_every_control_has_a_label_and_is_reachable_by_keyboard(browser: object, console: Console) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    unlabelled = """return Array.from(
            document.querySelectorAll('input:not([type=hidden]), select, textarea, button'))
        .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim())
        .map(e => e.outerHTML);"""
    for path in ("/audit", f"/audit/runs/{console.staff_run}"):
        sign_in(browser, console, STAFF_AUDITOR, path)
        assert browser.execute_script(unlabelled) == []  # type: ignore[attr-defined]

    body = browser.find_element(By.TAG_NAME, "body")  # type: ignore[attr-defined]
    reached = set()
    for _ in range(60):
        body.send_keys(Keys.TAB)
        reached.add(browser.switch_to.active_element.get_attribute("id"))  # type: ignore[attr-defined]
    assert {"replay", "export", "send-feedback", "fb-note"} <= reached


class _Framing(LoopbackServer):
    """Another site (another port is another origin): a page that frames the console."""

    NAME = "framing page"

    def __init__(self, target: str) -> None:
        self.target = target
        super().__init__()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        target = self.target

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                if self.path == "/health":
                    self._send(200, {})
                    return
                page = f'<!doctype html><title>x</title><iframe id="f" src="{target}"></iframe>'.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

        return Handler


def document_headers(driver: object, url: str) -> dict[str, str]:
    """The response headers the browser received for the page at ``url`` (its network log)."""
    for entry in driver.get_log("performance"):  # type: ignore[attr-defined]
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.responseReceived" and message["params"]["response"]["url"] == url:
            return {k.lower(): v for k, v in message["params"]["response"]["headers"].items()}
    raise AssertionError(f"no response for {url} in the browser's log")


def refusals(driver: object) -> list[str]:
    """What the browser's console says it refused under a content security policy."""
    said = [entry["message"] for entry in driver.get_log("browser")]  # type: ignore[attr-defined]
    return [line for line in said if "Content Security Policy" in line or "frame-ancestors" in line]


def test_every_console_page_arrives_with_its_security_headers(browser: object, console: Console) -> None:
    sign_in(browser, console, STAFF_AUDITOR, f"/audit/runs/{console.public_run}")
    for path in ("/audit/login", "/audit", f"/audit/runs/{console.public_run}"):
        url = f"{console.url}{path}"
        browser.get(url)  # type: ignore[attr-defined]

        headers = document_headers(browser, url)

        assert "default-src 'self'" in headers["content-security-policy"]
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert headers["x-frame-options"] == "DENY"
        assert headers["referrer-policy"] == "same-origin"


def test_the_console_works_under_its_policy_without_a_refusal(browser: object, console: Console) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, console, STAFF_AUDITOR, f"/audit/runs/{console.public_run}")
    browser.find_element(By.ID, "replay").click()  # type: ignore[attr-defined]
    result = browser.find_element(By.ID, "replay-result")  # type: ignore[attr-defined]
    wait_for(browser, lambda d: result.get_attribute("data-identical") is not None)

    assert result.get_attribute("data-identical") == "true"
    assert refusals(browser) == []


def test_another_site_cannot_frame_the_console(browser: object, console: Console) -> None:
    target = f"{console.url}/audit/login"
    framing = _Framing(target).start()
    try:
        browser.get(f"{framing.root}/")  # type: ignore[attr-defined]
        wait_for(browser, lambda d: refusals(d) or None)
    finally:
        framing.stop()


def test_a_question_holding_a_direction_override_is_shown_not_obeyed(
    browser: object, console: Console
) -> None:
    from selenium.webdriver.common.by import By

    run = console.service.ask("LM-S10 \u202e保修多久？", [], caller=PUBLIC_BOT.name)
    sign_in(browser, console, STAFF_AUDITOR, f"/audit/runs/{run.run_id}")

    shown = browser.find_element(By.ID, "question").get_attribute("textContent")  # type: ignore[attr-defined]

    assert shown == "LM-S10 \\u202e保修多久？"
