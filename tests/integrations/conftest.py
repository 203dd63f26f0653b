"""The sample help centre for the retriever tests: an index folder, and a real `evloop serve` over it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent.access.keys import hash_key
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from tests.agent.test_api_server import Server, start

PUBLIC_KEY, STAFF_KEY = "rk-public", "rk-staff"
ANSWERED = "LM-S10 整机保修多久？"
REFUSED = "LM-Z900 的整机保修期是多久？"
SEVERAL = "How long is the LM-X200 warranty?"  # answered from several windows, each scored
FOLLOW_UP = "它的电池保修多久？"  # after ANSWERED: read as a question about the LM-S10
# twenty questions at once: answered and refused ones, each asked several times
TWENTY = [q for _ in range(5) for q in (ANSWERED, REFUSED, SEVERAL, "How long is the LM-Q77 warranty?")]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("retrievers") / "index"
    with Service.open(folder, create=True) as service:
        service.ingest(load_sample_kb())
    return folder


@pytest.fixture(scope="module")
def server(index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`evloop serve --keys` over the index: a public key and a staff key."""
    folder = tmp_path_factory.mktemp("serve")
    keys = folder / "keys.json"
    records = [
        {"name": "public-bot", "sha256": hash_key(PUBLIC_KEY), "groups": [], "scopes": ["ask"]},
        {"name": "staff-bot", "sha256": hash_key(STAFF_KEY), "groups": ["staff"], "scopes": ["ask"]},
    ]
    keys.write_text(json.dumps({"keys": records}), encoding="utf-8")
    yield from start(folder, "--index", str(index), "--keys", str(keys), key=PUBLIC_KEY)


def document_span(index: Path, doc_id: str, version: str, start: int, end: int) -> str:
    """``document_text[start:end]`` of a stored version, read from the store itself."""
    with Service.open(index) as service:
        return service.snapshot().parsed(doc_id, version).text[start:end]
