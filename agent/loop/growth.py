"""Growing seed windows as the policy's preset says: as hit, to a fixed radius, to the whole section,
or by sliding (policies.presets).

Sliding is directional: policies propose moves and judge them, this module applies them with the
window mechanism and reports each kept step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.checked import Checked, WindowCheck
from evidence_loop.policies.evidence.completeness import check_window
from evidence_loop.policies.evidence.sliding import (
    Move,
    coverage_moves,
    gap_moves,
    keep,
    keep_parent,
    parent_move,
)
from evidence_loop.policies.question.analysis import Question
from evidence_loop.tools.types import ParsedDocument
from evidence_loop.tools.windows import Step, Window, char_count, section_ordinals, with_units

StepReport = Callable[[Window, Step], None]
"""Told of each step a window's growth keeps (the controller records it as a ``slid`` step)."""


@dataclass(frozen=True, slots=True)
class Grower:
    """Grows windows of one document for one question under one policy."""

    question: Question
    doc: ParsedDocument
    best: float
    policy: Policy
    report: StepReport

    def check(self, window: Window) -> WindowCheck:
        return check_window(self.question, window, self.doc, self.best, self.policy)

    def grow(self, window: Window) -> Checked:
        """Grow one seed window as the policy's preset says, and check it."""
        growth, doc = self.policy.preset.growth, self.doc
        if growth == "slide":
            return self.slide(window)
        if growth == "radius":
            lo = max(0, window.first - self.policy.fixed_radius)
            hi = min(len(doc.units) - 1, window.last + self.policy.fixed_radius)
            window = with_units(window, range(lo, hi + 1))
        elif growth == "section":
            window = with_units(window, section_ordinals(doc, doc.units[window.first].section_id))
        return Checked(window, doc, self.check(window), self.best)

    def attempt(self, window: Window, move: Move, before: WindowCheck) -> tuple[Window, WindowCheck]:
        """The window after a move, with the step recorded, and its new check."""
        grown = with_units(window, move.ordinals)
        after = self.check(grown)
        step = Step(move.move, move.unit_kind, move.reason, move.ordinals, before.score, after.score)
        return with_units(window, move.ordinals, step), after

    def slide(self, window: Window) -> Checked:
        """Parent step when the section fits, then follow the signals while the score rises."""
        current = self.check(window)
        parent = parent_move(window, self.doc, self.policy)
        if parent is not None:
            grown, after = self.attempt(window, parent, current)
            if keep_parent(current, after, self.policy, char_count(grown, self.doc)):
                window, current = grown, after
                self.report(window, window.steps[-1])
        for _ in range(self.policy.max_slides):
            stepped = self.step(window, current)
            if stepped is None:
                break
            window, current = stepped
            self.report(window, window.steps[-1])
        return Checked(window, self.doc, current, self.best)

    def step(self, window: Window, current: WindowCheck) -> tuple[Window, WindowCheck] | None:
        """The first proposed move that fits the budget and raises the score, or None."""
        moves = (*gap_moves(self.doc, current), *coverage_moves(self.question, window, self.doc, current))
        for move in moves:
            grown, after = self.attempt(window, move, current)
            if char_count(grown, self.doc) <= self.policy.window_budget and keep(current, after):
                return grown, after
        return None
