"""Shared by the console's browser tests: Debian's chromium driven by selenium, the app on uvicorn.

Skipped only where no chromium binary (or its driver) exists; `.ci/run` installs both.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from evidence_loop.agent.doors.api import Limits, create_app
from evidence_loop.agent.service import Service
from tests.agent.api_support import Key, keyring
from tests.agent.test_api_hostile_input import free_port

CHROMIUM = next(
    (p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and Path(p).exists()), None
)
DRIVER = next(
    (p for p in ("/usr/bin/chromedriver", shutil.which("chromedriver") or "") if p and Path(p).exists()), None
)
NEEDS_CHROMIUM = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="no chromium binary or chromedriver here (Debian: apt-get install chromium chromium-driver)",
)
WAIT_S = 60


@contextmanager
def serving(service: Service, keys: tuple[Key, ...]) -> Iterator[str]:
    """The API and console of ``service`` on uvicorn in a thread; yields its root URL."""
    port = free_port()
    config = uvicorn.Config(create_app(service, keyring(keys), Limits()), host="127.0.0.1", port=port)
    config.log_level = "critical"
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run)
    thread.start()
    deadline = time.monotonic() + WAIT_S
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the server did not come up"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join()


@contextmanager
def chromium(profile: Path, downloads: Path | None = None) -> Iterator[Any]:
    """A headless chromium with its network and console logs kept (the headers a page came with,
    and what the browser refused); files it downloads go to ``downloads``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,1000",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    if downloads is not None:
        options.add_experimental_option(
            "prefs", {"download.default_directory": str(downloads), "download.prompt_for_download": False}
        )
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=DriverService(executable_path=str(DRIVER)), options=options)
    driver.set_page_load_timeout(WAIT_S)
    try:
        yield driver
    finally:
        driver.quit()


def sign_in(driver: Any, url: str, key: Key, then: str = "/audit") -> None:
    """Sign in at the console's form with ``key``; the browser lands on ``then``."""
    from selenium.webdriver.common.by import By

    driver.get(f"{url}/audit/login?next={then}")
    driver.find_element(By.ID, "key").send_keys(key.secret)
    driver.find_element(By.ID, "sign-in").click()
    wait_for(driver, lambda d: "/audit/login" not in d.current_url)


def wait_for(driver: Any, condition: Callable[[Any], object]) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, WAIT_S).until(condition)


def listed(driver: Any) -> list[str]:
    """The run ids of the runs list's rows, top to bottom."""
    from selenium.webdriver.common.by import By

    rows = driver.find_elements(By.CSS_SELECTOR, "#runs tbody tr[data-run-id]")
    return [row.get_attribute("data-run-id") for row in rows]
