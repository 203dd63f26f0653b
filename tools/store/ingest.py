"""Writing one document version into the store, inside the caller's write transaction.

The rules, per incoming document (applied in batch order, so a later line sees an earlier one):

    a bad doc_id or label, text that is
        not Unicode, NaN in metadata, over
        max_bytes                           -> refused (tools.store.screen); the batch rolls back
    empty or whitespace-only text           -> skipped, with a reason
    the source of the current version, with
        its title, ACL and metadata         -> unchanged, without being parsed again (unless replace)
    no version label given                  -> labelled by tools.store.labels (the label of the stored
                                               version with this text, else the next integer), then:
    HTML with no text once its markup
        and page furniture are dropped      -> skipped, with a reason
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

"Text" is the text stored (``tools.parse``): a document's own text, or an HTML page's clean text,
stored with format "text", its source named in metadata (``parsed_from``, ``tools.store.provenance``,
never compared). Two sources with the same clean text are the same text: re-ingesting a page whose
markup or furniture changed but not what it says changes nothing. A version stored as its raw HTML
source (before clean text) is unchanged by that source and names none; replace=True rewrites it.

A version that stops being current keeps its rows: it stays readable for replay.

A ``WriteGuard`` (who may write what is the caller's decision, agent/access/write_access.py) is shown each
document's ``WriteTarget`` (tools/store/guard.py) as this transaction reads it, before anything of
the document is written: the check and the write are one transaction, so no write of another
process can land between them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from evidence_loop.tools.errors import InputError, VersionClashError
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.store.guard import WriteGuard, read_target
from evidence_loop.tools.store.labels import auto_label, source_of
from evidence_loop.tools.store.provenance import own_json, own_metadata, sha256_of, with_provenance
from evidence_loop.tools.store.screen import acl_json, encoded, metadata_json, screen
from evidence_loop.tools.store.sql import Db
from evidence_loop.tools.store.tally import Outcome, Tally
from evidence_loop.tools.store.vectors import drop_versions
from evidence_loop.tools.tokenize import recall_tokens
from evidence_loop.tools.types import DocumentInput, ParsedDocument, doc_id_fault, doc_id_form

Parse = Callable[[DocumentInput], ParsedDocument]
"""How a document becomes its stored text, sections and units: ``tools.parse.parse_document``; a test
that rebuilds a store as an older evloop wrote it passes that version's parse."""


@dataclass(frozen=True, slots=True)
class _Incoming:
    """A document (its version label settled) with the derived fields every rule compares: what is
    stored (``parsed``: its text and format) and the sha256 of that text and of the source."""

    doc: DocumentInput
    version: str
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
    superseded: bool = False,
    live_before: dict[str, bool] | None = None,
    parse: Parse = parse_document,
) -> Outcome:
    """Write one document version at ``generation`` following the rules above; returns what happened.

    ``guard`` sees the target first (after the doc_id and the text are screened, and the version
    labelled). ``superseded``: a later line of the batch names the same document (this one is not
    counted: the document's outcome is its last line's). ``live_before`` remembers, per doc_id,
    whether the document had a live version before the batch's first line of it (without it: before
    this line). ``parse`` makes the stored text, sections and units."""
    data = screen(doc, max_bytes)
    kept = _unchanged(conn, doc, data) if data is not None and not replace else None
    incoming = _prepare(conn, doc, data, replace, parse) if data is not None and kept is None else None
    if guard is not None:
        label = kept or (incoming.version if isinstance(incoming, _Incoming) else doc.version)
        guard(read_target(conn, doc.doc_id, label, tuple(sorted(set(doc.acl)))))
    if data is None or isinstance(incoming, str):
        reason = incoming if isinstance(incoming, str) else "empty or whitespace-only text"
        tally.skipped.append((doc.doc_id, reason))
        return tally.count(doc.doc_id, doc.version or "", "skipped")
    had_current = _live_before(conn, doc.doc_id, live_before)
    written = None
    if incoming is not None:
        written = _write_version(
            conn, incoming, generation, replace=replace, superseded=superseded, tally=tally
        )
    if written is None:
        outcome: Outcome = "unchanged"
        version = kept or _current_label(conn, doc.doc_id, doc.version or "")
    else:
        outcome, version = ("changed" if had_current else "added"), written
    return outcome if superseded else tally.count(doc.doc_id, version, outcome)


def _live_before(conn: Db, doc_id: str, live_before: dict[str, bool] | None) -> bool:
    if live_before is None:
        return _has_current(conn, doc_id)
    if doc_id not in live_before:
        live_before[doc_id] = _has_current(conn, doc_id)
    return live_before[doc_id]


def _unchanged(conn: Db, doc: DocumentInput, data: bytes) -> str | None:
    """The current version's label when it was made from this very source, with this title, ACL and
    metadata, and the document names no other label: a sync leaves it alone without parsing it
    (with replace=True it is parsed: a version stored as its raw HTML is rewritten to clean text)."""
    row = conn.execute(
        "SELECT version, sha256, format, title, acl, metadata FROM versions "
        "WHERE doc_id = ? AND is_current = 1",
        (doc.doc_id,),
    ).fetchone()
    if row is None or doc.version not in (None, row[0]):
        return None
    version, sha, fmt, title, acl, metadata = row
    source = (hashlib.sha256(data).hexdigest(), doc.format)
    if source not in ((sha, fmt), source_of(metadata)):
        return None
    own = own_metadata(metadata_json(doc, doc.metadata))
    return str(version) if (title, acl, own_metadata(metadata)) == (doc.title, acl_json(doc), own) else None


def _prepare(conn: Db, doc: DocumentInput, data: bytes, replace: bool, parse: Parse) -> _Incoming | str:
    """The document labelled and parsed; the reason it is passed over when it has no text to store."""
    source_sha = hashlib.sha256(data).hexdigest()
    version = (
        doc.version
        if doc.version is not None
        else auto_label(conn, doc.doc_id, source_sha, doc.format, replace)
    )
    labelled = doc if doc.version == version else dataclasses.replace(doc, version=version)
    parsed = parse(labelled)
    if not parsed.text.strip():
        return "no text once its markup and page furniture are dropped"
    stored_sha = source_sha if parsed.text == doc.text else sha256_of(parsed.text)
    metadata = metadata_json(doc, with_provenance(doc, parsed, data))
    incoming = _Incoming(labelled, version, parsed, stored_sha, source_sha, acl_json(doc), metadata)
    for name, value in (("title", doc.title), ("version", version), ("acl", incoming.acl_json)):
        encoded(doc, name, value)
    encoded(doc, "metadata", incoming.metadata_json)
    return incoming


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
    new = (incoming.sha256, incoming.parsed.format)
    stored_raw = (sha, fmt) == (incoming.source_sha256, doc.format) != new  # stored before clean text
    if (sha, fmt) != new and not stored_raw:
        if not replace:
            raise VersionClashError(
                f"document {doc.doc_id!r} version {version!r} is already stored with different text; "
                "leave the version out to store it as the next one, give a new version, or replace "
                "the stored text (--replace)"
            )
        _replace_content(conn, incoming, tally)
    elif stored_raw and replace:
        _replace_content(conn, incoming, tally)
    elif is_current and (title, acl, own_metadata(metadata)) == _fields(incoming):
        return None
    elif superseded and not is_current:
        return None  # history the store holds already: the batch's later line decides what is current
    else:  # a version kept as its raw source gets no parsed_from: its text is that source
        _update_fields(conn, incoming, own_json(incoming.metadata_json) if stored_raw else None)
    _make_current(conn, incoming, generation, is_current=bool(is_current))
    return version


def _fields(incoming: _Incoming) -> tuple[str, str, object]:
    """Title, ACL and the writer's own metadata: what an update in place compares."""
    return incoming.doc.title, incoming.acl_json, own_metadata(incoming.metadata_json)


def _current_same_text(conn: Db, incoming: _Incoming) -> str | None:
    """The label of the document's current version when it holds the incoming text, else None."""
    row = conn.execute(
        "SELECT version, sha256, format FROM versions WHERE doc_id = ? AND is_current = 1",
        (incoming.doc.doc_id,),
    ).fetchone()
    if row is None or (row[1], row[2]) != (incoming.sha256, incoming.parsed.format):
        return None
    return str(row[0])


def _keep_label(conn: Db, incoming: _Incoming, current: str) -> str | None:
    """The current version has the incoming text under another label: its title, ACL and metadata
    are updated in place when they differ (returns its label), else nothing changes (None)."""
    kept = dataclasses.replace(
        incoming, doc=dataclasses.replace(incoming.doc, version=current), version=current
    )
    row = conn.execute(
        "SELECT title, acl, metadata FROM versions WHERE doc_id = ? AND version = ?",
        (incoming.doc.doc_id, current),
    ).fetchone()
    if (row[0], row[1], own_metadata(row[2])) == _fields(incoming):
        return None
    _update_fields(conn, kept)
    return current


def _current_label(conn: Db, doc_id: str, fallback: str) -> str:
    row = conn.execute(
        "SELECT version FROM versions WHERE doc_id = ? AND is_current = 1", (doc_id,)
    ).fetchone()
    return str(row[0]) if row is not None else fallback


def _has_current(conn: Db, doc_id: str) -> bool:
    row = conn.execute("SELECT 1 FROM versions WHERE doc_id = ? AND is_current = 1", (doc_id,)).fetchone()
    return row is not None


def _store_new(conn: Db, incoming: _Incoming, generation: int, tally: Tally) -> None:
    """A version the store has never seen: its rows, then it takes over as current."""
    doc, version, parsed = incoming.doc, incoming.version, incoming.parsed
    conn.execute(
        "INSERT OR IGNORE INTO documents(doc_id, created_gen) VALUES (?, ?)", (doc.doc_id, generation)
    )
    _close_current(conn, doc.doc_id, generation)
    conn.execute(
        "INSERT INTO versions(doc_id, version, title, format, text, sha256, acl, metadata, added_gen, "
        "removed_gen, is_current) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 1)",
        (doc.doc_id, version, doc.title, parsed.format, parsed.text, incoming.sha256, incoming.acl_json,
         incoming.metadata_json, generation),
    )  # fmt: skip
    _insert_content(conn, parsed, tally)
    _insert_acl(conn, incoming)
    _open_span(conn, doc.doc_id, version, generation)


def _replace_content(conn: Db, incoming: _Incoming, tally: Tally) -> None:
    """Rewrite a stored version's text and rows (only with replace=True)."""
    key = (incoming.doc.doc_id, incoming.version)
    conn.execute("DELETE FROM units WHERE doc_id = ? AND version = ?", key)
    conn.execute("DELETE FROM sections WHERE doc_id = ? AND version = ?", key)
    drop_versions(conn, *key)  # its units change: the next embedding pass embeds them anew
    conn.execute(
        "UPDATE versions SET format = ?, text = ?, sha256 = ? WHERE doc_id = ? AND version = ?",
        (incoming.parsed.format, incoming.parsed.text, incoming.sha256, *key),
    )
    _update_fields(conn, incoming)
    _insert_content(conn, incoming.parsed, tally)


def _update_fields(conn: Db, incoming: _Incoming, metadata: str | None = None) -> None:
    """Title, ACL and metadata (``metadata``, else the incoming one) of a stored version, in place."""
    key = (incoming.doc.doc_id, incoming.version)
    conn.execute(
        "UPDATE versions SET title = ?, acl = ?, metadata = ? WHERE doc_id = ? AND version = ?",
        (incoming.doc.title, incoming.acl_json, metadata or incoming.metadata_json, *key),
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
