"""Every error of the tree has its own HTTP problem, and an upstream's outage names the component only."""

from __future__ import annotations

import importlib
import pkgutil
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import evidence_loop
from evidence_loop.agent.doors.api import problems
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import EmbedderUnavailableError, EvidenceLoopError
from evidence_loop.tools.models.embedder import build_embedder
from evidence_loop.tools.models.embedder_config import EmbedConfig
from evidence_loop.tools.models.reranker_config import RerankConfig
from tests.agent.api_support import PUBLIC, api_client
from tests.fake_embedder import FakeEmbedder
from tests.fake_rerank_server import FakeRerankServer

QUESTION = "What is the refund policy for tablets?"
SECRET_BODY = "upstream-secret-4471"


def _every_error_class() -> list[type[EvidenceLoopError]]:
    """Every subclass of EvidenceLoopError in the package, wherever it is defined."""
    for module in pkgutil.walk_packages(evidence_loop.__path__, "evidence_loop."):
        importlib.import_module(module.name)
    found: list[type[EvidenceLoopError]] = []
    todo = [EvidenceLoopError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(set(found), key=lambda cls: cls.__qualname__)


def test_every_error_class_has_its_own_problem_row() -> None:
    missing = [cls.__qualname__ for cls in _every_error_class() if cls not in problems.ERRORS]
    assert missing == []


def test_only_input_errors_are_the_callers_fault() -> None:
    """A 4xx says the request was wrong; an upstream's or the server's failure is a 5xx."""
    wrong = [
        cls.__qualname__
        for cls in _every_error_class()
        if cls.__name__.startswith(("Embedder", "Reranker", "LLM", "Store", "Index"))
        and problems.problem_of(cls)[0] < 500
    ]
    assert wrong == []


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, measured_sample: Path) -> Path:
    """The sample help centre ingested with FakeEmbedder() and without a reranker."""
    copied: Path = shutil.copytree(measured_sample, tmp_path_factory.mktemp("problems") / "index")
    return copied


@pytest.fixture
def rerank_server() -> Iterator[FakeRerankServer]:
    server = FakeRerankServer().start()
    try:
        yield server
    finally:
        server.stop()


def _ask_with_reranker(index: Path, base_url: str) -> tuple[int, dict[str, object]]:
    config = RerankConfig(base_url=base_url, model="cross-encoder", max_attempts=1, timeout_s=10.0)
    with Service.open(index, embedder=FakeEmbedder(), reranker=config, tracing_on=False) as service:
        reply = api_client(service).post("/v1/ask", json={"question": QUESTION}, headers=PUBLIC.headers)
    body: dict[str, object] = reply.json()
    return reply.status_code, body


def test_an_unreachable_reranker_is_a_503_that_names_the_component_not_its_url(index: Path) -> None:
    dead = FakeRerankServer().start()
    dead.stop()  # its port is now closed
    status, body = _ask_with_reranker(index, dead.base_url)
    assert (status, body["type"]) == (503, "urn:evloop:problem:reranker-unavailable")
    assert "reranker" in str(body["detail"]) and "127.0.0.1" not in str(body)


def test_a_failing_reranker_is_a_502_without_its_url_or_its_reply(
    index: Path, rerank_server: FakeRerankServer
) -> None:
    rerank_server.script(400, {"error": {"message": SECRET_BODY}})
    status, body = _ask_with_reranker(index, rerank_server.base_url)
    assert (status, body["type"]) == (502, "urn:evloop:problem:reranker-failed")
    assert "reranker" in str(body["detail"])
    assert SECRET_BODY not in str(body) and "127.0.0.1" not in str(body)


def test_an_unreachable_embeddings_endpoint_is_an_embedder_unavailable_error() -> None:
    dead = FakeRerankServer().start()
    dead.stop()
    config = EmbedConfig(backend="openai", base_url=dead.base_url, model="e5", max_attempts=1, timeout_s=10.0)
    embedder = build_embedder(config)
    assert embedder is not None
    with pytest.raises(EmbedderUnavailableError) as caught:
        embedder.queries(["warranty"])
    assert problems.problem_of(type(caught.value))[:2] == (503, "embedder-unavailable")
