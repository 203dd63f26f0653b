"""The reader seam: a rerank endpoint spoken to in both request shapes, both reply shapes read, its
retries and its errors, and its configuration. No reranker model can be installed here, so the
endpoint is a loopback server speaking the protocol (tests/fake_rerank_server.py)."""

from __future__ import annotations

import math
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evidence_loop.tools.errors import InputError, RerankerError
from evidence_loop.tools.models.reranker import HTTPReranker, RecordedReranker, build_reranker
from evidence_loop.tools.models.reranker_config import RerankConfig
from tests.fake_rerank_server import FakeRerankServer

DOCS = ["The LM-S10 has a three-year warranty.", "Lunch is rice.", "Warranty claims go through the app."]


MARKERS = {"three-year": 0.9, "claims": 0.4}


def _by_marker(query: str, text: str) -> float:
    """A stand-in cross-encoder: a fixed score per marker word, 0.1 without one."""
    return next((score for marker, score in MARKERS.items() if marker in text), 0.1)


@pytest.fixture
def server() -> Iterator[FakeRerankServer]:
    s = FakeRerankServer(_by_marker).start()
    try:
        yield s
    finally:
        s.stop()


Client = Callable[..., HTTPReranker]


@pytest.fixture
def client() -> Iterator[Client]:
    """Rerank clients on a base URL with settings, closed after the test."""
    made: list[HTTPReranker] = []

    def make(base_url: str, **settings: object) -> HTTPReranker:
        config = RerankConfig(**{"base_url": base_url, "model": "bge-reranker", **settings})  # type: ignore[arg-type]
        made.append(HTTPReranker(config))
        return made[-1]

    yield make
    for reranker in made:
        reranker.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_a_cohere_style_endpoint_scores_every_document_in_the_order_sent(
    server: FakeRerankServer, client: Client
) -> None:
    reranker = client(server.base_url)
    reply = reranker.rerank("How long is the LM-S10 warranty?", DOCS)
    assert reply.scores == (0.9, 0.1, 0.4)  # the server answered best first; the scores are by position
    [sent] = server.requests
    assert sent.path == "/v1/rerank"
    assert sent.body == {
        "model": "bge-reranker",
        "query": "How long is the LM-S10 warranty?",
        "documents": DOCS,
        "top_n": 3,
    }


def test_a_tei_endpoint_is_sent_texts_and_its_bare_list_reply_is_read(
    server: FakeRerankServer, client: Client
) -> None:
    reranker = client(server.root, api="tei")
    assert reranker.rerank("warranty", DOCS).scores == (0.9, 0.1, 0.4)
    [sent] = server.requests
    assert (sent.path, sent.body) == ("/rerank", {"query": "warranty", "texts": DOCS, "raw_scores": False})


def test_the_records_hold_the_request_as_sent_and_the_reply_without_echoed_texts(
    server: FakeRerankServer, client: Client
) -> None:
    reply = client(server.base_url).rerank("warranty", DOCS)
    assert reply.request == {"url": f"{server.base_url}/rerank", "body": server.requests[0].body}
    assert reply.reply["status"] == 200 and reply.reply["attempts"] == 1
    assert reply.reply["scores"] == [0.9, 0.1, 0.4]
    assert all("document" not in r for r in reply.reply["body"]["results"])


@pytest.mark.parametrize(
    ("kind", "raw", "expected"),
    [
        ("auto", [0.25, 1.0], (0.25, 1.0)),  # all within 0..1: taken as given
        ("auto", [3.0, -2.0], (round(1 / (1 + math.exp(-3.0)), 6), round(1 / (1 + math.exp(2.0)), 6))),
        ("logit", [0.0, 0.5], (0.5, round(1 / (1 + math.exp(-0.5)), 6))),
        ("probability", [1.7, -0.2], (1.0, 0.0)),  # clipped
    ],
)
def test_scores_become_relevance_between_zero_and_one(
    kind: str, raw: list[float], expected: tuple[float, ...], client: Client
) -> None:
    by_text = dict(zip(("a", "b"), raw, strict=True))
    s = FakeRerankServer(lambda q, t: by_text[t]).start()
    try:
        assert client(s.base_url, scores=kind).rerank("q", ["a", "b"]).scores == expected
    finally:
        s.stop()


def test_a_document_the_server_leaves_out_scores_zero(server: FakeRerankServer, client: Client) -> None:
    server.keep_only = 1  # a server keeping to a smaller top_n of its own: only its best comes back
    assert client(server.base_url).rerank("warranty", DOCS).scores == (0.9, 0.0, 0.0)


def test_transient_failures_are_retried_and_the_attempts_recorded(
    server: FakeRerankServer, client: Client
) -> None:
    server.fail(503)
    server.fail(429)
    reply = client(server.base_url).rerank("warranty", DOCS)
    assert reply.scores == (0.9, 0.1, 0.4) and reply.reply["attempts"] == 3
    assert len(server.requests) == 3


def test_failures_past_the_attempts_are_a_clear_error(server: FakeRerankServer, client: Client) -> None:
    server.fail(502, times=5)
    with pytest.raises(
        RerankerError, match=r"rerank endpoint http://127\.0\.0\.1:\d+/v1/rerank failed after 2"
    ):
        client(server.base_url, max_attempts=2).rerank("q", DOCS)
    assert len(server.requests) == 2


def test_an_unreachable_endpoint_is_a_clear_error_after_its_retries(client: Client) -> None:
    reranker = client(f"http://127.0.0.1:{_free_port()}/v1", max_attempts=2, timeout_s=2.0)
    with pytest.raises(
        RerankerError, match=r"rerank endpoint http://127\.0\.0\.1:\d+/v1/rerank failed after 2 attempt"
    ):
        reranker.rerank("q", DOCS)


def test_a_refused_request_is_not_retried(server: FakeRerankServer, client: Client) -> None:
    server.fail(400)
    with pytest.raises(RerankerError, match="refused the request: 400"):
        client(server.base_url).rerank("q", DOCS)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "body",
    [{"data": []}, {"results": [{"index": 7, "relevance_score": 0.5}]}, [{"index": 0}], "not json at all"],
)
def test_an_unreadable_reply_is_a_clear_error(server: FakeRerankServer, body: object, client: Client) -> None:
    server.script(200, body)
    with pytest.raises(RerankerError, match="rerank"):
        client(server.base_url).rerank("q", DOCS)


def test_the_key_goes_in_a_header_and_nowhere_in_the_records(
    server: FakeRerankServer, client: Client
) -> None:
    reranker = client(f"{server.base_url}?api-key=sk-query", api_key="sk-header")
    reply = reranker.rerank("q", DOCS)
    assert server.requests[0].headers["authorization"] == "Bearer sk-header"
    assert server.requests[0].path == "/v1/rerank?api-key=sk-query"  # a gateway's query is kept on the wire
    assert "sk-" not in repr((reply.request, reply.reply, reranker.identity))
    assert reranker.identity.base_url == server.base_url


def test_a_recorded_reranker_answers_the_same_request_from_the_record_and_flags_another(
    server: FakeRerankServer, client: Client
) -> None:
    live = client(server.base_url)
    first = live.rerank("warranty", DOCS)
    records = [{"step": "rerank_request", **first.request}, {"step": "rerank_reply", **first.reply}]
    recorded = RecordedReranker(live.identity, records)
    again = recorded.rerank("warranty", DOCS)
    assert (again.scores, again.request, again.reply) == (first.scores, first.request, first.reply)
    other = RecordedReranker(live.identity, records).rerank("warranty", DOCS[:2])
    assert other.scores == (0.0, 0.0) and other.reply["unrecorded"] is True
    assert len(server.requests) == 1  # neither replay touched the network


def test_the_configuration_comes_from_the_environment_over_a_file(tmp_path: Path) -> None:
    path = tmp_path / "rerank.toml"
    path.write_text('base_url = "http://file:8080"\nmodel = "bge"\napi = "tei"\nscores = "logit"\n')
    env = {
        "EVLOOP_RERANK_CONFIG": str(path),
        "EVLOOP_RERANK_MODEL": "bge-v2",
        "EVLOOP_RERANK_API_KEY": "sk-e",
    }
    config = RerankConfig.from_env(env)
    assert config is not None
    assert (config.base_url, config.model, config.api, config.scores, config.api_key) == (
        "http://file:8080",
        "bge-v2",
        "tei",
        "logit",
        "sk-e",
    )
    only_env = RerankConfig.from_env({"EVLOOP_RERANK_BASE_URL": "http://env/v1", "EVLOOP_RERANK_MODEL": "m"})
    assert only_env is not None and (only_env.api, only_env.scores) == ("cohere", "auto")


def test_no_base_url_means_no_reranker() -> None:
    assert RerankConfig.from_env({}) is None
    assert RerankConfig.from_env({"EVLOOP_RERANK_MODEL": "bge", "EVLOOP_RERANK_API_KEY": "sk-x"}) is None
    assert build_reranker(None) is None


def test_a_base_url_without_a_model_says_so() -> None:
    with pytest.raises(InputError, match="needs a model"):
        RerankConfig.from_env({"EVLOOP_RERANK_BASE_URL": "http://x/v1"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('model = "m"\n', "needs a base_url"),
        ('base_url = "http://x"\nmodel = "m"\nscores = "raw"\n', "bad reranker settings: scores"),
        ('base_url = "http://x"\nmodel = "m"\ntop_k = 3\n', r"unknown reranker settings \['top_k'\]"),
    ],
)
def test_bad_settings_in_a_file_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "rerank.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        RerankConfig.from_env({"EVLOOP_RERANK_CONFIG": str(path)})


def test_a_key_in_a_file_is_refused_and_never_shown(tmp_path: Path) -> None:
    path = tmp_path / "rerank.toml"
    path.write_text('base_url = "http://x"\nmodel = "m"\napi_key = "sk-secret"\n')
    with pytest.raises(InputError, match="EVLOOP_RERANK_API_KEY"):
        RerankConfig.from_env({"EVLOOP_RERANK_CONFIG": str(path)})
    config = RerankConfig(base_url="http://x/v1?api-key=sk-q", model="m", api_key="sk-env")
    assert "sk-" not in repr(config) and config.public()["key_configured"] is True
