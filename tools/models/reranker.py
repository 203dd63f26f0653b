"""Relevance from a cross-encoder behind one seam: a question and texts in, one 0..1 score per text out.

    Reranker                 the protocol: ``identity``, ``rerank(query, documents)``
    RerankerIdentity         model, base URL (without its query), request shape, how scores are read
    Reranking                the scores, and the request and reply as a trace records them
    HTTPReranker             ``POST {base_url}/rerank`` through httpx2 (``tools.models.reranker_config``)
    RecordedReranker         a replay's reranker: answers from a trace's records, no network
    build_reranker(config)   the endpoint a configuration names; None without one

Retries of the endpoint happen here, in one place (tenacity): 408, 429, 5xx, timeouts and lost
connections, with exponential backoff. What still fails, what the server refuses (another 4xx) and
a reply that cannot be read are a ``RerankerError`` naming the endpoint.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from evidence_loop.tools.errors import RerankerError, RerankerUnavailableError
from evidence_loop.tools.models.reranker_config import RerankConfig, ScoreKind
from evidence_loop.tools.settings_file import without_query

TRANSIENT_STATUS = frozenset({408, 429})  # and every 5xx
Record = dict[str, Any]


@dataclass(frozen=True, slots=True)
class RerankerIdentity:
    """Which cross-encoder scored a run's windows, and how its scores were read (the trace header's)."""

    model: str
    base_url: str  # without its query: some gateways take the key as ``?api-key=``
    api: str
    scores: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/rerank"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RerankerIdentity:
        return cls(str(data["model"]), str(data["base_url"]), str(data["api"]), str(data["scores"]))


@dataclass(frozen=True, slots=True)
class Reranking:
    """One request's answer: a 0..1 score per document in the order sent, and its records."""

    scores: tuple[float, ...]
    request: Record = field(default_factory=dict)  # {url, body}: the body as sent, no headers, no key
    reply: Record = field(default_factory=dict)  # {status, attempts, body, scores}


class Reranker(Protocol):
    """Scores texts against a question; thread-safe."""

    @property
    def identity(self) -> RerankerIdentity: ...

    def rerank(self, query: str, documents: Sequence[str]) -> Reranking:
        """One request for all ``documents``; a score for each, 0 for any the server left out."""
        ...

    def close(self) -> None:
        """Let go of its connections."""
        ...


def _clean(text: str) -> str:
    """Text a JSON body can carry: lone surrogates replaced."""
    return text.encode("utf-8", "replace").decode("utf-8")


def request_body(config: RerankConfig, query: str, documents: Sequence[str]) -> Record:
    """The JSON body of one request, in the shape the configured API speaks."""
    texts = [_clean(d) for d in documents]
    if config.api == "tei":
        return {"query": _clean(query), "texts": texts, "raw_scores": False}
    # top_n = all: some hosted APIs return only their top few unless told otherwise
    return {"model": config.model, "query": _clean(query), "documents": texts, "top_n": len(texts)}


class _Result(BaseModel):
    model_config = ConfigDict(extra="ignore")

    index: int = Field(ge=0)
    relevance_score: float | None = None  # Cohere, Jina, vLLM, llama.cpp
    score: float | None = None  # TEI


class _Results(BaseModel):
    model_config = ConfigDict(extra="ignore")

    results: list[_Result]


_REPLY: TypeAdapter[_Results | list[_Result]] = TypeAdapter(_Results | list[_Result])


def raw_scores(body: Any, count: int, where: str) -> dict[int, float]:
    """index -> score of a reply in either shape; RerankerError for anything else."""
    try:
        parsed = _REPLY.validate_python(body)
    except ValidationError as error:
        raise RerankerError(
            f"the rerank endpoint {where} replied in a shape this client does not read: {error.errors()[0]}"
        ) from None
    results = parsed.results if isinstance(parsed, _Results) else parsed
    scores: dict[int, float] = {}
    for result in results:
        score = result.relevance_score if result.relevance_score is not None else result.score
        if score is None or not math.isfinite(score) or result.index >= count or result.index in scores:
            raise RerankerError(
                f"the rerank endpoint {where} gave an unusable result {result.model_dump()} "
                f"for {count} documents"
            )
        scores[result.index] = score
    return scores


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def normalised(raw: Mapping[int, float], count: int, kind: ScoreKind) -> tuple[float, ...]:
    """0..1 relevance per document: as given (``probability``, clipped), through a sigmoid
    (``logit``), or the latter when any score lies outside 0..1 (``auto``); 0 where none was given."""
    logits = kind == "logit" or (kind == "auto" and any(not 0.0 <= s <= 1.0 for s in raw.values()))
    read: Callable[[float], float] = _sigmoid if logits else (lambda s: min(1.0, max(0.0, s)))
    return tuple(round(read(raw[i]), 6) if i in raw else 0.0 for i in range(count))


def _without_echoes(body: Any) -> Any:
    """The reply as recorded: without the documents' texts some servers echo (the request has them)."""
    rows = body.get("results") if isinstance(body, dict) else body
    if not isinstance(rows, list):
        return body
    kept = [
        {k: v for k, v in r.items() if k not in ("document", "text")} if isinstance(r, dict) else r
        for r in rows
    ]
    return {**body, "results": kept} if isinstance(body, dict) else kept


def _transient(error: BaseException) -> bool:
    import httpx2

    if isinstance(error, httpx2.HTTPStatusError):
        status = error.response.status_code
        return status in TRANSIENT_STATUS or status >= 500
    return isinstance(error, httpx2.TimeoutException | httpx2.NetworkError | httpx2.RemoteProtocolError)


class HTTPReranker:
    """A rerank endpoint over HTTP: one connection pool, the key in a header and nowhere else."""

    def __init__(self, config: RerankConfig) -> None:
        import httpx2  # only when a reranker is configured (a server's start-up stays light)

        self._config = config
        headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self._client = httpx2.Client(timeout=config.timeout_s, headers=headers)
        base, _, query = config.base_url.partition("?")
        self._url = base.rstrip("/") + "/rerank" + (f"?{query}" if query else "")
        self.identity = RerankerIdentity(
            config.model, without_query(config.base_url), config.api, config.scores
        )

    def rerank(self, query: str, documents: Sequence[str]) -> Reranking:
        if not documents:
            return Reranking(())
        body = request_body(self._config, query, documents)
        status, reply, attempts = self._post(body)
        scores = normalised(
            raw_scores(reply, len(documents), self.identity.url), len(documents), self._config.scores
        )
        record = {
            "status": status,
            "attempts": attempts,
            "body": _without_echoes(reply),
            "scores": list(scores),
        }
        return Reranking(scores, {"url": self.identity.url, "body": body}, record)

    def _post(self, body: Record) -> tuple[int, Any, int]:
        """The one retry loop: (status, parsed reply, attempts made)."""
        import httpx2
        from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

        where = self.identity.url
        attempts = 0
        try:
            for attempt in Retrying(
                retry=retry_if_exception(_transient),
                stop=stop_after_attempt(self._config.max_attempts),
                wait=wait_exponential(multiplier=0.2, max=4.0),
                reraise=True,
            ):
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    response = self._client.post(self._url, json=body)
                    if response.status_code in TRANSIENT_STATUS or response.status_code >= 500:
                        response.raise_for_status()
        except httpx2.HTTPError as error:
            unreachable = isinstance(error, httpx2.TimeoutException | httpx2.NetworkError)
            raise (RerankerUnavailableError if unreachable else RerankerError)(
                f"the rerank endpoint {where} failed after {attempts} attempt(s): {type(error).__name__}: "
                f"{without_query(str(error))}"
            ) from error
        if response.status_code >= 400:
            raise RerankerError(
                f"the rerank endpoint {where} refused the request: {response.status_code} "
                f"{response.text[:200]}"
            )
        try:
            return response.status_code, response.json(), attempts
        except ValueError:
            raise RerankerError(
                f"the rerank endpoint {where} replied with no JSON: {response.text[:200]!r}"
            ) from None

    def close(self) -> None:
        self._client.close()


class RecordedReranker:
    """A replay's reranker: the n-th request is answered by the n-th recorded reply when it asks the
    same thing. A request the record does not hold gets zeros and an ``unrecorded`` reply; its
    ``rerank_request`` event then differs from the record, which is where the replay diverged."""

    def __init__(self, identity: RerankerIdentity, records: Sequence[Mapping[str, Any]]) -> None:
        self.identity = identity
        requests = [dict(r) for r in records if r.get("step") == "rerank_request"]
        replies = [dict(r) for r in records if r.get("step") == "rerank_reply"]
        self._pairs = list(zip(requests, replies, strict=False))
        self._next = 0

    def rerank(self, query: str, documents: Sequence[str]) -> Reranking:
        if not documents:
            return Reranking(())
        n, self._next = self._next, self._next + 1
        if n < len(self._pairs):
            request, reply = (_data(r) for r in self._pairs[n])
            body = request.get("body", {})
            texts = body.get("documents", body.get("texts"))
            if body.get("query") == _clean(query) and texts == [_clean(d) for d in documents]:
                return Reranking(tuple(float(s) for s in reply["scores"]), request, reply)
        zeros = [0.0] * len(documents)
        asked = {
            "url": self.identity.url,
            "body": {"query": _clean(query), "documents": [_clean(d) for d in documents]},
        }
        return Reranking(tuple(zeros), asked, {"status": None, "unrecorded": True, "scores": zeros})

    def close(self) -> None:
        return None


def _data(record: Mapping[str, Any]) -> Record:
    return {k: v for k, v in record.items() if k != "step"}


def build_reranker(config: RerankConfig | None) -> HTTPReranker | None:
    """The rerank endpoint a configuration names; None without one (no reranker, the default)."""
    return HTTPReranker(config) if config is not None else None
