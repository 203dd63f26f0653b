"""``evloop serve --policy-file``: the server answers with the policy file's judge and threshold, in
one process and in every worker, and each run's trace pins that policy's hash."""

from __future__ import annotations

import gc
import json
import warnings
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.doors.api.app import from_env
from evidence_loop.agent.doors.cli.app import build_parser
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.doors.commands.session import policy_from_args
from evidence_loop.agent.service import Service
from evidence_loop.agent.settings import SERVE_ENV
from evidence_loop.policies.config import Policy
from evidence_loop.policies.judge_model import DEFAULT_JUDGE

WARRANTY_ZH = "LM-S10 整机保修多久？"


@pytest.fixture(autouse=True)
def _earlier_garbage_collected() -> None:
    """from_env freezes the heap after a full collection (agent.loop.runtime.freeze_heap): garbage an
    earlier test left for the collector (an event loop's socket pair) is collected here first, so
    its ResourceWarning is not charged to this test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def policy_file(tmp_path: Path) -> tuple[Path, Policy]:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"judge": DEFAULT_JUDGE.as_dict(), "policy": {"answer_rate": "0.9"}}))
    return path, replace(Policy(), answer_rate=0.9)


def test_serve_reads_its_policy_file(tmp_path: Path) -> None:
    path, expected = policy_file(tmp_path)
    args = build_parser().parse_args(["serve", "--index", str(tmp_path / "ix"), "--policy-file", str(path)])

    assert policy_from_args(args).digest() == expected.digest() != Policy().digest()


def test_every_worker_answers_with_the_served_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, expected = policy_file(tmp_path)
    with Service.open(tmp_path / "ix", create=True, embedder=None) as service:
        service.ingest(load_sample_kb())
    monkeypatch.setenv(SERVE_ENV["index"], str(tmp_path / "ix"))
    monkeypatch.setenv(SERVE_ENV["traces"], str(tmp_path / "traces"))
    monkeypatch.setenv(SERVE_ENV["policy"], json.dumps(expected.as_dict()))
    monkeypatch.setenv("EVLOOP_EMBEDDER", "none")

    with TestClient(from_env()) as client:
        run_id = client.post("/v1/ask", json={"question": WARRANTY_ZH}).json()["run_id"]
        header = client.get(f"/v1/traces/{run_id}").json()["header"]

    assert header["policy_hash"] == expected.digest()
