"""The wheel installs one top-level name, ``evidence_loop``, and its front door names what it lists."""

from __future__ import annotations

import ast
import email.parser
import importlib.metadata
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import evidence_loop

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this checkout, built once for the module."""
    folder = tmp_path_factory.mktemp("wheel")
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
            str(folder),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (built,) = folder.glob("evidence_loop-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_installs_evidence_loop_as_its_only_top_level_name(wheel: Path, tmp_path: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"evidence_loop"}
    for package in ("agent", "tools", "policies", "traces", "integrations"):
        assert f"evidence_loop/{package}/__init__.py" in names
    assert any(name.startswith("evidence_loop/agent/sample_kb/") for name in names)
    assert {"evidence_loop/py.typed", "evidence_loop/policies/judge_default.json"} <= set(names)
    console = {
        "templates/audit/run.html",
        "templates/audit/list.html",
        "templates/audit/figures.html",
        "static/audit/audit.js",
        "static/audit/audit.css",
    }
    assert {f"evidence_loop/agent/doors/api/{name}" for name in console} <= set(names)

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


def _requirements(wheel: Path) -> list[Requirement]:
    """The wheel's Requires-Dist lines."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = email.parser.Parser().parsestr(archive.read(name).decode("utf-8"))
    return [Requirement(line) for line in metadata.get_all("Requires-Dist") or []]


def _applies(req: Requirement, extras: set[str]) -> bool:
    """Whether a requirement holds here with ``extras`` asked for (a marker without extra: as is)."""
    marker = req.marker
    return marker is None or any(marker.evaluate({"extra": e}) for e in {"", *extras})


def _closure(requirements: list[Requirement], extras: set[str]) -> set[str]:
    """The distributions ``requirements`` resolve to in this environment, with ``extras`` asked for:
    each installed distribution's own requirements followed, those of its extras left out."""
    wanted = [r for r in requirements if _applies(r, extras)]
    seen: set[str] = set()
    while wanted:
        req = wanted.pop()
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            own = importlib.metadata.requires(req.name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        chosen = {canonicalize_name(x) for x in req.extras}
        for line in own:
            sub = Requirement(line)
            if _applies(sub, chosen):
                wanted.append(sub)
    return seen


FRAMEWORKS = {"mcp", "langchain-core", "langchain", "llama-index-core", "llama-index"}


@pytest.mark.slow
def test_installing_without_extras_pulls_in_no_chatbot_framework(wheel: Path) -> None:
    requirements = _requirements(wheel)
    core = _closure(requirements, set())
    assert not core & FRAMEWORKS
    assert "mcp" in _closure(requirements, {"mcp"})
    assert "langchain-core" in _closure(requirements, {"langchain"})
    assert "llama-index-core" in _closure(requirements, {"llamaindex"})


@pytest.mark.slow
def test_the_mcp_extra_is_all_evloop_mcp_needs(wheel: Path) -> None:
    """Every package the MCP server's modules import comes with the core or the ``mcp`` extra."""
    provided = _closure(_requirements(wheel), {"mcp"})
    owners = importlib.metadata.packages_distributions()
    modules = ("agent/doors/api/mcp_server.py", "agent/doors/commands/mcp.py", "agent/doors/api/toolkit.py")
    needed: set[str] = set()
    for path in modules:
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for top in {n.split(".")[0] for n in names} - set(sys.stdlib_module_names) - {"evidence_loop"}:
                needed |= {canonicalize_name(d) for d in owners.get(top, [top])}
    assert needed and needed <= provided, needed - provided


BLOCK = """
import importlib.abc, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Absent())
"""


def _without(blocked: set[str], code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a Python where the ``blocked`` packages are not installed."""
    return subprocess.run(
        [sys.executable, "-c", BLOCK.format(blocked=sorted(blocked)) + code],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


FRAMEWORK_MODULES = {"mcp", "mcp_types", "langchain_core", "langchain", "llama_index"}


def test_the_core_runs_without_any_framework_installed(tmp_path: Path) -> None:
    """Ingest, ask, tool-schema and every command's --help work with no extra installed."""
    code = (
        "from evidence_loop.agent.doors.cli.app import main\n"
        "from evidence_loop.agent.doors.cli.sample import load_sample_kb\n"
        "from evidence_loop import Service\n"
        "with Service.open('ix', create=True) as s:\n"
        "    s.ingest(load_sample_kb())\n"
        "    assert s.ask('LM-Z900 的整机保修期是多久？').status == 'insufficient_evidence'\n"
        "assert main(['tool-schema']) == 0\n"
        "import evidence_loop.integrations\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(FRAMEWORK_MODULES)!r}))\n"
    )
    done = _without(FRAMEWORK_MODULES, code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


def test_evloop_mcp_without_the_extra_says_how_to_install_it(tmp_path: Path) -> None:
    code = (
        "from evidence_loop.agent.doors.cli.app import main\n"
        "raise SystemExit(main(['mcp', '--index', 'ix']))\n"
    )
    done = _without({"mcp", "mcp_types"}, code, tmp_path)
    assert done.returncode == 2
    assert "pip install 'evidence-loop[mcp]'" in done.stderr and "Traceback" not in done.stderr
