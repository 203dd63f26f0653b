"""The architecture stays visible: imports between the design's packages point one way only, and
every import names them through the one distribution name.

The rules, which this file states and checks (it is their one home):

- ``tools`` (mechanisms: parsing, stores, indexes, models, the network) imports no other project
  package;
- ``policies`` (pure decisions and thresholds) imports ``tools``' value types, its error tree and its
  pure text and window arithmetic only (``types``, ``errors``, ``tokenize``, ``windows``); any other
  ``tools`` module only under ``if TYPE_CHECKING:``, for an annotation;
- ``traces`` (the audit record) imports neither ``agent`` nor ``policies``;
- ``agent`` (the loop and its front doors) imports all three;
- nothing imports a package by its bare folder name (``import agent``), only as
  ``evidence_loop.agent``, and ``evidence_loop/`` holds only the links to the four folders and the
  ``integrations`` subpackage (adapters for other frameworks, which no layer imports).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "evidence_loop"
PACKAGES = ("agent", "tools", "policies", "traces")
INTEGRATIONS = "integrations"  # a real subpackage of the namespace, above every layer
# The rules of the module docstring, as data.
ALLOWED: dict[str, set[str]] = {
    "tools": set(),
    "policies": {"tools"},
    "traces": {"tools"},
    "agent": {"tools", "policies", "traces"},
}
# "Types only", made exact: at run time policies may use the value types, the error tree and the pure
# text and window arithmetic over them; any other tools module (a store, an index, a model, the
# network) only under `if TYPE_CHECKING:`, for an annotation.
POLICIES_RUNTIME_TOOLS = {"tools.types", "tools.errors", "tools.tokenize", "tools.windows"}


def _sources() -> list[Path]:
    folders = (*PACKAGES, f"{NAMESPACE}/{INTEGRATIONS}", "tests", "benchmarks")
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py"))


def _imports(path: Path, *, runtime_only: bool = False) -> set[str]:
    """Absolute module names a file imports (``runtime_only``: leaving out `if TYPE_CHECKING:` blocks)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    if runtime_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and ast.unparse(node.test) in {
                "TYPE_CHECKING",
                "typing.TYPE_CHECKING",
            }:
                skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _layer(module: str) -> str | None:
    """``evidence_loop.tools.store.folder`` -> ``tools.store.folder``; None for a module outside the
    project."""
    head, _, rest = module.partition(".")
    return rest if head == NAMESPACE and rest else None


def _within(module: str, rule: str) -> bool:
    return module == rule or module.startswith(rule + ".")


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_imports_only_the_packages_below_it(package: str) -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for module in sorted(_imports(path))
        if (layer := _layer(module)) is not None
        and not _within(layer, package)
        and not any(_within(layer, rule) for rule in ALLOWED[package])
    ]
    assert wrong == []


def test_policies_use_only_the_types_and_pure_arithmetic_of_tools_at_run_time() -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in sorted((ROOT / "policies").rglob("*.py"))
        for module in sorted(_imports(path, runtime_only=True))
        if (layer := _layer(module)) is not None
        and _within(layer, "tools")
        and not any(_within(layer, rule) for rule in POLICIES_RUNTIME_TOOLS)
    ]
    assert wrong == []


def test_nothing_imports_a_package_by_its_bare_folder_name() -> None:
    """A bare `import agent` works from a checkout but not from the installed wheel: it would hide
    a break until a user installs it (and collide with a chatbot backend's own `agent/`)."""
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in _sources()
        for module in sorted(_imports(path))
        if module.split(".")[0] in PACKAGES
    ]
    assert wrong == []


def test_the_namespace_folder_links_to_the_design_folders_and_holds_nothing_else() -> None:
    """Besides the links, one real folder: ``integrations``, the adapters to chatbot frameworks,
    which sit above every layer (they use the front door) and exist only under the namespace."""
    folder = ROOT / NAMESPACE
    found = {path.name for path in folder.iterdir() if path.name != "__pycache__"}
    assert found == {*PACKAGES, INTEGRATIONS, "__init__.py", "py.typed"}
    for package in PACKAGES:
        link = folder / package
        assert link.is_symlink() and link.resolve() == (ROOT / package).resolve()
    assert (folder / INTEGRATIONS).is_dir() and not (folder / INTEGRATIONS).is_symlink()


def test_no_layer_imports_the_integrations() -> None:
    """The integrations import the frameworks of their extras: a layer importing one would make the
    extra a requirement of the core."""
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for module in sorted(_imports(path))
        if (layer := _layer(module)) is not None and _within(layer, INTEGRATIONS)
    ]
    assert wrong == []
