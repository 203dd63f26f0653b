"""Settings resolve in one order everywhere: flags over the environment over the configuration file
over the defaults; ``evloop config show`` says where each came from, and never shows a secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidence_loop.agent import settings
from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.service import trace_sync_within
from evidence_loop.tools.errors import InputError
from evidence_loop.tools.models.embedder_config import EmbedConfig


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "evloop.toml"
    path.write_text('index = "/from/file"\nlog_level = "info"\nembedder = "none"\n', encoding="utf-8")
    return path


def _resolved(config: Path | None, flags: dict[str, object | None], **env: str) -> dict[str, tuple[str, str]]:
    environ = {**env, **({settings.CONFIG_ENV: str(config)} if config else {})}
    found = settings.resolve(flags, environ)
    return {name: (found.get(name), found.source(name)) for name in ("index", "log_level", "embedder")}


@pytest.mark.parametrize(
    ("flag", "env", "file", "expected"),
    [
        ("/from/flag", "/from/env", True, ("/from/flag", "flag")),
        (None, "/from/env", True, ("/from/env", "environment")),
        (None, "", True, ("/from/file", "file")),
        (None, "", False, (".evloop", "default")),
    ],
)
def test_a_flag_wins_over_the_environment_over_the_file_over_the_default(
    config_file: Path, flag: str | None, env: str, file: bool, expected: tuple[str, str]
) -> None:
    resolved = _resolved(config_file if file else None, {"index": flag}, EVLOOP_INDEX=env)
    assert resolved["index"] == expected


def test_each_setting_takes_its_own_source(config_file: Path) -> None:
    resolved = _resolved(config_file, {}, EVLOOP_LOG_LEVEL="debug")
    assert resolved == {
        "index": ("/from/file", "file"),
        "log_level": ("debug", "environment"),
        "embedder": ("none", "file"),
    }


def test_the_file_feeds_the_backends_configuration(config_file: Path) -> None:
    """What the embedder, reranker and LLM readers see: the file's values under their variables."""
    found = settings.resolve({}, {settings.CONFIG_ENV: str(config_file), "EVLOOP_EMBED_MODEL": "e5"})
    assert found.environ()["EVLOOP_EMBEDDER"] == "none" and found.environ()["EVLOOP_EMBED_MODEL"] == "e5"


def test_a_secret_is_never_read_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "evloop.toml"
    path.write_text('llm_api_key = "sk-in-a-file"\n', encoding="utf-8")
    with pytest.raises(InputError, match="llm_api_key belongs in the environment"):
        settings.resolve({}, {settings.CONFIG_ENV: str(path)})


def test_an_unknown_setting_in_the_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "evloop.toml"
    path.write_text('indx = "/typo"\n', encoding="utf-8")
    with pytest.raises(InputError, match="indx"):
        settings.resolve({}, {settings.CONFIG_ENV: str(path)})


def test_config_show_says_where_each_value_came_from_and_masks_secrets(
    config_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(settings.CONFIG_ENV, str(config_file))
    monkeypatch.setenv("EVLOOP_LOG_LEVEL", "error")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-of-the-shell")
    monkeypatch.setenv("EVLOOP_STORE_URL", "postgresql://evloop:hunter2@db.internal/evloop")
    assert main(["config", "show", "--json", "--policy", "compare_sides=off"]) == 0
    out = capsys.readouterr().out
    shown = json.loads(out)
    found = {name: (item["value"], item["source"]) for name, item in shown["settings"].items()}
    assert found["index"] == ("/from/file", "file")
    assert found["log_level"] == ("error", "environment")
    assert found["llm_api_key"] == ("****", "environment")
    assert found["policy_file"] == ("", "default")
    assert "sk-secret" not in out and "hunter2" not in out
    from evidence_loop.policies.config import Policy

    assert shown["policy"] == Policy(compare_sides=False).digest()


def test_config_show_names_the_policy_file_that_evloop_policy_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"policy": {"window_budget": 600}}), encoding="utf-8")
    monkeypatch.setenv("EVLOOP_POLICY", str(path))
    assert main(["config", "show", "--index", str(tmp_path / "ix")]) == 0
    lines = capsys.readouterr().out.splitlines()
    from evidence_loop.policies.config import load_policy_file

    assert lines[-1] == f"policy {load_policy_file(path).digest()} ({path}, from the environment)"
    assert any(line.startswith("index ") and "flag" in line for line in lines)


def test_a_bad_value_in_evloop_policy_stops_a_command_naming_file_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"policy": {"compare_sides": "flase"}}), encoding="utf-8")
    monkeypatch.setenv("EVLOOP_POLICY", str(path))
    assert main(["ask", "warranty?", "--index", str(tmp_path / "ix")]) == 2
    error = capsys.readouterr().err
    assert str(path) in error and "compare_sides" in error


def test_the_embed_workers_flag_wins_and_reaches_the_embedders_configuration() -> None:
    found = settings.resolve({"embed_workers": 3}, {"EVLOOP_EMBED_WORKERS": "5"})
    assert (found.get("embed_workers"), found.source("embed_workers")) == ("3", "flag")
    assert EmbedConfig.from_env(found.environ()).workers == 3


def test_ingest_refuses_an_embed_workers_count_below_zero_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.md").write_text("# A\nSome text.\n", encoding="utf-8")
    code = main(["ingest", str(tmp_path / "a.md"), "--index", str(tmp_path / "ix"), "--embed-workers", "-1"])
    assert code == 2
    assert "workers and max_batch_tokens must be 0" in capsys.readouterr().err
    assert not (tmp_path / "ix").exists()


def test_trace_sync_ms_is_read_in_milliseconds_and_0_makes_each_run_wait_for_its_sync() -> None:
    assert [trace_sync_within(v) for v in ("25", "0", "", None)] == [0.025, None, 0.01, 0.01]


def test_ask_refuses_a_trace_sync_ms_that_is_no_whole_number_of_milliseconds_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVLOOP_EMBEDDER", "none")
    (tmp_path / "a.md").write_text("# A\nThe warranty lasts two years.\n", encoding="utf-8")
    assert main(["ingest", str(tmp_path / "a.md"), "--index", str(tmp_path / "ix")]) == 0
    monkeypatch.setenv("EVLOOP_TRACE_SYNC_MS", "fast")
    capsys.readouterr()
    assert main(["ask", "How long is the warranty?", "--index", str(tmp_path / "ix")]) == 2
    err = capsys.readouterr().err
    assert "trace_sync_ms must be a whole number of milliseconds from 0 to 1000, not 'fast'" in err
    assert len(err.strip().splitlines()) == 1
