"""`evloop serve` answers with the policy it is given (--policy-file, EVLOOP_POLICY, --policy), in
every worker, and /readyz shows that policy's hash."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from evidence_loop.agent.service import Service
from evidence_loop.policies.config import Policy, load_policy_file
from tests.agent.test_api_server import WARRANTY_ZH, Server, start

pytestmark = pytest.mark.processes

# The seed ablation reads each hit as found: the warranty table's row without the scope sentence
# above it, so it refuses where the shipped policy answers.
SEED_ONLY = {"policy": {"mode": "seed"}}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from evidence_loop.agent.doors.cli.sample import load_sample_kb

    folder = tmp_path_factory.mktemp("serve-policy") / "index"
    with Service.open(folder, create=True) as service:
        service.ingest(load_sample_kb())
        assert service.ask(WARRANTY_ZH).status == "answered"  # what the shipped policy decides
    return folder


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(SEED_ONLY), encoding="utf-8")
    return path


def _ask(server: Server) -> tuple[str, str]:
    """The outcome's status, and the policy hash its trace header pins."""
    reply = httpx.post(f"{server.url}/v1/ask", json={"question": WARRANTY_ZH}, timeout=60)
    assert reply.status_code == 200, reply.text
    outcome = reply.json()
    trace = httpx.get(f"{server.url}/v1/traces/{outcome['trace']['id']}", timeout=60).json()
    return outcome["status"], trace["header"]["policy_hash"]


def _ready_policy(server: Server) -> str:
    digest: str = httpx.get(f"{server.url}/readyz", timeout=10).json()["policy"]
    return digest


def test_serve_answers_with_its_policy_file(tmp_path: Path, index: Path, policy_file: Path) -> None:
    digest = load_policy_file(policy_file).digest()
    assert digest != Policy().digest()
    for server in start(tmp_path, "--index", str(index), "--policy-file", str(policy_file)):
        assert _ready_policy(server) == digest
        assert _ask(server) == ("insufficient_evidence", digest)


def test_every_worker_answers_with_the_policy_evloop_policy_names(
    tmp_path: Path, index: Path, policy_file: Path
) -> None:
    digest = load_policy_file(policy_file).digest()
    env = {"EVLOOP_POLICY": str(policy_file)}
    for server in start(tmp_path, "--index", str(index), workers=2, env=env):
        assert _ready_policy(server) == digest
        assert {_ask(server) for _ in range(6)} == {("insufficient_evidence", digest)}


def test_a_policy_override_reaches_the_server(tmp_path: Path, index: Path) -> None:
    digest = Policy(mode="seed").digest()
    for server in start(tmp_path, "--index", str(index), "--policy", "mode=seed"):
        assert _ready_policy(server) == digest
        assert _ask(server) == ("insufficient_evidence", digest)


def test_serve_refuses_a_policy_that_does_not_validate(tmp_path: Path, index: Path) -> None:
    from evidence_loop.agent.doors.cli.app import main

    assert main(["serve", "--index", str(index), "--policy", "compare_sides=flase"]) == 2
