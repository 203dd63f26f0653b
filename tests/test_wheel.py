"""The wheel installs one top-level name, ``evidence_loop``, and its front door names what it lists."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import evidence_loop

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_installs_evidence_loop_as_its_only_top_level_name(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("evidence_loop-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"evidence_loop"}
    for package in ("agent", "tools", "policies", "traces"):
        assert f"evidence_loop/{package}/__init__.py" in names
    assert any(name.startswith("evidence_loop/agent/sample_kb/") for name in names)
    assert {"evidence_loop/py.typed", "evidence_loop/policies/judge_default.json"} <= set(names)
    console = {
        "templates/audit/run.html",
        "templates/audit/list.html",
        "static/audit/audit.js",
        "static/audit/audit.css",
    }
    assert {f"evidence_loop/agent/api/{name}" for name in console} <= set(names)

    # installed, the package imports under its one name, and the bare folder names are gone
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    probe = (
        "import importlib.util, sys; sys.path.insert(0, sys.argv[1]); "
        "import evidence_loop.agent.service as s; print(s.__file__); "
        "bare = ('agent', 'tools', 'policies', 'traces'); "
        "print([n for n in bare if importlib.util.find_spec(n)])"
    )
    # -I: neither PYTHONPATH nor the working folder on the path, only the installed wheel and site-packages
    done = subprocess.run(
        [sys.executable, "-I", "-c", probe, str(target)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    where, bare = done.stdout.splitlines()
    assert Path(where).is_relative_to(target)
    assert bare == "[]"


def test_every_front_door_name_is_importable_from_the_package() -> None:
    missing = [name for name in evidence_loop.__all__ if not hasattr(evidence_loop, name)]
    assert missing == []
    assert evidence_loop.Service.__module__ == "evidence_loop.agent.service"
