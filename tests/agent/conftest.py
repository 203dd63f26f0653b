"""Fixtures the HTTP API tests share: the sample knowledge base behind a service, and a client for it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from agent.service import Service
from tests.agent.api_support import api_client, open_sample


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    service = open_sample(tmp_path)
    yield service
    service.close()


@pytest.fixture
def client(service: Service) -> TestClient:
    return api_client(service)
