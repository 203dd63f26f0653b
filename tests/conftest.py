"""Fixtures shared by every test package.

No test reaches a real model by accident: model requests are refused unless a test turns them on
explicitly (``pydantic_ai.models.override_allow_model_requests(True)``), as the contract tests do
against the loopback server.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pydantic_ai.models
import pytest

from evidence_loop.agent import logs, settings
from evidence_loop.tools.store.location import Location
from tests import fuzz_budget
from tests.fake_openai_server import FakeOpenAIServer
from tests.pg_server import PgServer, missing_reason

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False

# Nothing of the developer's shell reaches a test: no index, store, policy, LLM, embedder or
# reranker setting (every EVLOOP_* and OPENAI_* variable, cleared here and nowhere else). Tests then
# run the lexical loop unless they configure an embedder themselves (monkeypatch, or an embedder
# passed in): embedding every test corpus with the real model would cost minutes. Done for the whole
# session, so module fixtures and the servers tests start inherit it too.
SHELL_PREFIXES = ("EVLOOP_", "OPENAI_")
for _name in [name for name in os.environ if name.startswith(SHELL_PREFIXES)]:
    # the live contract tests name their own server on purpose; a fuzz pass is sized on purpose
    if not _name.startswith("EVLOOP_LIVE_") and "_FUZZ_" not in _name:
        del os.environ[_name]
os.environ["EVLOOP_EMBEDDER"] = "none"


# A test is marked by what it starts: `postgres` (a PostgreSQL server: any test whose fixtures
# include `pg_server`, or a parameter marked so when it asks for one through getfixturevalue),
# `processes` (server or worker processes: the module marks itself), `browser` (a real browser).
# Each of them is also `slow`, which the quick loop leaves out (`pytest -m "not slow" -n auto`);
# cheap loopback servers in this process are not.
HEAVY_MARKS = ("postgres", "processes", "browser")


def pytest_configure(config: pytest.Config) -> None:
    """The hypothesis profile of the run (``tests/fuzz_budget.py``): fewer examples in the quick loop."""
    fuzz_budget.load(config.option.markexpr or "")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that starts PostgreSQL ``postgres``, and every heavy one ``slow``."""
    for item in items:
        if "pg_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)
        if any(item.get_closest_marker(mark) is not None for mark in HEAVY_MARKS):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _unfrozen_heap() -> Iterator[None]:
    """Commands that freeze the heap (batch, eval) do so in this process too: undo it after each test."""
    yield
    gc.unfreeze()


@pytest.fixture(autouse=True)
def _no_flags_left() -> Iterator[None]:
    """A command run in this process installs its flags (``--index``, ``--embed-workers``) for every
    later ``settings.current()``: forget them after each test, or the next test reads them."""
    yield
    settings.install({})


@pytest.fixture(autouse=True)
def _logging_as_found() -> Iterator[None]:
    """A command run in this process calls ``logs.configure``: its handler on ``evidence_loop`` stops
    records reaching the root logger, where ``caplog`` listens. Put the logger back after each test."""
    logger = logging.getLogger(logs.LOGGER)
    handlers, propagate, level = list(logger.handlers), logger.propagate, logger.level
    yield
    logger.handlers[:] = handlers
    logger.propagate = propagate
    logger.setLevel(level)


@pytest.fixture
def evloop_caplog(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """``caplog`` for the library's loggers whatever a command run in the test configured: its handler
    sits on ``evidence_loop`` itself (propagation off for the test, so no record is counted twice)."""
    logger = logging.getLogger(logs.LOGGER)
    propagate = logger.propagate
    logger.addHandler(caplog.handler)
    logger.propagate = False
    yield caplog
    logger.removeHandler(caplog.handler)
    logger.propagate = propagate


@pytest.fixture(autouse=True)
def _no_event_loop_left_open() -> Iterator[None]:
    """pydantic-ai's ``run_sync`` (the LLM conflict check, replay) leaves its event loop open as the
    thread's current loop; a later ``asyncio.run`` drops it unclosed, and pytest fails the session
    on the warning. Close it after each test (``run_sync`` makes a new one when it finds it closed)."""
    yield
    policy = asyncio.get_event_loop_policy()
    loop = getattr(getattr(policy, "_local", None), "_loop", None)
    if isinstance(loop, asyncio.AbstractEventLoop) and not loop.is_running() and not loop.is_closed():
        loop.close()
        policy.set_event_loop(None)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A loopback OpenAI-compatible server with an empty reply queue."""
    server = FakeOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One PostgreSQL server for the session, in a temporary folder; skipped only without binaries
    (in CI, where `.ci/run` installs them, a missing server fails instead)."""
    reason = missing_reason()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL tests must run in CI: {reason}")
        pytest.skip(reason)
    server = PgServer.start()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A fresh, migrated database of the session's server."""
    return pg_server.new_database()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> Location:
    """Each backend in turn: an index folder, then a fresh, migrated PostgreSQL database."""
    if request.param == "sqlite":
        return tmp_path / "ix"
    url: str = request.getfixturevalue("pg_url")
    return url
