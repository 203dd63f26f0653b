"""Writing one document version into the store, inside the caller's write transaction.

The rules, per incoming document (applied in batch order, so a later line sees an earlier one):

    doc_id blank, with a control char, a
        char that prints nothing or a
        look-alike letter                   -> InputError (see tools.types.doc_id_fault; it is in NFC)
    a lone surrogate in text, title, acl
        or metadata (not Unicode text)      -> InputError
    NaN or an infinity in metadata          -> InputError naming the field
    empty or whitespace-only text           -> skipped, with a reason
    HTML with no text once its markup
        and page furniture are dropped      -> skipped, with a reason
    over max_bytes (UTF-8)                  -> DocumentTooLargeError (the caller rolls back the batch)
    version not stored yet                  -> stored; becomes the current version (added / updated)
    stored, same text, format, title, acl   -> unchanged (if it is the current version)
    stored, same text and format, other
        title/acl/metadata                  -> those fields updated in place
    stored, other text or format            -> VersionClashError, or with replace=True its rows replaced
    stored but not current (older version,
        or a deleted document)              -> becomes current again (a new live span)

"Text" is the text stored (``tools.parse``): a document's own text, or an HTML page's clean text,
stored with format "text", its source named in metadata (``parsed_from``, ``tools.store.provenance``,
never compared). Two sources with the same clean text are the same text: re-ingesting a page whose
markup or furniture changed but not what it says changes nothing. A version stored as its raw HTML
source (before clean text) is unchanged by that source and names none; replace=True rewrites it.

A version that stops being current keeps its rows: it stays readable for replay.

A ``WriteGuard`` (who may write what is the caller's decision, agent/write_access.py) is shown each
document's ``WriteTarget`` as this transaction reads it, before anything of the document is written:
the check and the write are one transaction, so no write of another process can land between them.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from evidence_loop.tools.errors import DocumentTooLargeError, InputError, VersionClashError
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.store.provenance import own_json, own_metadata, sha256_of, with_provenance
from evidence_loop.tools.store.sql import Db
from evidence_loop.tools.store.vectors import drop_versions
from evidence_loop.tools.tokenize import recall_tokens
from evidence_loop.tools.types import DocumentInput, ParsedDocument, doc_id_fault, doc_id_form

Outcome = Literal["added", "updated", "unchanged", "skipped"]


@dataclass(frozen=True, slots=True)
class WriteTarget:
    """What one write would change, as the write's own transaction reads it.

    ``live_acl``: the ACL of the document's live version (None: no live version); ``stored_acl``:
    of the stored version the write names (None: not stored, or a delete); ``new_acl``: the ACL the
    write brings (None: a delete).
    """

    doc_id: str
    version: str | None
    live_acl: tuple[str, ...] | None
    stored_acl: tuple[str, ...] | None
    new_acl: tuple[str, ...] | None


Parse = Callable[[DocumentInput], ParsedDocument]
"""How a document becomes its stored text, sections and units: ``tools.parse.parse_document``; a test
that rebuilds a store as an older evloop wrote it passes that version's parse."""

WriteGuard = Callable[[WriteTarget], None]
"""Told each target inside the write transaction; raises to refuse it (the whole batch rolls back)."""


@dataclass(slots=True)
class Tally:
    """Running counts of one batch (mutable: it accumulates while the batch is written)."""

    added: int = 0
    updated: int = 0
    versions_added: int = 0
    unchanged: int = 0
    units: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """True when the batch changed anything, so that a new generation is needed."""
        return self.added + self.updated > 0


@dataclass(frozen=True, slots=True)
class _Incoming:
    """A document with the derived fields every rule compares: what is stored (``parsed``: its text
    and format) and the sha256 of that text and of the source."""

    doc: DocumentInput
    parsed: ParsedDocument
    sha256: str
    source_sha256: str
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
    parse: Parse = parse_document,
) -> Outcome:
    """Write one document version at ``generation`` following the rules above; returns what happened.

    ``guard`` sees the target first (after the doc_id and the text are screened)."""
    incoming = _screen(doc, max_bytes, parse)
    if guard is not None:
        guard(target_of(conn, doc))
    if isinstance(incoming, str):
        tally.skipped.append((doc.doc_id, incoming))
        return "skipped"
    had_current = _has_current(conn, doc.doc_id)
    if not _write_version(conn, incoming, generation, replace=replace, tally=tally):
        tally.unchanged += 1
        return "unchanged"
    if had_current:
        tally.updated += 1
        return "updated"
    tally.added += 1
    return "added"


def _screen(doc: DocumentInput, max_bytes: int, parse: Parse) -> _Incoming | str:
    """Refuse a bad id, text that is not Unicode or an oversize document; pass over an empty one
    (the reason why is returned instead)."""
    if (fault := doc_id_fault(doc.doc_id)) is not None:
        raise InputError(fault)
    data = _encoded(doc, "text", doc.text)
    if len(data) > max_bytes:
        raise DocumentTooLargeError(
            f"document {doc.doc_id!r} version {doc.version!r} is {len(data)} bytes, over the limit of "
            f"{max_bytes} bytes; split it or raise the limit"
        )
    if not doc.text.strip():
        return "empty or whitespace-only text"
    parsed = parse(doc)
    if not parsed.text.strip():
        return "no text once its markup and page furniture are dropped"
    source_sha = hashlib.sha256(data).hexdigest()
    stored_sha = source_sha if parsed.text == doc.text else sha256_of(parsed.text)
    metadata = _metadata_json(doc, with_provenance(doc, parsed, data))
    incoming = _Incoming(doc, parsed, stored_sha, source_sha, _acl_json(doc), metadata)
    stored = (("title", doc.title), ("version", doc.version), ("acl", incoming.acl_json))
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


def _write_version(conn: Db, incoming: _Incoming, generation: int, *, replace: bool, tally: Tally) -> bool:
    """Store, replace, update or revive the version; False when it is already there as given."""
    doc = incoming.doc
    row = conn.execute(
        "SELECT sha256, format, title, acl, metadata, is_current FROM versions "
        "WHERE doc_id = ? AND version = ?",
        (doc.doc_id, doc.version),
    ).fetchone()
    if row is None:
        _store_new(conn, incoming, generation, tally)
        return True
    sha, fmt, title, acl, metadata, is_current = row
    new = (incoming.sha256, incoming.parsed.format)
    stored_raw = (sha, fmt) == (incoming.source_sha256, doc.format) != new  # stored before clean text
    if (sha, fmt) != new and not stored_raw:
        if not replace:
            raise VersionClashError(
                f"document {doc.doc_id!r} version {doc.version!r} is already stored with different text; "
                "give it a new version, or replace it (--replace)"
            )
        _replace_content(conn, incoming, tally)
    elif stored_raw and replace:
        _replace_content(conn, incoming, tally)
    elif is_current and (title, acl, own_metadata(metadata)) == (
        doc.title,
        incoming.acl_json,
        own_metadata(incoming.metadata_json),
    ):
        return False
    else:  # a version kept as its raw source gets no parsed_from: its text is that source
        _update_fields(conn, incoming, own_json(incoming.metadata_json) if stored_raw else None)
    _make_current(conn, incoming, generation, is_current=bool(is_current))
    return True


def target_of(conn: Db, doc: DocumentInput) -> WriteTarget:
    """The target of writing ``doc``, as ``conn``'s transaction reads the store."""
    return _target(conn, doc.doc_id, doc.version, tuple(sorted(set(doc.acl))))


def _target(conn: Db, doc_id: str, version: str | None, new_acl: tuple[str, ...] | None) -> WriteTarget:
    """The ACLs a write to ``doc_id`` (``version``; None: a delete) meets, read in its transaction."""
    live: tuple[str, ...] | None = None
    stored: tuple[str, ...] | None = None
    rows = conn.execute(
        "SELECT version, acl, is_current FROM versions WHERE doc_id = ? AND (is_current = 1 OR version = ?)",
        (doc_id, version),
    ).fetchall()
    for row_version, acl_json, is_current in rows:
        acl = tuple(json.loads(acl_json))
        if is_current:
            live = acl
        if row_version == version:
            stored = acl
    return WriteTarget(doc_id, version, live, stored, new_acl)


def _acl_json(doc: DocumentInput) -> str:
    return json.dumps(sorted(set(doc.acl)), ensure_ascii=False)


def _metadata_json(doc: DocumentInput, metadata: Mapping[str, object]) -> str:
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


def _has_current(conn: Db, doc_id: str) -> bool:
    row = conn.execute("SELECT 1 FROM versions WHERE doc_id = ? AND is_current = 1", (doc_id,)).fetchone()
    return row is not None


def _store_new(conn: Db, incoming: _Incoming, generation: int, tally: Tally) -> None:
    """A version the store has never seen: its rows, then it takes over as current."""
    doc = incoming.doc
    conn.execute(
        "INSERT OR IGNORE INTO documents(doc_id, created_gen) VALUES (?, ?)", (doc.doc_id, generation)
    )
    _close_current(conn, doc.doc_id, generation)
    conn.execute(
        "INSERT INTO versions(doc_id, version, title, format, text, sha256, acl, metadata, added_gen, "
        "removed_gen, is_current) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 1)",
        (doc.doc_id, doc.version, doc.title, incoming.parsed.format, incoming.parsed.text, incoming.sha256,
         incoming.acl_json, incoming.metadata_json, generation),
    )  # fmt: skip
    _insert_content(conn, incoming.parsed, tally)
    _insert_acl(conn, doc)
    _open_span(conn, doc.doc_id, doc.version, generation)


def _replace_content(conn: Db, incoming: _Incoming, tally: Tally) -> None:
    """Rewrite a stored version's text and rows (only with replace=True)."""
    doc = incoming.doc
    key = (doc.doc_id, doc.version)
    conn.execute("DELETE FROM units WHERE doc_id = ? AND version = ?", key)
    conn.execute("DELETE FROM sections WHERE doc_id = ? AND version = ?", key)
    drop_versions(conn, *key)  # its units change: the next embedding pass embeds them anew
    conn.execute(
        "UPDATE versions SET format = ?, text = ?, sha256 = ? WHERE doc_id = ? AND version = ?",
        (incoming.parsed.format, incoming.parsed.text, incoming.sha256, *key),
    )
    _update_fields(conn, incoming)
    _insert_content(conn, incoming.parsed, tally)


def _update_fields(conn: Db, incoming: _Incoming, metadata_json: str | None = None) -> None:
    """Title, ACL and metadata (``metadata_json``, else the incoming one) of a stored version, in place."""
    doc = incoming.doc
    key = (doc.doc_id, doc.version)
    conn.execute(
        "UPDATE versions SET title = ?, acl = ?, metadata = ? WHERE doc_id = ? AND version = ?",
        (doc.title, incoming.acl_json, metadata_json or incoming.metadata_json, *key),
    )
    conn.execute("DELETE FROM acl WHERE doc_id = ? AND version = ?", key)
    _insert_acl(conn, doc)


def _make_current(conn: Db, incoming: _Incoming, generation: int, *, is_current: bool) -> None:
    """Bring a stored, no longer current version back: the current one is closed, a new span opens."""
    if is_current:
        return
    doc = incoming.doc
    _close_current(conn, doc.doc_id, generation)
    conn.execute(
        "UPDATE versions SET is_current = 1, removed_gen = NULL WHERE doc_id = ? AND version = ?",
        (doc.doc_id, doc.version),
    )
    _open_span(conn, doc.doc_id, doc.version, generation)


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
                guard(_target(conn, held, None, None))
            _close_current(conn, held, generation)
            return True
    if guard is not None:
        guard(_target(conn, doc_id_form(doc_id), None, None))
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


def _insert_acl(conn: Db, doc: DocumentInput) -> None:
    conn.executemany(
        "INSERT INTO acl(doc_id, version, grp) VALUES (?, ?, ?)",
        [(doc.doc_id, doc.version, group) for group in sorted(set(doc.acl))],
    )
