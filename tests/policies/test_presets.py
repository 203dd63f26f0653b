"""The loop's modes: the full loop, and ablations that grow windows one fixed way and do nothing after."""

from __future__ import annotations

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.presets import MODES, PRESETS, Preset


def test_the_shipped_policy_runs_the_full_loop() -> None:
    assert Policy().preset == Preset(
        "slide", widens=True, regrows_runners_up=True, checks_conflicts=True, reads_shape=True
    )


@pytest.mark.parametrize(("mode", "growth"), [("seed", "seed"), ("window", "radius"), ("parent", "section")])
def test_an_ablation_grows_one_fixed_way_and_does_nothing_after(mode: str, growth: str) -> None:
    preset = Policy(mode=mode).preset  # type: ignore[arg-type]
    assert (
        preset.growth,
        preset.widens,
        preset.regrows_runners_up,
        preset.checks_conflicts,
        preset.reads_shape,
    ) == (growth, False, False, False, False)


def test_every_mode_has_a_preset() -> None:
    assert set(PRESETS) == set(MODES)
