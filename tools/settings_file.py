"""Reading a backend's settings: one TOML file under the environment, for the LLM, the embedder and
the reranker alike.

    read_settings(path, what, key_env, known)   the file's settings, refused when unreadable, when it
                                                holds an API key, or a setting ``known`` lacks
    first_error(error)                          a pydantic validation error as one line
    public_settings(config)                     a config as a trace header holds it: no key
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evidence_loop.tools.errors import InputError
from evidence_loop.tools.inputs import parse_toml


def read_settings(path: Path, what: str, key_env: str, known: Iterable[str]) -> dict[str, Any]:
    """The settings in ``path``; an API key belongs in ``key_env`` only, never in a file."""
    try:
        data = parse_toml(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(f"{path}: cannot read the {what} configuration: {error}") from error
    if "api_key" in data:
        raise InputError(f"{path}: put the API key in {key_env}, not in a file")
    unknown = set(data) - set(known)
    if unknown:
        raise InputError(f"{path}: unknown {what} settings {sorted(unknown)}")
    return data


def first_error(error: ValidationError) -> str:
    """Where the first invalid setting is, and why."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}"


def without_query(url: str) -> str:
    """A URL without its query: some gateways take the key as ``?api-key=``."""
    return url.split("?", 1)[0]


def public_settings(config: Any) -> dict[str, Any]:
    """A backend config's settings for a trace header: everything but the key, and whether one is set."""
    record = asdict(config)
    del record["api_key"]
    record["base_url"] = without_query(config.base_url)
    record["key_configured"] = bool(config.api_key)
    return record
