"""The architecture stays visible: imports between the project's packages point one way only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agent", "tools", "policies", "traces")
# What each package may import from the others (DESIGN.md): tools nothing, policies tools,
# traces only the error tree and the shared store's connections (traces in PostgreSQL), agent everything.
ALLOWED: dict[str, set[str]] = {
    "tools": set(),
    "policies": {"tools"},
    "traces": {"tools.errors", "tools.pg"},
    "agent": {"tools", "policies", "traces"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _allowed(package: str, module: str) -> bool:
    top = module.split(".")[0]
    if top not in PACKAGES or top == package:
        return True
    return any(module == rule or module.startswith(rule + ".") for rule in ALLOWED[package])


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_imports_only_the_packages_below_it(package: str) -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for module in sorted(_imports(path))
        if not _allowed(package, module)
    ]
    assert wrong == []
