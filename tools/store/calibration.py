"""A corpus's own scale for the sufficiency judge's signals, from self-calibration.

    CorpusScale      per signal: mean and spread over pseudo-questions whose document was held out
    ScaleMeter       what measures it (agent.loop.calibrate.ScaleKeeper): every write of a store calls it
    read_scale(conn) / write_scale(conn, scale)   kept in the store's meta table

Scores are not comparable across knowledge bases or languages (e5 cosines sit higher in Chinese
than in English, a corpus of near-duplicates scores higher than one of distinct articles). What
is comparable is how far a question's evidence stands above what the same corpus gives a question
whose answer is not in it. ``agent.loop.calibrate`` measures that without labels, the way the shared
refusal sets were built: it draws pseudo-questions from the corpus's own units, hides each one's
document, and records the signals of the evidence the loop still finds.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from evidence_loop.tools.store.sql import Db

if TYPE_CHECKING:
    from evidence_loop.tools.search.snapshot import Snapshot

_META_KEY = "calibration"


@dataclass(frozen=True, slots=True)
class CorpusScale:
    """Mean and standard deviation of each signal over ``samples`` held-out pseudo-questions."""

    signals: tuple[tuple[str, float, float], ...]  # (name, mean, std), sorted by name
    samples: int
    generation: int  # the generation it was measured on
    units: int = 0  # the units the corpus had then (a corpus that grows or shrinks much is measured again)
    embedder: str = ""  # the key of the embedder whose vectors it was measured with ("": not recorded)

    def z(self, name: str, value: float) -> float:
        """``value`` in standard deviations above the held-out mean (the raw value if unmeasured)."""
        for signal, mean, std in self.signals:
            if signal == name:
                return (value - mean) / std if std > 0 else value - mean
        return value

    def as_dict(self) -> dict[str, Any]:
        """The record; fields added later appear only when set, so an older scale reads back as it was."""
        data: dict[str, Any] = {
            "signals": {name: [mean, std] for name, mean, std in self.signals},
            "samples": self.samples,
            "generation": self.generation,
            "units": self.units,
        }
        if self.embedder:
            data["embedder"] = self.embedder
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CorpusScale:
        signals = tuple(sorted((str(k), float(v[0]), float(v[1])) for k, v in dict(data["signals"]).items()))
        return cls(
            signals,
            int(data["samples"]),
            int(data["generation"]),
            int(data.get("units", 0)),
            str(data.get("embedder", "")),
        )

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()


class ScaleMeter(Protocol):
    """Measures a corpus's scale; a store calls it in each write transaction, before the commit."""

    def __call__(
        self, snapshot: Snapshot, current: CorpusScale | None, *, force: bool = False
    ) -> CorpusScale | None:
        """A newly measured scale for ``snapshot`` when ``current`` is due (or ``force``), else None
        (keep ``current``; also when the corpus cannot be measured)."""
        ...


def read_scale(conn: Db) -> CorpusScale | None:
    """The scale last measured on this store, or None when it was never calibrated."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_META_KEY,)).fetchone()
    return None if row is None else CorpusScale.from_dict(json.loads(row[0]))


def write_scale(conn: Db, scale: CorpusScale) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (_META_KEY, json.dumps(scale.as_dict(), sort_keys=True)),
    )
