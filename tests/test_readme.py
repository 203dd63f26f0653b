"""The Python examples of the README and of the docs pages run as written, against the installed package.

The README's "Use it from Python" block and the opening example of docs/python-api.md both ingest
one document, ask, print the evidence and replay the run (docs/integrations.md's function-calling
loop runs in tests/agent/test_tool_schema.py)."""

from __future__ import annotations

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
