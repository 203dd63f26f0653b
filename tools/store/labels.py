"""The version label of a document written without one: what a sync of a folder gives each text.

    auto_label(conn, doc_id, sha256, fmt, replace)   read inside the write's transaction

The rule, for a document whose writer gave no label:

- a doc_id the store has never held: ``"1"``;
- the text of a stored version (the same sha256 and format, of the text or of the source it was
  made from): that version's label, the current version first, then the most recently added. A
  text keeps the label it has, so an unchanged document is left alone and a document put back as
  it was (a reverted edit, a deleted file restored) brings its old version back instead of storing
  the same text again;
- with ``replace`` and a current version: the current version's label (its text is rewritten);
- otherwise the next integer: one more than the largest label of the document that is all digits
  ("1", "2" -> "3"), or, when none is, one more than the number of its stored versions; a label
  already taken is skipped.

A label a writer gives is never changed here: it names its text (``tools.store.ingest``).
"""

from __future__ import annotations

import json
import re

from evidence_loop.tools.store.provenance import PARSED_FROM
from evidence_loop.tools.store.sql import Db
from evidence_loop.tools.types import FIRST_VERSION

_DIGITS = re.compile(r"[0-9]{1,18}")


def auto_label(conn: Db, doc_id: str, sha256: str, fmt: str, replace: bool) -> str:
    """The label a text of ``doc_id`` without one is stored under (the rule above)."""
    rows = conn.execute(
        "SELECT version, sha256, format, metadata, is_current FROM versions WHERE doc_id = ? "
        "ORDER BY is_current DESC, added_gen DESC, version DESC",
        (doc_id,),
    ).fetchall()
    if not rows:
        return FIRST_VERSION
    for version, stored_sha, stored_fmt, metadata, _ in rows:
        if (sha256, fmt) in ((stored_sha, stored_fmt), source_of(metadata)):
            return str(version)
    if replace and rows[0][4]:
        return str(rows[0][0])
    return next_label([str(row[0]) for row in rows])


def next_label(labels: list[str]) -> str:
    """The next integer label after ``labels`` (the rule above)."""
    numbers = [int(label) for label in labels if _DIGITS.fullmatch(label)]
    candidate = max(numbers) + 1 if numbers else len(labels) + 1
    taken = set(labels)
    while str(candidate) in taken:
        candidate += 1
    return str(candidate)


def source_of(metadata: str) -> tuple[str, str] | None:
    """(sha256, format) of the source a stored text was made from, when the store recorded one
    (``parsed_from``, tools/store/provenance.py: an HTML page stored as its clean text): the source a
    writer sends again is recognised by it without being parsed."""
    if PARSED_FROM not in metadata:
        return None
    try:
        source = json.loads(metadata).get(PARSED_FROM)
    except (ValueError, AttributeError):
        return None
    if not isinstance(source, dict):
        return None
    return str(source.get("sha256")), str(source.get("format"))
