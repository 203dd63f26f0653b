"""mkdocs hook: the HTTP API reference page and ``openapi.json``, generated from the app's own schema.

The page is rendered to plain markdown at build time (no JavaScript, nothing fetched from a CDN), so
the reference cannot drift from the code: ``mkdocs build --strict`` fails on a broken link in it.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

PAGE = "http-api-reference.md"
METHODS = ("get", "post", "put", "patch", "delete")


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document `evloop serve` publishes at /openapi.json."""
    from evidence_loop.agent.doors.api import create_app
    from evidence_loop.agent.service import Service

    with (
        tempfile.TemporaryDirectory() as folder,
        Service.open(Path(folder), create=True, embedder=None, reranker=None, llm=None) as service,
    ):
        doc: dict[str, Any] = create_app(service, None).openapi()
    return doc


def _type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in schema or "oneOf" in schema:
        return " or ".join(_type(s) for s in schema.get("anyOf", schema.get("oneOf", [])))
    if "const" in schema:
        return f"`{json.dumps(schema['const'], ensure_ascii=False)}`"
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v, ensure_ascii=False)}`" for v in schema["enum"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    values = schema.get("additionalProperties")
    if kind == "object" and isinstance(values, dict):
        return f"object of {_type(values)}"
    return str(kind)


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _operation(path: str, method: str, op: dict[str, Any]) -> list[str]:
    lines = [f"### `{method.upper()} {path}`", "", _cell(op.get("summary", "")), ""]
    if op.get("description"):
        lines += [op["description"].strip(), ""]
    params = op.get("parameters", [])
    if params:
        lines += ["| parameter | in | type | required | description |", "|---|---|---|---|---|"]
        for p in params:
            lines.append(
                f"| `{p['name']}` | {p['in']} | {_type(p.get('schema', {}))} | {p.get('required', False)} "
                f"| {_cell(p.get('description', p.get('schema', {}).get('description', '')))} |"
            )
        lines.append("")
    body = op.get("requestBody", {}).get("content", {})
    for kind, content in body.items():
        lines.append(f"Request body, `{kind}`: {_type(content.get('schema', {}))}")
        lines.append("")
    lines += ["| status | description | body |", "|---|---|---|"]
    for status, response in op.get("responses", {}).items():
        shapes = [_type(c.get("schema", {})) for c in response.get("content", {}).values()]
        lines.append(f"| {status} | {_cell(response.get('description', ''))} | {' '.join(shapes)} |")
    return [*lines, ""]


def _schema(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"### {name}", ""]
    if schema.get("description"):
        lines += [_cell(schema["description"]), ""]
    properties = schema.get("properties", {})
    if not properties:
        return [*lines, f"Type: {_type(schema)}", ""]
    required = set(schema.get("required", []))
    lines += ["| field | type | required | description |", "|---|---|---|---|"]
    for field, sub in properties.items():
        about = _cell(sub.get("description", ""))
        lines.append(f"| `{field}` | {_type(sub)} | {field in required} | {about} |")
    return [*lines, ""]


def reference_markdown(doc: dict[str, Any]) -> str:
    """The reference page: every operation, then every schema, as tables."""
    lines = [
        "# HTTP API reference",
        "",
        f"{doc['info']['title']} {doc['info']['version']}, generated from the app's OpenAPI document "
        "(also served by `evloop serve` at `/openapi.json`, and [here](openapi.json)).",
        "",
        doc["info"].get("description", ""),
        "",
        "## Operations",
        "",
    ]
    for path, operations in doc["paths"].items():
        for method in METHODS:
            if method in operations:
                lines += _operation(path, method, operations[method])
    lines += ["## Schemas", ""]
    for name, schema in sorted(doc.get("components", {}).get("schemas", {}).items()):
        lines += _schema(name, schema)
    return "\n".join(lines)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    doc = openapi_document()
    files.append(File.generated(config, PAGE, content=reference_markdown(doc)))
    schema = json.dumps(doc, indent=2, ensure_ascii=False)
    files.append(File.generated(config, "openapi.json", content=schema))
    return files
