"""What a write did: each document's outcome, the running counts of a batch, and the report it ends with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Outcome = Literal["added", "changed", "unchanged", "skipped", "retired"]
"""What a write did to one document: added (it had no live version), changed (another version, or
its title, ACL or metadata), unchanged, skipped (empty), retired (no longer live: a sync's prune)."""


@dataclass(slots=True)
class Tally:
    """Running counts of one batch (mutable: it accumulates while the batch is written).

    ``outcomes`` holds (doc_id, version, outcome) for every document, in batch order (retired ones
    last, with the version that was live); ``units`` counts the units of the versions written,
    ``embedded`` the units embedded for them."""

    added: int = 0
    changed: int = 0
    versions_added: int = 0
    unchanged: int = 0
    retired: int = 0
    units: int = 0
    embedded: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    outcomes: list[tuple[str, str, Outcome]] = field(default_factory=list)
    # (doc_id, the source it was synced from, the source that changed it): two folders naming one
    # doc_id replace each other's text at every sync
    taken: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def wrote(self) -> bool:
        """True when the batch changed anything, so that a new generation is needed."""
        return self.added + self.changed + self.retired > 0

    def count(self, doc_id: str, version: str, outcome: Outcome) -> Outcome:
        """Record what happened to one document; returns ``outcome``."""
        if outcome == "added":
            self.added += 1
        elif outcome == "changed":
            self.changed += 1
        elif outcome == "unchanged":
            self.unchanged += 1
        elif outcome == "retired":
            self.retired += 1
        self.outcomes.append((doc_id, version, outcome))
        return outcome


@dataclass(frozen=True, slots=True)
class IngestReport:
    """What one write did. ``documents`` counts documents added or changed; ``outcomes`` holds
    (doc_id, version, outcome) of each (``Outcome``); ``units`` counts the units of the versions
    written, ``embedded`` the units embedded. A ``dry_run`` wrote nothing: its counts say what the
    write would have done (nothing embedded)."""

    documents: int
    versions_added: int
    unchanged: int
    skipped: tuple[tuple[str, str], ...]
    units: int
    seconds: float
    generation: int
    added: int = 0
    changed: int = 0
    retired: int = 0
    embedded: int = 0
    outcomes: tuple[tuple[str, str, Outcome], ...] = ()
    dry_run: bool = False
    taken: tuple[tuple[str, str, str], ...] = ()

    @classmethod
    def of(cls, tally: Tally, seconds: float, generation: int, *, dry_run: bool = False) -> IngestReport:
        """The report of a batch that ``tally`` counted."""
        return cls(
            documents=tally.added + tally.changed,
            versions_added=tally.versions_added,
            unchanged=tally.unchanged,
            skipped=tuple(tally.skipped),
            units=tally.units,
            seconds=seconds,
            generation=generation,
            added=tally.added,
            changed=tally.changed,
            retired=tally.retired,
            embedded=tally.embedded,
            outcomes=tuple(tally.outcomes),
            dry_run=dry_run,
            taken=tuple(tally.taken),
        )
