"""What ``evloop serve --workers N`` hands each worker process: the app built from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.doors.api.app import from_env
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.settings import SERVE_ENV, TRACES_OFF
from evidence_loop.tools.store.folder import Store


@pytest.mark.parametrize(("traces", "traced"), [(TRACES_OFF, False), ("", True)])
def test_a_worker_traces_unless_serve_said_no_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, traces: str, traced: bool
) -> None:
    index = tmp_path / "index"
    with Store.open(index, create=True) as store:
        store.ingest(load_sample_kb())
    monkeypatch.chdir(tmp_path)  # where a folder named "off" would have been made
    monkeypatch.setenv(SERVE_ENV["index"], str(index))
    monkeypatch.setenv(SERVE_ENV["keys"], "")
    monkeypatch.setenv(SERVE_ENV["traces"], traces)

    with TestClient(from_env()) as client:
        outcome = client.post("/v1/ask", json={"question": "LM-S10 的整机保修期是多久？"}).json()

    assert (outcome["trace"] is not None) == traced
    assert (index / "traces").is_dir() == traced
    assert not (tmp_path / TRACES_OFF).exists()
