"""The outcome's status: conflicts stop first, then anything missing, else the evidence answers; a
follow-up that may stand for several things is asked back ("which one?") before anything else."""

from __future__ import annotations

from collections.abc import Sequence

from evidence_loop.policies.types import MissingPiece, Status


def status_of(missing: Sequence[MissingPiece], conflict: bool) -> Status:
    """Conflicts stop first; then anything missing stops; otherwise the evidence answers."""
    if conflict:
        return "conflicting_evidence"
    return "insufficient_evidence" if missing else "answered"


def asked_back(
    ambiguous: Sequence[MissingPiece], missing: Sequence[MissingPiece], blocking: bool
) -> tuple[list[MissingPiece], bool]:
    """The missing pieces and whether the conflicts found block, once the ``ambiguous_subject``
    pieces of a follow-up are known: when there are any, they lead the missing pieces and the run
    asks back instead of stopping on a conflict (which of the things it stands for is not known)."""
    if not ambiguous:
        return list(missing), blocking
    return [*ambiguous, *missing], False
