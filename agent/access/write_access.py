"""Who may write which document: the rule, checked inside the store's write transaction.

A writer may create, replace, update or delete a document only when it holds **every** group of
the document's ACL: of its live version, of the stored version the write names (a replace, an
update in place, a revival), and the ACL the write brings. One group in common lets a key *read* a
document; changing what a document says changes the answers of every group that reads it, so it
takes all of them. A **public** document (empty ACL) is answered to everyone, so writing one, or
turning a restricted document public, takes the ``publish`` scope; holding groups does not.

A writer that cannot read a doc_id's live document gets the same refusal whether the doc_id is
free or held (``DocIdNotWritableError``; a delete: the same NotFoundError as an unknown doc_id), so
only a writer allowed to create doc_ids (``creates``: the API gives it to a key holding every
group of the keys file) may write a doc_id that has no live document; and a writer with
``publish`` may create a public document (it is trusted with what every caller reads; what it can
learn is that a doc_id it tried is taken, never what the document holding it says or who reads it).

Every refusal names its rule and the key that would be allowed (``WriteRefusedError.rule`` and
``allowed_by``, the problem's ``rule`` and ``allowed_by`` over HTTP):

    every-group   the key lacks a group of an ACL: a key holding those groups
    publish       a public document, or one made public: a key with the scope publish
    create-doc-id a doc_id with no live document the key can read: a key whose groups cover every
                  group of the keys file, or, for a public document, a key with publish

The rule runs as the store's ``WriteGuard``: the store reads the ACLs in the write's own
transaction (SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's advisory write lock), so the check and the
write are one step whatever the number of processes or replicas. ``docs/write-permissions.md``
says it for operators.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from evidence_loop.tools.errors import DocIdNotWritableError, NotFoundError, WriteRefusedError
from evidence_loop.tools.store.guard import WriteGuard, WriteTarget

PUBLISH_HINT = "a key with the 'publish' scope (`evloop keys add NAME --scopes ingest,publish`)"
EVERY_GROUP = "every-group"
PUBLISH = "publish"
CREATE = "create-doc-id"


@dataclass(frozen=True, slots=True)
class Writer:
    """Who writes: ``groups`` None is unbounded (the command line, the local caller); ``publish``
    allows public documents (new ones too); ``creates`` allows doc_ids that have no live document."""

    name: str
    groups: frozenset[str] | None
    publish: bool = False
    creates: bool = False

    def reads(self, acl: Collection[str]) -> bool:
        """Whether a document with this ACL is one the writer can read (empty ACL: public)."""
        return self.groups is None or not acl or not self.groups.isdisjoint(acl)

    def guard(self) -> WriteGuard | None:
        """The store's guard for this writer (None: unbounded, nothing to check or read)."""
        if self.groups is None:
            return None
        return lambda target: check(self, target)


def check(writer: Writer, target: WriteTarget) -> None:
    """Raise unless ``writer`` may make the write ``target`` describes (the rule above)."""
    held = writer.groups
    if held is None:
        return
    live = target.live_acl
    if live is None or not writer.reads(live):
        _refuse_hidden(writer, target)
    # The new ACL is the caller's own and the live one it can read: only these name their groups.
    acls = (
        (target.new_acl, "the ACL it is sent with", True),
        (live, "the ACL of its live version", True),
        (target.stored_acl, f"the ACL of its stored version {target.version!r}", False),
    )
    for acl, whose, shown in acls:
        if acl is None:
            continue
        if not acl and not writer.publish:
            raise WriteRefusedError(
                f"document {target.doc_id!r}: {whose} is empty (public: every caller reads it); "
                f"writing a public document takes {PUBLISH_HINT}",
                rule=PUBLISH,
                allowed_by=PUBLISH_HINT,
            )
        missing = sorted(set(acl) - held)
        if missing:
            named = f" ({', '.join(missing)})" if shown else ""
            allowed = (
                f"a key that also holds {', '.join(missing)}"
                if shown
                else f"a key holding every group of {whose}"
            )
            raise WriteRefusedError(
                f"document {target.doc_id!r}: {whose} has groups this key does not hold{named}; "
                f"a key writes a document only when it holds every group of its ACL: {allowed}",
                rule=EVERY_GROUP,
                allowed_by=allowed,
            )


def _refuse_hidden(writer: Writer, target: WriteTarget) -> None:
    """A doc_id with no live document the writer can read: creation, or the same refusal as a free one."""
    if target.new_acl is None:
        if target.live_acl is not None:
            raise NotFoundError(f"no document {target.doc_id!r} in the store")
        return  # nothing live: the store's own "not found"
    public = not target.new_acl
    if target.live_acl is None and (writer.creates or (writer.publish and public)):
        return
    if public and writer.publish:  # it may create public documents: only a hidden document stops it
        allowed = "another doc_id, or a key that can read the document holding this one"
        detail = "its doc_id is held by a document this key cannot read"
    else:
        allowed = f"a key whose groups cover every group of the keys file, or {PUBLISH_HINT} for a public one"
        detail = (
            "a key rewrites the documents it can read, and creates new doc_ids only if its groups "
            "cover every group of the keys file, or with the scope publish for a public document"
        )
    raise DocIdNotWritableError(
        f"document {target.doc_id!r} cannot be written with this key: {detail}; allowed: {allowed}",
        rule=CREATE,
        allowed_by=allowed,
    )
