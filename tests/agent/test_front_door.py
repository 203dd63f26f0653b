"""The service as a library user opens it: a folder as str or Path, configs from Python, a context manager."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from evidence_loop.agent.service import Service
from evidence_loop.tools.models.embedder_config import EmbedConfig
from evidence_loop.tools.models.llm_config import ConflictLLMConfig
from evidence_loop.tools.types import DocumentInput

DOC = DocumentInput(
    doc_id="warranty-en", text="# Warranty\n\nThe LM-X200 tablet has a one-year warranty.\n", title="Warranty"
)


def test_an_llm_config_given_in_python_is_the_one_used_not_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("EVLOOP_LLM_MODEL", "from-the-environment")
    given = ConflictLLMConfig(base_url="http://127.0.0.1:9/v1", model="given-in-python")
    with Service.open(tmp_path / "index", create=True, embedder=None, llm=given) as service:
        assert service.llm_info["model"] == "given-in-python"


def test_no_llm_given_in_python_means_the_offline_rules_whatever_the_environment_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("EVLOOP_LLM_MODEL", "from-the-environment")
    with Service.open(tmp_path / "index", create=True, embedder=None, llm=None) as service:
        assert service.llm_info == {}


def test_a_folder_given_as_a_string_opens_a_folder_with_its_traces_beside_it(tmp_path: Path) -> None:
    folder = str(tmp_path / "index")
    with Service.open(folder, create=True, embedder=EmbedConfig(backend="none"), llm=None) as service:
        service.ingest([DOC])
        outcome = service.ask("What is the warranty of the LM-X200 tablet?")
    assert outcome.status == "answered"
    assert list((Path(folder) / "traces").rglob("*.jsonl"))


def test_leaving_the_with_block_closes_the_store(tmp_path: Path) -> None:
    with Service.open(tmp_path / "index", create=True, embedder=None, llm=None) as service:
        service.ingest([DOC])
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        service.documents()
