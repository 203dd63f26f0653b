"""No setting of the developer's shell reaches a test (tests/conftest.py clears them in one place)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LEAKY = {
    "EVLOOP_POLICY": "/nonexistent/policy.json",
    "EVLOOP_STORE_URL": "postgresql://nobody@unreachable.invalid/evloop",
    "EVLOOP_INDEX": "/nonexistent/index",
    "EVLOOP_LLM_MODEL": "gpt-of-the-shell",
    "OPENAI_BASE_URL": "http://unreachable.invalid/v1",
    "OPENAI_API_KEY": "sk-of-the-shell",
    "EVLOOP_LOG_LEVEL": "debug",
}


def test_a_test_sees_no_shell_setting() -> None:
    """No EVLOOP_* or OPENAI_* variable but the lexical embedder (and the live tests' own server)."""
    seen = {name: value for name, value in os.environ.items() if name.startswith(("EVLOOP_", "OPENAI_"))}
    seen = {name: value for name, value in seen.items() if not name.startswith("EVLOOP_LIVE_")}
    assert seen == {"EVLOOP_EMBEDDER": "none"}


def test_settings_exported_in_the_shell_do_not_reach_the_tests() -> None:
    """The test above, run by a pytest started from a shell that exports a policy, a store, an LLM..."""
    env = {**os.environ, **LEAKY, "PYTHONPATH": str(ROOT)}
    target = f"{Path(__file__).relative_to(ROOT)}::test_a_test_sees_no_shell_setting"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", target],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
