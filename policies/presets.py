"""The loop's modes, each a preset of what the loop does beyond its thresholds.

``adaptive`` is the full loop; ``seed``, ``window`` and ``parent`` are the ablations ``evloop eval
--mode`` compares it with: the same recall and checks, but windows grown one fixed way and nothing
after that (no second recall, no regrown runners-up, no conflict check). ``Policy.mode`` names the
preset and ``Policy.preset`` is what it says; nothing else reads the mode's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Mode = Literal["seed", "window", "parent", "adaptive"]
MODES: tuple[Mode, ...] = ("seed", "window", "parent", "adaptive")

# How a seed window grows: as hit, to a fixed radius of units, to its whole section, or by sliding.
Growth = Literal["seed", "radius", "section", "slide"]


@dataclass(frozen=True, slots=True)
class Preset:
    """What a mode switches on."""

    growth: Growth
    widens: bool  # a second, wider recall for the gaps a query can name (policies.decision.missing)
    regrows_runners_up: (
        bool  # windows after the lead ones regrown from their seeds (policies.evidence.selection)
    )
    checks_conflicts: bool  # the conflict check reads the evidence (agent.loop.conflict_check)
    reads_shape: bool = False  # the evidence read as the question's shape needs (policies.evidence.reading)


_ABLATION = {"widens": False, "regrows_runners_up": False, "checks_conflicts": False}

PRESETS: dict[Mode, Preset] = {
    "adaptive": Preset(
        "slide", widens=True, regrows_runners_up=True, checks_conflicts=True, reads_shape=True
    ),
    "seed": Preset("seed", **_ABLATION),
    "window": Preset("radius", **_ABLATION),
    "parent": Preset("section", **_ABLATION),
}
