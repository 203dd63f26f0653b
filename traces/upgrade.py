"""Reading old trace files in the current shape: the chain of schema upgraders.

A file declares its schema in its header; every record of the file is passed through the upgraders from
that version up to the current one before it is validated. The raw records stay untouched (the reader
keeps them), so the hash chain is still verified over the bytes as written.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tools.errors import TraceError
from traces.schema import SCHEMA_VERSION, UPGRADERS, Upgrader


@dataclass(frozen=True, slots=True)
class UpgradeChain:
    """Upgraders from schema ``first`` on: ``steps[i]`` turns schema ``first + i`` into ``first + i + 1``."""

    first: int
    steps: tuple[Upgrader, ...]

    @property
    def target(self) -> int:
        """The schema version records come out in."""
        return self.first + len(self.steps)

    def check(self, version: object) -> int:
        """Return ``version`` if this chain can read it; otherwise raise ``TraceError`` saying why."""
        if not isinstance(version, int) or isinstance(version, bool):
            raise TraceError(f"schema_version {version!r} is not an integer")
        if version > self.target:
            raise TraceError(
                f"trace schema {version} is newer than this evidence-loop reads ({self.target}); upgrade it"
            )
        if version < self.first:
            raise TraceError(f"trace schema {version} is older than any upgrader ({self.first})")
        return version

    def upgrade(self, record: dict[str, Any], version: int) -> dict[str, Any]:
        """Bring one raw record from ``version`` to ``target``; the record passed in is not modified.

        The chain stamps each upgraded header with its new ``schema_version``, so an upgrader only
        changes content.
        """
        if self.check(version) == self.target:
            return record
        current = copy.deepcopy(record)
        for offset in range(version - self.first, len(self.steps)):
            current = self.steps[offset](current)
            if current.get("type") == "header":
                current["schema_version"] = self.first + offset + 1
        return current


def default_chain(upgraders: Sequence[Upgrader] = UPGRADERS) -> UpgradeChain:
    """The chain from schema 1 to ``SCHEMA_VERSION`` made of the released ``UPGRADERS``."""
    chain = UpgradeChain(first=1, steps=tuple(upgraders))
    if chain.target != SCHEMA_VERSION:
        raise TraceError(f"UPGRADERS reach schema {chain.target}, but SCHEMA_VERSION is {SCHEMA_VERSION}")
    return chain
