"""The README's "Use it from Python" example runs as written, against the installed package."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _python_example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use it from Python", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None, "the section has no python block"
    return match.group(1)


def test_the_use_it_from_python_example_answers_cites_and_replays(tmp_path: Path) -> None:
    # its own folder, so that ".evloop" is fresh and the checkout is not on the path (-P)
    done = subprocess.run(
        [sys.executable, "-P", "-c", _python_example()],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("answered ")
    assert "one-year warranty" in done.stdout.split("warranty-en 1 ", 1)[0]
    assert any(line.startswith("warranty-en 1 ") for line in lines)
    assert lines[-1] == "True"
    assert (tmp_path / ".evloop").is_dir()
