"""The documentation site's generated HTTP API reference (.ci/docs_openapi.py, a mkdocs hook) shows
every operation and every schema of the app's OpenAPI document; `mkdocs build --strict` in .ci/run
checks its links and anchors."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_openapi", ROOT / ".ci" / "docs_openapi.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_page_shows_every_operation_and_schema_of_the_app() -> None:
    hook = _hook()
    doc = hook.openapi_document()
    page: str = hook.reference_markdown(doc)
    operations = {
        f"### `{method.upper()} {path}`"
        for path, ops in doc["paths"].items()
        for method in ops
        if method in hook.METHODS
    }
    assert {"### `POST /v1/ask`", "### `GET /v1/documents`"} <= operations
    assert all(heading in page for heading in operations)
    schemas = set(doc["components"]["schemas"])
    assert {"Outcome", "AskRequest", "Problem"} <= schemas
    assert {line[4:] for line in page.splitlines() if line.startswith("### ") and "`" not in line} == schemas
    linked = set(re.findall(r"\]\(#([a-z0-9_-]+)\)", page))
    assert linked and linked <= {name.lower() for name in schemas}
