"""Schema-driven fuzzing of the OpenAPI document (schemathesis): no 5xx, every error is problem+json.

Each operation gets a bounded, derandomized set of generated requests, valid and invalid (fewer in
the quick loop: tests/fuzz_budget.py), sent in-process twice: with a key for questions (scope ask)
and with one for the corpus and the audit (scopes ingest, audit and review), so that every
operation is reached past its scope check by one of them.
Responses must also match the documented schemas. docs/http-api.md gives the larger pass,
the schemathesis CLI against a real ``evloop serve``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import Case, CheckContext, Response
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    response_schema_conformance,
    status_code_conformance,
)

from evidence_loop.agent.doors.api import Limits, create_app
from evidence_loop.agent.service import Service
from tests.agent.api_support import ALL_KEYS, STAFF, Key, keyring, open_sample
from tests.fuzz_budget import examples

PROBLEM = "application/problem+json"
EXAMPLES_PER_OPERATION = examples(30)  # 7 in the quick loop (tests/fuzz_budget.py)
KEEPER = Key("staff-keeper", "pk-keeper-staff", ("staff",), ("ingest", "audit", "review"))
FUZZ_KEYS = {"ask": STAFF, "ingest-audit": KEEPER}


def errors_are_problem_json(ctx: CheckContext, response: Response, case: Case[Any]) -> bool | None:
    """Every 4xx and 5xx is an RFC 9457 problem document."""
    if response.status_code < 400:
        return None
    assert response.headers.get("content-type", [""])[0] == PROBLEM, response.headers
    body = response.json()
    assert {"type", "title", "status", "detail"} <= body.keys(), body
    assert body["status"] == response.status_code
    return True


def no_server_error_but_a_deadline_asked_for(
    ctx: CheckContext, response: Response, case: Case[Any]
) -> bool | None:
    """No 5xx, except the 504 a request asks for with its own short ``options.timeout_s``: on a busy
    machine a generated 0.5 s deadline can pass, and then the documented answer is 504 ``timeout``."""
    if response.status_code == 504 and str(response.json().get("type", "")).endswith(":timeout"):
        return True
    return not_a_server_error(ctx, response, case)  # type: ignore[no-any-return]


class LateService:
    """Stands in for the service in the app built at import (schemathesis loads its schema then);
    the fixture below binds the real one for the duration of the module's tests."""

    target: Service | None = None

    def __getattr__(self, name: str) -> object:
        assert self.target is not None, "the fuzzed_service fixture binds the service"
        return getattr(self.target, name)


# corpus.jsonl bodies are text: send the generated strings as they are.
schemathesis.serializer.alias("application/x-ndjson", "text/plain")
late = LateService()
app = create_app(late, keyring((*ALL_KEYS, KEEPER)), Limits(timeout_s=10))  # type: ignore[arg-type]
schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@pytest.fixture(scope="module", autouse=True)
def fuzzed_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    service = open_sample(tmp_path_factory.mktemp("fuzz"))
    late.target = service
    yield service
    late.target = None
    service.close()


@pytest.mark.parametrize("key", FUZZ_KEYS.values(), ids=FUZZ_KEYS.keys())
@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_no_generated_request_gets_a_5xx_or_an_error_that_is_not_problem_json(
    case: Case[Any], key: Key
) -> None:
    case.call_and_validate(
        headers=key.headers,
        checks=[
            no_server_error_but_a_deadline_asked_for,
            errors_are_problem_json,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
            ignored_auth,
        ],
    )


def test_the_index_still_answers_after_the_fuzzing(fuzzed_service: Service) -> None:
    assert fuzzed_service.ask("LM-S10 整机保修多久？").status == "answered"
