"""The Python examples of the README and of the docs pages run as written, against the installed package.

The README's "Use it from Python" block and the opening example of docs/python-api.md both ingest
one document, ask, print the evidence and replay the run (docs/integrations.md's function-calling
loop runs in tests/agent/test_tool_schema.py)."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_LIMIT = 200


def _python_block(page: str, heading: str | None) -> str:
    """The first python block of ``page`` (below ``heading``, up to the next section, if given)."""
    text = (ROOT / page).read_text(encoding="utf-8")
    if heading is not None:
        text = text.split(heading, 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", text, re.S)
    assert match is not None, f"{page}: no python block"
    return match.group(1)


@pytest.mark.parametrize(
    ("page", "heading"), [("README.md", "## Use it from Python"), ("docs/python-api.md", None)]
)
def test_the_python_example_answers_cites_and_replays(page: str, heading: str | None, tmp_path: Path) -> None:
    # its own folder, so that ".evloop" is fresh and the checkout is not on the path (-P)
    done = subprocess.run(
        [sys.executable, "-P", "-c", _python_block(page, heading)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("answered ")
    assert "one-year warranty" in done.stdout.split("warranty-en 1 ", 1)[0]
    assert any(line.startswith("warranty-en 1 ") for line in lines)
    assert lines[-1] == "True"
    assert (tmp_path / ".evloop").is_dir()


def test_the_readme_is_a_front_page() -> None:
    """At most 200 lines, the Python example ten lines; the reference lives under docs/."""
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= README_LIMIT
    assert len(_python_block("README.md", "## Use it from Python").splitlines()) <= 10


def test_every_docs_page_the_readme_links_exists_or_is_generated() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(docs/([^)#]+)", readme))
    generated = {"http-api-reference.md"}  # by the mkdocs hook .ci/docs_openapi.py
    assert linked and {page for page in linked if not (ROOT / "docs" / page).is_file()} <= generated


def _commands() -> list[str]:
    """The two commands the README opens with."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"```\n(python3\.11 .*?)```", text, re.S)
    assert match is not None, "README: no command block"
    return match.group(1).strip().splitlines()


def test_the_readme_opens_with_a_demo_on_the_package_alone_and_the_tests_on_dev() -> None:
    demo, tests = _commands()
    assert demo == "python3.11 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/evloop demo"
    assert tests.endswith("pip install -q -e '.[dev]' && .venv/bin/python -m pytest")
    assert tests in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _dev_only_modules() -> set[str]:
    """Top-level modules that only the [dev] extra installs (none of the package's own dependencies)."""
    from packaging.requirements import Requirement

    def name(requirement: str) -> str:
        return re.sub(r"[-_.]+", "-", Requirement(requirement).name).lower()

    def closure(names: set[str]) -> set[str]:
        seen: set[str] = set()
        stack = list(names)
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            try:
                requires = importlib.metadata.requires(current) or []
            except importlib.metadata.PackageNotFoundError:
                continue
            stack += [name(r) for r in requires if "extra ==" not in r]
        return seen

    own = importlib.metadata.requires("evidence-loop") or []
    base = closure({name(r) for r in own if "extra ==" not in r})
    dev = closure({name(r) for r in own if 'extra == "dev"' in r})
    owners = importlib.metadata.packages_distributions()
    dev_only = {re.sub(r"[-_.]+", "-", d).lower() for d in dev - base}
    return {
        module
        for module, dists in owners.items()
        if {re.sub(r"[-_.]+", "-", d).lower() for d in dists} <= dev_only and not module.startswith("_")
    }


BLOCKER = """
import importlib.abc, sys
BLOCKED = set(sys.argv[1].split(","))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} comes with [dev] only")
sys.meta_path.insert(0, Block())
from evidence_loop.agent.doors.cli.app import main
sys.exit(main(["demo", "--index", sys.argv[2]]))
"""


def test_the_demo_needs_nothing_but_the_package_and_its_own_dependencies(tmp_path: Path) -> None:
    blocked = _dev_only_modules()
    assert {"psycopg", "pytest", "mcp"} <= blocked
    done = subprocess.run(
        [sys.executable, "-c", BLOCKER, ",".join(sorted(blocked)), str(tmp_path / "demo")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "EVLOOP_EMBEDDER": "none", "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert "Every run above is traced" in done.stdout
