"""Fixtures the agent tests share: the sample knowledge base as a snapshot, an index folder, behind a
service, and a client."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.folder import Store
from tests.agent.api_support import api_client, open_sample
from tests.fake_embedder import FakeEmbedder


@pytest.fixture(scope="module")
def sample_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Snapshot]:
    """The whole sample help centre (optional documents included), one store per test module."""
    store = Store.open(tmp_path_factory.mktemp("sample") / "index", create=True)
    store.ingest(load_sample_kb(include_optional=True))
    yield store.snapshot()
    store.close()


@pytest.fixture(scope="session")
def measured_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index folder of the sample help centre's default documents, ingested once a session by a
    service with the fake embedder: unit vectors and the scale the ingest measured (200
    pseudo-questions through the loop, the costly part). Never opened by a test: a module that would
    ingest the same corpus the same way takes a copy (``shutil.copytree``), which is what that ingest
    leaves."""
    folder = tmp_path_factory.mktemp("measured-sample") / "index"
    with Service.open(folder, create=True, embedder=FakeEmbedder(), reranker=None) as service:
        service.ingest(load_sample_kb())
    return folder


@pytest.fixture(scope="session")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index folder a store leaves after ingesting the sample help centre's default documents,
    built once a session for ``index`` to copy (a copy costs a tenth of the ingest)."""
    folder = tmp_path_factory.mktemp("sample-store") / "index"
    with Store.open(folder, create=True) as store:
        store.ingest(load_sample_kb())
    return folder


@pytest.fixture(scope="session")
def sample_service(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index folder ``open_sample`` leaves, built once a session for ``service`` to copy."""
    root = tmp_path_factory.mktemp("sample-service")
    open_sample(root).close()
    return root / "index"


@pytest.fixture
def index(tmp_path: Path, sample_store: Path) -> Path:
    """A folder index holding the sample help centre's default documents (a fresh one per test)."""
    folder: Path = shutil.copytree(sample_store, tmp_path / "index")
    return folder


@pytest.fixture
def service(tmp_path: Path, sample_service: Path) -> Iterator[Service]:
    """A traced service over a fresh copy of what ``open_sample(tmp_path)`` leaves, at the same place."""
    service = Service.open(shutil.copytree(sample_service, tmp_path / "index"))
    yield service
    service.close()


@pytest.fixture
def client(service: Service) -> TestClient:
    return api_client(service)
