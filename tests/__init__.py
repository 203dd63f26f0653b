"""The project's tests.

The test session writes bytecode even when the shell sets PYTHONDONTWRITEBYTECODE (this package is
imported before any conftest, test module or project module). Without it pytest rewrites the asserts
of every test module and Python compiles every project module from source at every run, in every
xdist worker, and again in each ``evloop`` subprocess a test starts: collection costs ~17 CPU-s a
process instead of ~11. The files land in the ``__pycache__`` folders git ignores, or under
PYTHONPYCACHEPREFIX when it is set (docs/contributing.md, "Tests").
"""

import sys

sys.dont_write_bytecode = False
