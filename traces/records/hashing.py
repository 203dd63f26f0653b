"""Canonical JSON and the hashes that chain a trace together.

Canonical JSON is what every hash is computed over, so its rules are fixed for all schema versions:

- object keys sorted, separators ``,`` and ``:`` with no spaces;
- ``ensure_ascii=False``: non-ASCII text is hashed as UTF-8, not as ``\\uXXXX`` escapes;
- floats written by Python's ``repr`` (the shortest text that reads back to the same double, e.g.
  ``0.1``, ``1e-07``, ``2.0``); another implementation must reproduce that text to verify a trace;
- NaN and the infinities are refused, as are keys that are not strings and values that are not JSON
  (str, int, float, bool, None, list/tuple, dict): they would not survive a round trip through a file.

The chain: the header's hash (of the header record without its ``hash`` field) is the start; each event
hashes its predecessor's hash with its own ``seq``, ``step`` and ``data``; the footer hashes its own record,
which carries the last event's hash as ``prev_hash``. Whitespace and key order of the file lines are not
hashed: only the values are.

From schema 4 on, a finished run's events are hashed at once: the digest of the header's hash and
every event line as written (``steps_digest``), which the footer holds as its ``prev_hash``; an event
line carries no hash of its own. One hash a run where schema 3 took one per event.

From schema 3 on, an event's data is hashed (and written) as orjson encodes it with sorted keys
(``compact_canonical``): the same rules, but for the text of a float with a negative exponent,
which has no leading zero (``1e-7`` where Python writes ``1e-07``). It is encoded once, and the bytes
hashed are the bytes written; ``verify`` re-encodes what it reads the same way. Headers and footers
keep the rules above.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final

import orjson

COMPACT_FROM: Final = 3
"""The first schema whose event data is hashed as ``compact_canonical`` encodes it."""
# hashlib lets go of the GIL for an update of 2048 bytes or more; in a served process another thread
# then holds it for up to its switch interval (5 ms) before the run may go on. Events are hashed in
# smaller pieces: the few microseconds of hashing stay on the run's own thread.
_UNDER_GIL = 2047
_COMPACT = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def child_path(path: str, key: str | int) -> str:
    """The dotted path of a child value: ``data.hits[3].score``; odd keys are quoted, ``a["x.y"]``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENTIFIER.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _plain(value: object) -> bool:
    """True when ``value`` is plain JSON; the fast path, building no paths."""
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list | tuple):
        return all(_plain(item) for item in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def check_json(value: object, path: str = "data") -> None:
    """Raise ``TypeError``/``ValueError`` naming the first value (by dotted path) that is not plain JSON."""
    if _plain(value):
        return
    _explain(value, path)


def _explain(value: object, path: str) -> None:
    """The slow walk that names the offending value's path (only taken when there is one)."""
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{path} is {value!r}: NaN and infinities are not allowed in a trace")
        return
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _explain(item, child_path(path, i))
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{path} has a key {key!r} that is not a string")
            _explain(item, child_path(path, key))
        return
    raise TypeError(f"{path} is a {type(value).__name__}, not a JSON value")


def canonical_json(value: object) -> str:
    """The canonical JSON text of ``value`` (see the module docstring for the rules)."""
    check_json(value, "value")
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def plain_canonical_json(value: object, path: str = "value") -> str:
    """The canonical JSON text of a value already known to be plain JSON with string keys (read back
    from JSON, dumped by pydantic, or built so): one pass of the C encoder, no walk first; only a
    value the encoder refuses (NaN, a non-JSON type) is walked, to name its path."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        check_json(value, path)
        raise


def _float(value: object) -> float:
    """A float subclass (numpy's float64) as the float it is; anything else is not JSON."""
    if isinstance(value, float):
        return float(value)
    raise TypeError(f"a {type(value).__name__} is not a JSON value")


_NO_NAN: Final = json.JSONEncoder(allow_nan=False, check_circular=False)


def compact_canonical(value: object, path: str = "value") -> bytes:
    """Schema 3's canonical JSON of a value, as UTF-8: orjson with sorted keys, one pass in C. The
    encoder writes NaN and the infinities as null, so a text holding a null is checked as plain JSON
    (which refuses them); a value the encoder refuses is walked to name its path."""
    try:
        text = orjson.dumps(value, default=_float, option=_COMPACT)
    except TypeError:
        check_json(value, path)
        raise
    if b"null" in text:  # None, or NaN or an infinity: the C encoder tells them apart in one pass
        try:
            _NO_NAN.encode(value)
        except (TypeError, ValueError):
            check_json(value, path)  # names the value at fault (a float subclass it refused passes)
    return text


def data_text(data: object, schema: int) -> bytes:
    """The canonical text an event of ``schema`` hashes its data by."""
    if schema >= COMPACT_FROM:
        return compact_canonical(data, "data")
    return plain_canonical_json(data, "data").encode("utf-8")  # read back or dumped: plain JSON


def sha256_hex(text: str) -> str:
    """The sha256 hex digest of ``text`` as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest(value: object) -> str:
    """The sha256 hex digest of the canonical JSON of ``value``; also used for ``policy_hash``."""
    return sha256_hex(canonical_json(value))


def event_hash_of_text(prev_hash: str, seq: int, step: str, data_text: str) -> str:
    """The event hash from the canonical JSON text of its data: the envelope's canonical text is built
    around it (keys in sorted order: data, prev_hash, seq, step), so the data is encoded only once."""
    return event_hash_of_bytes(prev_hash, seq, step, data_text.encode("utf-8"))


def event_hash_of_bytes(prev_hash: str, seq: int, step: str, data: bytes) -> str:
    """``event_hash_of_text`` of the data's canonical text as UTF-8 (the bytes written)."""
    prev, name = _quoted(prev_hash), _quoted(step)
    tail = f',"prev_hash":{prev},"seq":{seq},"step":{name}}}'.encode()
    if len(data) + len(tail) < _UNDER_GIL - 8:  # the usual event: one update
        return hashlib.sha256(b"".join((b'{"data":', data, tail))).hexdigest()
    hasher = hashlib.sha256(b'{"data":')
    for start in range(0, len(data), _UNDER_GIL):
        hasher.update(data[start : start + _UNDER_GIL])
    hasher.update(tail)
    return hasher.hexdigest()


def steps_digest(header_hash: str, events: bytes) -> str:
    """Schema 4: the digest of a finished run's events, ``sha256(header_hash + "\\n" + events)`` where
    ``events`` are its event lines as written, each with its newline. Updated in pieces under 2 KB,
    as events are: a run's records are hashed on its own thread, the GIL kept."""
    hasher = hashlib.sha256(header_hash.encode("ascii", "replace") + b"\n")
    view = memoryview(events)
    for start in range(0, len(view), _UNDER_GIL):
        hasher.update(view[start : start + _UNDER_GIL])
    return hasher.hexdigest()


_PLAIN_TEXT = re.compile(r"[A-Za-z0-9_.:-]*")


def _quoted(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)``; a hex digest or a step name needs no escapes, so it
    is only put in quotes (what ``event_hash_of_bytes`` spent most of its time on was two encoders)."""
    if _PLAIN_TEXT.fullmatch(text):
        return f'"{text}"'
    return json.dumps(text, ensure_ascii=False)


def event_hash(
    prev_hash: str, seq: int, step: str, data: Mapping[str, Any], *, schema: int = COMPACT_FROM
) -> str:
    """The hash of one event of a ``schema`` trace (the newest by default): its predecessor's hash,
    its position, its step and its data."""
    return event_hash_of_bytes(prev_hash, seq, step, data_text(data, schema))


def record_hash(record: Mapping[str, Any]) -> str:
    """The hash of a header or footer record: every field except ``hash`` itself."""
    return sha256_hex(plain_canonical_json({key: value for key, value in record.items() if key != "hash"}))
