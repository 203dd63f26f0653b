"""How many generated examples the fuzz tests run: their full count in the full suite, a quarter of it
in the quick loop.

``tests/conftest.py`` loads one of the two hypothesis profiles registered here for each run, before
any test module is imported: ``quick`` when the run leaves the slow tests out (``pytest -m "not
slow"``, the quick loop), ``full`` otherwise. A fuzz test states its full count and runs
``examples(count)``; a count set in the environment (``EVLOOP_*_FUZZ_EXAMPLES``) is run as it is.
"""

from __future__ import annotations

from hypothesis import settings

FULL = "full"
QUICK = "quick"
QUICK_SHARE = 4  # the quick loop runs a quarter of each fuzz test's examples

settings.register_profile(FULL)  # hypothesis's defaults; each fuzz test states its own count
settings.register_profile(QUICK, max_examples=100 // QUICK_SHARE)
_loaded = [FULL]


def load(marker_expression: str) -> None:
    """The quick profile when the run's ``-m`` expression leaves the slow tests out, else the full one."""
    name = QUICK if "not slow" in marker_expression else FULL
    settings.load_profile(name)
    _loaded[:] = [name]


def examples(full: int) -> int:
    """``full`` in the full suite; a quarter of it (at least one) in the quick loop."""
    return max(1, full // QUICK_SHARE) if _loaded == [QUICK] else full
