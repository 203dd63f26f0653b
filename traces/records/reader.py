"""Reading a trace file back: committed lines only, every event a typed step, damage located.

Three kinds of imperfect file, told apart on purpose:

- *torn*: the last line has no newline (a kill mid-write). It was never committed; it is ignored and the
  run simply reads as incomplete. Never reported as corruption.
- *incomplete*: no footer (an exception or a kill before ``finish``). Readable and verifiable as far as
  it goes.
- *damaged*: a committed line that is not a valid record (bad UTF-8 or JSON, a failed schema check,
  data that is not the step its event names, a record after the footer). Reading stops there and
  ``Trace.damage`` says where; ``verify`` fails.

A file whose header line cannot be read raises ``TraceError``: there is nothing to show without it.
One with no complete header line at all (empty, or a header cut short) raises ``UnwrittenTraceError``:
its run was never recorded (a full disk, a kill as it began), which is no damage unless the run is
known to have finished.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evidence_loop.tools.errors import NotFoundError, TraceError, UnwrittenTraceError
from evidence_loop.tools.inputs import json_fault
from evidence_loop.traces.records.schema import (
    FIRST_SCHEMA,
    SCHEMA_VERSION,
    Trace,
    TraceEvent,
    TraceFooter,
    TraceHeader,
)


class _BadRecord(ValueError):
    """A committed line that is not a valid record."""


def _refuse_constant(name: str) -> object:
    raise _BadRecord(f"{name} is not allowed in a trace")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)  # one for every line, not one per line
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # where a lone surrogate could be spelled


def _load(line: bytes) -> dict[str, Any]:
    """Decode one committed line into a raw record (no trace writes one nested deeper than Python
    reads, or a lone surrogate, which no hash can be taken of: a line that holds one was not written
    by evidence-loop)."""
    try:
        record = _DECODER.decode(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _BadRecord(f"not a JSON line ({exc})") from exc
    except RecursionError:
        raise _BadRecord("not a JSON line (nested too deeply to be read)") from None
    if not isinstance(record, dict):
        raise _BadRecord(f"a JSON {type(record).__name__}, not a record")
    if _SURROGATE_ESCAPE.search(line) and (fault := json_fault(record)) is not None:
        raise _BadRecord(f"not a record ({fault})")
    return record


def _why(exc: ValidationError) -> str:
    """The first validation problem, in one line."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "record"
    return f"{where}: {first['msg']}"


def _check_schema(version: object) -> None:
    if not isinstance(version, int) or isinstance(version, bool):
        raise TraceError(f"schema_version {version!r} is not an integer")
    if version > SCHEMA_VERSION:
        raise TraceError(
            f"trace schema {version} is newer than this evidence-loop reads ({SCHEMA_VERSION}); upgrade it"
        )
    if version < FIRST_SCHEMA:
        raise TraceError(f"trace schema {version} was never written by evidence-loop")


def _read_header(first_line: bytes, where: str) -> tuple[dict[str, Any], TraceHeader]:
    try:
        raw = _load(first_line)
        _check_schema(raw.get("schema_version"))
        header = TraceHeader.model_validate(raw)
    except _BadRecord as exc:
        raise TraceError(f"{where}: line 1: header: {exc}") from exc
    except ValidationError as exc:
        raise TraceError(f"{where}: line 1: header: {_why(exc)}") from exc
    except TraceError as exc:
        raise TraceError(f"{where}: line 1: {exc}") from exc
    return raw, header


def _parse_record(record: dict[str, Any]) -> TraceEvent | TraceFooter:
    kind = record.get("type")
    try:
        if kind == "event":
            return TraceEvent.model_validate(record)
        if kind == "footer":
            return TraceFooter.model_validate(record)
    except ValidationError as exc:
        raise _BadRecord(_why(exc)) from exc
    raise _BadRecord(f"unknown record type {kind!r}")


def parse_trace(content: bytes, *, path: Path | None = None) -> Trace:
    """Parse the bytes of a trace file (see the module docstring for torn, incomplete and damaged)."""
    where = str(path) if path is not None else "<trace>"
    lines = content.split(b"\n")
    torn = lines.pop() != b""
    if not lines:
        raise UnwrittenTraceError(
            f"{where}: not written: no complete header line (the disk was full, or the run was killed "
            "as it began)"
        )
    raw_header, header = _read_header(lines[0], where)
    records = [raw_header]
    events: list[TraceEvent] = []
    footer: TraceFooter | None = None
    damage: str | None = None
    for number, line in enumerate(lines[1:], start=2):
        try:
            if footer is not None:
                raise _BadRecord("a record after the footer")
            raw = _load(line)
        except _BadRecord as exc:
            damage = f"line {number}: {exc}"
            break
        try:
            record = _parse_record(raw)
        except _BadRecord as exc:
            damage = f"line {number}: {exc}"
            records.append(raw)  # a JSON record all the same: verify checks its hash before its shape
            break
        records.append(raw)
        if isinstance(record, TraceFooter):
            footer = record
        else:
            events.append(record)
    return Trace(
        header=header,
        events=tuple(events),
        footer=footer,
        path=path,
        torn=torn,
        damage=damage,
        records=tuple(records),
    )


def read_trace(path: Path) -> Trace:
    """Read one trace file from anywhere (a store, a golden trace under ``tests/``, an export)."""
    try:
        content = path.read_bytes()
    except FileNotFoundError as exc:
        raise NotFoundError(f"no trace file at {path}") from exc
    except OSError as exc:
        raise TraceError(f"{path}: cannot be read ({exc.strerror})") from exc
    return parse_trace(content, path=path)
