"""What a team looks for in a repository: the license text, a changelog for the version being made, and
deprecations that keep the versioning policy (docs/versioning.md)."""

from __future__ import annotations

import importlib
import re
import tomllib
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
SHIMS = (
    ("evidence_loop.policies.types", "Verdict"),
    ("evidence_loop.policies.decision.judge", "Verdict"),
    ("evidence_loop.policies.evidence.comparison", "compared"),
    ("evidence_loop.tools.models.llm_config", "LLMConfig"),
    ("evidence_loop", "LLMConfig"),
)


def release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_the_license_file_holds_the_apache_2_text_the_package_declares() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert PROJECT["license"] == "Apache-2.0" and PROJECT["license-files"] == ["LICENSE"]
    assert text.split()[:3] == ["Apache", "License", "Version"] and "END OF TERMS AND CONDITIONS" in text


def test_the_changelog_has_a_section_for_the_version_being_made() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## {re.escape(PROJECT['version'])}\b", changelog, re.M)


@pytest.mark.parametrize(("module", "old"), SHIMS)
def test_a_deprecated_name_says_it_goes_in_the_next_minor_release(module: str, old: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(importlib.import_module(module), old)
    found = re.search(r"goes in (\d+\.\d+\.\d+)", str(caught[0].message))
    major, minor, _ = release(PROJECT["version"])
    assert found is not None and release(found.group(1)) == (major, minor + 1, 0)
