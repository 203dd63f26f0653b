"""A JSON schema in the form OpenAI's strict function calling takes (``"strict": true``).

Strict mode holds the model to the schema, and takes only schemas that say everything: every object
closed (``additionalProperties: false``), every property required, an optional one said as nullable
(a union with ``null``: the model sends ``null`` for it), and no ``default``.
"""

from __future__ import annotations

from typing import Any


def strict_form(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (a pydantic model's, say) in the strict form; the input is not changed."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "default":
            continue
        if key in ("properties", "$defs", "definitions"):  # names -> schemas
            out[key] = {name: strict_form(sub) for name, sub in value.items()}
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems"):  # lists of schemas
            out[key] = [strict_form(sub) for sub in value]
        elif key == "items" and isinstance(value, dict):
            out[key] = strict_form(value)
        else:
            out[key] = value
    properties = out.get("properties")
    if isinstance(properties, dict):
        optional = set(properties) - set(schema.get("required", []))
        out["properties"] = {n: nullable(p) if n in optional else p for n, p in properties.items()}
        out["required"] = list(properties)
        out["additionalProperties"] = False
    return out


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also allows ``null`` (as it is when it already does)."""
    branches = schema.get("anyOf")
    if isinstance(branches, list) and any(b.get("type") == "null" for b in branches):
        return schema
    if schema.get("type") == "null":
        return schema
    described = {k: v for k, v in schema.items() if k in ("description", "title")}
    inner = {k: v for k, v in schema.items() if k not in described}
    return {"anyOf": [inner, {"type": "null"}], **described}
