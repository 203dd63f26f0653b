"""A policy file of the wrong shape is refused, naming the key and where it belongs: a field written
at the top ({"window_budget": 300}) was read as no field at all, and the shipped policy was served
while `config show` and `serve` said it came from the flag."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent import settings
from evidence_loop.agent.doors.cli.app import main
from evidence_loop.policies.config import Policy, load_policy_file
from evidence_loop.tools.errors import PolicyError

Capture = pytest.CaptureFixture[str]


@pytest.fixture(autouse=True)
def _flags_forgotten() -> Iterator[None]:
    """``main`` installs its flags for the whole process (a --policy-file among them): a later test's
    ``Service.open`` must not read the bad file given here."""
    yield
    settings.install({})


def policy_file(tmp_path: Path, content: object) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(content) if not isinstance(content, str) else content, encoding="utf-8")
    return path


@pytest.mark.parametrize("value", [300, "lots"])
def test_a_policy_field_at_the_top_is_refused_saying_it_belongs_under_policy(
    tmp_path: Path, value: object
) -> None:
    path = policy_file(tmp_path, {"window_budget": value})

    with pytest.raises(PolicyError) as caught:
        load_policy_file(path)

    assert caught.value.field == "window_budget"
    assert "'window_budget' is a policy field: it belongs under \"policy\"" in str(caught.value)


def test_an_unknown_key_at_the_top_is_refused_naming_what_a_policy_file_holds(tmp_path: Path) -> None:
    with pytest.raises(
        PolicyError, match="unknown key 'Policy' at the top; a policy file holds judge, policy, report"
    ):
        load_policy_file(policy_file(tmp_path, {"Policy": {"window_budget": 300}}))


def test_a_policy_file_as_calibrate_writes_it_is_read(tmp_path: Path) -> None:
    path = policy_file(tmp_path, {"policy": {"window_budget": 300}, "report": {"feedback": {}}})

    assert load_policy_file(path) == Policy(window_budget=300)


def test_a_policy_file_nested_too_deeply_is_refused_not_a_traceback(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="nested deeper than 64 levels"):
        load_policy_file(policy_file(tmp_path, '{"policy": ' + "[" * 5000 + "]" * 5000 + "}"))


@pytest.mark.parametrize("command", [["config", "show"], ["serve"]])
def test_config_show_and_serve_refuse_a_misplaced_field_in_one_line(
    tmp_path: Path, capsys: Capture, command: list[str]
) -> None:
    path = policy_file(tmp_path, {"window_budget": 300})

    code = main([*command, "--policy-file", str(path), "--index", str(tmp_path / "index")])

    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and err.startswith(f"evloop: error: {path}: not a usable policy file")
    assert 'belongs under "policy"' in err
    assert not (tmp_path / "index").exists()
