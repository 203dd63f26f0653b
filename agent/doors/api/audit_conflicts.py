"""The conflict check on the run page: every conflict candidate the run considered and what became of it.

    conflict_check(events, may_read)   the candidates: those a rule set aside before any adjudicator
                                       (a ``conflict_scan`` step: one document states both values, the
                                       two values are about different things, ...) and those an
                                       adjudicator or a rule gave a verdict (``conflict`` steps)

So an auditor reading a run a reviewer marked ``missed_conflict`` sees why no conflict was raised:
which pairs of values were looked at and why each was dropped, or that none was found. The
``conflict_scan`` step is read by its fields (``candidates``: how many went on to a verdict;
``dropped``: each with ``slot``, ``kind``, ``values`` and why it was ``dropped``), as the trace
holds them. A candidate with a value from a document the viewer may not read is not shown (counted).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evidence_loop.traces.records.schema import TraceEvent
from evidence_loop.traces.records.steps import ConflictStep

SCAN_STEP = "conflict_scan"


@dataclass(frozen=True, slots=True)
class CandidateView:
    slot: str
    kind: str
    values: list[str]  # each value with where it was read: "3年 (warranty-zh@1 [120:122])"
    outcome: str  # "set aside", or the verdict it was given
    why: str
    by: str  # the rule that set it aside, or the adjudicator


@dataclass(frozen=True, slots=True)
class ConflictCheck:
    candidates: list[CandidateView] = field(default_factory=list)
    scanned: bool = False  # the run recorded a conflict_scan step
    went_on: int | None = None  # candidates the scan passed on to a verdict
    hidden: int = 0  # candidates naming a document the viewer may not read

    @property
    def empty(self) -> bool:
        return not self.candidates and not self.scanned and not self.hidden


def _value(value: Mapping[str, Any]) -> str:
    where = f"{value.get('doc_id')}@{value.get('version')} [{value.get('start')}:{value.get('end')}]"
    return f"{value.get('value')} ({where})"


def _readable(values: Iterable[Mapping[str, Any]], may_read: Callable[[str, str], bool]) -> bool:
    return all(may_read(str(v.get("doc_id")), str(v.get("version"))) for v in values)


def conflict_check(events: Iterable[TraceEvent], may_read: Callable[[str, str], bool]) -> ConflictCheck:
    """The candidates of a run's conflict check, in the order the trace records them."""
    candidates: list[CandidateView] = []
    scanned, went_on, hidden = False, None, 0
    for event in events:
        if event.step == SCAN_STEP:
            data = event.data.trace_data()
            scanned, went_on = True, int(data.get("candidates") or 0)
            for dropped in data.get("dropped") or ():
                values = list(dropped.get("values") or ())
                if not _readable(values, may_read):
                    hidden += 1
                    continue
                candidates.append(
                    CandidateView(
                        str(dropped.get("slot", "")),
                        str(dropped.get("kind", "")),
                        [_value(v) for v in values],
                        "set aside",
                        str(dropped.get("dropped", "")),
                        "rule, before any adjudicator",
                    )
                )
        elif isinstance(event.data, ConflictStep):
            step = event.data
            if not _readable(step.values, may_read):
                hidden += 1
                continue
            values = [_value(v) for v in step.values]
            candidates.append(
                CandidateView(step.slot, step.kind, values, step.verdict, step.reason, step.adjudicator)
            )
    return ConflictCheck(candidates, scanned, went_on, hidden)
