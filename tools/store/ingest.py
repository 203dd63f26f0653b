"""Writing one document version into the store, inside the caller's write transaction.

The rules, per incoming document (applied in batch order, so a later line sees an earlier one):

    doc_id blank, with a control char, a
        char that prints nothing or a
        look-alike letter                   -> InputError (see tools.types.doc_id_fault; it is in NFC)
    a version label given empty             -> InputError
    a lone surrogate in text, title, acl
        or metadata (not Unicode text)      -> InputError
    NaN or an infinity in metadata          -> InputError naming the field
    empty or whitespace-only text           -> skipped, with a reason
    over max_bytes (UTF-8)                  -> DocumentTooLargeError (the caller rolls back the batch)
    no version label given                  -> labelled by tools.store.labels (the label of the stored
                                               version with this text, else the next integer), then:
    version not stored yet, and the current
        version has this text               -> unchanged: a text keeps the label it has (its title,
                                               ACL and metadata updated in place when they differ)
    version not stored yet                  -> stored; becomes the current version (added / changed)
    stored, same text, format, title, acl   -> unchanged (if it is the current version)
    stored, same text and format, other
        title/acl/metadata                  -> those fields updated in place
    stored, other text or format            -> VersionClashError, or with replace=True its rows replaced
    stored but not current (older version,
        or a deleted document)              -> becomes current again (a new live span), unless a later
                                               line of the batch names the same document: a batch that
                                               names several versions of a document keeps the earlier
                                               ones as history and makes the last one current

A version that stops being current keeps its rows: it stays readable for replay.

A ``WriteGuard`` (who may write what is the caller's decision, agent/write_access.py) is shown each
document's ``WriteTarget`` as this transaction reads it, before anything of the document is written:
the check and the write are one transaction, so no write of another process can land between them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass

from evidence_loop.tools.errors import DocumentTooLargeError, InputError, VersionClashError
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.store.guard import WriteGuard, read_target
from evidence_loop.tools.store.labels import auto_label
from evidence_loop.tools.store.sql import Db
from evidence_loop.tools.store.tally import Outcome, Tally
from evidence_loop.tools.store.vectors import drop_versions
from evidence_loop.tools.tokenize import recall_tokens
from evidence_loop.tools.types import DocumentInput, ParsedDocument, doc_id_fault, doc_id_form


@dataclass(frozen=True, slots=True)
class _Incoming:
    """A document (its version label settled) with the derived fields every rule compares."""

    doc: DocumentInput
    version: str
    sha256: str
    acl_json: str
    metadata_json: str


def apply_document(
    conn: Db,
    doc: DocumentInput,
    generation: int,
    *,
    replace: bool,
    max_bytes: int,
    tally: Tally,
    guard: WriteGuard | None = None,
    superseded: bool = False,
    live_before: dict[str, bool] | None = None,
) -> Outcome:
    """Write one document version at ``generation`` following the rules above; returns what happened.

    ``guard`` sees the target first (after the doc_id and the text are screened, and the version
    labelled). ``superseded``: a later line of the batch names the same document (this one is not
    counted: the document's outcome is its last line's). ``live_before`` remembers, per doc_id,
    whether the document had a live version before the batch's first line of it (without it: before
    this line)."""
    incoming = _screen(conn, doc, max_bytes, replace)
    if guard is not None:
        guard(read_target(conn, doc.doc_id, _label_of(doc, incoming), tuple(sorted(set(doc.acl)))))
    if incoming is None:
        tally.skipped.append((doc.doc_id, "empty or whitespace-only text"))
        return tally.count(doc.doc_id, doc.version or "", "skipped")
    if live_before is None:
        had_current = _has_current(conn, doc.doc_id)
    else:
        if doc.doc_id not in live_before:
            live_before[doc.doc_id] = _has_current(conn, doc.doc_id)
        had_current = live_before[doc.doc_id]
    written = _write_version(conn, incoming, generation, replace=replace, superseded=superseded, tally=tally)
    if written is None:
        outcome: Outcome = "unchanged"
        version = _current_label(conn, doc.doc_id, incoming.version)
    else:
        outcome, version = ("changed" if had_current else "added"), written
    return outcome if superseded else tally.count(doc.doc_id, version, outcome)


def _label_of(doc: DocumentInput, incoming: _Incoming | None) -> str | None:
    return incoming.version if incoming is not None else doc.version


def _screen(conn: Db, doc: DocumentInput, max_bytes: int, replace: bool) -> _Incoming | None:
    """Refuse a bad id or label, text that is not Unicode or an oversize document; pass over an empty
    one; label the version when none is given (``tools.store.labels``)."""
    if (fault := doc_id_fault(doc.doc_id)) is not None:
        raise InputError(fault)
    if doc.version is not None and not doc.version.strip():
        raise InputError(f"document {doc.doc_id!r}: an empty version label; give one, or none")
    data = _encoded(doc, "text", doc.text)
    if len(data) > max_bytes:
        label = "" if doc.version is None else f" version {doc.version!r}"
        raise DocumentTooLargeError(
            f"document {doc.doc_id!r}{label} is {len(data)} bytes, over the limit of {max_bytes} bytes; "
            "split it or raise the limit"
        )
    if not doc.text.strip():
        return None
    sha = hashlib.sha256(data).hexdigest()
    version = (
        doc.version if doc.version is not None else auto_label(conn, doc.doc_id, sha, doc.format, replace)
    )
    labelled = doc if doc.version == version else dataclasses.replace(doc, version=version)
    incoming = _Incoming(labelled, version, sha, _acl_json(doc), _metadata_json(doc))
    stored = (("title", doc.title), ("version", version), ("acl", incoming.acl_json))
    for name, value in (*stored, ("metadata", incoming.metadata_json)):
        _encoded(doc, name, value)
    return incoming


def _encoded(doc: DocumentInput, field_name: str, value: str) -> bytes:
    """``value`` as UTF-8; a lone surrogate (from a JSON ``"\\ud800"``) is refused: SQLite cannot store it."""
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(
            f"document {doc.doc_id!r}: {field_name} holds a lone surrogate U+{ord(value[exc.start]):04X}, "
            "which is not Unicode text"
        ) from None


def _write_version(
    conn: Db, incoming: _Incoming, generation: int, *, replace: bool, superseded: bool, tally: Tally
) -> str | None:
    """Store, replace, update or revive the version; the label written, or None when the document
    is already as given."""
    doc, version = incoming.doc, incoming.version
    row = conn.execute(
        "SELECT sha256, format, title, acl, metadata, is_current FROM versions "
        "WHERE doc_id = ? AND version = ?",
        (doc.doc_id, version),
    ).fetchone()
    if row is None:
        current = _current_same_text(conn, incoming)
        if current is not None:  # a text keeps the label it has
            return _keep_label(conn, incoming, current)
        _store_new(conn, incoming, generation, tally)
        return version
    sha, fmt, title, acl, metadata, is_current = row
    if (sha, fmt) != (incoming.sha256, doc.format):
        if not replace:
            raise VersionClashError(
                f"document {doc.doc_id!r} version {version!r} is already stored with different text; "
                "leave the version out to store it as the next one, give a new version, or replace "
                "the stored text (--replace)"
            )
        _replace_content(conn, incoming, tally)
    elif is_current and (title, acl, metadata) == (doc.title, incoming.acl_json, incoming.metadata_json):
        return None
    elif superseded and not is_current:
        return None  # history the store holds already: the batch's later line decides what is current
    else:
        _update_fields(conn, incoming)
    _make_current(conn, incoming, generation, is_current=bool(is_current))
    return version


def _current_same_text(conn: Db, incoming: _Incoming) -> str | None:
    """The label of the document's current version when it has the incoming text, else None."""
    row = conn.execute(
        "SELECT version, sha256, format FROM versions WHERE doc_id = ? AND is_current = 1",
        (incoming.doc.doc_id,),
    ).fetchone()
    if row is None or (row[1], row[2]) != (incoming.sha256, incoming.doc.format):
        return None
    return str(row[0])


def _keep_label(conn: Db, incoming: _Incoming, current: str) -> str | None:
    """The current version has the incoming text under another label: its title, ACL and metadata
    are updated in place when they differ (returns its label), else nothing changes (None)."""
    kept = dataclasses.replace(
        incoming, doc=dataclasses.replace(incoming.doc, version=current), version=current
    )
    doc = incoming.doc
    row = conn.execute(
        "SELECT title, acl, metadata FROM versions WHERE doc_id = ? AND version = ?", (doc.doc_id, current)
    ).fetchone()
    if tuple(row) == (doc.title, incoming.acl_json, incoming.metadata_json):
        return None
    _update_fields(conn, kept)
    return current


def _current_label(conn: Db, doc_id: str, fallback: str) -> str:
    row = conn.execute(
        "SELECT version FROM versions WHERE doc_id = ? AND is_current = 1", (doc_id,)
    ).fetchone()
    return str(row[0]) if row is not None else fallback


def _acl_json(doc: DocumentInput) -> str:
    return json.dumps(sorted(set(doc.acl)), ensure_ascii=False)


def _metadata_json(doc: DocumentInput) -> str:
    try:
        return json.dumps(dict(doc.metadata), ensure_ascii=False, sort_keys=True, allow_nan=False)
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


def _has_current(conn: Db, doc_id: str) -> bool:
    row = conn.execute("SELECT 1 FROM versions WHERE doc_id = ? AND is_current = 1", (doc_id,)).fetchone()
    return row is not None


def _store_new(conn: Db, incoming: _Incoming, generation: int, tally: Tally) -> None:
    """A version the store has never seen: its rows, then it takes over as current."""
    doc, version = incoming.doc, incoming.version
    conn.execute(
        "INSERT OR IGNORE INTO documents(doc_id, created_gen) VALUES (?, ?)", (doc.doc_id, generation)
    )
    _close_current(conn, doc.doc_id, generation)
    conn.execute(
        "INSERT INTO versions(doc_id, version, title, format, text, sha256, acl, metadata, added_gen, "
        "removed_gen, is_current) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 1)",
        (doc.doc_id, version, doc.title, doc.format, doc.text, incoming.sha256, incoming.acl_json,
         incoming.metadata_json, generation),
    )  # fmt: skip
    _insert_content(conn, parse_document(doc), tally)
    _insert_acl(conn, incoming)
    _open_span(conn, doc.doc_id, version, generation)


def _replace_content(conn: Db, incoming: _Incoming, tally: Tally) -> None:
    """Rewrite a stored version's text and rows (only with replace=True)."""
    doc = incoming.doc
    key = (doc.doc_id, incoming.version)
    conn.execute("DELETE FROM units WHERE doc_id = ? AND version = ?", key)
    conn.execute("DELETE FROM sections WHERE doc_id = ? AND version = ?", key)
    drop_versions(conn, *key)  # its units change: the next embedding pass embeds them anew
    conn.execute(
        "UPDATE versions SET format = ?, text = ?, sha256 = ? WHERE doc_id = ? AND version = ?",
        (doc.format, doc.text, incoming.sha256, *key),
    )
    _update_fields(conn, incoming)
    _insert_content(conn, parse_document(doc), tally)


def _update_fields(conn: Db, incoming: _Incoming) -> None:
    """Title, ACL and metadata of a stored version, in place."""
    doc = incoming.doc
    key = (doc.doc_id, incoming.version)
    conn.execute(
        "UPDATE versions SET title = ?, acl = ?, metadata = ? WHERE doc_id = ? AND version = ?",
        (doc.title, incoming.acl_json, incoming.metadata_json, *key),
    )
    conn.execute("DELETE FROM acl WHERE doc_id = ? AND version = ?", key)
    _insert_acl(conn, incoming)


def _make_current(conn: Db, incoming: _Incoming, generation: int, *, is_current: bool) -> None:
    """Bring a stored, no longer current version back: the current one is closed, a new span opens."""
    if is_current:
        return
    doc_id, version = incoming.doc.doc_id, incoming.version
    _close_current(conn, doc_id, generation)
    conn.execute(
        "UPDATE versions SET is_current = 1, removed_gen = NULL WHERE doc_id = ? AND version = ?",
        (doc_id, version),
    )
    _open_span(conn, doc_id, version, generation)


def retire_document(conn: Db, doc_id: str, generation: int, guard: WriteGuard | None = None) -> bool:
    """Delete a document from ``generation`` on: its versions stay stored (for replay) but none is live.

    Returns False when the document has no live version (unknown or already deleted); a doc_id that
    no document may have is an InputError. ``guard`` sees the target first.
    """
    if (fault := doc_id_fault(doc_id, new=False)) is not None:
        raise InputError(fault)
    # Its NFC form first (the form every doc_id is written in), then as given: a document stored
    # before doc_ids were normalised keeps the id it had.
    for held in dict.fromkeys((doc_id_form(doc_id), doc_id)):
        if _has_current(conn, held):
            if guard is not None:
                guard(read_target(conn, held, None, None))
            _close_current(conn, held, generation)
            return True
    if guard is not None:
        guard(read_target(conn, doc_id_form(doc_id), None, None))
    return False


def _close_current(conn: Db, doc_id: str, generation: int) -> None:
    """End the live span of the document's current version (if any) at ``generation``."""
    conn.execute(
        "UPDATE versions SET is_current = 0, removed_gen = ? WHERE doc_id = ? AND is_current = 1",
        (generation, doc_id),
    )
    conn.execute(
        "UPDATE spans SET removed_gen = ? WHERE doc_id = ? AND removed_gen IS NULL", (generation, doc_id)
    )
    # A version added and superseded within one batch was never live: drop its empty span.
    conn.execute("DELETE FROM spans WHERE doc_id = ? AND added_gen = removed_gen", (doc_id,))


def _open_span(conn: Db, doc_id: str, version: str, generation: int) -> None:
    conn.execute(
        "INSERT INTO spans(doc_id, version, added_gen, removed_gen) VALUES (?, ?, ?, NULL) "
        "ON CONFLICT(doc_id, version, added_gen) DO UPDATE SET removed_gen = NULL",
        (doc_id, version, generation),
    )


def _insert_content(conn: Db, parsed: ParsedDocument, tally: Tally) -> None:
    """Sections, then units with their BM25 recall tokens (space-joined; tokens never contain spaces)."""
    doc_id, version = parsed.doc_id, parsed.version
    conn.executemany(
        'INSERT INTO sections(doc_id, version, section_id, parent_id, level, title, start, "end", path) '
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (doc_id, version, s.section_id, s.parent_id, s.level, s.title, s.start, s.end,
             json.dumps(list(s.path), ensure_ascii=False))
            for s in parsed.sections
        ],
    )  # fmt: skip
    conn.executemany(
        'INSERT INTO units(doc_id, version, ordinal, kind, section_id, start, "end", link, tokens) '
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (doc_id, version, u.ordinal, u.kind, u.section_id, u.start, u.end, u.link,
             " ".join(recall_tokens(u.text)))
            for u in parsed.units
        ],
    )  # fmt: skip
    tally.units += len(parsed.units)
    tally.versions_added += 1


def _insert_acl(conn: Db, incoming: _Incoming) -> None:
    doc = incoming.doc
    conn.executemany(
        "INSERT INTO acl(doc_id, version, grp) VALUES (?, ?, ?)",
        [(doc.doc_id, incoming.version, group) for group in sorted(set(doc.acl))],
    )
