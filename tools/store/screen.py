"""What the store refuses of a document before anything of it is written, and the JSON it stores.

    doc_id blank, with a control char, a char that prints nothing or a look-alike letter
                                        -> InputError (tools.types.doc_id_fault; it is in NFC)
    a version label given empty         -> InputError
    over max_bytes (UTF-8)              -> DocumentTooLargeError (the caller rolls back the batch)
    a lone surrogate in text, title, version, acl or metadata (not Unicode text)
                                        -> InputError naming the field
    NaN or an infinity in metadata      -> InputError naming the field

``screen`` returns the document's bytes, or None for an empty one (passed over, not refused).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from evidence_loop.tools.errors import DocumentTooLargeError, InputError
from evidence_loop.tools.types import DocumentInput, doc_id_fault


def screen(doc: DocumentInput, max_bytes: int) -> bytes | None:
    """The text's UTF-8 bytes once the doc_id, the label and the size pass; None when it is empty."""
    if (fault := doc_id_fault(doc.doc_id)) is not None:
        raise InputError(fault)
    if doc.version is not None and not doc.version.strip():
        raise InputError(f"document {doc.doc_id!r}: an empty version label; give one, or none")
    data = encoded(doc, "text", doc.text)
    if len(data) > max_bytes:
        label = "" if doc.version is None else f" version {doc.version!r}"
        raise DocumentTooLargeError(
            f"document {doc.doc_id!r}{label} is {len(data)} bytes, over the limit of {max_bytes} bytes; "
            "split it or raise the limit"
        )
    return data if doc.text.strip() else None


def encoded(doc: DocumentInput, field_name: str, value: str) -> bytes:
    """``value`` as UTF-8; a lone surrogate (from a JSON ``"\\ud800"``) is refused: SQLite cannot store it."""
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(
            f"document {doc.doc_id!r}: {field_name} holds a lone surrogate U+{ord(value[exc.start]):04X}, "
            "which is not Unicode text"
        ) from None


def acl_json(doc: DocumentInput) -> str:
    """The ACL as stored: its groups sorted, once each."""
    return json.dumps(sorted(set(doc.acl)), ensure_ascii=False)


def metadata_json(doc: DocumentInput, metadata: Mapping[str, object]) -> str:
    """``metadata`` (the document's, or with the store's provenance) as stored JSON; InputError for
    NaN, an infinity or a value JSON cannot hold."""
    try:
        return json.dumps(dict(metadata), ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        if (where := _non_finite(doc.metadata)) is not None:
            raise InputError(
                f"document {doc.doc_id!r}: metadata field {where[0]!r} is {where[1]}, which JSON "
                "cannot hold; give a finite number, or null"
            ) from None
        raise InputError(f"document {doc.doc_id!r}: metadata is not JSON ({exc})") from exc


def _non_finite(metadata: object) -> tuple[str, float] | None:
    """The path ("limits.max[2]") and value of the first NaN or infinity in ``metadata``, or None."""
    stack: list[tuple[str, object]] = [("", metadata)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return path, item
        if isinstance(item, Mapping):
            stack.extend((f"{path}.{key}" if path else str(key), inner) for key, inner in item.items())
        elif isinstance(item, list | tuple):
            stack.extend((f"{path}[{i}]", inner) for i, inner in enumerate(item))
    return None
