"""What text and JSON every door takes: the one check the CLI, the HTTP API, MCP and ``Service`` call.

    unicode_fault(text)        why ``text`` is not Unicode text (a lone surrogate), or None
    check_unicode(text, what)  the same as an ``InputError`` naming ``what``
    parse_json(text)           JSON nested at most ``MAX_JSON_DEPTH`` levels, no lone surrogate in it
    parse_toml(text)           TOML, nested or not; a ValueError for what cannot be read
    decode_utf8(data, where)   bytes as UTF-8 text; ``DecodeError`` names the file, line and byte

A lone surrogate (``"\\ud800"``) is what JSON can spell and UTF-8 cannot: no trace, index, reply or
hash can hold it, so it is refused where it comes in, with the same words at every door. JSON nested
deeper than any real record is refused before anything walks it: Python's reader and every recursive
walk after it (validation, hashing) give up with a ``RecursionError`` somewhere past a thousand.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any, Final

from evidence_loop.tools.errors import DecodeError, InputError, JsonInputError

MAX_JSON_DEPTH: Final = 64
"""Deepest nesting of a JSON value read from a file or a message (a document's metadata has its own,
smaller limit): deeper than any record evidence-loop writes or reads, shallow enough to walk safely."""

_SURROGATE = re.compile("[\ud800-\udfff]")


__all__ = [
    "MAX_JSON_DEPTH",
    "JsonInputError",
    "check_unicode",
    "decode_utf8",
    "json_fault",
    "parse_json",
    "parse_toml",
    "unicode_fault",
]


def unicode_fault(text: str) -> str | None:
    """Why ``text`` is not Unicode text, or None: a lone surrogate, which UTF-8 cannot encode."""
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return (
        f"a lone surrogate U+{ord(found.group()):04X} at character {found.start()} is not Unicode text; "
        "send UTF-8 text"
    )


def check_unicode(text: str, what: str) -> None:
    """``InputError`` ("the question: a lone surrogate U+D800 at character 3 ...") unless Unicode."""
    fault = unicode_fault(text)
    if fault is not None:
        raise InputError(f"{what}: {fault}")


def parse_json(text: str | bytes, *, unicode: bool = True) -> Any:
    """``json.loads(text)``, refused (``JsonInputError``) when it is not JSON, nests deeper than
    ``MAX_JSON_DEPTH`` levels, or (``unicode``) holds a lone surrogate in a key or a string. Pass
    ``unicode=False`` only where the caller refuses surrogates itself, naming more than a field (the
    store names the document)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise JsonInputError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except UnicodeDecodeError as exc:
        raise JsonInputError(f"not UTF-8 (byte {exc.start})", not_json=True) from None
    except ValueError as exc:  # JSONDecodeError, or an integer longer than Python reads
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise JsonInputError(f"not valid JSON ({reason})", not_json=True) from None
    fault = json_fault(value, unicode=unicode)
    if fault is not None:
        raise JsonInputError(fault)
    return value


def json_fault(value: object, *, unicode: bool = True) -> str | None:
    """Why a JSON value already read cannot be taken (too deep, a lone surrogate), or None; walked
    without recursion."""
    stack: list[tuple[object, int, _Path]] = [(value, 1, None)]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, dict):
            if depth > MAX_JSON_DEPTH:
                return f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
            for key, inner in item.items():
                if unicode and (fault := unicode_fault(key)) is not None:
                    return f"a key of {_shown(path)}: {fault}" if path else f"a key: {fault}"
                stack.append((inner, depth + 1, (path, key)))
        elif isinstance(item, list):
            if depth > MAX_JSON_DEPTH:
                return f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
            stack.extend((inner, depth + 1, (path, i)) for i, inner in enumerate(item))
        elif unicode and isinstance(item, str) and (fault := unicode_fault(item)) is not None:
            return f"{_shown(path)}: {fault}" if path else fault
    return None


_Path = tuple["_Path", str | int] | None
"""Where a value sits: its parent's path and its key or index (built only for a message)."""


def _shown(path: _Path) -> str:
    """``history[2].question``."""
    parts: list[str | int] = []
    while path is not None:
        path, key = path
        parts.append(key)
    text = ""
    for key in reversed(parts):
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else key)
    return text


def parse_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)``; a ``ValueError`` (as tomllib raises for what is not TOML) for TOML
    nested too deeply to read, which tomllib meets as a ``RecursionError``."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise ValueError("TOML nested too deeply to be read") from None


def decode_utf8(data: bytes, where: str) -> str:
    """UTF-8 text without a byte-order mark; ``DecodeError`` names ``where`` (a file), the line and
    the byte that is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DecodeError(f"{where}:{line}: not valid UTF-8 (byte {exc.start})") from None
    # The BOM is an encoding marker, not content: dropping it keeps offsets counting real text.
    return text.removeprefix("\ufeff")
