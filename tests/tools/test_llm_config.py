"""ConflictLLMConfig: where the settings come from, and that the key never shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidence_loop.tools.errors import InputError
from evidence_loop.tools.models.llm_config import ConflictLLMConfig

ENV = {
    "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1",
    "EVLOOP_LLM_MODEL": "qwen2.5-7b",
    "OPENAI_API_KEY": "sk-KEY",
}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "llm.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_environment_alone_configures_an_llm() -> None:
    config = ConflictLLMConfig.from_env(ENV)
    assert config is not None
    assert (config.base_url, config.model, config.api_key) == (
        "http://127.0.0.1:8000/v1",
        "qwen2.5-7b",
        "sk-KEY",
    )


def test_without_a_model_there_is_no_llm() -> None:
    assert ConflictLLMConfig.from_env({"OPENAI_BASE_URL": "http://x/v1", "OPENAI_API_KEY": "sk-KEY"}) is None


def test_without_a_base_url_there_is_no_llm() -> None:
    assert ConflictLLMConfig.from_env({"EVLOOP_LLM_MODEL": "gpt-4o-mini", "OPENAI_API_KEY": "sk-KEY"}) is None


def test_the_environment_wins_over_the_config_file(tmp_path: Path) -> None:
    path = write(tmp_path, 'base_url = "http://file/v1"\nmodel = "file-model"\nforce_tool_choice = false\n')
    config = ConflictLLMConfig.from_env(ENV | {"EVLOOP_LLM_CONFIG": str(path)})
    assert config is not None
    assert (config.base_url, config.model, config.force_tool_choice) == (
        ENV["OPENAI_BASE_URL"],
        "qwen2.5-7b",
        False,
    )


def test_a_config_file_alone_configures_an_llm(tmp_path: Path) -> None:
    path = write(tmp_path, 'base_url = "http://file/v1"\nmodel = "m"\nsystem_role = false\ntimeout_s = 5\n')
    config = ConflictLLMConfig.from_env({}, config_path=path)
    assert config is not None
    assert (config.system_role, config.timeout_s, config.api_key) == (False, 5.0, "")


def test_an_api_key_in_the_config_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, 'base_url = "http://file/v1"\nmodel = "m"\napi_key = "sk-file"\n')
    with pytest.raises(InputError, match="OPENAI_API_KEY"):
        ConflictLLMConfig.from_env({}, config_path=path)


def test_an_unknown_setting_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, 'base_url = "http://file/v1"\nmodel = "m"\nforce_toolchoice = true\n')
    with pytest.raises(InputError, match="force_toolchoice"):
        ConflictLLMConfig.from_env({}, config_path=path)


def test_a_setting_of_the_wrong_type_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, 'base_url = "http://file/v1"\nmodel = "m"\nmax_attempts = "many"\n')
    with pytest.raises(InputError, match="max_attempts"):
        ConflictLLMConfig.from_env({}, config_path=path)


def test_the_public_view_and_the_repr_hold_no_key() -> None:
    config = ConflictLLMConfig.from_env(ENV | {"OPENAI_BASE_URL": "https://gw.example/v1?api-key=sk-URL"})
    assert config is not None
    public = config.public()
    assert "api_key" not in public and public["key_configured"] is True
    assert "sk-" not in str(public) + repr(config)
