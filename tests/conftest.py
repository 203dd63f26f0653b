"""Fixtures shared by every test package.

No test reaches a real model by accident: model requests are refused unless a test turns them on
explicitly (``pydantic_ai.models.override_allow_model_requests(True)``), as the contract tests do
against the loopback server.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pydantic_ai.models
import pytest

from tests.fake_openai_server import FakeOpenAIServer

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture(autouse=True)
def _unfrozen_heap() -> Iterator[None]:
    """Commands that freeze the heap (batch, eval) do so in this process too: undo it after each test."""
    yield
    gc.unfreeze()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A loopback OpenAI-compatible server with an empty reply queue."""
    server = FakeOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()
